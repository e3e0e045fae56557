"""The TorchFunctionMode: the placement API as user code sees it.

It answers ``.device`` / ``.is_cuda`` from the simulated placement, implements ``.to`` /
``.cuda()`` / ``.cpu()`` / ``device=`` on factories over CPU values, and refuses what a CUDA
tensor refuses (``.numpy()``, pinning). Every other torch function runs with the mode
re-entered (``redispatch_function``), so torch functions written in Python, ``backward()`` and
the hooks it runs stay inside the simulation.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.utils._device as _device_module
from torch.overrides import TorchFunctionMode

from cuda_sim import _autograd, _composite, _devices_api, _out, _rng, _serialization
from cuda_sim._errors import NotSimulatedError, cuda_error, take_mark
from cuda_sim._placement import (
    CPU,
    cuda_device,
    device_of,
    is_pinned,
    mark_pinned,
    parse_device,
    place,
    real_device,
    storage_of,
)
from cuda_sim._state import local

_Base = torch._C.TensorBase
_redispatch = getattr(torch._C, "_skip_one_hop_torch_function", None)
_push_mode = torch._C._push_on_torch_function_stack
_pop_mode = torch._C._pop_torch_function_stack
_PYTHON_FUNCS = (types.FunctionType, types.MethodType)


class PlacementMode(TorchFunctionMode):
    def __torch_function__(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        __tracebackhide__ = True  # pytest: a test's traceback ends in the user's code
        try:
            if type(func) is _MethodWrapper:  # an attribute of a tensor (``x.shape``, ``x.device``)
                getter = _GETTERS.get(func.__self__)  # type: ignore[attr-defined]  # a method-wrapper (type checked)
                if getter is not None:  # the simulated device, whatever a subclass's handler would add
                    return getter(args[0])
                if not types_:
                    return func(*args, **(kwargs or {}))  # nothing to simulate, no operator to re-enter
            if types_ and _overriding(types_):  # an argument with its own __torch_function__
                overloaded = torch.overrides._get_overloaded_args(_relevant(args, kwargs or {}))
                if overloaded:
                    return self._delegate(overloaded, func, types_, args, kwargs or {})
            if kwargs and kwargs.get("out") is not None and not isinstance(func, _PYTHON_FUNCS):
                return self._with_out(func, types_, args, kwargs)
            return self._route(func, types_, args, kwargs)
        except Exception as error:
            if take_mark(error):
                raise error.with_traceback(None)  # noqa: B904 - the same error, minus the simulation's frames
            raise

    def _route(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
               kwargs: dict[str, Any] | None) -> Any:
        plain = _PLAIN.get(func)
        if plain is None:
            plain = _is_plain(func)
            if not isinstance(func, _PYTHON_FUNCS):  # bound methods would keep their objects alive
                _PLAIN[func] = plain
        if plain and (not kwargs or (kwargs.get("device") is None and kwargs.get("generator") is None
                                     and not kwargs.get("pin_memory"))):
            return self._builtin(func, types_, args, kwargs or {})
        return self._handle(func, types_, args, kwargs or {})

    def _with_out(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
                  kwargs: dict[str, Any]) -> Any:
        found = _out.watch(func, args, kwargs)
        if found is None:
            return self._route(func, types_, args, kwargs)
        saved = local.out_watch
        local.out_watch = found
        try:
            return self._route(func, types_, args, kwargs)
        finally:
            local.out_watch = saved

    def _delegate(self, overloaded: list[Any], func: Callable[..., Any], types_: Sequence[type],
                  args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
        """What torch does below a mode that calls ``func(*args)``: each overriding argument's
        ``__torch_function__`` in torch's precedence order, until one does not return
        NotImplemented. They run with this mode on, so the plain tensors they unwrap to and the
        calls they make are simulated (the skip-one-hop redispatch would skip them: a non-tensor
        wrapper would reach C++ as is, a subclass would lose its type)."""
        _push_mode(self)
        try:
            for arg in overloaded:
                result = arg.__torch_function__(func, types_, args, kwargs)
                if result is not NotImplemented:
                    return result
        finally:
            _pop_mode()
        return func(*args, **kwargs)  # all declined: torch's own TypeError names them

    def _builtin(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
                 kwargs: dict[str, Any]) -> Any:
        """``call(builtin=True)`` for a generated binding with nothing to simulate at this level
        (the hot path: most torch calls; the dispatch mode checks their operators)."""
        state = local
        saved_call, saved_mixed, saved_python = state.call, state.mixed, state.python
        state.call, state.mixed, state.python = (args, kwargs), [], None
        _push_mode(self)
        try:
            result = _redispatch(func, types_, args, kwargs)  # type: ignore[misc]  # call() found it (not None)
        finally:
            _pop_mode()
            mixed = state.mixed
            state.call, state.mixed, state.python = saved_call, saved_mixed, saved_python
        if mixed:
            _autograd.fix_devices(result, args, kwargs)
        return result

    def _handle(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
                kwargs: dict[str, Any]) -> Any:
        handler = _METHODS.get(func)
        if handler is not None:
            result = handler(self, args, kwargs)
            if result is not _serialization.DEFAULT:
                return result
        if isinstance(func, _PYTHON_FUNCS):
            inner = _overridden_c_method(func, args)
            if inner is None:
                return self.call(func, types_, args, kwargs, builtin=False)
            func = inner
        composite = _composite.CHECKS.get(func)
        if composite is not None:
            composite(func, args, kwargs)
        if kwargs.get("device") is None and func in _FACTORIES:
            if func in _NEW_METHODS and args:
                if not _wraps_existing(func, args):
                    kwargs = {**kwargs, "device": device_of(args[0])}  # x.new_*(...) is made where x lives
            elif _device_module.CURRENT_DEVICE is not None:
                # set_default_device / `with torch.device(...)`: DeviceContext sits below this mode
                # and the skip-one-hop redispatch would bypass it
                kwargs = {**kwargs, "device": _device_module.CURRENT_DEVICE}
        if kwargs.get("generator") is not None:
            _check_generator(args, kwargs)
        if kwargs.get("device") is not None or kwargs.get("pin_memory"):
            return self._explicit(func, types_, args, kwargs)
        return self.call(func, types_, args, kwargs, builtin=True)

    def call(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
             kwargs: dict[str, Any], builtin: bool) -> Any:
        saved = local.call, local.mixed, local.python
        if builtin:
            local.call, local.mixed, local.python = (args, kwargs), [], None
        else:
            local.call, local.mixed, local.python = None, None, (func, args[0] if args else None)
        try:
            if _redispatch is None or (builtin and not _reenterable(func)):
                result = func(*args, **kwargs)
            else:
                # the mode stays on for what runs inside: Python bodies, and the Python callbacks
                # (saved-tensor hooks, ...) that generated builtins may call
                with self:
                    result = _redispatch(func, types_, args, kwargs)
            mixed = local.mixed
        finally:
            local.call, local.mixed, local.python = saved
        if mixed:
            _autograd.fix_devices(result, args, kwargs)
        return result

    def _explicit(self, func: Callable[..., Any], types_: Sequence[type], args: Sequence[Any],
                  kwargs: dict[str, Any]) -> Any:
        target = parse_device(kwargs["device"]) if kwargs.get("device") is not None else CPU
        if target.type == "cuda" and _fake_mode_active():
            # FakeTensorMode allocates nothing: it makes a fake CUDA tensor on a CPU build too
            return self.call(func, types_, args, {**kwargs, "device": target}, builtin=True)
        kwargs = {**kwargs, "device": real_device(target)}
        pinned = bool(kwargs.get("pin_memory"))
        if pinned:
            if target.type != "cpu":
                raise cuda_error("Only dense CPU tensors can be pinned")
            kwargs["pin_memory"] = False
        saved = local.explicit
        local.explicit = target
        try:
            result = self.call(func, types_, args, kwargs, builtin=True)
        finally:
            local.explicit = saved
        if isinstance(result, torch.Tensor):
            sources = [a for a in args if isinstance(a, torch.Tensor) and _shares(a, result)]
            if not sources:
                if device_of(result) != target:  # mostly placed already, by the dispatch mode
                    place(result, target)  # fresh: C++ may have built it from a temporary first
            elif device_of(sources[0]) != target:
                result = move(result, target)  # as_tensor(t, device=d) copies when t is elsewhere
            if pinned:
                mark_pinned(result)
        return result


_MethodWrapper = type(torch.Tensor.device.__get__)
_DisableAll = torch._C.DisableTorchFunction


class KeepSimulation:
    """``torch._C.DisableTorchFunction`` while the simulation runs (patched in by the session).

    Subclass handlers use it to run the plain operator (``with DisableTorchFunction(): return
    func(*args)``). Taken literally it also turns this mode off, and C++ would then meet
    ``device="cuda"`` ("PyTorch is not linked with support for cuda devices"); on a GPU the
    same call just runs. So it disables every ``__torch_function__`` but this mode's: subclass
    handlers (as the real one does) and the modes above this one (stashed until exit)."""

    def __init__(self) -> None:
        self._stashed: list[object] = []
        self._inner: Any = None

    def __enter__(self) -> KeepSimulation:
        stack = torch.overrides._get_current_function_mode_stack()
        ours = next((i for i, mode in enumerate(stack) if isinstance(mode, PlacementMode)), None)
        if ours is None:
            self._inner = _DisableAll()
        else:
            for _ in range(len(stack) - ours - 1):
                self._stashed.append(_pop_mode())
            self._inner = torch._C.DisableTorchFunctionSubclass()
        self._inner.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._inner.__exit__(*exc)
        while self._stashed:
            _push_mode(self._stashed.pop())


def _overriding(types_: Sequence[type]) -> bool:
    """A subclass or another type with a ``__torch_function__`` of its own (``torch.Tensor``'s
    default handler only converts the result to ``torch.Tensor``)."""
    found = _OVERRIDING.get(types_)
    if found is None:
        found = _OVERRIDING[tuple(types_)] = any(
            t is not torch.Tensor and getattr(t, "__torch_function__", _disabled) is not _disabled for t in types_)
    return found


_disabled = torch._C._disabled_torch_function_impl
_OVERRIDING: dict[object, bool] = {}


def _relevant(args: Sequence[Any], kwargs: dict[str, Any]) -> list[object]:
    """The arguments torch's argument parser looks at for overrides: each one, and the items of
    a list or tuple (a TensorList), positional first."""
    found: list[object] = []
    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            found.extend(value)
        else:
            found.append(value)
    return found
_NEW_METHODS = frozenset(getattr(_Base, name) for name in (
    "new", "new_tensor", "new_empty", "new_empty_strided", "new_zeros", "new_ones", "new_full"))
_FACTORIES = frozenset(_device_module._device_constructors()) | _NEW_METHODS
_GENERATED = tuple(m for m in (torch._C._VariableFunctions, torch._C._nn, getattr(torch._C, "_linalg", None),
                               getattr(torch._C, "_fft", None), getattr(torch._C, "_special", None),
                               getattr(torch._C, "_nested", None), getattr(torch._C, "_sparse", None))
                   if m is not None)


_FAKE_KEY = getattr(getattr(torch._C, "_TorchDispatchModeKey", None), "FAKE", None)


def _fake_mode_active() -> bool:
    return _FAKE_KEY is not None and torch._C._get_dispatch_mode(_FAKE_KEY) is not None


def _wraps_existing(func: Callable[..., Any], args: Sequence[Any]) -> bool:
    """``x.new(storage)`` / ``x.new(tensor)`` share existing memory, and so its placement."""
    return func is _Base.new and len(args) > 1 and isinstance(
        args[1], (torch.TypedStorage, torch.UntypedStorage, torch.Tensor))


def _reenterable(func: Callable[..., Any]) -> bool:
    """Generated bindings honour the skip-one-hop flag; a few hand-written builtins (grad-mode
    toggles) do not and would recurse, so they are called with the mode off."""
    found = _REENTERABLE.get(func)
    if found is None:
        qualname = getattr(func, "__qualname__", "")
        found = _REENTERABLE[func] = qualname.startswith(("TensorBase.", "_VariableFunctionsClass.")) or getattr(
            func, "__self__", None) in _GENERATED
    return found


_REENTERABLE: dict[object, bool] = {}


def _is_plain(func: Callable[..., Any]) -> bool:
    """A generated builtin this mode has nothing to do for beyond re-entering (its handling
    here depends on its keyword arguments only: ``device=``, ``generator=``, ``pin_memory=``)."""
    if isinstance(func, _PYTHON_FUNCS) or _redispatch is None:
        return False
    return (func not in _METHODS and func not in _composite.CHECKS and func not in _FACTORIES
            and _reenterable(func))


# builtin -> _is_plain(builtin), filled as torch functions are first met
_PLAIN: dict[object, bool] = {}


def _overridden_c_method(func: Callable[..., Any], args: Sequence[Any]) -> Callable[..., Any] | None:
    """A Python override in ``torch.Tensor`` (``unflatten``) that calls ``super()`` reaches this
    mode again under its own name: that second call is the C method."""
    running = local.python
    if running is None or running[0] is not func or not args or args[0] is not running[1]:
        return None
    return getattr(_Base, getattr(func, "__name__", ""), None)


def _check_generator(args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    # checked here: the dispatcher hands TorchDispatchMode a fresh Generator wrapper that no
    # longer carries the simulated device
    if kwargs.get("device") is not None:
        target = parse_device(kwargs["device"])
    else:
        target = next((device_of(a) for a in args if isinstance(a, torch.Tensor)), CPU)
    _rng.check_generator(kwargs["generator"], target)


def _shares(a: torch.Tensor, b: torch.Tensor) -> bool:
    return storage_of(a) is storage_of(b)


def move(t: torch.Tensor, target: torch.device, dtype: torch.dtype | None = None, non_blocking: bool = False,
         copy: bool = False, memory_format: torch.memory_format = torch.preserve_format) -> torch.Tensor:
    """``t.to(target, dtype)`` as CUDA does it: a fresh tensor when the device changes."""
    source = device_of(t)
    if target == source:
        return _Base.to(t, dtype=dtype, non_blocking=non_blocking, copy=copy, memory_format=memory_format)
    saved = local.explicit
    local.explicit = target
    # a wrapper subclass's own __torch_dispatch__ reads the target device (optimum-quanto converts its weight
    # layout when the device type changes): it is given the simulated one; its inner tensors come back here
    device = target if type(t) not in _PLAIN_TYPES and _wrapper_dispatch(type(t)) else real_device(target)
    try:
        out = _Base.to(t, device=device, dtype=dtype, non_blocking=non_blocking, copy=True,
                       memory_format=memory_format)
    finally:
        local.explicit = saved
    place(out, target)
    if out.grad_fn is not None:
        _autograd.hook_node(out.grad_fn, [(t, source)])
    return out


def _split_to_args(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[object, dict[str, object]]:
    """Tensor.to(device?, dtype?, non_blocking, copy) / to(dtype, ...) / to(other, ...)."""
    rest = list(args)
    device: object = kwargs.get("device")
    opts: dict[str, object] = {k: v for k, v in kwargs.items() if k != "device"}
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest.pop(0)
        device = device_of(other)
        opts.setdefault("dtype", other.dtype)
    elif rest and not isinstance(rest[0], torch.dtype) and rest[0] is not None and not isinstance(rest[0], bool):
        device = rest.pop(0)
    elif rest and rest[0] is None:
        rest.pop(0)
    if rest and (isinstance(rest[0], torch.dtype) or rest[0] is None):
        opts.setdefault("dtype", rest.pop(0))
    for name, value in zip(("non_blocking", "copy"), rest, strict=False):
        opts[name] = value
    return device, opts


def _to(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    t = args[0]
    device, opts = _split_to_args(args[1:], kwargs)
    if device is not None and not isinstance(device, (str, int, torch.device)):
        return _Base.to(*args, **kwargs)  # no device named: torch's own parser decides (or refuses)
    target = parse_device(device) if device is not None else device_of(t)
    return move(t, target, **opts)  # type: ignore[arg-type]


def _cuda(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    device = args[1] if len(args) > 1 else kwargs.get("device")
    if device is None:
        target = cuda_device(None)
    else:
        target = parse_device(device)
        if target.type != "cuda":
            raise cuda_error(f"Invalid device, must be cuda device, but got: {device}")
    return move(args[0], target, non_blocking=bool(kwargs.get("non_blocking", False)),
                memory_format=kwargs.get("memory_format", torch.preserve_format))


def _cpu(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    return move(args[0], CPU, memory_format=kwargs.get("memory_format", torch.preserve_format))


def _type(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """``Tensor.type(dtype=None, non_blocking=False, *, memory_format=None)`` as the CUDA build's
    ``THPVariable_type`` does it: a ``torch.dtype`` keeps the device; a type name (a string, a
    legacy tensor type, ``torch.Tensor``) also names the device type."""
    t = args[0]
    wanted = args[1] if len(args) > 1 else kwargs.get("dtype")
    non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", kwargs.get("async", False)))
    memory_format = kwargs.get("memory_format") or torch.preserve_format
    source = device_of(t)
    if wanted is None:
        name = _Base.type(t)
        return name.replace("torch.", "torch.cuda.", 1) if source.type == "cuda" else name
    if isinstance(wanted, torch.dtype):
        return move(t, source, dtype=wanted, non_blocking=non_blocking,
                    memory_format=memory_format)
    name = _type_name(wanted)
    on_cuda = name.startswith("torch.cuda.")
    host_name = name.replace("torch.cuda.", "torch.", 1) if on_cuda else name
    try:
        # the C binding takes memory_format; torch's stub does not list it
        converted = _Base.type(t, host_name, non_blocking, memory_format=memory_format)  # type: ignore[call-overload]
    except ValueError:
        raise ValueError(f"invalid type: '{name}'") from None
    target = (source if source.type == "cuda" else cuda_device(None)) if on_cuda else (
        source if source.type != "cuda" else CPU)
    return converted if target == source else move(converted, target, non_blocking=non_blocking)


def _type_as(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """native ``type_as``: ``self.to(other.options())``, so the other's device and dtype (C++
    reads the other's real device: the CPU)."""
    other = args[1] if len(args) > 1 else kwargs.get("other")
    if len(args) + len(kwargs) != 2 or not isinstance(args[0], torch.Tensor) or not isinstance(other, torch.Tensor):
        return _Base.type_as(*args, **kwargs)  # torch's own argument error
    return move(args[0], device_of(other), dtype=other.dtype)


