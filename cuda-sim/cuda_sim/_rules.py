"""Which device an ATen operator runs on, and the exact error real CUDA raises when its tensors
are on different devices.

Sources (PyTorch, the release this runs under unless noted):
- generated CUDA wrappers (torchgen ``RegisterDispatchKey.gen_device_check``): every op without
  ``device_check: NoCheck`` runs ``c10::impl::check_and_update_common_device`` over its out=
  arguments, then its positional arguments, before anything else (aten/src/ATen/core/adaption.cpp);
- ``TensorIteratorBase::compute_types`` (aten/src/ATen/TensorIterator.cpp): common device = the
  first non-CPU operand (outputs first); a 0-dim CPU *input* is allowed when the op allows CPU
  scalars (at most one), an output never is; shapes are checked before devices (``build``);
- op-specific checks: ``index`` meta (indices on CPU or self's device), ``_index_put_impl_``
  (a 0-dim value moves, otherwise "expected device ... for value tensor" or TensorIterator),
  ``Convolution.cpp`` (``check_input_same_type_as_parameters`` per backend): in ``_special_ops``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from cuda_sim import _kernels, _native
from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._placement import _TAG, CPU, device_of, host_storage
from cuda_sim._prerun import raise_earlier_error
from cuda_sim._special_ops import (
    _convolution,
    _copy_from,
    _first_non_cpu,
    _index,
    _index_put_impl,
    _masked_fill,
    _no_check_self,
    _where,
)

SIM_NAMESPACES = frozenset({"aten", "prims", "prim", "c10d", "_c10d_functional", "_c10d_functional_autograd",
                             "profiler", "_dtensor", "debugprims", "rngprims"})


class Decompose(Exception):
    """The op has only a device-generic composite kernel: real CUDA checks its inner ops."""


@dataclass(frozen=True)
class _Arg:
    index: int
    name: str
    kind: str  # "t" Tensor, "l" Tensor[] / Tensor?[], "h" data the kernel reads on the host (never an operand)
    kwarg_only: bool
    out: bool
    write: bool
    check: Callable[[Sequence[object], object], None] | None = None  # for "h": CUDA's check of it


@dataclass
class Operand:
    name: str
    tensor: torch.Tensor
    device: torch.device
    positional: bool
    out: bool  # an out= argument
    write: bool  # written by the op (out= or in-place self)


@functools.cache
def _schema_args(func: torch._ops.OpOverload) -> tuple[_Arg, ...]:
    found = []
    name = op_name(func)
    for i, arg in enumerate(func._schema.arguments):
        text = str(arg.type)
        check = _kernels.host_argument(name, arg.name, text)
        if check is not None:
            kind = "h"
        elif text in ("Tensor", "Optional[Tensor]"):
            kind = "t"
        elif text in ("List[Tensor]", "List[Optional[Tensor]]"):
            kind = "l"
        else:
            continue
        write = arg.alias_info is not None and arg.alias_info.is_write
        found.append(_Arg(i, arg.name, kind, arg.kwarg_only, arg.is_out, write, check))
    return tuple(found)


class OpFacts:
    """What the dispatch mode needs to know about one operator, worked out at its first call and
    kept on the ``OpOverload`` (a dict keyed by it would run its Python ``__hash__`` per call)."""

    __slots__ = ("args", "generator", "generic", "host_outputs", "name", "simulated", "tensor_args")

    def __init__(self, func: torch._ops.OpOverload) -> None:
        self.name = op_name(func)
        self.args = _schema_args(func)
        # (index, name, is_list) of the tensor operands, when no argument needs a host check
        plain = all(spec.kind != "h" for spec in self.args)
        self.tensor_args = tuple((s.index, s.name, s.kind == "l") for s in self.args) if plain else None
        self.simulated = func.namespace in SIM_NAMESPACES
        self.generic = not self.simulated and device_generic(func)
        self.host_outputs = _kernels.HOST_OUTPUTS.get(self.name)
        self.generator = _generator_overload(func)


_FACTS = "_cuda_sim_facts"


def facts(func: torch._ops.OpOverload) -> OpFacts:
    found = func.__dict__.get(_FACTS)
    if found is None:
        found = OpFacts(func)
        setattr(func, _FACTS, found)
    return found


def _generator_overload(func: torch._ops.OpOverload) -> torch._ops.OpOverload | None:
    """``func`` itself when it takes ``generator=``, else its twin overload that does
    (``randn`` -> ``randn.generator``), else None."""
    if any(arg.name == "generator" for arg in func._schema.arguments):
        return func
    overload = func._overloadname
    twin = "generator" if overload == "default" else f"{overload}_generator"
    return getattr(func.overloadpacket, twin, None)


def gather(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
           info: OpFacts | None = None) -> tuple[list[torch.Tensor], list[torch.device], list[object]]:
    """The op's tensor arguments with their simulated devices and storages (the hot path)."""
    tensors: list[torch.Tensor] = []
    devices: list[torch.device] = []
    storages: list[object] = []
    n = len(args)
    if info is None:
        info = facts(func)
    plain = info.tensor_args
    if plain is not None:
        for index, name, is_list in plain:
            value = args[index] if index < n else kwargs.get(name)
            if value is None:
                continue
            if is_list:
                if isinstance(value, (list, tuple)):
                    for item in value:
                        if isinstance(item, torch.Tensor):
                            _add(item, tensors, devices, storages)
            elif isinstance(value, torch.Tensor):
                _add(value, tensors, devices, storages)
        return tensors, devices, storages
    for spec in info.args:
        value = args[spec.index] if spec.index < n else kwargs.get(spec.name)
        if spec.kind == "t":
            if not isinstance(value, torch.Tensor):
                continue
            items: Sequence[object] = (value,)
        elif spec.check is not None:
            spec.check(args, value)
            continue
        elif isinstance(value, (list, tuple)):
            items = value
        else:
            continue
        for item in items:
            if isinstance(item, torch.Tensor):
                _add(item, tensors, devices, storages)
    return tensors, devices, storages


