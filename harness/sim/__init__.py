"""Deprecated alias of :mod:`cuda_sim`, kept for one release: the simulator is its own distribution now.

``import harness.sim`` and ``import harness.sim.X`` give the very modules ``cuda_sim`` and ``cuda_sim.X``
(one simulator state, not a copy). Import ``cuda_sim`` instead; repro-matrix itself no longer uses this.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
from collections.abc import Sequence
from types import ModuleType

from cuda_sim import *  # noqa: F403 - the alias re-exports the package's names
from cuda_sim import __all__  # noqa: F401


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``harness.sim.X`` resolves to the already-importable ``cuda_sim.X`` module object."""

    def find_spec(self, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        return importlib.machinery.ModuleSpec(name, self) if name.startswith(f"{__name__}.") else None

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        return importlib.import_module("cuda_sim" + spec.name[len(__name__):])

    def exec_module(self, module: ModuleType) -> None:
        pass  # already executed as cuda_sim.X


if not any(isinstance(finder, _Alias) for finder in sys.meta_path):
    sys.meta_path.insert(0, _Alias())
