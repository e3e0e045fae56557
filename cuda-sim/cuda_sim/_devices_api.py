"""Device-level APIs outside ``torch.cuda`` that must agree with the simulated GPU:
``torch.device(<int>)``, ``torch.accelerator`` and the ``torch._C._accelerator_*`` layer under it,
cuDNN availability, the optimizers' device grouping, NCCL."""

from __future__ import annotations

import functools
import numbers
from collections.abc import Callable, Sequence
from typing import Any

import torch

from cuda_sim import _cuda_api, _memory
from cuda_sim._errors import NotSimulatedError
from cuda_sim._patch import Patcher
from cuda_sim._placement import CPU, CUDA, cuda_device, device_of, parse_device

_NoTorchFunction = torch._C.DisableTorchFunction  # the real one (the session patches the name)

_STEP_MESSAGE = ("Tensors of the same index must be on the same device and the same dtype except `step` "
                 "tensors that can be CPU and float32/64, and optimizer states that can be bfloat16 for "
                 "mixed-precision training")


def group_tensors_by_device_and_dtype(tensorlistlist: list[list[torch.Tensor | None]],
                                      with_indices: bool = False) -> dict[Any, Any]:
    """``torch._C._group_tensors_by_device_and_dtype`` keyed by the simulated device: optimizers
    and ``clip_grad_norm_`` group per device before calling foreach / fused kernels."""
    with _NoTorchFunction():
        groups: dict[tuple[torch.device, torch.dtype], tuple[list[list[Any]], list[int]]] = {}
        first = tensorlistlist[0]
        for index, anchor in enumerate(first):
            if anchor is None:
                continue
            key = (device_of(anchor), anchor.dtype)
            for other in tensorlistlist[1:]:
                item = other[index] if len(other) else None
                if item is not None and device_of(item) != key[0] and not _is_step(item):
                    raise RuntimeError(_STEP_MESSAGE)
            lists, indices = groups.setdefault(key, ([[] for _ in tensorlistlist], []))
            for slot, source in zip(lists, tensorlistlist, strict=True):
                if len(source):  # an empty list (e.g. no max_exp_avg_sqs) stays empty
                    slot.append(source[index])
            if with_indices:
                indices.append(index)
        return groups


def _is_step(t: torch.Tensor) -> bool:
    return t.dim() == 0 and t.dtype in (torch.float32, torch.float64) and device_of(t).type == "cpu"


def construct_device(mode: object, args: Sequence[object], kwargs: dict[str, object]) -> torch.device:
    """``torch.device(<int>)``: torch/csrc/Device.cpp ``THPDevice_pynew`` reads a bare index
    (a Python or NumPy integer, never a bool) as that index of the current accelerator
    (``at::getAccelerator(true)``), which a CPU build does not have: ``cuda:N`` on the simulated
    host. As on a one-GPU host, ``cuda:1`` is a valid device object; using it is not simulated.
    A negative index keeps torch's own error. Answered in the placement mode (which sees the
    constructor call), so ``torch.device`` itself stays the C type: ``isinstance``, pickling,
    dynamo's rules and C++ argument parsing are unchanged."""
    if len(args) == 1 and not kwargs and _is_index(args[0]):
        index = int(args[0])  # type: ignore[call-overload]
        if index >= 0:
            return torch.device("cuda", index)
    made: torch.device = torch.device(*args, **kwargs)  # type: ignore[call-overload]
    return made


def _is_index(value: object) -> bool:
    """What THPUtils_checkLong accepts: int (not bool) and NumPy integers."""
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (type(value).__module__ == "numpy" and isinstance(value, numbers.Integral))


