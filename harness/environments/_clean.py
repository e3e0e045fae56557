"""Prune cached environments that no case file uses any more, saying how much disk each one holds, and the
per-case caches (``.cell-caches/<case>``: bytecode, JIT-built extensions) that environments still in use
keep for cases that no longer use them, and the shared bytecode (``.bytecode-store``) no environment links to."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from harness.cases._load import Case
from harness.environments._bytecode import STORE, prune_store
from harness.environments._venv_build import _CELL_CACHES, default_env_root
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells


@dataclass(frozen=True)
class Pruned:
    """What a clean removed (or, with ``--dry-run``, would remove)."""

    count: int = 0
    size_bytes: int = 0  # on disk, each file once
    own_bytes: int = 0  # what removing frees: files not also linked from elsewhere (uv's cache)

    def __add__(self, other: Pruned) -> Pruned:
        return Pruned(self.count + other.count, self.size_bytes + other.size_bytes, self.own_bytes + other.own_bytes)

    def describe(self) -> str:
        shared = self.size_bytes - self.own_bytes
        if shared <= 0:
            return human_size(self.size_bytes)
        return f"{human_size(self.size_bytes)}, {human_size(self.own_bytes)} freed: the rest is shared with uv's cache"


def human_size(size: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            return f"{size / scale:.1f} {unit}"
    return f"{size} B"


def folder_size(folder: Path) -> Pruned:
    """Bytes under ``folder`` (hard links counted once; symlinks not followed) and the part only it holds.

    uv installs packages as hard links into its cache, so removing an environment frees only the files
    nothing else links to (``st_nlink`` 1).
    """
    seen: set[tuple[int, int]] = set()
    size = own = 0
    for directory, _, files in os.walk(folder):
        for name in files:
            try:
                info = os.lstat(os.path.join(directory, name))
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in seen:
                continue
            seen.add((info.st_dev, info.st_ino))
            size += info.st_size
            own += info.st_size if info.st_nlink == 1 else 0
    return Pruned(1, size, own)


def used_environment_ids(cases: Sequence[Case]) -> set[str]:
    return set(environment_users(cases))


def environment_users(cases: Sequence[Case]) -> dict[str, set[str]]:
    """Environment id -> the cases using it, by the name of their cache folder (the case's folder name)."""
    users: dict[str, set[str]] = {}
    for cell in plan_cells(cases, [LANE_TABLE["cpu"]]):
        users.setdefault(f"venv-{cell.env_spec().key()}", set()).add(cell.case.folder.name)
    return users


def clean_environments(cases: Sequence[Case], *, dry_run: bool, say: Callable[[str], None],
                       root: Path | None = None) -> Pruned:
    root = root or default_env_root()
    if not root.is_dir():
        return Pruned()
    users = environment_users(cases)
    total = Pruned()
    for folder in sorted(p for p in root.glob("venv-*") if p.is_dir() and p.name in users):
        _prune_cell_caches(folder, users[folder.name], dry_run=dry_run, say=say)
    # Only environment folders: the root also holds image build logs (images/).
    for folder in sorted(p for p in root.glob("venv-*") if p.is_dir() and p.name not in users):
        lock = FileLock(str(root / f"{folder.name}.lock"))
        try:
            with lock.acquire(timeout=0):
                size = folder_size(folder)
                say(f"{'would remove' if dry_run else 'removing'} {folder.name} ({size.describe()})")
                if not dry_run:
                    shutil.rmtree(folder)
                    folder.with_suffix(".build.log").unlink(missing_ok=True)
                total += size
        except Timeout:
            say(f"skipping {folder.name}: in use by a running build")
    stored, stored_bytes = prune_store(root, dry_run=dry_run)
    if stored:
        say(f"{'would remove' if dry_run else 'removing'} {stored} file(s) of {STORE} that no environment uses "
            f"({human_size(stored_bytes)})")
    return total


def _prune_cell_caches(folder: Path, cases: set[str], *, dry_run: bool, say: Callable[[str], None]) -> None:
    """Remove ``.cell-caches/<case>`` of the cases that no longer use this environment (removed or renamed
    cases, or ones whose pins changed): nothing reads them again, and they hold compiled code."""
    caches = folder / _CELL_CACHES
    stale = sorted(p for p in caches.iterdir() if p.name not in cases) if caches.is_dir() else []
    for cache in stale:
        real = cache.is_dir() and not cache.is_symlink()  # never measure or remove what a link names
        what = folder_size(cache).describe() if real else "a link or file"
        say(f"{'would remove' if dry_run else 'removing'} {folder.name}/{_CELL_CACHES}/{cache.name} "
            f"({what}; no case of that name uses this environment)")
        if not dry_run:
            if real:
                shutil.rmtree(cache)
            else:
                cache.unlink()
