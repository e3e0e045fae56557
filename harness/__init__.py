"""repro-matrix: a regression suite for real ML-training bugs.

This module must stay importable with the standard library alone: the child runner imports
``harness.sim`` inside each variant's environment, where only the variant's packages exist.
The command line lives in ``python -m harness``.
"""

from harness.environments._index import uv_index_environment

__version__ = "0.1.0"

__all__ = ["__version__", "uv_index_environment"]
