"""Where a tensor lives in the simulation.

Every value is a real CPU tensor. Its simulated device is a tag on the Python object of its
storage: torch keeps that object alive exactly as long as the storage (views, ``param.data = x``
and ``Parameter`` share it, so they share the placement) and a freed storage takes its tag with
it, so a new tensor at a reused address never inherits a stale placement. No tag means CPU.

The helpers here read real attributes (``is_cpu``, ``untyped_storage``); callers run them where
the placement TorchFunctionMode cannot see them (inside a mode handler, or with torch functions
disabled).
"""

from __future__ import annotations

import torch

from cuda_sim import _activity, _memory
from cuda_sim._errors import NotSimulatedError

CPU = torch.device("cpu")
CUDA = torch.device("cuda", 0)
_TAG = "_cuda_sim_device"
_GUESS = "_cuda_sim_guess"
_PINNED = "_cuda_sim_pinned"
_PLAIN = (torch.Tensor, torch.nn.Parameter)
_NoSubclassHandlers = torch._C.DisableTorchFunctionSubclass


_is_functorch_wrapper = torch._C._functorch.is_functorch_wrapped_tensor
_functorch_unwrap = torch._C._functorch.get_unwrapped


def storage_of(t: torch.Tensor) -> torch.UntypedStorage | None:
    plain = type(t) in _PLAIN
    if plain:
        layout = t.layout
        if layout is not STRIDED and layout in _SPARSE:
            # no storage of its own: asking for it raises a C++ error, which costs more than the operator
            return _sparse_storage(t, layout)
    try:
        if plain:
            return t.untyped_storage()
        with _NoSubclassHandlers():  # a subclass's __torch_function__ should not see the simulator's reads
            return t.untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        pass
    if _is_functorch_wrapper(t):
        # torch.func's GradTrackingTensor / BatchedTensor have no storage; like CUDA's, they are where the
        # tensor they wrap is (functorch's TensorWrapper and BatchedTensorImpl take its device)
        return storage_of(_functorch_unwrap(t))
    return _sparse_storage(t, t.layout)


def host_storage(t: torch.Tensor) -> torch.UntypedStorage | None:
    """``storage_of`` a CPU tensor as the dispatch mode meets it (every operand and output of every operator):
    a strided tensor's own storage first, sparse ones without asking for theirs."""
    if t.layout is STRIDED:
        try:
            return t.untyped_storage()
        except (RuntimeError, NotImplementedError, TypeError):
            pass
    return storage_of(t)


STRIDED = torch.strided
_COMPRESSED = (torch.sparse_csr, torch.sparse_csc, torch.sparse_bsr, torch.sparse_bsc)
_SPARSE = (torch.sparse_coo, *_COMPRESSED)


def _sparse_storage(t: torch.Tensor, layout: torch.layout) -> torch.UntypedStorage | None:
    """A sparse tensor is where its values are."""
    try:
        if layout is torch.sparse_coo:
            return t._values().untyped_storage()
        if layout in _COMPRESSED:
            return t.values().untyped_storage()
    except (RuntimeError, NotImplementedError, TypeError):
        pass
    return None


def device_of(t: torch.Tensor) -> torch.device:
    if not t.is_cpu:
        return t.device
    storage = storage_of(t)
    if storage is not None:
        found: torch.device | None = getattr(storage, _TAG, None)
        if found is not None:
            return found
        if type(t) in _PLAIN:
            return CPU
    # a wrapper subclass (no storage, or one without data): its own tag (cuda_sim._wrappers), else its inner tensors
    return getattr(t, _TAG, None) or _inner_device(t)


def _inner_device(t: torch.Tensor) -> torch.device:
    """A wrapper subclass without a placement of its own (made on the simulated GPU it is tagged:
    cuda_sim._wrappers; made where its handler read a device with the simulation's functions off, it
    is not) is where the tensors it wraps are (``__tensor_flatten__``'s inner tensors)."""
    flatten = getattr(type(t), "__tensor_flatten__", None)
    if flatten is None:
        return CPU
    try:
        names = flatten(t)[0]
    except Exception:  # a subclass's own code: any failure means nothing is known
        return CPU
    for name in names:
        inner = getattr(t, name, None)
        if isinstance(inner, torch.Tensor) and inner is not t:
            return device_of(inner)
    return CPU


