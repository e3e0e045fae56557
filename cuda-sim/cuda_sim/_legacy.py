"""``torch.cuda.FloatTensor`` and friends: the legacy typed constructors, as CUDA types."""

from __future__ import annotations

from typing import Any

import torch

from cuda_sim._placement import CUDA, device_of

_NoTorchFunction = torch._C.DisableTorchFunction  # the real one (the session patches the name)

_TYPES = {
    "FloatTensor": torch.float32, "DoubleTensor": torch.float64, "HalfTensor": torch.float16,
    "BFloat16Tensor": torch.bfloat16, "LongTensor": torch.int64, "IntTensor": torch.int32,
    "ShortTensor": torch.int16, "CharTensor": torch.int8, "ByteTensor": torch.uint8, "BoolTensor": torch.bool,
}


class _LegacyCudaType(type):
    dtype: torch.dtype

    def __instancecheck__(cls, obj: object) -> bool:
        if not isinstance(obj, torch.Tensor):
            return False
        with _NoTorchFunction():
            return obj.dtype == cls.dtype and device_of(obj).type == "cuda"

    def __call__(cls, *args: Any, **kwargs: Any) -> torch.Tensor:
        if kwargs.get("device") not in (None, 0, "cuda", "cuda:0", CUDA):
            raise RuntimeError(f"legacy constructor expects device type: cuda but device type: "
                               f"{torch.device(kwargs['device']).type} was passed")
        if not args:
            return torch.empty(0, dtype=cls.dtype, device=CUDA)
        first = args[0]
        if len(args) == 1 and isinstance(first, torch.Tensor):
            return first.to(device=CUDA, dtype=cls.dtype)
        if len(args) == 1 and not isinstance(first, (int, torch.Size)):
            return torch.tensor(first, dtype=cls.dtype, device=CUDA)
        sizes = first if isinstance(first, torch.Size) else args
        return torch.empty(*sizes, dtype=cls.dtype, device=CUDA)

    def __repr__(cls) -> str:
        return f"<class 'torch.cuda.{cls.__name__}'>"


def legacy_types() -> dict[str, type]:
    made: dict[str, type] = {}
    for name, dtype in _TYPES.items():
        made[name] = _LegacyCudaType(name, (), {
            "dtype": dtype, "is_cuda": True, "is_sparse": False, "_sim_type_name": f"torch.cuda.{name}",
            "__module__": "torch.cuda",
        })
    return made
