"""Device checks that kernels make themselves, beyond the generated wrapper's and TensorIterator's.

The dispatch mode sees these operators, but their own checks are lost on CPU values: a
CompositeExplicitAutograd kernel decomposes into operators that accept the mix (``block_diag``
copies each block into its result, ``mode.values`` copies into its outputs), a structured
kernel checks its ``out=`` tensor in the generated wrapper's ``resize_out``, a foreach kernel
checks its scalar tensor only on its CUDA fast path. Each handler takes the operands (with
their simulated devices) and returns the device the operator runs on, or raises what CUDA
raises, with the text of the torch release this runs under (tests/sim/test_sim_kernels.py
reads every fragment back from libtorch).

Sources (PyTorch, aten/src/ATen/ unless noted):
- native/TensorShape.cpp ``block_diag``; native/TensorCompare.cpp ``mode_out``;
  native/Blas.cpp ``dot_out`` / ``vdot_out``; native/ReduceOps.cpp ``max_unary_out``;
- torchgen/dest/register_dispatch_key.py: a structured out= wrapper's ``set_output`` calls
  ``resize_out`` ("Expected out tensor to have device D, but got E instead") with the options
  its meta function computed from the input, unless that meta function builds a
  TensorIterator (``structured_inherits: TensorIteratorBase``: TensorIterator's message);
- native/cuda/ForeachBinaryOpScalarTensor.cu: the fast path (same device and dtype, dense)
  "scalar tensor expected to be on D but is on E", the slow path one op per tensor;
  native/ForeachUtils.h ``convert_tensor_to_scalar_list``: "Expected scalars to be on CPU";
- native/TensorShape.cpp ``checkSetStorage`` (``set_(storage)``); native/PackedSequence.cpp (batch
  sizes are made with the CPU lengths' options).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch
from torch._prims_common import is_non_overlapping_and_dense_or_false

from cuda_sim import _native
from cuda_sim._errors import cuda_error
from cuda_sim._placement import CPU, device_of, is_guess, storage_device
from cuda_sim._prerun import raise_earlier_error

if TYPE_CHECKING:  # _rules imports this module
    from cuda_sim._rules import Operand

Handler = Callable[[torch._ops.OpOverload, Sequence[object], dict[str, object], "list[Operand]"], torch.device]


def _block_diag(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                ops: list[Operand]) -> torch.device:
    inputs = [op for op in ops if not op.out]
    if not inputs:
        return CPU
    first = inputs[0].device
    for index, op in enumerate(inputs):
        if op.device != first:
            raise cuda_error("torch.block_diag: input tensors must all be on the same device. Input 0 is on device "
                             f"{first} and input {index} is on device {op.device}")
    return first


def _mode_values(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                 ops: list[Operand]) -> torch.device:
    by_name = {op.name: op for op in ops}
    self_op = by_name["self"]
    if self_op.tensor.layout != torch.strided:
        return self_op.device  # "mode only supports strided layout" comes first
    for name in ("values", "indices"):
        out = by_name[name]
        if out.device != self_op.device:
            raise cuda_error(f"expected device '{self_op.device}' but got '{out.device}' for {name} output")
    return self_op.device


def _dot_out(label: str) -> Handler:
    def check(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
              ops: list[Operand]) -> torch.device:
        inputs = [op.device for op in ops if not op.out]
        out = next(op.device for op in ops if op.out)
        first, second = inputs[0], inputs[1]
        if not out == first == second:
            raise cuda_error(f"{label}: Expected the output and input tensors to be on the same device, but got the "
                             f"output tensor on {out}, the 'input' tensor on {first}, and the 'other' tensor on "
                             f"{second}")
        return first

    return check


def _unary_out(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
               ops: list[Operand]) -> torch.device:
    by_name = {op.name: op for op in ops}
    if by_name["self"].device != by_name["out"].device:
        raise cuda_error("Expected self.device() == out.device() to be true, but got false.  (Could this error "
                         "message be improved?  If so, please report an enhancement request to PyTorch.)")
    return by_name["self"].device


def _structured_out(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                    ops: list[Operand]) -> torch.device:
    """A structured out= kernel whose meta function sizes its outputs with the input's options."""
    inputs = [op for op in ops if not op.out]
    expected = inputs[0].device if inputs else CPU
    for op in ops:
        if op.out and op.device != expected:
            raise_earlier_error(func, args, kwargs)  # resize_out checks the dtype first
            raise cuda_error(f"Expected out tensor to have device {expected}, but got {op.device} instead")
    return expected


