"""Turning the simulation on and off: the patches, the two modes, every thread."""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Iterator
from typing import Any

import torch

from cuda_sim import (
    _amp,
    _autograd,
    _cuda_api,
    _cuda_c,
    _devices_api,
    _legacy,
    _rng,
    _script,
    _serialization,
    _wrappers,
)
from cuda_sim._compile import EagerCompile
from cuda_sim._dispatch import DeviceMode
from cuda_sim._function import KeepSimulation, PlacementMode
from cuda_sim._patch import Patcher
from cuda_sim._toolkit import Toolkit


class Session:
    def __init__(self) -> None:
        self.patcher = Patcher()
        self.function_mode = PlacementMode()
        self.dispatch_mode = DeviceMode()  # type: ignore[no-untyped-call]  # TorchDispatchMode.__init__: unannotated
        self.toolkit: Toolkit | None = None
        self.compile = EagerCompile()
        self.registry_entry: Any = None

    def start(self) -> None:
        try:
            self._patch()
            self.registry_entry = _serialization.register()
            self.toolkit = Toolkit()
            self.toolkit.activate(self.patcher)
            self.compile.activate()
            self.enter_thread()
        except BaseException:
            self.stop(entered=False)
            raise

    def enter_thread(self) -> None:
        # torch's mode __enter__/__exit__ are unannotated (untyped_calls_exclude covers direct calls only)
        self.function_mode.__enter__()  # type: ignore[no-untyped-call]
        self.dispatch_mode.__enter__()  # type: ignore[no-untyped-call]
        _release_modes_at_thread_end()

    def leave_thread(self) -> None:
        self.dispatch_mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]
        self.function_mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]

    def in_this_thread(self) -> bool:
        return any(mode is self.function_mode for mode in torch.overrides._get_current_function_mode_stack())

    def stop(self, entered: bool = True) -> None:
        if entered:
            self.leave_thread()
        if self.registry_entry is not None:
            _serialization.unregister(self.registry_entry)
        if self.toolkit is not None:
            self.toolkit.deactivate()
        self.compile.deactivate()
        self.patcher.undo()

    def _patch(self) -> None:
        p = self.patcher
        _cuda_c.patch(p)
        for name, value in _cuda_api.functions().items():
            _patch_cuda(p, name, value)
        p.set(torch.cuda, "default_generators", (_rng.default_generator(),))
        for name, value in _legacy.legacy_types().items():
            p.set(torch.cuda, name, value)
        p.set(torch, "Generator", _rng.SimGenerator)
        p.set(torch._C, "DisableTorchFunction", KeepSimulation)
        _devices_api.patch(p)
        _amp.patch(p)
        _serialization.patch_storages(p)
        self._patch_tagged(p)
        original = threading.Thread._bootstrap_inner  # type: ignore[attr-defined]
        session = self

        def bootstrap_inner(thread: threading.Thread) -> None:
            if _current is session:
                session.enter_thread()
            original(thread)

        p.set(threading.Thread, "_bootstrap_inner", bootstrap_inner)
        _patch_function_apply(p)


    def _patch_tagged(self, p: Patcher) -> None:
        """What only the tagged-storage design needs: C++ sees a simulated tensor on the CPU."""
        _script.patch(p)
        _wrappers.patch(p)


_CUDA_SUBMODULES = ("memory", "random", "streams", "graphs", "comm", "profiler")


def _patch_cuda(p: Patcher, name: str, value: Any) -> None:
    """``torch.cuda.NAME``, and the same object wherever a torch.cuda submodule defines or
    imported it (``torch.cuda.memory.memory_allocated``, ``torch.cuda.random.manual_seed``)."""
    original = getattr(torch.cuda, name, None)
    p.set(torch.cuda, name, value)
    for module_name in _CUDA_SUBMODULES:
        module = sys.modules.get(f"torch.cuda.{module_name}")
        if module is not None and original is not None and module.__dict__.get(name) is original:
            p.set(module, name, value)


def _patch_function_apply(p: Patcher) -> None:
    function_cls = torch.autograd.function.Function
    original = function_cls.__dict__["apply"]  # a classmethod, or a C classmethod_descriptor (torch >= 2.14)

    def apply(cls: Any, *args: Any, **kwargs: Any) -> Any:
        result = original.__get__(None, cls)(*args, **kwargs)
        _autograd.check_custom_function(result, args, kwargs)
        return result

    p.set(function_cls, "apply", classmethod(apply))


class _ThreadEnd:
    """Empties its thread's two C++ mode stacks when Python frees the thread's locals.

    Left there, the modes would be released by torch's C++ thread-local destructors, which run
    after ``join()`` has returned and must take the GIL to drop a Python reference: when the
    interpreter is finalizing by then, taking the GIL ends the thread with ``pthread_exit``,
    whose unwinding through that (noexcept) destructor calls ``std::terminate`` ("terminate
    called without an active exception", an abort at exit). Python frees a thread's locals
    while the thread still holds the GIL, before ``join()`` returns.
    """

    def __init__(self) -> None:
        self.ident = threading.get_ident()

    def __del__(self) -> None:
        # another thread clears a dead thread's state at fork and at finalization: not ours to touch
        if threading.get_ident() != self.ident:
            return
        while torch._C._len_torch_function_stack():
            torch._C._pop_torch_function_stack()
        while torch._C._len_torch_dispatch_stack():
            torch._C._pop_torch_dispatch_stack(None)


_thread_end = threading.local()


def _release_modes_at_thread_end() -> None:
    # the main thread's C++ thread-locals die after finalization, when torch no longer touches Python
    if threading.get_ident() != threading.main_thread().ident and not hasattr(_thread_end, "guard"):
        _thread_end.guard = _ThreadEnd()


_lock = threading.RLock()
_current: Session | None = None
_installed = False
_depth = 0


def install() -> None:
    global _current, _installed
    with _lock:
        if _current is None:
            _current = Session()
            _current.start()
        elif not _current.in_this_thread():
            _current.enter_thread()
        _installed = True


@contextlib.contextmanager
def simulate() -> Iterator[None]:
    global _current, _depth
    with _lock:
        if _current is None:
            _current = Session()
            _current.start()
            entered = True
        else:
            entered = not _current.in_this_thread()
            if entered:
                _current.enter_thread()
        session = _current
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if entered and not _installed:
                session.leave_thread()
            if _depth == 0 and not _installed:
                session.stop(entered=False)
                _current = None


def is_active() -> bool:
    return _current is not None
