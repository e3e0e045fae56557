"""Storages and checkpoints of simulated CUDA tensors.

``torch.save`` records each storage's location through the serialization registry; a tagger
registered ahead of the CPU one records ``cuda:0`` for simulated CUDA storages, and the matching
deserializer gives ``torch.load`` a CUDA-placed storage wherever the (mapped) location says
``cuda``, so ``map_location`` (None, a string, a device, a dict, a callable) behaves as on a GPU
host. Storage methods that would allocate real CUDA memory are replaced by placement changes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from cuda_sim._errors import NotSimulatedError
from cuda_sim._patch import Patcher
from cuda_sim._placement import CPU, CUDA, cuda_device, parse_device, storage_device, tag_storage

_PRIORITY = 1
_NoTorchFunction = torch._C.DisableTorchFunction  # the real one (the session patches the name)


def _tagger(storage: Any) -> str | None:
    return "cuda:0" if storage_device(storage).type == "cuda" else None


def _deserializer(storage: Any, location: object) -> Any:
    if not isinstance(location, str) or not location.startswith("cuda"):
        return None  # torch's own deserializers decide (and refuse what a GPU host refuses)
    index = torch.device(location).index
    cuda_device(index)
    if storage_device(storage).type != "cuda":
        tag_storage(storage, CUDA)
    return storage


def _real(storage: Any, name: str) -> Any:
    return getattr(torch._C.StorageBase, name)


def _device(self: Any) -> torch.device:
    real = torch._C.StorageBase.device.__get__(self)  # type: ignore[attr-defined]  # C getter, not in torch's stubs
    return real if real.type != "cpu" else storage_device(self)


def _is_cuda(self: Any) -> bool:
    return storage_device(self).type == "cuda"


def _is_shared(original: Any) -> Any:
    def is_shared(self: Any) -> bool:
        # THPStorage_isShared: a CUDA storage is always shared (CUDA IPC can hand it out)
        return storage_device(self).type == "cuda" or original(self)

    return is_shared


def _element_access(original: Any) -> Any:
    """``storage[i]`` / ``storage[i:j]`` / ``storage[i] = v`` (``tolist()``, iteration): C++ views
    the storage through a tensor it makes on the storage's real device (the CPU), which the
    simulation would refuse to ``set_`` to a simulated-CUDA storage. A CUDA build reads and
    writes the device memory; here the host values are that memory. Slices stay on the device."""

    def access(self: Any, *args: Any, **kwargs: Any) -> Any:
        device = storage_device(self)
        if device.type == "cpu":
            return original(self, *args, **kwargs)
        with _disable_current_modes(), _NoTorchFunction():
            result = original(self, *args, **kwargs)
        if isinstance(result, torch.UntypedStorage):
            tag_storage(result, device)
        return result

    return access


def _copy_storage(self: Any, device: torch.device) -> Any:
    with _NoTorchFunction():
        fresh = torch.UntypedStorage(self.nbytes())
        fresh.copy_(self)
    tag_storage(fresh, device)
    return fresh


def _storage_copy(original: Any) -> Any:
    """``storage.copy_(src)``: C++ wraps both in temporary tensors made with the storages' real
    (CPU) device, which the simulation cannot tell from user tensors: copy the bytes without it.
    Each storage keeps its own device, as a copy between GPU and host memory does."""

    def copy_(self: Any, src: Any, non_blocking: Any = None) -> Any:
        with _disable_current_modes(), _NoTorchFunction():
            return original(self, src, non_blocking) if non_blocking is not None else original(self, src)

    return copy_


def _clone(self: Any) -> Any:
    return _copy_storage(self, storage_device(self))


def _to(self: Any, *, device: Any, non_blocking: bool = False) -> Any:
    target = parse_device(device)
    if target == storage_device(self):
        return self
    if target.type not in ("cpu", "cuda"):
        raise NotSimulatedError(f"moving a storage to {target}")
    return _copy_storage(self, target)


def _cuda(self: Any, device: Any = None, non_blocking: bool = False) -> Any:
    return _to(self, device=cuda_device(device if isinstance(device, int) else None)
               if not isinstance(device, (str, torch.device)) else device)


def _cpu(self: Any) -> Any:
    return self if storage_device(self) == CPU else _copy_storage(self, CPU)


def _storage_new(original: Any) -> Any:
    """``torch.UntypedStorage(..., device="cuda")`` (and so ``TypedStorage(device="cuda")`` and
    ``torch.cuda.FloatStorage(n)``, which build one): CPU memory tagged with the GPU."""

    def __new__(cls: type, *args: Any, device: Any = None, **kwargs: Any) -> Any:
        target = parse_device(device) if device is not None else None
        if target is None or target.type != "cuda":
            return original(cls, *args, **kwargs) if device is None else original(cls, *args, device=device, **kwargs)
        storage = original(cls, *args, device=CPU, **kwargs)
        tag_storage(storage, target)
        return storage

    return __new__


def _share_cuda(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise NotSimulatedError("sharing a cuda tensor with another process (CUDA IPC)")


def patch_storages(patcher: Patcher) -> None:
    cls = torch.UntypedStorage
    patcher.set(cls, "__new__", staticmethod(_storage_new(cls.__new__)))
    patcher.set(cls, "device", property(_device))
    patcher.set(cls, "is_cuda", property(_is_cuda))
    patcher.set(cls, "clone", _clone)
    patcher.set(cls, "copy_", _storage_copy(cls.copy_))
    patcher.set(cls, "to", _to)
    patcher.set(cls, "cuda", _cuda)
    patcher.set(cls, "cpu", _cpu)
    patcher.set(cls, "_share_cuda_", _share_cuda)
    patcher.set(cls, "is_shared", _is_shared(cls.is_shared))
    patcher.set(cls, "__getitem__", _element_access(cls.__getitem__))
    patcher.set(cls, "__setitem__", _element_access(cls.__setitem__))


def register() -> tuple[int, Any, Any]:
    entry = (_PRIORITY, _tagger, _deserializer)
    torch.serialization.register_package(*entry)
    return entry


def unregister(entry: tuple[int, Any, Any]) -> None:
    registry = torch.serialization._package_registry
    for i, item in enumerate(registry):
        if item[1] is entry[1] and item[2] is entry[2]:
            del registry[i]
            return


DEFAULT = object()  # a handler's answer: not mine, the placement mode's usual path decides


def asarray(mode: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    """``torch.asarray(storage, device=...)`` (safetensors' ``safe_open(device=...)`` reads tensors
    so): torch builds the tensor on the storage's device (``set_`` to it) and copies it to
    ``device`` if that differs. Built where the simulation says the storage lives, then moved."""
    if not args or not isinstance(args[0], (torch.UntypedStorage, torch.TypedStorage)):
        return DEFAULT
    from cuda_sim._methods import move

    storage = args[0] if isinstance(args[0], torch.UntypedStorage) else args[0].untyped()
    source = storage_device(storage)
    target = parse_device(kwargs["device"]) if kwargs.get("device") is not None else source
    made = mode._explicit(torch.asarray, (), args, {**kwargs, "device": source})
    return made if target == source else move(made, target)
