"""The TorchDispatchMode: device checks and device propagation for every ATen operator.

It sees each operator after autograd, including the ones C++ issues (autograd formulas in the
backward pass, composite kernels), so placement survives code no Python mode can see. The
values are computed by the real CPU kernel.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _pop_mode, _push_mode

from cuda_sim import _cuda_api, _rng
from cuda_sim._cuda_api import SYNC
from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._numbers import as_tensors
from cuda_sim._placement import (
    _TAG,
    CPU,
    device_of,
    host_storage,
    is_guess,
    place,
    place_guess,
    place_storage,
    storage_of,
)
from cuda_sim._rules import (
    Decompose,
    Operand,
    custom_op_refusal,
    facts,
    foreach_devices,
    gather,
    op_name,
    operands,
    resolve,
)
from cuda_sim._state import local

_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)


class DeviceMode(TorchDispatchMode):
    """Checks that an operator's tensors may meet, runs it on the CPU, and places its fresh
    outputs on the device the operator ran on."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # TorchDispatchMode wraps __torch_dispatch__ in torch._dynamo.disable, which imports
        # dynamo (seconds) at the first operator; this mode does it itself once dynamo is loaded
        return False

    def __torch_dispatch__(self, func: torch._ops.OpOverload, types: Sequence[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        if types and any(_unwraps_first(t) for t in types):
            # a wrapper subclass with its own __torch_dispatch__ (DTensor, a user's wrapper)
            # unwraps first; the plain tensors it then computes with come back through this mode
            return NotImplemented
        if kwargs is None:
            kwargs = {}
        if _eval_frame_callback() is not None or _exporting():
            # inside code torch.compile made: keep dynamo out of this mode's frames, as
            # TorchDispatchMode's own wrapper would (dynamo is loaded whenever a callback is set)
            if self._disabled is None:
                self._disabled = sys.modules["torch._dynamo"].disable(self._dispatch, recursive=True)
            return self._disabled(func, args, kwargs)
        if _tracing_state() is not None:
            return self._traced(func, args, kwargs)
        try:
            with _NoTorchFunction():
                return self._run(func, args, kwargs)
        except Exception as error:
            local.error = error  # TorchScript's interpreter drops the text of an error raised here (cuda_sim._script)
            raise

    _disabled: Callable[..., Any] | None = None

    def _traced(self, func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object]) -> object:
        """An operator that ``torch.jit.trace`` did not record (it still has a tracing state here: a
        recorded one clears it), so that the tracer records its parts instead: ``convolution`` is
        traced as the ``_convolution`` its kernel calls (torchgen's ``DONT_RECORD_TRACE``). A Python
        handler runs with the Tracer key excluded, which would hide those parts: the graph would take
        the result as a constant ("Cannot insert a Tensor that requires grad as a constant")."""
        with _TracerOn(_TRACER, False), _NoTorchFunction():
            return self._run(func, args, kwargs)

    def _dispatch(self, func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object]) -> object:
        with _NoTorchFunction():
            return self._run(func, args, kwargs)

    def _run(self, func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object]) -> object:
        info = facts(func)
        tensors, devices, storages = gather(func, args, kwargs, info)
        guess = False
        state = local
        if not tensors:
            # a factory given device= runs there whatever its arguments say (below)
            device, guess = _tensorless_device() if state.explicit is None else (state.explicit, False)
        else:
            device = devices[0]
            for other in devices:
                if other is not device and other != device:
                    if _moved_by_the_factory(state.explicit, devices):
                        break
                    if state.explicit is None and any(d.type not in _SIMULATED for d in devices):
                        return _run_foreign(func, args, kwargs, tensors, devices)
                    if state.out_watch is not None and func is _COPY:
                        state.out_watch.check_copy(args[0], args[1])  # type: ignore[attr-defined]
                    mixed = _mixed_device(func, args, kwargs)
                    if mixed is None:
                        return self._decompose(func, args, kwargs)
                    device = mixed
                    break
            else:
                state.last = device
        if SYNC.mode and tensors:
            _check_sync(func, args, kwargs, devices)
        if state.explicit is not None:
            device, guess = state.explicit, False
            if _names_cuda(kwargs.get("device")):
                # a wrapper subclass's handler passing on the simulated target to its inner tensors
                kwargs = {**kwargs, "device": CPU}
        on_gpu = device.type == "cuda"
        if on_gpu:
            if not info.simulated:
                if info.generic:
                    return self._decompose(func, args, kwargs)
                raise custom_op_refusal(func)
            if info.generator is not None and kwargs.get("generator") is None:
                # random ops on the simulated GPU draw from its own generator, as CUDA kernels do
                func, kwargs = info.generator, {**kwargs, "generator": _rng.default_generator()}
        try:
            result = func._op(*args, **kwargs)
        except RuntimeError as error:
            unwrapped = as_tensors(func, args, kwargs, error)  # wrapped numbers reach Python modes as numbers
            if unwrapped is None:
                if on_gpu and isinstance(error, NotImplementedError) and _NO_CPU_KERNEL in str(error):
                    raise NotSimulatedError(f"{info.name} on cuda:0: it has a CUDA kernel and no CPU one to run in "
                                            "its place") from None
                raise
            args, kwargs = unwrapped
            result = func._op(*args, **kwargs)
        if type(result) is torch.Tensor or isinstance(result, torch.Tensor):
            if on_gpu:
                _place_one(result, device, tensors, storages, guess)
            elif guess and kwargs.get("device") is not None and state.python is None:
                # a factory C++ called with a device it read itself, no Python call in flight:
                # TorchScript's ``torch.zeros(n, device=x.device)`` reads a simulated tensor's
                # real device, the CPU. A guess: it takes the device of the first tensor it meets
                place_guess(result, CPU)
        elif isinstance(result, list) and info.name.startswith("_foreach_") and len(set(devices)) > 1:
            for item, item_device in zip(result, foreach_devices(func, args, kwargs), strict=False):
                _place_outputs(item, item_device, tensors, storages, guess)
        elif on_gpu:
            host = info.host_outputs if isinstance(result, tuple) else None
            if host:  # outputs a CUDA kernel makes on the host stay there
                for index, item in enumerate(result):
                    if index not in host:
                        _place_outputs(item, device, tensors, storages, guess)
            else:
                _place_outputs(result, device, tensors, storages, guess)
        return result

    def _decompose(self, func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object]) -> object:
        # the composite kernel's inner ops come back through this mode and get real CUDA's checks
        _push_mode(self)
        try:
            return func.redispatch(_CPU_KEYS, *args, **kwargs)
        finally:
            _pop_mode()


