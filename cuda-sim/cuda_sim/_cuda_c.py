"""The C++ layer ``torch.cuda`` is written on, for one simulated GPU.

A CPU build of torch has no ``torch._C._cuda_*`` functions, no ``_cudart``, no NVTX and dummy
classes for CUDA graphs, so ``torch.cuda``'s own Python (its submodules, and code that calls
``torch._C._cuda_setStream`` directly, as PyTorch-style CUDA test bases do) fails with a raw
AttributeError or "Tried to instantiate dummy base class". The simulation provides every name a
CUDA build has (``torch/_C/__init__.pyi`` lists them; ``names()`` reads them there): device,
stream and settings calls answer as a one-GPU host; memory statistics count the live
simulated-CUDA storages (``_memory``); calls that would need real GPU machinery (CUDA graph memory
pools, custom allocators, memory history, jiterator, NCCL, GPUDirect Storage, NVML) raise
NotSimulatedError.
"""

from __future__ import annotations

import functools
import os
import re
import types
from collections.abc import Callable
from typing import Any

import torch

from cuda_sim import _cuda_api, _memory
from cuda_sim._errors import NotSimulatedError
from cuda_sim._patch import Patcher
from cuda_sim._placement import cuda_device

COMPILED_VERSION = 12040  # CUDA 12.4, as _cuda_api.CUDA_VERSION says
_CUDA_TYPE = 1  # c10::DeviceType::CUDA


class _Settings:
    """Values a GPU host keeps and hands back (nothing acts on them in the simulation)."""

    def __init__(self) -> None:
        self.values: dict[str, Any] = {
            "memory_fraction": 1.0, "cudnn_benchmark_limit": 10, "caching_allocator": True, "metadata": "",
            "cublas_workspace": _workspace_size(os.environ.get("CUBLAS_WORKSPACE_CONFIG")),
            "cublaslt_workspace": 1024 * 1024, "tunable": False, "tuning": True, "record_untuned": False,
            "tuning_duration": 30, "tuning_iterations": 100, "tunable_filename": "tunableop_results.csv",
            "rotating_buffer": 0,
        }

    def getter(self, key: str) -> Callable[..., Any]:
        return lambda *args, **kwargs: self.values[key]

    def setter(self, key: str) -> Callable[..., None]:
        def set_value(value: Any, *args: Any, **kwargs: Any) -> None:
            self.values[key] = value

        return set_value


def _workspace_size(config: str | None) -> int:
    """``CUBLAS_WORKSPACE_CONFIG=:SIZE_KIB:COUNT[:...]`` as CUDABlasHandlePool.cpp reads it."""
    if config:
        pairs = re.findall(r":(\d+):(\d+)", config)
        if pairs:
            return sum(int(size) * 1024 * int(count) for size, count in pairs)
    return 4096 * 1024 * 8


def _memory_statistics(device: Any = None) -> dict[str, Any]:
    """CUDACachingAllocator's nested statistics, over the live simulated-CUDA storages."""
    _cuda_api._index(device)
    return _memory.ALLOCATOR.stats()


def _device_call(action: Callable[[], None]) -> Callable[..., None]:
    def call(device: Any = None) -> None:
        _cuda_api._index(device)
        action()

    return call


def _host_memory_statistics() -> dict[str, Any]:
    counters = {"current": 0, "peak": 0, "allocated": 0, "freed": 0}
    return {"allocations": dict(counters), "segments": dict(counters), "allocated_bytes": dict(counters),
            "reserved_bytes": dict(counters), "num_host_alloc": 0, "num_host_free": 0}


def _exchange_device(device: int) -> int:
    if device < 0:
        return -1
    cuda_device(device)
    return 0


def _stream_tuple(stream: Any) -> tuple[int, int, int]:
    return (stream.stream_id, 0, _CUDA_TYPE)


def _set_stream(stream_id: int = 0, device_index: int = 0, device_type: int = _CUDA_TYPE) -> None:
    cuda_device(device_index)
    _cuda_api.set_stream(_cuda_api.SimStream.with_id(stream_id))


def _stream_from_external(data_ptr: int, device_index: int) -> tuple[int, int, int]:
    cuda_device(device_index)
    return _stream_tuple(_cuda_api.SimStream())


def _sync_debug_mode() -> int:
    return _cuda_api.SYNC.mode


def _set_sync_debug_mode(mode: int) -> None:
    if mode not in (0, 1, 2):
        raise RuntimeError("invalid value of debug_mode, expected one of 0,1, or 2")  # c10 SyncDebugMode
    _cuda_api.SYNC.mode = mode


