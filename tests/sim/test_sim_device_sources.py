"""Every Tensor method and torch function that takes its result's device from another tensor or
from a type name, enumerated from the installed torch and checked in both directions (a CPU
tensor given a cuda source, a cuda tensor given a CPU one) against what real CUDA does.

The enumeration (names ending ``_as``/``_as_``/``_like``, starting ``new``, ``to``, ``type``,
``type_as``; plus the data-copying constructors) is read from ``dir(torch.Tensor)`` and
``dir(torch)``: a release that adds one fails ``test_every_device_source_is_in_the_table`` until
it is classified here. Rules, from aten/src/ATen/native/native_functions.yaml and TensorConversions.cpp:
``type_as(other)`` is ``self.to(other.options())`` (the other's device); ``*_as`` views and resizes
keep ``self``'s device; ``*_like`` and ``new_*`` make their result where the source lives unless
``device=`` is given; ``tensor``/``as_tensor``/``asarray`` of a tensor keep its device.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
import torch
from cuda_sim import simulate

Make = Callable[[torch.Tensor, torch.Tensor], object]

# name -> (call with (source, other), which device the result has: "self" or "other")
TABLE: dict[str, tuple[Make, str]] = {
    "Tensor.type_as": (lambda s, o: s.type_as(o), "other"),
    "Tensor.to": (lambda s, o: s.to(o), "other"),
    "Tensor.expand_as": (lambda s, o: s[:1].expand_as(o), "self"),
    "Tensor.view_as": (lambda s, o: s.view_as(o), "self"),
    "Tensor.reshape_as": (lambda s, o: s.reshape_as(o), "self"),
    "Tensor.resize_as": (lambda s, o: s.clone().resize_as(o), "self"),
    "Tensor.resize_as_": (lambda s, o: s.clone().resize_as_(o), "self"),
    "torch.resize_as_": (lambda s, o: torch.resize_as_(s.clone(), o), "self"),
    "Tensor.new": (lambda s, o: s.new(2), "self"),
    "Tensor.new_empty": (lambda s, o: s.new_empty(2), "self"),
    "Tensor.new_empty_strided": (lambda s, o: s.new_empty_strided((2,), (1,)), "self"),
    "Tensor.new_full": (lambda s, o: s.new_full((2,), 1.0), "self"),
    "Tensor.new_ones": (lambda s, o: s.new_ones(2), "self"),
    "Tensor.new_zeros": (lambda s, o: s.new_zeros(2), "self"),
    "Tensor.new_tensor": (lambda s, o: s.new_tensor([1.0]), "self"),
    "Tensor.new(other)": (lambda s, o: s.new(o), "other"),
    "Tensor.type": (lambda s, o: s.type(o.type()), "other"),
    "Tensor.type(legacy type)": (lambda s, o: s.type((torch.cuda if o.is_cuda else torch).DoubleTensor),
                                 "other"),
    "torch.empty_like": (lambda s, o: torch.empty_like(s), "self"),
    "torch.full_like": (lambda s, o: torch.full_like(s, 2.0), "self"),
    "torch.ones_like": (lambda s, o: torch.ones_like(s), "self"),
    "torch.zeros_like": (lambda s, o: torch.zeros_like(s), "self"),
    "torch.rand_like": (lambda s, o: torch.rand_like(s), "self"),
    "torch.randn_like": (lambda s, o: torch.randn_like(s), "self"),
    "torch.randint_like": (lambda s, o: torch.randint_like(s, 5), "self"),
    "torch.tensor(tensor)": (lambda s, o: torch.tensor(s), "self"),
    "torch.as_tensor(tensor)": (lambda s, o: torch.as_tensor(s), "self"),
    "torch.asarray(tensor)": (lambda s, o: torch.asarray(s), "self"),
    "torch.as_tensor(tensor, dtype)": (lambda s, o: torch.as_tensor(s, dtype=torch.float64), "self"),
    "Tensor.set_(other)": (lambda s, o: s.clone().set_(o), "other"),
    "torch.empty_like(device=other)": (lambda s, o: torch.empty_like(s, device=o.device), "other"),
    "Tensor.new_zeros(device=other)": (lambda s, o: s.new_zeros(2, device=o.device), "other"),
    "Tensor.to(other.device, other.dtype)": (lambda s, o: s.to(o.device, o.dtype), "other"),
    "Tensor.type_as(other) then meets other": (lambda s, o: s.type_as(o) + o, "other"),
}

_PATTERN = re.compile(r"(_as_?$|_like$|^new(_|$)|^type(_as)?$|^to$)")


def _device_sources() -> set[str]:
    found = {f"Tensor.{n}" for n in dir(torch.Tensor) if _PATTERN.search(n)}
    found |= {f"torch.{n}" for n in dir(torch) if _PATTERN.search(n) and callable(getattr(torch, n))}
    return found


def test_every_device_source_is_in_the_table():
    missing = _device_sources() - set(TABLE)
    assert not missing, f"classify these in TABLE: {sorted(missing)}"


@pytest.mark.filterwarnings("ignore:To copy construct from a tensor")
@pytest.mark.filterwarnings("ignore:non-inplace resize_as is deprecated")  # torch's own, for Tensor.resize_as
@pytest.mark.parametrize("direction", ["cpu self, cuda other", "cuda self, cpu other"])
@pytest.mark.parametrize("name", list(TABLE))
def test_result_device(name: str, direction: str):
    make, rule = TABLE[name]
    with simulate():
        cuda, cpu = torch.ones(2, device="cuda"), torch.ones(2)
        source, other = (cpu, cuda) if direction.startswith("cpu") else (cuda, cpu)
        result = make(source, other)
        assert isinstance(result, torch.Tensor)
        expected = source if rule == "self" else other
        assert result.device == expected.device
        assert result.is_cuda == expected.is_cuda
