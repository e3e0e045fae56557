"""``out=`` tensors on another device than the inputs, in operators that copy their result in.

Operators with a device check of their own (generated wrappers, TensorIterator, structured
``resize_out``) already raise CUDA's error in the dispatch mode. A composite ``*_out`` kernel
that computes into a temporary and ends with ``result.copy_(tmp)`` hides that: ``copy_``
crosses devices freely, so the CPU run passes where a GPU may not. Two cases:

- kernels that call ``checkSameDevice(fn, result, input)`` first (LinearAlgebraUtils.h, whose
  text the installed torch's header spells out; tests/sim/test_sim_kernels.py reads each name
  back from libtorch): the check runs here, before the call, with the same text;
- any other composite: the cross-device ``copy_`` into the caller's ``out=`` tensor raises
  NotSimulatedError naming the function (real CUDA raises or copies depending on its kernel;
  PyTorch's own out= tests expect most of them to raise).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, cast

import torch

from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._placement import device_of

# aten name -> checkSameDevice's fn_name (BatchLinearAlgebra.cpp, LinearAlgebra.cpp)
SAME_DEVICE_NAMES = {
    "linalg_pinv": "linalg.pinv", "linalg_cond": "linalg.cond", "linalg_matrix_rank": "torch.linalg.matrix_rank",
    "linalg_tensorinv": "tensorinv", "linalg_tensorsolve": "tensorsolve", "cholesky_solve": "cholesky_solve",
}


@dataclass(frozen=True)
class Watch:
    """The ``out=`` tensors of the builtin running now, which sit on another device than its inputs."""

    name: str
    outs: tuple[torch.Tensor, ...]
    inputs: torch.device

    def check_copy(self, target: object, source: object) -> None:
        if isinstance(source, torch.Tensor) and any(target is t for t in self.outs):
            out = cast(torch.Tensor, target)  # one of self.outs
            raise NotSimulatedError(
                f"{self.name}(..., out=...) with inputs on {self.inputs} and an out= tensor on "
                f"{device_of(out)}: its composite kernel copies the result into out, and whether a GPU "
                "checks the device first depends on that kernel (PyTorch's own out= tests expect an error)")


def _tensors(value: object) -> list[torch.Tensor]:
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [t for item in value for t in _tensors(item)]
    return []


def watch(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> Watch | None:
    """A Watch where an ``out=`` tensor is on another device than the inputs (``checkSameDevice``
    kernels raise here); None otherwise."""
    outs = _tensors(kwargs["out"])
    inputs = _tensors([*args, *(v for k, v in kwargs.items() if k != "out")])
    if not outs or not inputs:
        return None
    devices = [device_of(t) for t in inputs]
    device = next((d for d in devices if d.type == "cuda"), devices[0])
    stray = next((t for t in outs if device_of(t) != device), None)
    if stray is None or {device.type, device_of(stray).type} != {"cpu", "cuda"}:
        return None
    name = getattr(func, "__name__", str(func))
    label = SAME_DEVICE_NAMES.get(name)
    if label is not None and device_of(stray) != devices[0]:
        raise cuda_error(f"{label}: Expected result and input tensors to be on the same device, but got result on "
                         f"{device_of(stray)} and input on {devices[0]}")
    return Watch(name, tuple(outs), device)
