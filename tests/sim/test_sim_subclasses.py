"""Tensor subclasses and fake tensors pass through the simulation as they pass through a GPU host."""

from __future__ import annotations

from typing import ClassVar

import pytest
import torch
from torch.utils._pytree import tree_map


class Wrapper(torch.Tensor):
    """A wrapper subclass in the style of DTensor: no storage of its own, an inner tensor."""

    @staticmethod
    def __new__(cls, inner: torch.Tensor) -> Wrapper:
        return torch.Tensor._make_wrapper_subclass(cls, inner.shape, dtype=inner.dtype, device=inner.device)

    def __init__(self, inner: torch.Tensor) -> None:
        self.inner = inner

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(x: object) -> object:
            return x.inner if isinstance(x, Wrapper) else x

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
        return tree_map(lambda x: Wrapper(x) if isinstance(x, torch.Tensor) else x, out)


def test_wrapper_subclass_computes_on_its_inner_device(sim):
    wrapped = Wrapper(torch.ones(2, device="cuda"))
    assert wrapped.device == torch.device("cuda", 0)
    doubled = wrapped * 2
    assert doubled.device == torch.device("cuda", 0) and doubled.inner.device == torch.device("cuda", 0)
    with pytest.raises(RuntimeError, match=r"found at least two devices, cuda:0 and cpu!$"):
        wrapped + torch.ones(2)


def test_plain_subclass_keeps_the_placement(sim):
    class Marked(torch.Tensor):
        pass

    marked = torch.ones(2, device="cuda").as_subclass(Marked)
    assert isinstance(marked, Marked) and (marked + 1).device == torch.device("cuda", 0)


def test_fake_tensor_mode_inside_the_simulation(sim):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fake = torch.ones(2, 3, device="cuda")
        out = fake @ torch.ones(3, 4, device="cuda")
    assert out.device == torch.device("cuda", 0) and out.shape == (2, 4)
    mode = FakeTensorMode()
    converted = mode.from_tensor(torch.ones(2, device="cuda"))
    with mode:
        assert (converted * 2).device == torch.device("cuda", 0)


class Recording(torch.Tensor):
    calls: ClassVar[list[str]] = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs or {})


def _recorded(device: str) -> tuple[list[str], str, str]:
    Recording.calls = []
    index = torch.arange(3, device=device).as_subclass(Recording)
    result = torch.ones(3, device=device)[index] + index
    return Recording.calls, type(result).__name__, str(result.device)


def test_a_subclass_handler_sees_the_same_calls_as_on_a_gpu(sim):
    # its handler runs (as below any mode), sees no call of the simulator's own, and the result keeps the subclass
    on_cpu, on_cuda = _recorded("cpu"), _recorded("cuda")
    assert on_cuda[0] == on_cpu[0] and "add" in on_cuda[0]
    assert on_cuda[1:] == ("Recording", "cuda:0") and on_cpu[1:] == ("Recording", "cpu")
