"""cuda-sim: CUDA device placement simulated on a CPU-only host.

Tensors placed on ``cuda`` hold real CPU values but behave, for placement, as on a one-GPU
host: ``torch.cuda.is_available()`` is True, ``.to("cuda")`` / factories / ``torch.load`` /
optimizers / autograd place tensors on ``cuda:0``, and mixing devices raises the RuntimeError
real CUDA raises. See docs/cuda-sim.md for what is and is not simulated.

- ``install()``: the whole process, from now on (idempotent).
- ``simulate()``: a context manager; everything is restored on exit.
- ``cuda-sim SCRIPT [ARGS...]`` (or ``python -m cuda_sim``): run a script under the simulation.
- ``pytest --cuda-sim``, the ``cuda_sim`` fixture and ``@pytest.mark.cuda_sim``: ``cuda_sim.pytest_plugin``.

Importing this package does not import torch (the pytest plugin loads it in every pytest session
of an environment where cuda-sim is installed); torch is imported, and its version checked
(``TESTED_TEXT``), when the simulation starts.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from types import ModuleType

from cuda_sim._errors import NotSimulatedError
from cuda_sim._version import (
    TESTED,
    TESTED_TEXT,
    TorchVersionWarning,
    UnsupportedTorchError,
    __version__,
    check_torch,
    release,
    unsupported,
)

__all__ = [
    "TESTED_TEXT",
    "NotSimulatedError",
    "TorchVersionWarning",
    "UnsupportedTorchError",
    "__version__",
    "install",
    "is_active",
    "simulate",
]


def install() -> None:
    """Simulate CUDA in the whole process from now on, in this thread and every thread started later."""
    session = _load()
    with _starting():
        session.install()


@contextlib.contextmanager
def simulate() -> Iterator[None]:
    """Simulate CUDA inside a ``with`` block; everything is restored on exit (nestable)."""
    session = _load()
    with contextlib.ExitStack() as stack:
        with _starting():
            stack.enter_context(session.simulate())
        yield


def is_active() -> bool:
    session = sys.modules.get("cuda_sim._session")
    return session is not None and session.is_active()


def _load() -> ModuleType:
    with _starting():
        from cuda_sim import _session
    return _session


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """Under a torch release it is not tested with, a simulation that cannot start says so."""
    version = check_torch()
    try:
        yield
    except Exception as error:
        if release(version) in TESTED or isinstance(error, NotSimulatedError):
            raise
        raise unsupported(version, error) from error
