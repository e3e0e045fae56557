"""What the harness needs installed to run from a checkout on a bare node (``wheelhouse --with-harness``,
scripts/gpu-check.sh). Standard library only: the node runs this before anything is installed.

The checkout provides the simulator itself (cuda-sim/, put on the path by ``harness/__init__``), so its
distribution is never asked of an index, where it is not published.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

_ROOT = Path(__file__).resolve().parent.parent
_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def checkout_distributions(root: Path = _ROOT) -> frozenset[str]:
    """The distributions whose source is a folder of the checkout (each with its own pyproject.toml)."""
    names = set()
    for pyproject in root.glob("*/pyproject.toml"):
        name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
        if name:
            names.add(_canonical(name))
    return frozenset(names)


def harness_dependencies(root: Path = _ROOT) -> tuple[str, ...]:
    """The harness's own dependencies (pyproject.toml) less what the checkout provides: what an index is asked for."""
    dependencies = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]["dependencies"]
    local = checkout_distributions(root)
    return tuple(req for req in dependencies if (m := _NAME.match(req)) is None or _canonical(m.group(1)) not in local)


def node_requirements(root: Path = _ROOT) -> tuple[str, ...]:
    """The harness's own dependencies less what the checkout provides, then uv, pytest and numpy."""
    return (*harness_dependencies(root), "uv", "pytest", "numpy")


if __name__ == "__main__":
    print(" ".join(node_requirements()))
