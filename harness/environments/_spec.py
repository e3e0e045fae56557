"""An environment's identity: the requirement set a variant needs, keyed by content.

Equal specs share one environment (venv or image). The key hashes the pins, the patches, the Python, a
host torch, the content of local ``file:`` requirements, the harness's compatibility fix for sets naming
torchvision (``_compat.py``), and for floating (unpinned) sets the current
refresh period, so a cached ``latest`` is rebuilt once a period.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement

from harness._exceptions import UsageError
from harness.cases._load import PatchFile
from harness.environments._compat import compat_key
from harness.environments._hosttorch import HostTorch, pinned_torch


@dataclass(frozen=True)
class EnvSpec:
    """One distinct requirement set: realised once, shared by every cell that needs it."""

    requires: tuple[str, ...]
    patches: tuple[PatchFile, ...] = ()
    python: str = f"{sys.version_info.major}.{sys.version_info.minor}"
    host: HostTorch | None = None  # ``--python``: the torch family comes from this interpreter

    def floating(self) -> bool:
        """True when a requirement is not pinned with ``==`` (e.g. a ``latest`` variant)."""
        return any(not _PINNED.search(r) for r in self.requires)

    def local_requirements(self) -> list[str]:
        """Names of the requirements installed from a local file or folder (``name @ file:///...``)."""
        return [name for name, _ in (_local_source(r) for r in self.requires) if name]

    def key(self) -> str:
        """Content hash of the pins. A floating set also hashes the current refresh period, so its
        environment is rebuilt (as a new folder, never in place) once a period, or per run with
        ``--refresh``: a cached ``latest`` must not stay at the release it first resolved. A local
        ``file:`` requirement is keyed by its content, so changed code gets a new environment."""
        content: dict[str, Any] = {"python": self.python, "requires": sorted(self.requires),
                                   "patches": [p.sha256 for p in self.patches]}
        if self.host is not None:
            content["host"] = self.host.ident()
        if self.floating():
            content["period"] = floating_period()
        compat = compat_key(self.requires)  # the harness's host-compatibility fix (environments/_compat.py)
        if compat:
            content["compat"] = compat
        local = {r: content_hash(path) for r in self.requires for name, path in [_local_source(r)] if path}
        if local:
            content["local"] = local
        payload = json.dumps(content, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"python": self.python, "requires": list(self.requires),
                     "patches": [{"file": _display(p.path), "sha256": p.sha256} for p in self.patches]}
        if self.host is not None:
            described["host_torch"] = self.host.describe(pinned_torch(self.requires))
        return described

    def summary(self) -> str:
        """One line that tells this environment from the others: the pins, then what else differs (two
        environments with the same pins differ by their patches, or their Python)."""
        text = ", ".join(self.requires)
        if self.patches:
            text += "; patched: " + ", ".join(p.path.name for p in self.patches)
        if self.python != f"{sys.version_info.major}.{sys.version_info.minor}":
            text += f"; python {self.python}"
        if self.host is not None:
            text += f"; host torch {self.host.torch}"
        return text



_PINNED = re.compile(r"===?\s*[\w.+!-]+\s*(;.*)?$")
FLOATING_PERIOD_DAYS = 7


def floating_period() -> str:
    """The refresh period of floating environments: ``REPRO_MATRIX_REFRESH`` or the current week."""
    forced = os.environ.get("REPRO_MATRIX_REFRESH", "").strip()
    if forced:
        return forced
    return str(int(time.time() // (floating_days() * 86400)))


def floating_days() -> float:
    text = os.environ.get("REPRO_MATRIX_FLOATING_DAYS", "").strip()
    if not text:
        return FLOATING_PERIOD_DAYS
    try:
        days = float(text)
    except ValueError:
        days = math.nan
    if not math.isfinite(days) or not 1 / 24 <= days <= 3660:
        raise UsageError(f"REPRO_MATRIX_FLOATING_DAYS={text!r}: give a number of days between 0.05 and 3660")
    return days


def _local_source(requirement: str) -> tuple[str, Path | None]:
    """(name, path) for a requirement that installs a local file or folder; ("", None) otherwise."""
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return "", None
    if not parsed.url or urlsplit(parsed.url).scheme != "file":
        return "", None
    parts = urlsplit(parsed.url)
    return parsed.name, Path(unquote(parts.path)).resolve()


_SKIPPED_DIRS = {".git", ".hg", ".svn", "__pycache__", ".nox", ".tox", ".venv", ".mypy_cache", ".pytest_cache",
                 ".ruff_cache", "build", "dist", "node_modules"}
_HASH_FILES, _HASH_BYTES = 50_000, 1 << 30  # a package, not a filesystem: past this the key stops following it
_hashes: dict[Path, str] = {}


def content_hash(path: Path) -> str:
    """SHA-256 over a local requirement's content: the file, or every file of the folder (names, exec
    bits, bytes; symlinks by their target text; build outputs and VCS folders skipped). Hashed once per
    run. A missing path hashes as such: uv then reports it when it tries to install.

    Only regular files are read, opened without following a symlink and without blocking: a case names
    any path (``file:///dev``, ``file:///proc``), and a device, a FIFO or a tty must not hang the run.
    Other files count by their type; at most _HASH_FILES files and _HASH_BYTES bytes are read."""
    if path not in _hashes:
        digest = hashlib.sha256()
        budget = [_HASH_FILES, _HASH_BYTES]
        if path.is_dir() and not path.is_symlink():
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if d not in _SKIPPED_DIRS and not d.endswith(".egg-info"))
                for name in sorted(files):
                    file = Path(root, name)
                    digest.update(f"\0{file.relative_to(path)}\0{os.access(file, os.X_OK)}\0".encode())
                    _hash_entry(digest, file, budget)
                if budget[0] <= 0 or budget[1] <= 0:
                    digest.update(b"\0truncated")
                    break
        elif path.exists() or path.is_symlink():
            _hash_entry(digest, path, budget)
        else:
            digest.update(b"missing")
        _hashes[path] = digest.hexdigest()
    return _hashes[path]


def _hash_entry(digest: Any, path: Path, budget: list[int]) -> None:
    """One file's content into ``digest``: a symlink by its target text, anything not regular by its type."""
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.readlink(path).encode())
            return
        if not stat.S_ISREG(info.st_mode):
            digest.update(f"\0type {stat.S_IFMT(info.st_mode)}".encode())
            return
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as error:
        digest.update(f"\0unreadable {error.errno}".encode())
        return
    budget[0] -= 1
    try:
        with os.fdopen(fd, "rb") as handle:
            while budget[1] > 0 and (block := handle.read(min(1 << 20, budget[1]))):
                budget[1] -= len(block)
                digest.update(block)
    except OSError as error:  # e.g. a /proc file that refuses reads
        digest.update(f"\0unreadable {error.errno}".encode())


def _display(path: Path) -> str:
    from harness.run._backend import REPO_ROOT  # the backend module imports this one

    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
