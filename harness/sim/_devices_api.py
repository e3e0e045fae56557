"""Device-level APIs outside ``torch.cuda`` that must agree with the simulated GPU:
``torch.accelerator``, cuDNN availability, the optimizers' device grouping, NCCL."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import torch

from harness.sim import _cuda_api
from harness.sim._errors import NotSimulatedError
from harness.sim._patch import Patcher
from harness.sim._placement import CPU, CUDA, device_of, parse_device

_STEP_MESSAGE = ("Tensors of the same index must be on the same device and the same dtype except `step` "
                 "tensors that can be CPU and float32/64, and optimizer states that can be bfloat16 for "
                 "mixed-precision training")


def group_tensors_by_device_and_dtype(tensorlistlist: list[list[torch.Tensor | None]],
                                      with_indices: bool = False) -> dict[Any, Any]:
    """``torch._C._group_tensors_by_device_and_dtype`` keyed by the simulated device: optimizers
    and ``clip_grad_norm_`` group per device before calling foreach / fused kernels."""
    with torch._C.DisableTorchFunction():
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
    total = inputs[0].to(target)
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
    accelerator = getattr(torch, "accelerator", None)
    if accelerator is not None:
        _patch_accelerator(p, accelerator)
    if torch.distributed.is_available():
        import torch.distributed as dist

        for name in ("init_process_group", "new_group"):
            p.set(dist, name, _guard_nccl(getattr(dist, name)))


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
        "empty_cache": lambda: None, "get_device_capability": lambda device=None: {
            "major": _cuda_api.CAPABILITY[0], "minor": _cuda_api.CAPABILITY[1]},
    }
    for name, value in values.items():
        if hasattr(accelerator, name):
            p.set(accelerator, name, value)


__all__ = ["CUDA", "group_tensors_by_device_and_dtype", "patch"]
