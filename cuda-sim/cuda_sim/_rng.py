"""The simulated GPU's random number generators.

Real CUDA draws from its own generator, so CUDA random ops never move the CPU stream. The
simulation keeps that separation with a dedicated CPU generator that stands in for
``torch.cuda.default_generators[0]``; ``torch.Generator("cuda")`` makes more of them.
"""

from __future__ import annotations

from typing import Any

import torch

from cuda_sim._errors import cuda_error
from cuda_sim._placement import CPU, parse_device

_RealGenerator = torch._C.Generator


class _GeneratorMeta(type(_RealGenerator)):  # type: ignore[misc]
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _RealGenerator) or type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _RealGenerator)


class SimGenerator(_RealGenerator, metaclass=_GeneratorMeta):
    _sim_device: torch.device
    """Stands in for ``torch.Generator``: ``torch.Generator("cuda")`` gives a CPU generator that
    reports ``device(type='cuda', index=0)``; any other device gives a plain torch generator."""

    def __new__(cls, device: Any = "cpu") -> Any:
        target = parse_device(device) if device is not None else CPU
        if target.type != "cuda":
            return _RealGenerator(target)
        generator = _RealGenerator.__new__(cls)
        generator._sim_device = target
        return generator

    def __init__(self, device: Any = "cpu") -> None:
        pass

    @property
    def device(self) -> torch.device:  # type: ignore[override]  # read-only on the C type too; its stub says attribute
        return self._sim_device

    def __reduce__(self) -> tuple[Any, ...]:
        return (_rebuild, (str(self._sim_device), self.get_state()))


def _rebuild(device: str, state: torch.Tensor) -> SimGenerator:
    generator = SimGenerator(device)
    generator.set_state(state)
    return generator


def generator_device(generator: object) -> torch.device:
    device: torch.device = getattr(generator, "_sim_device", None) or generator.device  # type: ignore[attr-defined]
    return device


_default: SimGenerator | None = None


def default_generator() -> SimGenerator:
    global _default
    if _default is None:
        _default = SimGenerator("cuda")
        _default.manual_seed(_RealGenerator().initial_seed())
    return _default


def check_generator(generator: object, device: torch.device) -> None:
    """``at::check_generator``: a kernel on ``device`` takes only a generator of its type."""
    found = generator_device(generator)
    if found.type != device.type:
        raise cuda_error(f"Expected a '{device.type}' device type for generator but found '{found.type}'")
