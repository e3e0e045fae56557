"""Wrapper subclasses (``torch.Tensor._make_wrapper_subclass``) made on the simulated GPU.

A library's wrapper tensor (a quantized weight, a DTensor-style container) takes its device from the
data it wraps, a simulated CUDA tensor: ``device=cuda:0``. C++ would then hold a tensor whose real
device is CUDA, and the first autograd node over it asks the (absent) CUDA backend for a stream:
``std::terminate``, the whole process aborts ("PyTorch is not linked with support for cuda
devices"). The wrapper is made on the CPU instead, and its simulated device is a tag on the wrapper
object itself (it has no storage of its own to carry one: cuda_sim._placement)."""

from __future__ import annotations

from typing import Any

import torch

from cuda_sim._patch import Patcher
from cuda_sim._placement import CPU, parse_device, place

_NoTorchFunction = torch._C.DisableTorchFunction  # read before the session replaces it


def patch(p: Patcher) -> None:
    original = torch.Tensor._make_wrapper_subclass

    def make_wrapper_subclass(cls: type, *args: Any, **kwargs: Any) -> torch.Tensor:
        device = kwargs.get("device")
        target = parse_device(device) if isinstance(device, (str, int, torch.device)) else None
        if target is None or target.type != "cuda":
            return original(cls, *args, **kwargs)
        wrapper: torch.Tensor = original(cls, *args, **{**kwargs, "device": CPU})
        with _NoTorchFunction():  # the placement helpers read real attributes
            place(wrapper, target)
        return wrapper

    p.set(torch.Tensor, "_make_wrapper_subclass", staticmethod(make_wrapper_subclass))
