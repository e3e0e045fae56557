"""Prune cached environments that no case file uses any more, and the per-case caches (``.cell-caches/<case>``:
bytecode, JIT-built extensions) that environments still in use keep for cases that no longer use them."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path

from filelock import FileLock, Timeout

from harness._cases import Case
from harness._lanes import LANE_TABLE
from harness._plan import plan_cells
from harness._venv import _CELL_CACHES, default_env_root


def used_environment_ids(cases: Sequence[Case]) -> set[str]:
    return set(environment_users(cases))


def environment_users(cases: Sequence[Case]) -> dict[str, set[str]]:
    """Environment id -> the cases using it, by the name of their cache folder (the case's folder name)."""
    users: dict[str, set[str]] = {}
    for cell in plan_cells(cases, [LANE_TABLE["cpu"]]):
        users.setdefault(f"venv-{cell.env_spec().key()}", set()).add(cell.case.folder.name)
    return users


def clean_environments(cases: Sequence[Case], *, dry_run: bool, say: Callable[[str], None],
                       root: Path | None = None) -> int:
    root = root or default_env_root()
    if not root.is_dir():
        return 0
    users = environment_users(cases)
    removed = 0
    for folder in sorted(p for p in root.glob("venv-*") if p.is_dir() and p.name in users):
        _prune_cell_caches(folder, users[folder.name], dry_run=dry_run, say=say)
    # Only environment folders: the root also holds image build logs (images/).
    for folder in sorted(p for p in root.glob("venv-*") if p.is_dir() and p.name not in users):
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


def _prune_cell_caches(folder: Path, cases: set[str], *, dry_run: bool, say: Callable[[str], None]) -> None:
    """Remove ``.cell-caches/<case>`` of the cases that no longer use this environment (removed or renamed
    cases, or ones whose pins changed): nothing reads them again, and they hold compiled code."""
    caches = folder / _CELL_CACHES
    stale = sorted(p for p in caches.iterdir() if p.name not in cases) if caches.is_dir() else []
    for cache in stale:
        say(f"{'would remove' if dry_run else 'removing'} {folder.name}/{_CELL_CACHES}/{cache.name} "
            "(no case of that name uses this environment)")
        if not dry_run:
            if cache.is_dir() and not cache.is_symlink():
                shutil.rmtree(cache)
            else:
                cache.unlink()
