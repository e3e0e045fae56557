"""The ``torch.cuda`` runtime surface of a single simulated GPU.

Queries answer as a one-GPU host would; ordering primitives (streams, events, synchronize) are
no-ops because every simulated kernel runs in program order on the CPU; memory statistics count
the live simulated-CUDA storages (``_memory``). Calls with no faithful CPU counterpart (CUDA graphs,
IPC, a second device) raise NotSimulatedError.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
import types
import warnings
from collections.abc import Iterator
from typing import Any, Literal

import torch

from cuda_sim import _memory, _rng
from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._placement import CUDA, cuda_device, parse_device

DEVICE_NAME = "cuda-sim (simulated CUDA device on CPU)"
CUDA_VERSION = "12.4"
CAPABILITY = (8, 0)
ARCH_LIST = ("sm_80", "sm_90")


class _SyncDebug:
    """``torch.cuda.set_sync_debug_mode``: 0 default, 1 warn, 2 error on synchronizing operations."""

    mode = 0


SYNC = _SyncDebug()


def warn_or_error_on_sync() -> None:
    """c10/cuda/CUDAFunctions.cpp ``warn_or_error_on_sync``."""
    if SYNC.mode == 2:
        raise cuda_error("called a synchronizing CUDA operation")
    if SYNC.mode == 1:
        warnings.warn("called a synchronizing CUDA operation", UserWarning, stacklevel=2)


def _index(device: Any = None) -> int:
    if device is None or (isinstance(device, int) and device == -1):
        return 0
    if isinstance(device, int) and not isinstance(device, bool):
        return cuda_device(device).index or 0  # cuda_device always names an index
    target = parse_device(device)
    if target.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {target}")
    return 0


class SimStream(torch.Stream):
    """``torch.cuda.Stream``: a real ``torch.Stream`` (``record_stream`` accepts only those)
    that reports cuda:0. Work is never reordered, so waiting and querying are trivial."""

    _sim_id: int

    def __new__(cls, device: Any = None, priority: int = 0, **kwargs: Any) -> SimStream:
        _index(device if device is not None else kwargs.get("device_index"))
        known = _STREAMS.get(kwargs.get("stream_id", -1))
        if known is not None:
            return known  # Stream(stream_id=..., device_index=..., device_type=...) names an existing one
        stream = super().__new__(cls, device="cpu", priority=0)
        stream._sim_id = len(_STREAMS)
        _STREAMS[stream._sim_id] = stream
        return stream

    def __init__(self, device: Any = None, priority: int = 0, **kwargs: Any) -> None:
        if not hasattr(self, "priority"):
            self.priority = priority

    @classmethod
    def with_id(cls, stream_id: int) -> SimStream:
        return _STREAMS.get(stream_id) or cls()

    @property
    def stream_id(self) -> int:  # type: ignore[override]
        return self._sim_id

    @property
    def device(self) -> torch.device:  # type: ignore[override]
        return CUDA

    @property
    def device_type(self) -> int:  # type: ignore[override]
        return 1

    @property
    def device_index(self) -> int:  # type: ignore[override]
        return 0

    @property
    def cuda_stream(self) -> int:
        return self._sim_id  # the default stream is 0, as on a GPU

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        if SYNC.mode:
            warn_or_error_on_sync()  # CUDAStream::synchronize -> stream_synchronize

    def wait_event(self, event: Any) -> None:
        return None

    def wait_stream(self, stream: Any) -> None:
        return None

    def record_event(self, event: Any = None) -> SimEvent:  # type: ignore[override]  # torch.cuda's Event, simulated
        recorded: SimEvent = event if event is not None else SimEvent()
        recorded.record(self)
        return recorded

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SimStream) and other._sim_id == self._sim_id

    def __hash__(self) -> int:
        return hash(("cuda-sim-stream", self._sim_id))

    def __repr__(self) -> str:
        return f"<torch.cuda.Stream device=cuda:0 cuda_stream={self.cuda_stream:#x}>"


class SimEvent:
    """``torch.cuda.Event``: records a host timestamp so ``elapsed_time`` is plausible."""

    def __init__(self, enable_timing: bool = False, blocking: bool = False, interprocess: bool = False,
                 **kwargs: Any) -> None:
        if interprocess:
            raise NotSimulatedError("interprocess CUDA events")
        self.enable_timing = enable_timing
        self._time: float | None = None

    def record(self, stream: Any = None) -> None:
        self._time = time.perf_counter()

    def wait(self, stream: Any = None) -> None:
        return None

    def query(self) -> bool:
        return True

    def synchronize(self) -> None:
        return None

    def elapsed_time(self, end_event: SimEvent) -> float:
        if not self.enable_timing or self._time is None or end_event._time is None:
            raise RuntimeError("Both events must be recorded with enable_timing=True before calling elapsed_time()")
        return (end_event._time - self._time) * 1000.0

    def ipc_handle(self) -> Any:
        raise NotSimulatedError("CUDA event IPC handles")

    @property
    def device(self) -> torch.device:
        return CUDA

    def __repr__(self) -> str:
        return "<torch.cuda.Event uninitialized>" if self._time is None else "<torch.cuda.Event 0x0>"


_STREAMS: dict[int, SimStream] = {}
_DEFAULT_STREAM = SimStream()
_current = [_DEFAULT_STREAM]


def current_stream(device: Any = None) -> SimStream:
    _index(device)
    return _current[-1]


def default_stream(device: Any = None) -> SimStream:
    _index(device)
    return _DEFAULT_STREAM


def set_stream(stream: Any) -> None:
    if stream is not None:
        _current[-1] = stream


@contextlib.contextmanager
def stream(stream: Any) -> Iterator[Any]:
    if stream is None:
        yield None
        return
    _current.append(stream)
    try:
        yield stream
    finally:
        _current.pop()


class StreamContext:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def __enter__(self) -> Any:
        if self.stream is not None:
            _current.append(self.stream)
        return self.stream

    def __exit__(self, *exc: object) -> None:
        if self.stream is not None:
            _current.pop()


class device:
    """``torch.cuda.device(i)``: only cuda:0 exists."""

    def __init__(self, device: Any) -> None:
        self.idx = _index(device) if device is not None else -1

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> Literal[False]:
        return False


class device_of(device):
    def __init__(self, obj: Any) -> None:
        super().__init__(obj.get_device() if getattr(obj, "is_cuda", False) else -1)


class DeviceProperties:
    """What ``torch.cuda.get_device_properties`` returns for the simulated GPU."""

    def __init__(self) -> None:
        self.name = DEVICE_NAME
        self.major, self.minor = CAPABILITY
        self.total_memory = _host_memory()
        self.multi_processor_count = 108
        self.is_integrated = False
        self.is_multi_gpu_board = False
        self.max_threads_per_multi_processor = 2048
        self.warp_size = 32
        self.L2_cache_size = 40 * 1024 * 1024
        self.uuid = "00000000-0000-0000-0000-000000000000"
        self.gcnArchName = "NVIDIA A100-class (simulated)"

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, minor={self.minor}, "
                f"total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def _host_memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 * 1024**3


_PROPERTIES = DeviceProperties()


def get_device_properties(device: Any = None) -> DeviceProperties:
    _index(device)
    return _PROPERTIES


def get_device_name(device: Any = None) -> str:
    _index(device)
    return DEVICE_NAME


def get_device_capability(device: Any = None) -> tuple[int, int]:
    _index(device)
    return CAPABILITY


def set_device(device: Any) -> None:
    _index(device)


def synchronize(device: Any = None) -> None:
    _index(device)


def _not_simulated(what: str) -> Any:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotSimulatedError(what)

    refuse.__name__ = "not_simulated"
    return refuse


class CUDAGraph:
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotSimulatedError("CUDA graphs (torch.cuda.CUDAGraph)")


def _rng_state(device: Any = "cuda") -> torch.Tensor:
    _index(device)
    return _rng.default_generator().get_state()


def _set_rng_state(new_state: torch.Tensor, device: Any = "cuda") -> None:
    _index(device)
    _rng.default_generator().set_state(new_state)


def _set_sync_debug_mode(debug_mode: int | str) -> None:
    names = {"default": 0, "warn": 1, "error": 2}
    if isinstance(debug_mode, str):
        if debug_mode not in names:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, `error`")
        debug_mode = names[debug_mode]
    torch._C._cuda_set_sync_debug_mode(debug_mode)


def _mem_get_info(device: Any = None) -> tuple[int, int]:
    """``cudaMemGetInfo``: what the caching allocator holds (its reserved segments) is not free."""
    _index(device)
    total = _PROPERTIES.total_memory
    return (max(0, total - _memory.ALLOCATOR.reserved()), total)


def functions() -> dict[str, Any]:
    """Replacements for ``torch.cuda`` attributes (each a distinct object: dynamo's trace rules
    assert when one object is registered under two names)."""
    gen = _rng.default_generator
    stubs: dict[str, Any] = {
        "is_available": lambda: True, "is_initialized": lambda: True, "init": lambda: None,
        "ExternalStream": lambda stream_ptr, device=None: SimStream(device),
        "_lazy_init": lambda: None, "_is_in_bad_fork": lambda: False,
        "_lazy_call": lambda callable, **kwargs: callable(),
        "device_count": lambda: 1, "current_device": lambda: 0, "set_device": set_device,
        "get_device_name": get_device_name, "get_device_capability": get_device_capability,
        "get_device_properties": get_device_properties, "get_arch_list": lambda: list(ARCH_LIST),
        "get_gencode_flags": lambda: "-gencode compute=compute_80,code=sm_80",
        "is_bf16_supported": lambda including_emulation=True: True,
        "is_tf32_supported": lambda: True, "can_device_access_peer": lambda device, peer_device: False,
        "synchronize": synchronize, "ipc_collect": lambda: None, "mem_get_info": _mem_get_info,
        "list_gpu_processes": lambda device=None: "cuda-sim: no GPU processes",
        "caching_allocator_alloc": _not_simulated("raw CUDA caching-allocator allocations"),
        "caching_allocator_delete": _not_simulated("raw CUDA caching-allocator allocations"),
        "Stream": SimStream, "Event": SimEvent, "current_stream": current_stream,
        "default_stream": default_stream, "set_stream": set_stream, "stream": stream,
        "StreamContext": StreamContext, "device": device, "device_of": device_of,
        "is_current_stream_capturing": lambda: False, "get_sync_debug_mode": lambda: SYNC.mode,
        "set_sync_debug_mode": _set_sync_debug_mode, "current_blas_handle": lambda: 0,
        "CUDAGraph": CUDAGraph, "graph": _not_simulated("CUDA graphs (torch.cuda.graph)"),
        "make_graphed_callables": _not_simulated("CUDA graphs (make_graphed_callables)"),
        "manual_seed": lambda seed: gen().manual_seed(int(seed)) and None,
        "manual_seed_all": lambda seed: gen().manual_seed(int(seed)) and None,
        "seed": lambda: gen().seed() and None, "seed_all": lambda: gen().seed() and None,
        "initial_seed": lambda: gen().initial_seed(),
        "get_rng_state": _rng_state, "set_rng_state": _set_rng_state,
        "get_rng_state_all": lambda: [_rng_state()],
        "set_rng_state_all": lambda new_states: _set_rng_state(next(iter(new_states))),
    }
    return {name: _distinct(value) for name, value in stubs.items()}


def _distinct(value: Any) -> Any:
    """A private copy of a shared stub function: dynamo's trace rules index torch objects by
    identity and assert when one object turns up under two names with different rules."""
    if isinstance(value, types.FunctionType):
        copy = types.FunctionType(value.__code__, value.__globals__, value.__name__, value.__defaults__,
                                  value.__closure__)
        copy.__kwdefaults__ = value.__kwdefaults__
        return functools.update_wrapper(copy, value)  # the signature stays inspectable
    return value