@functools.cache
def structured_out_ops() -> frozenset[str]:
    """Structured out= operators with a CUDA kernel, no generated device check and a meta
    function that is no TensorIterator (reductions, scans): read from native_functions.yaml."""
    found = set()
    for name, entry in _native.table().items():
        info = _native.op_info(name)
        if (info is not None and info.cuda_kernel and not info.device_check and entry.get("structured") == "True"
                and entry.get("structured_inherits") != "TensorIteratorBase"):
            found.add(name)
    return frozenset(found)


SPECIAL: dict[str, Handler] = {
    "block_diag": _block_diag, "mode.values": _mode_values, "dot.out": _dot_out("dot"),
    "vdot.out": _dot_out("vdot"), "max.unary_out": _unary_out, "min.unary_out": _unary_out,
}


def special(name: str) -> Handler | None:
    handler = SPECIAL.get(name)
    if handler is None and name in structured_out_ops():
        return _structured_out
    return handler


def _check_scalars(args: Sequence[object], value: object) -> None:
    """``_foreach_addcmul/addcdiv.Tensor`` read their ``scalars`` tensor on the host."""
    if isinstance(value, torch.Tensor):
        device = device_of(value)
        if device != CPU:
            raise cuda_error(f"Expected scalars to be on CPU, got {device} instead.")


def _check_set_storage(args: Sequence[object], storage: object) -> None:
    """native/TensorShape.cpp ``checkSetStorage``."""
    tensor = args[0]
    if not isinstance(tensor, torch.Tensor) or storage is None or not tensor.is_cpu or is_guess(tensor):
        return  # a tensor C++ made for the purpose (storage copies) has no device of its own yet
    current, given = device_of(tensor), storage_device(storage)
    if current != given:
        raise cuda_error(f'Attempted to set the storage of a tensor on device "{current}" to a storage on different '
                         f'device "{given}".  This is no longer allowed; the devices must match.')


def _check_lengths(args: Sequence[object], lengths: object) -> None:
    """native/PackedSequence.cpp ``checkLongTensor``."""
    if isinstance(lengths, torch.Tensor):
        device = device_of(lengths)
        if lengths.dim() != 1 or device != CPU or lengths.dtype != torch.int64:
            dtype = str(lengths.dtype).rsplit(".", 1)[-1]
            raise cuda_error("'lengths' argument should be a 1D CPU int64 tensor, but got "
                             f"{lengths.dim()}D {device} {_SCALAR_NAMES.get(dtype, dtype)} tensor")


_SCALAR_NAMES = {"int64": "Long", "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
                 "float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16"}


def host_argument(name: str, argument: str, type_text: str) -> Callable[[Sequence[object], object], None] | None:
    """The check of an argument that a CUDA kernel reads on the host, not as a device operand:
    foreach ``scalars``, ``_pack_padded_sequence``'s ``lengths``, ``set_``'s Storage."""
    if type_text == "Storage":
        return _check_set_storage
    if type_text == "Tensor" and argument == "scalars" and name.startswith("_foreach_"):
        return _check_scalars
    if name == "_pack_padded_sequence" and argument == "lengths":
        return _check_lengths
    return None


# outputs CUDA kernels make on the host whatever the inputs' device (native/PackedSequence.cpp:
# batch sizes are made with the CPU lengths' options; _pad_packed_sequence: cuda_sim/_methods.py)
HOST_OUTPUTS: dict[str, frozenset[int]] = {"_pack_padded_sequence": frozenset({1})}


def check_foreach(func: torch._ops.OpOverload, name: str, ops: list[Operand]) -> None:
    """The check a foreach kernel with a scalar tensor makes on its CUDA fast path."""
    if name.split(".")[-1] != "Tensor":
        return
    tensors = [op for op in ops if op.name == "self"]
    other = next((op for op in ops if op.name == "other"), None)
    if other is None or not tensors or not _fast_route(tensors, division=name.startswith("_foreach_div")):
        return
    if tensors[0].tensor.dtype != other.tensor.dtype or other.tensor.dim() != 0 or other.tensor.numel() != 1:
        return  # the slow path ("scalar tensor expected to be 0 dim ...", or one op per tensor)
    if other.device != tensors[0].device:
        raise cuda_error(f"scalar tensor expected to be on {tensors[0].device} but is on {other.device}")


def _fast_route(tensors: list[Any], division: bool) -> bool:
    """``can_use_fast_route`` (native/ForeachUtils.h) for one tensor list on the GPU."""
    first = tensors[0]
    if first.device.type != "cuda":
        return False
    if division and not (first.tensor.is_floating_point() or first.tensor.is_complex()):
        return False
    return all(op.device == first.device and op.tensor.dtype == first.tensor.dtype
               and op.tensor.layout == torch.strided and is_non_overlapping_and_dense_or_false(op.tensor)
               for op in tensors)
