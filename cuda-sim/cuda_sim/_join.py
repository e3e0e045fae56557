"""Run by path from a line in an environment's site-packages, where cuda-sim is not installed.

repro-matrix writes :data:`cuda_sim._startup.ENV_PTH_LINE` into each case environment it prepares;
in a process started with ``CUDA_SIM_SUBPROCESS=1`` and ``CUDA_SIM_ROOT=<folder holding cuda_sim/>``
(a cuda-sim cell exports both) the line runs this file, which loads the ``cuda_sim`` package from that
folder, as the cell runner does, and starts the simulation. Only the package: the folder itself
never goes on sys.path, where its other entries (another torch, when it is a site-packages) would
shadow the environment's own. Standard library only.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path


def join(root: str) -> None:
    if "cuda_sim" in sys.modules:  # an installed cuda-sim's cuda_sim.pth has started it already
        return
    init = Path(root, "cuda_sim", "__init__.py")
    spec = importlib.util.spec_from_file_location("cuda_sim", init, submodule_search_locations=[str(init.parent)])
    if spec is None or spec.loader is None:
        return
    package = importlib.util.module_from_spec(spec)
    sys.modules["cuda_sim"] = package
    spec.loader.exec_module(package)
    from cuda_sim._startup import start

    start()


join(os.environ["CUDA_SIM_ROOT"])
