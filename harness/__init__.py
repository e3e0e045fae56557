"""repro-matrix: a regression suite for real ML-training bugs.

This module must stay importable with the standard library alone (noxfile.py imports it before any
install). The command line lives in ``python -m harness``. The simulator is its own distribution,
``cuda-sim`` (import name ``cuda_sim``, the folder cuda-sim/ of the repository).
"""

import sys
from pathlib import Path

from harness.environments._index import uv_index_environment

# In a checkout the simulator beside the harness is the one it runs (first on the path: the folder holds
# nothing else that could shadow); an installed harness uses the installed cuda-sim.
_CHECKOUT_SIM = Path(__file__).resolve().parent.parent / "cuda-sim"
if (_CHECKOUT_SIM / "cuda_sim" / "__init__.py").is_file() and str(_CHECKOUT_SIM) not in sys.path:
    sys.path.insert(0, str(_CHECKOUT_SIM))

__version__ = "0.1.0"

__all__ = ["__version__", "uv_index_environment"]
