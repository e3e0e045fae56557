"""The simulation's own exception."""

from __future__ import annotations


class NotSimulatedError(RuntimeError):
    """Raised where the simulation cannot follow the program (multi-GPU, NCCL, CUDA kernels of
    custom operators, CUDA graphs, ...): a loud stop instead of a pass that a real GPU would not
    give. The message always starts with ``not simulated:``."""

    def __init__(self, what: str) -> None:
        super().__init__(f"not simulated: {what}")
        self.what = what


_MARK = "_cuda_sim_raised"
EMULATED = "cuda_sim_emulated"  # stays on the error: the pytest plugin counts the failures the simulator raised


def cuda_error(message: str, kind: type[Exception] = RuntimeError) -> Exception:
    """The exception real CUDA raises, marked so the outermost simulation frame can drop the
    simulation's own frames from its traceback (a real CUDA error ends at the user's call)."""
    error = kind(message)
    setattr(error, _MARK, True)
    setattr(error, EMULATED, True)
    return error


def take_mark(error: BaseException) -> bool:
    if getattr(error, _MARK, False):
        delattr(error, _MARK)
        return True
    return False