def _add(t: torch.Tensor, tensors: list[torch.Tensor], devices: list[torch.device], storages: list[object]) -> None:
    tensors.append(t)
    if t.is_cpu:
        storage = host_storage(t)
        storages.append(storage)
        devices.append(getattr(storage, _TAG, CPU) if storage is not None else CPU)
    else:
        storages.append(None)
        devices.append(t.device)


def operands(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object]) -> list[Operand]:
    found: list[Operand] = []
    for spec in _schema_args(func):
        if spec.kind == "h":
            continue
        value = args[spec.index] if spec.index < len(args) else kwargs.get(spec.name)
        items = value if spec.kind == "l" and isinstance(value, (list, tuple)) else (value,)
        for item in items:
            if isinstance(item, torch.Tensor):
                found.append(Operand(spec.name, item, device_of(item), not spec.kwarg_only,
                                     spec.out, spec.write))
    return found


@functools.cache
def op_name(func: torch._ops.OpOverload) -> str:
    schema = func._schema
    base = schema.name.split("::", 1)[-1]
    return f"{base}.{schema.overload_name}" if schema.overload_name else base


def device_generic(func: torch._ops.OpOverload) -> bool:
    """A custom operator with no CUDA kernel but a device-generic one (``torch.library.impl(..., "default")``,
    ``custom_op`` without ``device_types``: CompositeExplicitAutograd), which real CUDA runs on cuda tensors:
    the simulation runs it too, its inner operators checked as usual. One with a CUDA kernel (an extension's)
    is not simulated."""
    has_kernel = torch._C._dispatch_has_kernel_for_dispatch_key
    name = func.name()
    return not has_kernel(name, "CUDA") and has_kernel(name, "CompositeExplicitAutograd")


def custom_op_refusal(func: torch._ops.OpOverload) -> NotSimulatedError:
    """Why a custom operator on simulated CUDA is not simulated: it has a CUDA kernel of its own, or
    no kernel a GPU could run (C++ would refuse it there)."""
    name = func._schema.name
    if torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), "CUDA"):
        return NotSimulatedError(f"the CUDA kernel of custom operator {name} (its own CUDA code, which the simulation "
                                 "cannot run on the CPU)")
    return NotSimulatedError(f"custom operator {name} on cuda:0: it has no CUDA kernel and no device-generic one "
                             "(CompositeExplicitAutograd), so a GPU would refuse it (\"Could not run ... with "
                             "arguments from the 'CUDA' backend\"); the simulation cannot run its CPU kernel in its "
                             "place")


def resolve(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
            ops: list[Operand]) -> torch.device:
    """The device the op runs on (its fresh outputs go there), or the real CUDA error."""
    namespace = func.namespace
    if namespace not in SIM_NAMESPACES:
        if facts(func).generic:
            raise Decompose  # its kernel's own operators meet the devices, as on a GPU
        if any(op.device.type == "cuda" for op in ops):
            raise custom_op_refusal(func)
        return CPU
    name = op_name(func)
    special = _SPECIAL.get(name) or _kernels.special(name)
    if special is not None:
        return special(func, args, kwargs, ops)
    if name.startswith("_foreach_"):
        _kernels.check_foreach(func, name, ops)
        return foreach_devices(func, args, kwargs)[0] if ops else CPU
    info = _native.op_info(name)
    if info is not None and info.cuda_kernel and info.device_check:
        return _codegen_check(func, info, ops)
    if info is not None and info.composite:
        raise Decompose
    return _tensor_iterator_check(func, args, kwargs, ops, info)