def is_cuda(t: torch.Tensor) -> bool:
    return device_of(t).type == "cuda"


def place(t: torch.Tensor, device: torch.device) -> None:
    """Tag ``t``'s storage (and so every tensor sharing it) with ``device``."""
    storage = storage_of(t)
    if type(t) not in _PLAIN and t.is_cpu and (storage is None or _no_data(storage)):
        _place_wrapper(t, device)
        return
    if storage is None or not t.is_cpu:
        return
    place_storage(storage, device)


def place_storage(storage: torch.UntypedStorage, device: torch.device) -> None:
    """``place`` for a CPU tensor's storage the caller has read already (the dispatch mode's hot path)."""
    if device.type == "cuda":
        setattr(storage, _TAG, device)
        _activity.placements += 1
        _memory.track(storage)
    elif hasattr(storage, _TAG):
        delattr(storage, _TAG)
        _memory.untrack(storage)
    if hasattr(storage, _GUESS):
        delattr(storage, _GUESS)


def _no_data(storage: torch.UntypedStorage) -> bool:
    """A wrapper subclass's storage: a size and no memory (its inner tensors hold the data)."""
    try:
        storage.data_ptr()
    except RuntimeError:
        return True
    return False


def _place_wrapper(t: torch.Tensor, device: torch.device) -> None:
    """A wrapper subclass has no storage of its own: the wrapper carries the tag (the memory is its
    inner tensors', tracked with them)."""
    if device.type == "cuda":
        setattr(t, _TAG, device)
        _activity.placements += 1
    elif hasattr(t, _TAG):
        delattr(t, _TAG)


def place_guess(t: torch.Tensor, device: torch.device) -> None:
    """Tag a tensor created by C++ with a real (meaningless) device: best guess, which the
    first operator combining it with a tensor on a known device may correct."""
    place(t, device)
    storage = storage_of(t)
    if storage is not None:
        setattr(storage, _GUESS, True)


def is_guess(t: torch.Tensor) -> bool:
    storage = storage_of(t)
    return storage is not None and getattr(storage, _GUESS, False)


def mark_pinned(t: torch.Tensor) -> None:
    storage = storage_of(t)
    if storage is not None:
        setattr(storage, _PINNED, True)


def is_pinned(t: torch.Tensor) -> bool:
    storage = storage_of(t)
    return storage is not None and getattr(storage, _PINNED, False)


def storage_device(storage: object) -> torch.device:
    return getattr(storage, _TAG, CPU)


def tag_storage(storage: object, device: torch.device) -> None:
    if device.type == "cuda":
        setattr(storage, _TAG, device)
        _activity.placements += 1
        _memory.track(storage)


def parse_device(spec: object) -> torch.device:
    """A device argument as real CUDA code means it: ``0`` and ``"cuda"`` are ``cuda:0``."""
    if isinstance(spec, torch.device):
        device = spec
    elif isinstance(spec, int) and not isinstance(spec, bool):
        device = torch.device("cuda", spec)
    elif isinstance(spec, str):
        device = torch.device(spec)
    else:
        raise TypeError(f"not a device: {spec!r}")
    if device.type == "cuda":
        return cuda_device(device.index)
    return device


def cuda_device(index: int | None) -> torch.device:
    if index is None or index == 0:
        return CUDA
    if index < 0:
        raise RuntimeError(f"Device index must not be negative, got {index}")
    raise NotSimulatedError(f"device cuda:{index} (the simulated host has a single GPU, cuda:0)")


def real_device(device: torch.device) -> torch.device:
    """The device the values really live on."""
    return CPU if device.type == "cuda" else device