def _refuse(what: str) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise NotSimulatedError(what)

    return refuse


_GRAPHS = "CUDA graphs and their memory pools"
_ALLOCATOR = "custom and raw CUDA allocators (no device memory is allocated)"
_HISTORY = "CUDA memory history (no device memory is allocated)"


def _functions(settings: _Settings) -> dict[str, Any]:
    get, put = settings.getter, settings.setter
    return {
        "_cuda_init": lambda: None, "_cuda_getDeviceCount": lambda: 1, "_cuda_getDevice": lambda: 0,
        "_cuda_setDevice": lambda device: _cuda_api._index(device) and None,
        "_cuda_exchangeDevice": _exchange_device, "_cuda_maybeExchangeDevice": _exchange_device,
        "_cuda_synchronize": lambda: None, "_cuda_isInBadFork": lambda: False,
        "_cuda_hasPrimaryContext": lambda device: cuda_device(device) is not None,
        "_cuda_getArchFlags": lambda: " ".join(_cuda_api.ARCH_LIST),
        "_cuda_getCompiledVersion": lambda: COMPILED_VERSION,
        "_cuda_canDeviceAccessPeer": lambda device, peer: cuda_device(device) is None and cuda_device(peer) is None,
        "_cuda_getCurrentStream": lambda device=0: _stream_tuple(_cuda_api.current_stream(device)),
        "_cuda_getDefaultStream": lambda device=0: _stream_tuple(_cuda_api.default_stream(device)),
        "_cuda_setStream": _set_stream, "_cuda_getStreamFromExternal": _stream_from_external,
        "_cuda_getCurrentRawStream": lambda device=0: _cuda_api.current_stream(device).cuda_stream,
        "_cuda_isCurrentStreamCapturing": lambda: False,
        "_cuda_getCurrentBlasHandle": lambda: 0, "_cuda_getCurrentSolverHandle": lambda: 0,
        "_cuda_sleep": lambda cycles: None, "_cuda_ipc_collect": lambda: None,
        "_cuda_emptyCache": _memory.ALLOCATOR.empty_cache,
        "_cuda_memoryStats": _memory_statistics, "_cuda_hostMemoryStats": _host_memory_statistics,
        "_cuda_resetAccumulatedMemoryStats": _device_call(_memory.ALLOCATOR.reset_accumulated),
        "_cuda_resetPeakMemoryStats": _device_call(_memory.ALLOCATOR.reset_peak),
        "_cuda_resetAccumulatedHostMemoryStats": lambda: None, "_cuda_resetPeakHostMemoryStats": lambda: None,
        "_cuda_memorySnapshot": lambda *args, **kwargs: {"segments": [], "device_traces": [[]]},
        "_cuda_setMemoryFraction": put("memory_fraction"), "_cuda_getMemoryFraction": get("memory_fraction"),
        "_cuda_get_sync_debug_mode": _sync_debug_mode, "_cuda_set_sync_debug_mode": _set_sync_debug_mode,
        "_cuda_clearCublasWorkspaces": lambda: None,
        "_cuda_getCublasWorkspaceSize": get("cublas_workspace"),
        "_cuda_setCublasWorkspaceSize": put("cublas_workspace"),
        "_cuda_resetCublasWorkspaceSize": lambda: settings.setter("cublas_workspace")(_workspace_size(None)),
        "_cuda_getCublasLtWorkspaceSize": get("cublaslt_workspace"),
        "_cuda_setCublasLtWorkspaceSize": put("cublaslt_workspace"),
        "_cuda_resetCublasLtWorkspaceSize": lambda: settings.setter("cublaslt_workspace")(1024 * 1024),
        "_cuda_get_cudnn_benchmark_limit": get("cudnn_benchmark_limit"),
        "_cuda_set_cudnn_benchmark_limit": put("cudnn_benchmark_limit"),
        "_cuda_get_conv_benchmark_empty_cache": lambda: True,
        "_cuda_cudaCachingAllocator_is_enabled": get("caching_allocator"),
        "_cuda_cudaCachingAllocator_enable": put("caching_allocator"),
        "_cuda_getAllocatorBackend": lambda: "native",
        "_cuda_getMemoryMetadata": get("metadata"), "_cuda_setMemoryMetadata": put("metadata"),
        "_cuda_isHistoryEnabled": lambda: False, "_cuda_attach_out_of_memory_observer": lambda observer: None,
        "_cuda_tunableop_enable": put("tunable"), "_cuda_tunableop_is_enabled": get("tunable"),
        "_cuda_tunableop_tuning_enable": put("tuning"), "_cuda_tunableop_tuning_is_enabled": get("tuning"),
        "_cuda_record_untuned_enable": put("record_untuned"), "_cuda_record_untuned_is_enabled": get("record_untuned"),
        "_cuda_tunableop_set_max_tuning_duration": put("tuning_duration"),
        "_cuda_tunableop_get_max_tuning_duration": get("tuning_duration"),
        "_cuda_tunableop_set_max_tuning_iterations": put("tuning_iterations"),
        "_cuda_tunableop_get_max_tuning_iterations": get("tuning_iterations"),
        "_cuda_tunableop_set_filename": put("tunable_filename"),
        "_cuda_tunableop_get_filename": get("tunable_filename"),
        "_cuda_tunableop_set_rotating_buffer_size": put("rotating_buffer"),
        "_cuda_tunableop_get_rotating_buffer_size": get("rotating_buffer"),
        "_cuda_tunableop_set_numerical_check_tolerances": lambda *args, **kwargs: None,
        "_cuda_tunableop_get_results": lambda: (), "_cuda_tunableop_get_validators": lambda: (),
        "_cuda_tunableop_write_file": _refuse("TunableOp results files (no CUDA GEMM is tuned)"),
        "_cuda_tunableop_read_file": _refuse("TunableOp results files (no CUDA GEMM is tuned)"),
        "_cuda_jiterator_compile_and_launch_kernel": _refuse(
            "jiterator (CUDA kernels compiled from C++ source at run time)"),
        "_cuda_record_memory_history": _refuse(_HISTORY), "_cuda_record_memory_history_legacy": _refuse(_HISTORY),
        "_cuda_allocationTraceback": _refuse(_HISTORY),
        "_cuda_cudaHostAllocator": _refuse(_ALLOCATOR), "_cuda_customAllocator": _refuse(_ALLOCATOR),
        "_cuda_changeCurrentAllocator": _refuse(_ALLOCATOR), "_cuda_getAllocator": _refuse(_ALLOCATOR),
        "_cuda_cudaCachingAllocator_raw_alloc": _refuse(_ALLOCATOR),
        "_cuda_cudaCachingAllocator_raw_delete": _refuse(_ALLOCATOR),
        "_cuda_beginAllocateToPool": _refuse(_GRAPHS), "_cuda_beginAllocateCurrentStreamToPool": _refuse(_GRAPHS),
        "_cuda_beginAllocateCurrentThreadToPool": _refuse(_GRAPHS), "_cuda_endAllocateToPool": _refuse(_GRAPHS),
        "_cuda_releasePool": _refuse(_GRAPHS), "_cuda_checkPoolLiveAllocations": _refuse(_GRAPHS),
        "_cuda_getCheckpointState": _refuse(_GRAPHS), "_cuda_setCheckpointPoolState": _refuse(_GRAPHS),
    }


