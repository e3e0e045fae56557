"""PROTOTYPE (issue 22 §3), opt-in, not the default: placement that C++ can see.

The default design keeps a simulated cuda tensor a plain CPU tensor with a tag on its storage,
so C++ that reads ``tensor.device()`` (the TorchScript interpreter, C++ methods) sees the CPU.
Here a simulated cuda tensor is a wrapper subclass (``torch.Tensor._make_wrapper_subclass``,
as FakeTensor and DTensor) whose device *is* ``cuda:0`` for C++ and Python alike, holding a CPU
tensor with the values. One TorchDispatchMode sees every ATen operator (modes come before
subclasses, and a mode also sees factories, which have no tensor argument): it unwraps, lets the
default design's dispatch engine (``cuda_sim._dispatch.DeviceMode._run``: every device rule and
message) check and run the CPU kernel on the unwrapped values, tagged as that engine expects, and
wraps the outputs that land on the GPU. CUDA-API patches (``is_available`` ...) are the default
design's; its TorchFunctionMode is not used.

    with cuda_sim._wrapper_proto.simulate_wrapped():
        x = torch.ones(3, device="cuda")          # a SimCuda wrapper: x.device is cuda:0 in C++ too

docs/cuda-sim.md "Design comparison: tagged storage vs wrapper tensor" measures it against the
default design. It is a prototype: its known failures are pinned in tests/sim/test_wrapper_proto.py.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from cuda_sim import _session
from cuda_sim._dispatch import DeviceMode
from cuda_sim._patch import Patcher
from cuda_sim._placement import CPU, CUDA, device_of, parse_device, place
from cuda_sim._state import local

__all__ = ["SimCuda", "simulate_wrapped"]


class SimCuda(torch.Tensor):
    """A tensor whose device is ``cuda:0`` everywhere, with its values in ``elem`` (a CPU tensor)."""

    elem: torch.Tensor

    @staticmethod
    def __new__(cls: type[SimCuda], elem: torch.Tensor, requires_grad: bool = False) -> SimCuda:
        wrapper = torch.Tensor._make_wrapper_subclass(
            cls, elem.size(), strides=elem.stride(), storage_offset=elem.storage_offset(), dtype=elem.dtype,
            layout=elem.layout, device=CUDA, requires_grad=requires_grad)
        wrapper.elem = elem
        return wrapper

    @classmethod
    def __torch_dispatch__(cls, func: torch._ops.OpOverload, types: Sequence[type],  # type: ignore[override]
                           args: Sequence[Any] = (), kwargs: dict[str, Any] | None = None) -> Any:
        # reached only with the simulation off (the mode comes first): the values are still real
        return _run(func, args, kwargs or {})

    def __repr__(self, *, tensor_contents: Any = None) -> str:  # type: ignore[override]
        text = repr(self.elem)
        suffix = ", device='cuda:0'"
        if text.endswith(")"):
            return text[:-1] + suffix + ")"
        return text + suffix

    # torch refuses these for every subclass; a cuda tensor gives its values / CUDA's TypeError
    def tolist(self) -> Any:
        return self.elem.tolist()

    def numpy(self, *, force: bool = False) -> Any:
        if force:
            return self.elem.numpy(force=True)
        raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to "
                        "host memory first.")

    # the traceable-wrapper-subclass protocol: Module._apply then swaps parameters instead of
    # ``param.data = wrapper`` (which would keep a Parameter with no values behind it)
    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["elem"], None

    @staticmethod
    def __tensor_unflatten__(inner: dict[str, torch.Tensor], meta: None, outer_size: Any,
                             outer_stride: Any) -> SimCuda:
        return SimCuda(inner["elem"])

    def __reduce_ex__(self, protocol: Any) -> Any:
        return (_rebuild, (self.elem, self.requires_grad))


def _rebuild(elem: torch.Tensor, requires_grad: bool) -> torch.Tensor:
    place(elem, CUDA)
    return SimCuda(elem, requires_grad)


class WrapperMode(TorchDispatchMode):
    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __torch_dispatch__(self, func: torch._ops.OpOverload, types: Sequence[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        if any(not issubclass(t, SimCuda) and _own_dispatch(t) for t in types):
            return NotImplemented
        with torch._C.DisableTorchFunction():
            return _run(func, args, kwargs or {})


_ENGINE = DeviceMode()  # type: ignore[no-untyped-call]  # the default design's rules, never pushed itself


def _own_dispatch(cls: type) -> bool:
    return getattr(cls, "__torch_dispatch__", None) is not torch._C._disabled_torch_dispatch_impl


def _run(func: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    wrappers: dict[int, SimCuda] = {}
    args = [_unwrap(a, wrappers) for a in args]
    kwargs = {k: _unwrap(v, wrappers) for k, v in kwargs.items()}
    target = kwargs.get("device")
    saved = local.explicit
    if target is not None:
        device = parse_device(target)
        kwargs["device"] = CPU if device.type == "cuda" else device
        local.explicit = device
    try:
        result = _ENGINE._run(func, args, kwargs)
    finally:
        local.explicit = saved
    return _wrap(result, wrappers)


def _unwrap(value: Any, wrappers: dict[int, SimCuda]) -> Any:
    if isinstance(value, SimCuda):
        elem = value.elem
        wrappers[id(elem)] = value
        return elem
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v, wrappers) for v in value)
    return value


def _wrap(value: Any, wrappers: dict[int, SimCuda]) -> Any:
    if isinstance(value, torch.Tensor) and not isinstance(value, SimCuda):
        same = wrappers.get(id(value))
        if same is not None:
            return same  # in-place and out= ops return their argument
        if value.device.type == "cpu" and device_of(value).type == "cuda":
            return SimCuda(value)
        return value
    if isinstance(value, (list, tuple)):
        return type(value)(_wrap(v, wrappers) for v in value)
    return value


class _WrappedSession(_session.Session):
    """The default design's CUDA-API patches; one wrapper mode instead of its two modes."""

    def __init__(self) -> None:
        super().__init__()
        self.mode = WrapperMode()  # type: ignore[no-untyped-call]

    def enter_thread(self) -> None:
        self.mode.__enter__()  # type: ignore[no-untyped-call]

    def leave_thread(self) -> None:
        self.mode.__exit__(None, None, None)  # type: ignore[no-untyped-call]

    def in_this_thread(self) -> bool:
        return any(m is self.mode for m in torch.utils._python_dispatch._get_current_dispatch_mode_stack())

    def _patch_tagged(self, p: Patcher) -> None:
        pass  # a wrapper's device is cuda:0 in C++: TorchScript and wrapper subclasses see it as it is

    def _patch(self) -> None:
        super()._patch()
        # THPVariable_to / THPVariable_cuda take a CUDA device guard before dispatching, which a CPU
        # build refuses ("PyTorch is not linked with support for cuda devices"): moves onto the GPU
        # go to the dispatcher directly (C++ callers such as TorchScript's aten::to already do)
        self.patcher.set(torch.Tensor, "to", _to)
        self.patcher.set(torch.Tensor, "cuda", _cuda)


