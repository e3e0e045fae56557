"""Run by path from a line in an environment's site-packages, where repro-matrix is not installed.

The harness writes :data:`harness.sim._startup.ENV_PTH_LINE` into each case environment it prepares;
in a process started with ``CUDA_SIM_SUBPROCESS=1`` and ``CUDA_SIM_HARNESS=<folder holding harness/>``
(a cuda-sim cell exports both) the line runs this file, which loads the ``harness`` package from that
folder, as the cell runner does, and starts the simulation. Only the package: the folder itself
never goes on sys.path, where its other entries (``tests``, another torch) would shadow the
environment's own. Standard library only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path


def join(root: str) -> None:
    if "harness" in sys.modules:  # an installed repro-matrix's cuda_sim.pth has started it already
        return
    init = Path(root, "harness", "__init__.py")
    spec = importlib.util.spec_from_file_location("harness", init, submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules["harness"] = package
    spec.loader.exec_module(package)
    from harness.sim._startup import start

    start()


join(os.environ["CUDA_SIM_HARNESS"])
