"""The simulation's own exception."""

from __future__ import annotations


class NotSimulatedError(RuntimeError):
    """Raised where the simulation cannot follow the program (multi-GPU, NCCL, CUDA kernels of
    custom operators, CUDA graphs, ...): a loud stop instead of a pass that a real GPU would not
    give. The message always starts with ``not simulated:``."""

    def __init__(self, what: str) -> None:
        super().__init__(f"not simulated: {what}")
        self.what = what