def foreach_devices(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                    ) -> list[torch.device]:
    """Foreach kernels fall back to one op per index when devices differ (native_functions.yaml:
    "foreach kernels fall back to slow path when tensors are on different devices"), so each
    index follows TensorIterator's rules on its own."""
    lists: list[tuple[_Arg, Sequence[object]]] = []
    shared: list[Operand] = []
    for spec in _schema_args(func):
        value = args[spec.index] if spec.index < len(args) else kwargs.get(spec.name)
        if spec.kind == "l" and isinstance(value, (list, tuple)):
            lists.append((spec, value))
        elif isinstance(value, torch.Tensor) and spec.kind == "t":
            shared.append(Operand(spec.name, value, device_of(value), not spec.kwarg_only, spec.out, spec.write))
    length = max((len(items) for _, items in lists), default=0)
    devices = []
    for index in range(length):
        ops = [Operand(spec.name, item, device_of(item), not spec.kwarg_only, spec.out, spec.write)
               for spec, items in lists if index < len(items) for item in (items[index],)
               if isinstance(item, torch.Tensor)]
        ops += shared
        devices.append(_tensor_iterator_check(func, args, kwargs, ops, None))
    return devices


def _codegen_check(func: torch._ops.OpOverload, info: _native.OpInfo, ops: list[Operand]) -> torch.device:
    checked = [op for op in ops if op.out] + [op for op in ops if op.positional and not op.out]
    common: torch.device | None = None
    for op in checked:
        if common is None:
            common = op.device
        elif op.device != common:
            method = _native.wrapper_name(func, info.structured)
            raise cuda_error(_native.device_check_message(op.name, op.device, common, method))
    return common if common is not None else _first_non_cpu(ops)


def _tensor_iterator_check(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                           ops: list[Operand], info: _native.OpInfo | None) -> torch.device:
    outputs = [op for op in ops if op.write]
    inputs = [op for op in ops if not op.out]
    common = _first_non_cpu(outputs + inputs)
    allow_scalars = len(inputs) >= 2  # binary/ternary configs allow one CPU scalar, unary ones do not
    scalars = 0
    for position, op in enumerate(outputs + inputs):
        is_output = position < len(outputs)
        if (common != CPU and allow_scalars and not is_output and op.tensor.dim() == 0
                and op.device == CPU):
            if scalars >= 1:
                _raise_earlier_error(func, args, kwargs, info)
                raise cuda_error("Trying to pass too many CPU scalars to non-CPU kernel!")
            scalars += 1
        elif op.device != common:
            _raise_earlier_error(func, args, kwargs, info, mismatch_is_output=is_output)
            raise cuda_error(_native.tensor_iterator_message(common, op.device))
    return common


def _raise_earlier_error(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                         info: _native.OpInfo | None, mismatch_is_output: bool = False) -> None:
    """TensorIterator checks overlap and shapes before devices (``TensorIteratorBase::build``)."""
    def allowed(error: BaseException) -> bool:
        return mismatch_is_output and "can't be cast to the desired output type" in str(error)

    raise_earlier_error(func, args, kwargs, allowed)


_Handler = Callable[[torch._ops.OpOverload, Sequence[object], dict[str, object], list[Operand]], torch.device]
_SPECIAL: dict[str, _Handler] = {
    "_to_copy": _no_check_self, "copy_": _no_check_self, "copy": _no_check_self,
    "_copy_from": _copy_from, "_copy_from_and_resize": _copy_from, "fill_.Tensor": _no_check_self,
    "index.Tensor": _index, "_unsafe_index.Tensor": _index,
    "_index_put_impl_": _index_put_impl,
    "masked_fill_.Tensor": _masked_fill, "masked_fill_.Scalar": _masked_fill,
    "masked_fill.Tensor": _masked_fill, "masked_fill.Scalar": _masked_fill,
    "convolution": _convolution, "_convolution": _convolution,
    "where.self": _where, "where.self_out": _where,
    "_local_scalar_dense": _no_check_self,
    # cuDNN's CTC: "log_probs is expected to be on CUDA while targets is expected to be on CPU" (the
    # native _ctc_loss has the generated check: ctc_loss moves targets to log_probs' device first)
    "_cudnn_ctc_loss": _no_check_self,
    "_cudnn_ctc_loss.Tensor": _no_check_self, "_use_cudnn_ctc_loss": _no_check_self,
    "_use_cudnn_ctc_loss.Tensor": _no_check_self, "set_.source_Tensor": _no_check_self,
}