@functools.cache
def names(kind: str = "def") -> tuple[str, ...]:
    """Every ``torch._C._cuda_*`` function (``kind="class"``: class) a CUDA build of this torch
    has (its type stubs)."""
    stub = os.path.join(os.path.dirname(torch.__file__), "_C", "__init__.pyi")
    try:
        with open(stub, encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return ()
    return tuple(sorted(set(re.findall(rf"^{kind} (_cuda_\w+)\b", text, re.MULTILINE))))


def _refused_class(name: str) -> type:
    """A CUDA build's C++ class (``_cuda_CUDAAllocator_AllocatorState``, which
    torch._inductor.cudagraph_trees imports whenever ``torch.backends.cuda.is_built()``):
    importable, but making one needs the real allocator."""

    def __init__(self: object, *args: Any, **kwargs: Any) -> None:
        raise NotSimulatedError(f"torch._C.{name} ({_ALLOCATOR})")

    return type(name, (), {"__init__": __init__, "__module__": "torch._C", "cuda_sim": True})


class _CudaRT:
    """``torch.cuda.cudart()``: the runtime calls torch's Python makes."""

    class cudaError(int):
        success = 0

        def __new__(cls, code: int = 0) -> Any:
            return int.__new__(cls, code)

    def cudaGetErrorString(self, code: int) -> str:
        return "no error" if int(code) == 0 else f"cuda-sim error {int(code)}"

    def cudaProfilerStart(self) -> int:
        return 0

    def cudaProfilerStop(self) -> int:
        return 0

    def cudaMemGetInfo(self, device: int) -> tuple[int, int]:
        return _cuda_api._mem_get_info(device)

    def cudaHostRegister(self, *args: Any) -> int:
        raise NotSimulatedError("cudaHostRegister (page-locking host memory for a GPU)")

    def cudaHostUnregister(self, *args: Any) -> int:
        raise NotSimulatedError("cudaHostUnregister (page-locking host memory for a GPU)")


class _Nvtx:
    """``torch._C._nvtx``: ranges are bookkeeping only."""

    def __init__(self) -> None:
        self.depth = 0

    def rangePushA(self, msg: str) -> int:
        self.depth += 1
        return self.depth - 1

    def rangePop(self) -> int:
        self.depth = max(0, self.depth - 1)
        return self.depth

    def rangeStartA(self, msg: str) -> int:
        return 0

    def rangeEnd(self, range_id: int) -> None:
        return None

    def deviceRangeStart(self, msg: str, stream: int = 0) -> int:
        return 0

    def deviceRangeEnd(self, range_handle: object, stream: int = 0) -> None:
        return None

    def markA(self, msg: str) -> None:
        return None


def patch(p: Patcher) -> None:
    settings = _Settings()
    provided = _functions(settings)
    for name in set(names()) | set(provided):
        p.set(torch._C, name, provided.get(name) or _refuse(f"torch._C.{name}"))
    for name in names("class"):
        if not hasattr(torch._C, name):
            p.set(torch._C, name, _refused_class(name))
    p.set(torch._C, "_CudaDeviceProperties", _cuda_api.DeviceProperties)
    p.set(torch.cuda, "_CudaDeviceProperties", _cuda_api.DeviceProperties)
    p.set(torch.cuda, "_initialized", True)
    cudart = _CudaRT()
    p.set(torch.cuda, "_cudart", cudart)
    p.set(torch._C, "_cudart", cudart)  # torch.cuda imports it from there on a CUDA build
    p.set(torch.cuda, "cudart", lambda: cudart)
    p.set(torch.cuda, "has_magma", True)
    p.set(torch.cuda, "has_half", True)
    p.set(torch.backends.cuda, "is_built", lambda: True)
    _patch_plan_cache(p)
    _patch_modules(p)


def _patch_plan_cache(p: Patcher) -> None:
    """``torch.backends.cuda.cufft_plan_cache``: its properties hold torch's CUDA-only operators."""
    plan_cache = {"max_size": 4096}  # no cuFFT plan is ever made
    cls = torch.backends.cuda.cuFFTPlanCache
    prop = torch.backends.cuda.cuFFTPlanCacheAttrContextProp
    # cuFFTPlanCacheAttrContextProp's __init__ is unannotated
    p.set(cls, "size", prop(lambda device_index: _cuda_api._index(device_index) * 0,  # type: ignore[no-untyped-call]
                            cls.__dict__["size"].setter))
    p.set(cls, "max_size", prop(lambda device_index: plan_cache["max_size"],  # type: ignore[no-untyped-call]
                                lambda device_index, value: plan_cache.__setitem__("max_size", int(value))))
    p.set(cls, "clear", lambda self: None)


def _patch_modules(p: Patcher) -> None:
    """Module globals bound at import (``from torch._C import ...``) in torch.cuda's submodules."""
    import torch.cuda.graphs as graphs
    import torch.cuda.nvtx as nvtx

    p.set(nvtx, "_nvtx", _Nvtx())
    p.set(graphs, "_cuda_isCurrentStreamCapturing", lambda: False)
    p.set(graphs, "_graph_pool_handle", _refuse("CUDA graphs (graph_pool_handle)"))
    p.set(graphs, "CUDAGraph", _cuda_api.CUDAGraph)
    for name in ("graph", "make_graphed_callables"):
        p.set(graphs, name, _refuse(f"CUDA graphs ({name})"))
    for name in ("device_memory_used", "memory_usage", "utilization", "temperature", "power_draw", "clock_rate"):
        p.set(torch.cuda, name, _refuse(f"torch.cuda.{name} (an NVML query)"))
    _refuse_module(p, "torch.cuda.nccl", "NCCL (torch.cuda.nccl)")
    _refuse_module(p, "torch.cuda.gds", "GPUDirect Storage (torch.cuda.gds)")


def _refuse_module(p: Patcher, module_name: str, what: str) -> None:
    try:
        module = __import__(module_name, fromlist=["_"])
    except ImportError:
        return
    for name, value in vars(module).items():
        if isinstance(value, types.FunctionType) and not name.startswith("_") and value.__module__ == module_name:
            p.set(module, name, _refuse(f"{what}: {name}"))
