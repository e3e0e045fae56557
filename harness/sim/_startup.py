"""Child Python processes join the simulation: ``CUDA_SIM_SUBPROCESS=1`` in their environment.

``pytest --cuda-sim`` and ``cuda-sim SCRIPT`` set the variable, so every Python process a test or a
script starts (``subprocess.run([sys.executable, ...])``, ``accelerate launch``, ``torchrun``,
multiprocessing's spawn) inherits it. The wheel ships ``cuda_sim.pth`` (site-packages), whose one
line runs at every interpreter start and, only when the variable is ``1``, calls :func:`start`:
the simulation is installed right after the child imports torch (a child that never imports torch
pays nothing more). Without the variable the line is one dictionary lookup. As coverage.py's
``COVERAGE_PROCESS_START``, this reaches the interpreters of environments where repro-matrix is
installed; any other interpreter starts plain.
"""

from __future__ import annotations

import os
import types

ENV = "CUDA_SIM_SUBPROCESS"
PTH_NAME = "cuda_sim.pth"
PTH_LINE = (f'import os; os.environ.get("{ENV}") == "1" and '
            '__import__("harness.sim._startup", fromlist=["start"]).start()\n')


def start() -> None:
    """Install the simulation when this interpreter imports torch (now, if it has already)."""
    from harness.sim._imports import AfterImport

    AfterImport("torch", _install).install()


def _install(torch: types.ModuleType) -> None:
    import harness.sim

    harness.sim.install()


def propagate() -> str | None:
    """Make child processes join the simulation; returns the variable's previous value."""
    previous = os.environ.get(ENV)
    os.environ[ENV] = "1"
    return previous


def restore(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = previous


__all__ = ["ENV", "PTH_LINE", "PTH_NAME", "propagate", "restore", "start"]