_ORIGINAL_TO = torch.Tensor.to
_ORIGINAL_CUDA = torch.Tensor.cuda


def _to(self: torch.Tensor, *args: Any, **kwargs: Any) -> Any:
    if not isinstance(self, SimCuda):
        rest = {k: v for k, v in kwargs.items() if k != "copy"}
        try:
            device, dtype, non_blocking, memory_format = torch._C._nn._parse_to(*args, **rest)
        except (TypeError, RuntimeError):  # a positional copy=: torch's own .to parses it
            return _ORIGINAL_TO(self, *args, **kwargs)
        if device is not None and device.type == "cuda":
            return _move(self, device, dtype, non_blocking, memory_format)
    return _ORIGINAL_TO(self, *args, **kwargs)


def _cuda(self: torch.Tensor, device: Any = None, non_blocking: bool = False,
          memory_format: torch.memory_format = torch.preserve_format) -> Any:
    if isinstance(self, SimCuda):
        return _ORIGINAL_CUDA(self, device, non_blocking, memory_format)
    return _move(self, torch.device("cuda", device) if isinstance(device, int) else torch.device(device or "cuda"),
                 None, non_blocking, memory_format)


def _move(t: torch.Tensor, device: torch.device, dtype: torch.dtype | None, non_blocking: bool,
          memory_format: torch.memory_format | None) -> Any:
    parse_device(device)  # cuda:1 is not simulated
    return torch.ops.aten._to_copy.default(t, dtype=dtype or t.dtype, device=CUDA, non_blocking=non_blocking,
                                           memory_format=memory_format or torch.preserve_format)


_lock = threading.Lock()


@contextlib.contextmanager
def simulate_wrapped() -> Iterator[None]:
    """The prototype design inside a ``with`` block (not nestable with ``cuda_sim.simulate``)."""
    with _lock:
        if _session.is_active():
            raise RuntimeError("simulate_wrapped() cannot run inside cuda_sim.simulate() or install()")
        session = _WrappedSession()
        session.start()
    try:
        yield
    finally:
        session.stop()
