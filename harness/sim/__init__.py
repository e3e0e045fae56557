"""cuda-sim: CUDA device placement simulated on a CPU-only host.

Tensors placed on ``cuda`` hold real CPU values but behave, for placement, as on a one-GPU
host: ``torch.cuda.is_available()`` is True, ``.to("cuda")`` / factories / ``torch.load`` /
optimizers / autograd place tensors on ``cuda:0``, and mixing devices raises the RuntimeError
real CUDA raises. See docs/cuda-sim.md for what is and is not simulated.

- ``install()``: the whole process, from now on (idempotent).
- ``simulate()``: a context manager; everything is restored on exit.
- ``python -m harness.sim SCRIPT [ARGS...]``: run a script under the simulation.
"""

from harness.sim._errors import NotSimulatedError
from harness.sim._session import install, is_active, simulate

__all__ = ["NotSimulatedError", "install", "is_active", "simulate"]
