"""The TorchFunctionMode: the placement API as user code sees it.

It answers ``.device`` / ``.is_cuda`` from the simulated placement, implements ``.to`` /
``.cuda()`` / ``.cpu()`` / ``device=`` on factories over CPU values, and refuses what a CUDA
tensor refuses (``.numpy()``, pinning). Every other torch function runs with the mode
re-entered (``redispatch_function``), so torch functions written in Python, ``backward()`` and
the hooks it runs stay inside the simulation. The handlers of the methods and functions it
implements itself are in ``_methods``.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.utils._device as _device_module
from torch.overrides import TorchFunctionMode

from cuda_sim import _autograd, _composite, _devices_api, _out, _rng, _serialization
from cuda_sim._errors import cuda_error, take_mark
from cuda_sim._methods import (
    _cpu,
    _ctc_loss,
    _cuda,
    _dlpack,
    _get_device,
    _is_pinned,
    _numpy,
    _pad_packed_sequence,
    _parse_to,
    _pin_memory,
    _record_stream,
    _repr,
    _rnn_handler,
    _to,
    _type,
    _type_as,
    move,
)
from cuda_sim._placement import (
    CPU,
    device_of,
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