_SIMULATED = ("cpu", "cuda")
_NO_CPU_KERNEL = "with arguments from the 'CPU' backend"
_COPY = torch.ops.aten.copy_.default
_NoTorchFunction = torch._C.DisableTorchFunction
_eval_frame_callback = torch._C._dynamo.eval_frame.get_eval_frame_callback
_tracing_state = torch._C._get_tracing_state


def _dispatch_key(name: str) -> torch._C.DispatchKey:
    key = torch._C._parse_dispatch_key(name)  # also the keys the Python enum does not name
    if key is None:
        raise ImportError(f"this torch has no dispatch key {name}")
    return key


_TRACER = _dispatch_key("Tracer")
_TracerOn = torch._C._SetExcludeDispatchKeyGuard


def _exporting() -> bool:
    compiler = sys.modules.get("torch.compiler")
    return compiler is not None and compiler.is_exporting()


_UNWRAPS: dict[type, bool] = {}


def _unwraps_first(cls: type) -> bool:
    """Subclasses other than torch's own mode-driven ones (FakeTensor, FunctionalTensor), which
    hand their operators to their mode and never back to a subclass handler."""
    found = _UNWRAPS.get(cls)
    if found is None:
        found = _UNWRAPS[cls] = (getattr(cls, "__torch_dispatch__", None) is not torch._C._disabled_torch_dispatch_impl
                                 and not cls.__module__.startswith("torch._subclasses"))
    return found


def _run_foreign(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                 tensors: list[torch.Tensor], devices: list[torch.device]) -> object:
    """An operator meeting a device the simulation does not model (``meta``, a real backend).

    Real torch runs the kernel of the operands' highest-priority backend (``meta`` wins over
    every other), with that kernel's own device checks: a meta kernel mostly checks none, a
    Python meta registration says "Tensor on device D is not on the expected device E!", an
    ``out=`` copy "Attempting to copy from device D to device E ...". The simulation runs that
    same kernel; it sees simulated CUDA tensors as CPU ones, so where all of them are on the
    simulated GPU the CPU it names is the GPU."""
    hosts = [device for t, device in zip(tensors, devices, strict=True) if t.is_cpu]
    try:
        result = func(*args, **kwargs)
    except Exception as error:
        if hosts and all(device.type == "cuda" for device in hosts):
            raise _renamed(error, str(hosts[0])) from None
        raise
    if hosts and hosts[0].type == "cuda":
        _place_outputs(result, hosts[0], tensors, [storage_of(t) if t.is_cpu else None for t in tensors], False)
    return result


def _renamed(error: Exception, device: str) -> Exception:
    text = re.sub(r"\bcpu\b", device, str(error))
    try:
        renamed = cuda_error(text, type(error))
    except TypeError:
        return error
    return renamed


_SYNCING = frozenset({"_local_scalar_dense", "nonzero", "nonzero.out", "masked_select", "masked_select.out",
                      "_unique", "_unique2", "unique_dim", "unique_consecutive", "unique_dim_consecutive"})


