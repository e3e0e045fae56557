"""Prune cached environments that no case file uses any more."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

from harness._cases import Case
from harness._lanes import LANE_TABLE
from harness._plan import plan_cells
from harness._venv import default_env_root


def used_environment_ids(cases: Sequence[Case]) -> set[str]:
    cells = plan_cells(cases, [LANE_TABLE["cpu"]])
    return {f"venv-{cell.env_spec().key()}" for cell in cells}


def clean_environments(cases: Sequence[Case], *, dry_run: bool, say: Callable[[str], None],
                       root: Path | None = None) -> int:
    root = root or default_env_root()
    if not root.is_dir():
        return 0
    used = used_environment_ids(cases)
    removed = 0
    # Only environment folders: the root also holds image build logs (images/).
    for folder in sorted(p for p in root.glob("venv-*") if p.is_dir() and p.name not in used):
        lock = FileLock(str(root / f"{folder.name}.lock"))
        try:
            with lock.acquire(timeout=0):
                say(f"{'would remove' if dry_run else 'removing'} {folder.name}")
                if not dry_run:
                    shutil.rmtree(folder)
                    folder.with_suffix(".build.log").unlink(missing_ok=True)
                removed += 1
        except Timeout:
            say(f"skipping {folder.name}: in use by a running build")
    return removed
