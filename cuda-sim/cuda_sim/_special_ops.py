"""The operators whose device rule is their own, not the generated check or TensorIterator's:
copies (the result lives where ``self`` does), indexing (CPU indices allowed), ``_index_put_impl_``,
``masked_fill``, ``where`` (0-dim inputs move) and convolution (each backend's message).
``_rules`` maps them by operator name (``_SPECIAL``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import torch

from cuda_sim import _native
from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._placement import CPU
from cuda_sim._prerun import marked

if TYPE_CHECKING:  # _rules imports this module
    from cuda_sim._rules import Operand


def _first_non_cpu(ops: list[Operand]) -> torch.device:
    for op in ops:
        if op.device != CPU:
            return op.device
    return CPU


def _no_check_self(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                   ops: list[Operand]) -> torch.device:
    """Cross-device copies are the point of these ops; the result lives where ``self`` does."""
    return ops[0].device if ops else CPU


def _copy_from(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
               ops: list[Operand]) -> torch.device:
    return ops[1].device if len(ops) > 1 else CPU


def _index(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
           ops: list[Operand]) -> torch.device:
    self_op = ops[0]
    indices = [op for op in ops[1:] if op.name == "indices"]
    if len(indices) <= self_op.tensor.dim():
        for op in indices:
            if op.device != CPU and op.device != self_op.device:
                raise cuda_error("indices should be either on cpu or on the same device as the "
                                   f"indexed tensor ({self_op.device})")
    return self_op.device


def _index_put_impl(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                    ops: list[Operand]) -> torch.device:
    self_op = ops[0]
    value = next((op for op in ops if op.name == "values"), None)
    indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
    if len(indices) > self_op.tensor.dim():  # type: ignore[arg-type]
        return self_op.device  # "too many indices" (IndexError) comes first
    if value is None or value.device == self_op.device or (
            value.tensor.dim() == 0 and value.tensor.numel() == 1):
        return self_op.device
    accumulate = bool(args[3] if len(args) > 3 else kwargs.get("accumulate", False))
    if accumulate and self_op.device.type == "cuda":
        raise cuda_error(f"expected device {self_op.device} but got device {value.device} for value tensor")
    common = self_op.device if self_op.device != CPU else value.device
    other = value.device if common == self_op.device else self_op.device
    raise cuda_error(_native.tensor_iterator_message(common, other))


def _masked_fill(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                 ops: list[Operand]) -> torch.device:
    self_op, mask = ops[0], ops[1]
    if mask.device != self_op.device:
        raise cuda_error("expected self and mask to be on the same device, but got mask on "
                           f"{mask.device} and self on {self_op.device}")
    return self_op.device


def _where(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
           ops: list[Operand]) -> torch.device:
    """``where_self_out`` moves every 0-dim CPU input to the first non-CPU input's device, then
    runs a TensorIterator over out and the inputs."""
    inputs = [op for op in ops if not op.out]
    device = _first_non_cpu(inputs)
    kept = [op for op in inputs if not (device != CPU and op.device != device and op.tensor.dim() == 0)]
    iterated = [op for op in ops if op.out] + kept
    common = _first_non_cpu(iterated)
    for op in iterated:
        if op.device != common:
            raise cuda_error(_native.tensor_iterator_message(common, op.device))
    return common


def _type_string(t: torch.Tensor, device: torch.device) -> str:
    name = t.type()
    return name.replace("torch.", "torch.cuda.", 1) if device.type == "cuda" else name


def _convolution(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                 ops: list[Operand]) -> torch.device:
    by_name = {op.name: op for op in ops}
    inp, weight, bias = by_name.get("input"), by_name.get("weight"), by_name.get("bias")
    if inp is None or weight is None:
        return _first_non_cpu(ops)
    if {op.device for op in ops} == {inp.device}:
        return inp.device
    try:
        func(*args, **kwargs)  # _convolution checks shapes before it chooses a backend
    except (RuntimeError, ValueError) as error:
        raise marked(error) from None
    backend = _conv_backend(args, inp) if inp.device.type != "cuda" else "Cudnn"
    if backend in ("Cudnn", "CudnnTranspose", "Mkldnn", "MkldnnTranspose"):
        suffix = ("" if backend.startswith("Cudnn") else
                  " or input should be a MKLDNN tensor and {} is a dense tensor")
        for other in (weight, bias):
            if other is not None and other.device != inp.device:
                kind = other.name
                raise cuda_error(
                    f"Input type ({_type_string(inp.tensor, inp.device)}) and {kind} type "
                    f"({_type_string(other.tensor, other.device)}) should be the same" + suffix.format(kind))
        return inp.device
    slow = _SLOW_CONV.get(backend)
    if slow is None:
        raise NotSimulatedError(f"device mismatch in a convolution on the {backend} backend")
    method = _native.wrapper_name(slow, False)
    for other in (weight, bias):
        if other is not None and other.device != inp.device:
            raise cuda_error(_native.device_check_message(other.name, other.device, inp.device, method))
    return inp.device


def _conv_backend(args: Sequence[object], inp: Operand) -> str:
    """The backend real torch picks for a CPU input (the selection depends on the input only)."""
    a = list(args)
    params = a[3:9]
    bias = a[2] if isinstance(a[2], torch.Tensor) else None
    sizes = list(bias.shape) if bias is not None else None
    backend = torch._C._select_conv_backend(a[0], a[1], bias, *params, sizes)
    return str(backend).rsplit(".", 1)[-1]


_SLOW_CONV = {
    "Slow2d": torch.ops.aten._slow_conv2d_forward.default,
    "SlowDilated2d": torch.ops.aten.slow_conv_dilated2d.default,
    "SlowDilated3d": torch.ops.aten.slow_conv_dilated3d.default,
    "Slow3d": torch.ops.aten.slow_conv3d_forward.default,
    "SlowTranspose2d": torch.ops.aten.slow_conv_transpose2d.default,
    "SlowTranspose3d": torch.ops.aten.slow_conv_transpose3d.default,
}