def _check_sync(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                devices: list[torch.device]) -> None:
    """``torch.cuda.set_sync_debug_mode``: c10/cuda ``warn_or_error_on_sync``, which CUDA calls
    where the host waits for the GPU: reading a value (``item()``), data-dependent output sizes
    (``nonzero``, ``masked_select``, ``unique``, ``repeat_interleave`` without ``output_size``) and
    blocking copies to the host."""
    name = op_name(func)
    on_gpu = devices[0].type == "cuda"
    if name in _SYNCING or name == "repeat_interleave.Tensor":
        syncs = on_gpu and (name != "repeat_interleave.Tensor" or kwargs.get("output_size") is None)
    elif name in ("index.Tensor", "index_put", "index_put_", "_index_put_impl_"):
        indices = args[1] if len(args) > 1 else kwargs.get("indices", ())
        syncs = on_gpu and any(isinstance(i, torch.Tensor) and i.dtype in (torch.bool, torch.uint8)
                               for i in indices)  # type: ignore[attr-defined]  # a list of tensors; a mask: nonzero first
    elif name == "_to_copy":
        syncs = on_gpu and local.explicit is not None and local.explicit.type == "cpu" and not kwargs.get(
            "non_blocking")
    elif name == "copy_" and len(devices) > 1:
        blocking = not (args[2] if len(args) > 2 else kwargs.get("non_blocking", False))
        syncs = devices[0].type == "cpu" and devices[1].type == "cuda" and blocking
    else:
        return
    if syncs:
        _cuda_api.warn_or_error_on_sync()


def _names_cuda(device: object) -> bool:
    return isinstance(device, torch.device) and device.type == "cuda"


def _moved_by_the_factory(explicit: torch.device | None, devices: Sequence[torch.device]) -> bool:
    """Inside a factory given ``device=`` (``sparse_coo_tensor(indices, values, dtype=..., device="cuda")``):
    C++ moves every input there before it builds (torch/csrc/utils/tensor_new.cpp), so the caller's CPU
    tensors meeting the ones already converted are no device mix."""
    return explicit is not None and all(d == explicit or d.type == "cpu" for d in devices)


def _mixed_device(func: torch._ops.OpOverload, args: Sequence[object],
                  kwargs: dict[str, object]) -> torch.device | None:
    """Tensors on several devices: real CUDA's rule for this op (None: check its decomposition)."""
    ops = operands(func, args, kwargs)
    _adopt_guesses(ops)
    try:
        device = resolve(func, args, kwargs, ops)
    except Decompose:
        return None
    local.last = device
    if local.mixed is not None and torch.is_grad_enabled():
        local.mixed.append(([op.device for op in ops], [op.tensor for op in ops]))
    return device


def _adopt_guesses(ops: list[Operand]) -> None:
    """A tensor C++ created with a meaningless device takes the device of the known tensors it
    first meets (where real CUDA code would have created it from their options)."""
    known = [op for op in ops if not is_guess(op.tensor)]
    if len(known) == len(ops) or not known:
        return
    device = next((op.device for op in known if op.device != CPU), CPU)
    for op in ops:
        if op not in known and op.device != device:
            place(op.tensor, device)
            op.device = device


def _tensorless_device() -> tuple[torch.device, bool]:
    call = local.call
    if call is not None:
        return _first_cuda(call), False
    return local.last, True


def _first_cuda(values: object) -> torch.device:
    stack = [values]
    while stack:
        value = stack.pop()
        if isinstance(value, torch.Tensor):
            device = device_of(value)
            if device != CPU:
                return device
        elif isinstance(value, (list, tuple)):
            stack.extend(value)
        elif isinstance(value, dict):
            stack.extend(value.values())
    return CPU


def _place_outputs(result: object, device: torch.device, tensors: list[torch.Tensor], storages: list[object],
                   guess: bool) -> None:
    if isinstance(result, torch.Tensor):
        _place_one(result, device, tensors, storages, guess)
    elif isinstance(result, (list, tuple)):
        for item in result:
            _place_outputs(item, device, tensors, storages, guess)


def _replace_sparse(t: torch.Tensor, device: torch.device) -> None:
    storage = storage_of(t)
    if storage is not None and not hasattr(storage, _TAG):
        place(t, device)


def _place_one(t: torch.Tensor, device: torch.device, tensors: list[torch.Tensor], storages: list[object],
               guess: bool) -> None:
    if not t.is_cpu:
        return
    for i in tensors:
        if t is i:
            if t.layout is not torch.strided:
                # a sparse in-place op (``s += other``) may swap in new indices and values: they are where
                # the tensor was
                _replace_sparse(t, device)
            return  # in-place and out= ops return their argument, which keeps its placement (set_ too)
    storage = host_storage(t)
    if storage is None or hasattr(storage, _TAG):
        return
    for s in storages:
        if storage is s:
            return  # an alias of a CPU input keeps that input's placement
    if guess:
        place_guess(t, device)
    else:
        place_storage(storage, device)
