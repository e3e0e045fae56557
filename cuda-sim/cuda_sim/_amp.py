"""``torch.autocast("cuda")`` casts as it would on the GPU.

The simulated tensors are real CPU tensors, so CUDA autocast (the AutocastCUDA dispatch key)
never applies to them; inside a CUDA autocast region the simulation turns on CPU autocast with
the same dtype instead. CPU autocast's op lists are close to, not identical with, CUDA's (see
torch/amp/autocast_mode.py and the autocast docs); CPU tensors inside the region are cast too.
"""

from __future__ import annotations

from typing import Any

import torch

from cuda_sim._patch import Patcher

_SAVED = "_cuda_sim_cpu_autocast"


def patch(p: Patcher) -> None:
    cls = torch.amp.autocast_mode.autocast
    enter, leave = cls.__enter__, cls.__exit__

    def __enter__(self: Any) -> Any:
        result = enter(self)  # type: ignore[no-untyped-call]  # torch's autocast.__enter__: unannotated
        if getattr(self, "device", None) == "cuda":
            self.__dict__.setdefault(_SAVED, []).append(
                (torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")))
            torch.set_autocast_enabled("cpu", self._enabled)
            if self.fast_dtype is not None:
                torch.set_autocast_dtype("cpu", self.fast_dtype)
        return result

    def __exit__(self: Any, *exc: Any) -> Any:
        saved = self.__dict__.get(_SAVED)
        if getattr(self, "device", None) == "cuda" and saved:
            enabled, dtype = saved.pop()
            torch.set_autocast_enabled("cpu", enabled)
            torch.set_autocast_dtype("cpu", dtype)
        return leave(self, *exc)

    p.set(cls, "__enter__", __enter__)
    p.set(cls, "__exit__", __exit__)
