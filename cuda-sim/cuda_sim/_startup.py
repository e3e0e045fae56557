"""Child Python processes join the simulation: ``CUDA_SIM_SUBPROCESS=1`` in their environment.

``pytest --cuda-sim`` and ``cuda-sim SCRIPT`` set the variable, so every Python process a test or a
script starts (``subprocess.run([sys.executable, ...])``, ``accelerate launch``, ``torchrun``,
multiprocessing's spawn) inherits it. The cuda-sim wheel ships ``cuda_sim.pth`` (site-packages), whose one
line runs at every interpreter start and, only when the variable is ``1``, calls :func:`start`:
the simulation is installed right after the child imports torch (a child that never imports torch
pays nothing more). Without the variable the line is one dictionary lookup. As coverage.py's
``COVERAGE_PROCESS_START``, this reaches the interpreters of environments where cuda-sim is
installed. repro-matrix reaches the others (its case environments) with :data:`ENV_PTH_LINE`, which
it writes into their site-packages: with :data:`ROOT_ENV` also set, it loads ``cuda_sim`` from there.
"""

from __future__ import annotations

import os
import types

ENV = "CUDA_SIM_SUBPROCESS"
PTH_NAME = "cuda_sim.pth"
PTH_LINE = (f'import os; os.environ.get("{ENV}") == "1" and '
            '__import__("cuda_sim._startup", fromlist=["start"]).start()\n')
ROOT_ENV = "CUDA_SIM_ROOT"  # the folder holding the cuda_sim package, for environments without it
ENV_PTH_NAME = "zzz_cuda_sim_root.pth"  # after the wheel's cuda_sim.pth, which wins where both exist
# No path in the line: environments are keyed by content and shared by checkouts.
ENV_PTH_LINE = (f'import os; os.environ.get("{ENV}") == "1" and os.environ.get("{ROOT_ENV}") and '
                f'__import__("runpy").run_path(os.path.join(os.environ["{ROOT_ENV}"], "cuda_sim", "_join.py"))\n')


def start() -> None:
    """Install the simulation when this interpreter imports torch (now, if it has already)."""
    from cuda_sim._imports import AfterImport

    AfterImport("torch", _install).install()


def _install(torch: types.ModuleType) -> None:
    import cuda_sim

    cuda_sim.install()


def propagate(root: str | None = None) -> str | None:
    """Make child processes join the simulation; returns the variable's previous value.

    ``root``, the folder holding the cuda_sim package, also reaches the interpreters of environments
    that carry :data:`ENV_PTH_LINE` instead of an installed cuda-sim.
    """
    previous = os.environ.get(ENV)
    os.environ[ENV] = "1"
    if root is not None:
        os.environ[ROOT_ENV] = root
    return previous


def restore(previous: str | None) -> None:
    if previous is None:
        os.environ.pop(ENV, None)
    else:
        os.environ[ENV] = previous


__all__ = ["ENV", "ENV_PTH_LINE", "ENV_PTH_NAME", "PTH_LINE", "PTH_NAME", "ROOT_ENV", "propagate", "restore",
           "start"]
