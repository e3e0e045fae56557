"""Host-compatibility fixes the harness applies to an environment it builds.

They belong to the host's packages, not to a case: the one torchvision on the index for a torch release is
a CUDA build, and beside the CPU torch of a CPU-only host its import fails. So no case carries or names
them. Every backend runs the same build step in the environment it builds, ``_torchvision_compat.py
--apply SITE`` (today one fix: see its docstring): the venv backend in its sealed build, the docker images
in a Dockerfile step (the module is copied into the build context). What was applied is written to the
build log and to the environment's record (``compat``, also in results.json), and the fix's content is part
of the content key of every requirement set (and docker image recipe) that names torchvision, so a cached
environment or image is rebuilt when the fix changes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.environments._torchvision_compat import NAME, PTH_LINE, PTH_NAME, reason_to_apply

RUNTIME = Path(__file__).with_name("_torchvision_compat.py")  # run by path in the environment (--apply)
RECORD_FILE = "repro-matrix-compat.json"  # where a docker image keeps the step's record (beside /venv's list)

__all__ = ["NAME", "PTH_NAME", "RECORD_FILE", "RUNTIME", "compat_key", "read_record",
           "reason_to_apply"]


def compat_key(requires: Sequence[str]) -> str | None:
    """What an environment's content key adds for the fix: its content, for sets that name torchvision."""
    if not any(_name(r) == "torchvision" for r in requires):
        return None
    return hashlib.sha256(RUNTIME.read_bytes() + PTH_LINE.encode()).hexdigest()[:12]


def read_record(text: str) -> tuple[str, ...]:
    """The ``compat`` lines of the step's record (its last line of output); ValueError if it is not one."""
    lines = text.strip().splitlines()
    try:
        record = json.loads(lines[-1]) if lines else None
    except ValueError:
        record = None
    compat = record.get("compat") if isinstance(record, dict) else None
    if not isinstance(compat, list) or not all(isinstance(line, str) for line in compat):
        raise ValueError(f"not a compat record: {text.strip()[-200:]!r}")
    return tuple(compat)


def _name(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement:
        return ""