def _guard_nccl(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        backend = kwargs.get("backend", args[0] if args else None)
        if backend is not None and "nccl" in str(backend).lower():
            raise NotSimulatedError("NCCL process groups (use the gloo backend: it runs on the CPU values)")
        return original(*args, **kwargs)

    return init_process_group


def _devices(devices: Any) -> list[torch.device]:
    # every index but 0 raises NotSimulatedError: the simulated host has one GPU
    return [parse_device(d) for d in (devices if devices is not None else [0])]


def _scatter(tensor: torch.Tensor, devices: Any = None, chunk_sizes: Any = None, dim: int = 0,
             streams: Any = None, *, out: Any = None) -> tuple[torch.Tensor, ...]:
    if out is not None:
        raise NotSimulatedError("comm.scatter(out=...)")
    targets = _devices(devices)
    chunks = (tensor.split(list(chunk_sizes), dim) if chunk_sizes is not None
              else tensor.chunk(len(targets), dim))
    return tuple(chunk.contiguous().to(target) for chunk, target in zip(chunks, targets, strict=True))


def _gather(tensors: Any, dim: int = 0, destination: Any = None, *, out: Any = None) -> torch.Tensor:
    target = CPU if destination == -1 or destination == "cpu" else (
        parse_device(destination) if destination is not None else CUDA)
    return torch.cat([t.to(target) for t in tensors], dim)


def _broadcast(tensor: torch.Tensor, devices: Any = None, *, out: Any = None) -> tuple[torch.Tensor, ...]:
    return tuple(tensor.to(target) for target in _devices(devices))


def _broadcast_coalesced(tensors: Any, devices: Any, buffer_size: int = 10485760) -> list[list[torch.Tensor]]:
    return [[t.to(target) for t in tensors] for target in _devices(devices)]


def _reduce_add(inputs: Any, destination: Any = None) -> torch.Tensor:
    target = parse_device(destination) if destination is not None else CUDA
    total: torch.Tensor = inputs[0].to(target)
    for item in inputs[1:]:
        total = total + item.to(target)
    return total


def _patch_comm(p: Patcher) -> None:
    """``torch.nn.parallel.comm`` (DataParallel) over the one simulated GPU: the CUDA build's
    ``torch._C._scatter`` & co. are absent from a CPU build."""
    from torch.nn.parallel import comm

    for name, value in (("scatter", _scatter), ("gather", _gather), ("broadcast", _broadcast),
                        ("broadcast_coalesced", _broadcast_coalesced), ("reduce_add", _reduce_add)):
        p.set(comm, name, value)


def patch(p: Patcher) -> None:
    _patch_comm(p)
    p.set(torch._C, "_group_tensors_by_device_and_dtype", group_tensors_by_device_and_dtype)
    cudnn = torch.backends.cudnn
    p.set(cudnn, "is_available", lambda: True)
    p.set(cudnn, "version", lambda: 90100)
    # no cuDNN kernels exist to run: RNNs keep their unflattened weights (quietly, not with the
    # CPU build's "compiled without cuDNN" warning)
    p.set(cudnn, "is_acceptable", lambda tensor: False)
    _patch_accelerator_c(p)
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        _patch_accelerator(p, accelerator)
    if torch.distributed.is_available():
        import torch.distributed as dist

        for name in ("init_process_group", "new_group"):
            p.set(dist, name, _guard_nccl(getattr(dist, name)))


def _patch_accelerator_c(p: Patcher) -> None:
    """``torch._C._accelerator_*`` and ``torch._C._get_accelerator``: C++ asks ``at::getAccelerator``,
    which only a build with a device backend answers (CUDA's hooks live in libtorch_cuda; the
    PrivateUse1 route cannot be named ``cuda``). torch.accelerator's Python, its memory module and
    ``torch.get_device_module()`` are written on these."""
    allocator = _memory.ALLOCATOR
    settings = {"value": ""}

    def on_device(action: Callable[[], Any]) -> Callable[[int], Any]:
        return lambda device_index: (cuda_device(device_index if device_index >= 0 else 0), action())[1]

    values: dict[str, Any] = {
        "_get_accelerator": lambda check=None: torch.device("cuda"),
        "_accelerator_getAccelerator": lambda: torch.device("cuda"),
        "_accelerator_getDeviceIndex": lambda: 0,
        "_accelerator_setDeviceIndex": on_device(lambda: None),
        "_accelerator_exchangeDevice": on_device(lambda: 0),
        "_accelerator_maybeExchangeDevice": on_device(lambda: 0),
        "_accelerator_synchronizeDevice": on_device(lambda: None),
        "_accelerator_getDeviceCapability": on_device(lambda: {
            "major": _cuda_api.CAPABILITY[0], "minor": _cuda_api.CAPABILITY[1]}),
        "_accelerator_getStream": lambda device_index: _cuda_api.current_stream(device_index),
        "_accelerator_setStream": _cuda_api.set_stream,
        "_accelerator_isAllocatorInitialized": lambda: True,
        "_accelerator_emptyCache": allocator.empty_cache, "_accelerator_emptyHostCache": lambda: None,
        "_accelerator_getDeviceStats": on_device(allocator.stats),
        "_accelerator_resetAccumulatedStats": on_device(allocator.reset_accumulated),
        "_accelerator_resetPeakStats": on_device(allocator.reset_peak),
        "_accelerator_getMemoryInfo": lambda device_index: _cuda_api._mem_get_info(device_index),
        "_accelerator_getAllocatorSettings": lambda: settings["value"],
        "_accelerator_setAllocatorSettings": lambda env: settings.__setitem__("value", env),
    }
    for name, value in values.items():
        if hasattr(torch._C, name):
            p.set(torch._C, name, value)
    original = torch.get_device_module

    # functools.cache'd upstream: a cached None answer would outlive the simulation
    def get_device_module(device: Any = None) -> Any:
        return torch.cuda if device is None else original(device)

    p.set(torch, "get_device_module", get_device_module)


def _patch_accelerator(p: Patcher, accelerator: Any) -> None:
    def index(device: Any = None) -> int:
        return _cuda_api._index(device)

    values: dict[str, Any] = {
        "is_available": lambda: True, "current_accelerator": lambda check_available=False: torch.device("cuda"),
        "device_count": lambda: 1, "current_device_index": lambda: 0, "current_device_idx": lambda: 0,
        "set_device_index": lambda device: index(device) and None,
        "set_device_idx": lambda device: index(device) and None,
        "synchronize": lambda device=None: index(device) and None,
        "current_stream": _cuda_api.current_stream, "set_stream": _cuda_api.set_stream,
        "empty_cache": _memory.ALLOCATOR.empty_cache, "get_device_capability": lambda device=None: {
            "major": _cuda_api.CAPABILITY[0], "minor": _cuda_api.CAPABILITY[1]},
    }
    for name, value in values.items():
        if hasattr(accelerator, name):
            p.set(accelerator, name, value)


__all__ = ["CUDA", "construct_device", "group_tensors_by_device_and_dtype", "patch"]