def _type_name(wanted: object) -> str:
    """The name ``THPVariable_type`` parses: a string as given, a type's ``tp_name``."""
    if isinstance(wanted, str):
        return wanted
    if not isinstance(wanted, type):
        raise TypeError("dtype must be a type, str, or dtype object")
    sim_name: str | None = getattr(wanted, "_sim_type_name", None)
    if sim_name is not None:
        return sim_name
    if wanted is torch.Tensor:
        return "torch.Tensor"
    heap_type = bool(wanted.__flags__ & (1 << 9))  # Py_TPFLAGS_HEAPTYPE: tp_name is the bare name
    if heap_type or wanted.__module__ == "builtins":
        return wanted.__name__
    return f"{wanted.__module__}.{wanted.__name__}"


def _get_device(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    device = device_of(args[0])
    return device.index if device.type == "cuda" else -1


def _numpy(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    t = args[0]
    device = device_of(t)
    if device.type == "cuda":
        if not kwargs.get("force"):
            raise cuda_error(f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                             "tensor to host memory first.", TypeError)
        t = move(t.detach(), CPU)
    return _Base.numpy(t, **kwargs)


def _pin_memory(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    t = args[0]
    if device_of(t).type == "cuda":
        raise cuda_error(f"cannot pin '{_type(mode, (t,), {})}' only dense CPU tensors can be pinned")
    if is_pinned(t):
        return t  # type: ignore[no-any-return]  # a Tensor: device_of read it
    out: torch.Tensor = t.clone()
    mark_pinned(out)
    return out


def _is_pinned(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    return device_of(args[0]).type != "cuda" and is_pinned(args[0])


def _record_stream(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    if device_of(args[0]).type != "cuda":
        _Base.record_stream(*args, **kwargs)  # raises as it does for CPU tensors on a CUDA build


def _dlpack(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    if device_of(args[0]).type == "cuda":
        raise NotSimulatedError("DLPack export of a cuda tensor (its memory would be host memory)")
    return torch.Tensor.__dlpack__(*args, **kwargs)


def _parse_to(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[object, ...]:
    device, opts = _split_to_args(args, kwargs)
    target = parse_device(device) if device is not None else None
    return (target, opts.get("dtype"), bool(opts.get("non_blocking", False)), opts.get("memory_format"))


def _rnn(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any], func: Callable[..., Any]) -> object:
    """``_VF.lstm/gru/rnn_*``: RNN.cpp ``check_attributes`` compares the input's device with every
    hidden state, then every parameter, before any kernel (the CPU path cannot see it)."""
    # packed: (data, batch_sizes, hx, params, ...); lstm's hx is a tuple, the others' a tensor
    packed = len(args) > 2 and isinstance(args[1], torch.Tensor) and (
        func is torch._C._VariableFunctions.lstm or isinstance(args[2], torch.Tensor))
    hidden, params = (args[2], args[3]) if packed else (args[1], args[2])
    device = device_of(args[0])
    hiddens = hidden if isinstance(hidden, (list, tuple)) else [hidden]
    for name, group in (("hidden", hiddens), ("parameter", params)):
        for t in group:
            if isinstance(t, torch.Tensor) and device_of(t) != device:
                raise cuda_error(f"Input and {name} tensors are not at the same device, found input tensor at "
                                 f"{device} and {name} tensor at {device_of(t)}")
    return mode.call(func, (), args, kwargs, builtin=True)


def _ctc_loss(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """LossCTC.cpp ``ctc_loss``: for plain tensors it reads Tensor lengths on the host and runs
    ``_ctc_loss(log_probs, targets.to(log_probs.device(), kLong), lengths...)`` (cuDNN's path
    takes CPU targets as they are). The simulation's dispatch mode would send it down its
    tensor-subclass path instead (``areAnyTensorSubclassLike`` is true under any dispatch
    mode), and C++ moves targets to a device the simulation cannot see; so both are done here,
    and the backward pass finds the targets where CUDA has them."""
    names = ("log_probs", "targets", "input_lengths", "target_lengths")
    values = [args[i] if i < len(args) else kwargs.get(name) for i, name in enumerate(names)]
    log_probs, targets = values[0], values[1]
    if isinstance(targets, torch.Tensor) and isinstance(log_probs, torch.Tensor):
        target = device_of(log_probs)
        if device_of(targets) != target:
            values[1] = move(targets, target)
    for i in (2, 3):
        lengths = values[i]
        if isinstance(lengths, torch.Tensor) and not (lengths.is_floating_point() or lengths.is_complex()
                                                      or lengths.dtype == torch.bool):
            values[i] = _Base.tolist(lengths.reshape(-1))
    rest = {k: v for k, v in kwargs.items() if k not in names}
    return mode.call(torch._C._VariableFunctions.ctc_loss, (), (*values, *args[4:]), rest, builtin=True)


def _pad_packed_sequence(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """PackedSequence.cpp makes the lengths with ``batch_sizes.options()``: on the CPU."""
    func = torch._C._VariableFunctions._pad_packed_sequence
    padded, lengths = mode.call(func, (), tuple(args), kwargs, builtin=True)
    batch_sizes = args[1] if len(args) > 1 else kwargs.get("batch_sizes")
    place(lengths, device_of(batch_sizes))  # type: ignore[arg-type]
    return padded, lengths


def _repr(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """``Tensor.__repr__`` (and ``str``, ``print``, ``format`` of a tensor with dims): the values
    are formatted with the simulation off, the rest of the text (``device='cuda:0'``, ``dtype=``,
    ``grad_fn=``) by torch's own code with the mode on, from ``tensor_contents``. A GPU formats
    the values with the same ops on the device; run through the modes, each of those small ops
    paid the simulation's per-call cost (ignite formats RNG states every iteration)."""
    t = args[0]
    if len(args) == 1 and type(t) in _PLAIN_TYPES:
        if device_of(t) == t.device:
            # not on the simulated GPU: torch's own text (Tensor.__repr__ is unannotated)
            return torch.Tensor.__repr__(t, **kwargs)  # type: ignore[no-untyped-call]
        if kwargs.get("tensor_contents") is None:
            contents = _plain_contents(t)
            if contents is not None:
                kwargs = {**kwargs, "tensor_contents": contents}
    return mode.call(torch.Tensor.__repr__, (), args, kwargs, builtin=False)


_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _wrapper_dispatch(cls: type) -> bool:
    return getattr(cls, "__torch_dispatch__", _no_dispatch) is not _no_dispatch


_no_dispatch = torch._C._disabled_torch_dispatch_impl


def _plain_contents(t: torch.Tensor) -> str | None:
    """What ``torch._tensor_str._str_intern`` makes of a dense tensor's values (this mode is off
    while its handlers run), or None where it takes another branch (sparse, quantized, nested,
    meta, empty, functorch or forward-AD wrappers, subclasses): those keep the full path."""
    tensor_str = getattr(torch._tensor_str, "_tensor_str", None)
    if tensor_str is None:
        return None
    if (t.layout != torch.strided or t.is_quantized or t.is_nested or t.is_meta or t.numel() == 0
            or torch._C._functorch.is_functorch_wrapped_tensor(t) or torch._is_functional_tensor(t)):
        return None
    if torch.autograd.forward_ad.unpack_dual(t).tangent is not None:
        return None
    with torch.no_grad(), torch.utils._python_dispatch._disable_current_modes():
        guard = torch._C._DisableFuncTorch()  # noqa: F841 - as torch._tensor_str._str holds it
        text: str = tensor_str(t, len("tensor("))
        return text


def _rnn_handler(func: Callable[..., Any]) -> _Handler:
    return lambda mode, args, kwargs: _rnn(mode, args, kwargs, func)


_GETTERS: dict[object, Callable[[torch.Tensor], object]] = {
    _Base.__dict__["device"]: device_of,
    _Base.__dict__["is_cuda"]: lambda t: device_of(t).type == "cuda",
    _Base.__dict__["is_cpu"]: lambda t: device_of(t).type == "cpu",
}
_Handler = Callable[[PlacementMode, Sequence[Any], dict[str, Any]], object]
_METHODS: dict[object, _Handler] = {
    _Base.to: _to, _Base.cuda: _cuda, _Base.cpu: _cpu, _Base.type: _type, _Base.type_as: _type_as,
    _Base.get_device: _get_device,
    _Base.numpy: _numpy, _Base.pin_memory: _pin_memory, _Base.is_pinned: _is_pinned,
    _Base.record_stream: _record_stream, torch._C._nn._parse_to: _parse_to, torch.Tensor.__repr__: _repr,
}
for _name in ("lstm", "gru", "rnn_tanh", "rnn_relu"):
    _rnn_func = getattr(torch._C._VariableFunctions, _name)
    _METHODS[_rnn_func] = _rnn_handler(_rnn_func)
_METHODS[torch._C._VariableFunctions.ctc_loss] = _ctc_loss
_METHODS[torch._C._VariableFunctions._pad_packed_sequence] = _pad_packed_sequence
_METHODS[torch.device] = _devices_api.construct_device
_METHODS[torch.asarray] = _serialization.asarray
if hasattr(torch.Tensor, "__dlpack__"):
    _METHODS[torch.Tensor.__dlpack__] = _dlpack
