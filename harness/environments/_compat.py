"""Host-compatibility fixes the harness applies to an environment it builds.

They belong to the host's packages, not to a case: the one torchvision on the index for a torch release is
a CUDA build, and beside the CPU torch of a CPU-only host its import fails. So no case carries or names
them; the venv backend probes every environment it builds and applies what the probe calls for (today one
fix, ``_torchvision_compat.py``: see its docstring). What was applied is written to the build log and to the
environment's record (``compat``, also in results.json), and the fix's content is part of the content key
of every requirement set that names torchvision, so a cached environment is rebuilt when the fix changes.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness._io import write_atomic
from harness.environments._torchvision_compat import reason_to_apply

RUNTIME = Path(__file__).with_name("_torchvision_compat.py")  # run by path in the environment (--probe)
MODULE = "_repro_matrix_torchvision_compat"  # its name once copied into site-packages
PTH_NAME = f"{MODULE}.pth"
PTH_LINE = f"import {MODULE}; {MODULE}.install()\n"
NAME = "torchvision-ops-on-cpu-torch"

__all__ = ["NAME", "PTH_NAME", "RUNTIME", "compat_key", "install_into", "reason_to_apply"]


def compat_key(requires: Sequence[str]) -> str | None:
    """What an environment's content key adds for the fix: its content, for sets that name torchvision."""
    if not any(_name(r) == "torchvision" for r in requires):
        return None
    return hashlib.sha256(RUNTIME.read_bytes() + PTH_LINE.encode()).hexdigest()[:12]


def install_into(site: Path) -> list[Path]:
    """Copy the fix into the environment's site-packages, with the ``.pth`` line that arms it."""
    module, pth = site / f"{MODULE}.py", site / PTH_NAME
    write_atomic(module, RUNTIME.read_text())
    write_atomic(pth, PTH_LINE)
    return [module, pth]


def _name(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""
