"""What a backend is: it realises environments and runs one cell in one of them.

Two implementations: ``venv`` (``harness._venv``, the default) and ``docker`` (``harness.docker``).
Both run the same stdlib-only child runner (``harness/_child.py``) and return the same
:class:`ChildOutcome`, so results have one schema whatever ran them.
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
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import unquote, urlsplit

import cuda_sim
from packaging.requirements import InvalidRequirement, Requirement

from harness._cases import PatchFile
from harness._exceptions import UsageError
from harness._hosttorch import HostTorch, pinned_torch

CellStatus = Literal["passed", "raised", "exited", "crashed", "timeout", "oom", "infra-error", "skipped",
                     "interrupted"]
Progress = Callable[[str], None]
REPO_ROOT = Path(__file__).resolve().parent.parent  # the folder holding harness/: a checkout, or site-packages
CHILD_RUNNER = Path(__file__).with_name("_child.py")
SIM_PACKAGE = Path(cuda_sim.__file__).resolve().parent  # the simulator a cuda-sim cell loads (the cell reads it)
SIM_ROOT = SIM_PACKAGE.parent  # the folder holding it: a checkout's cuda-sim/, or site-packages


def project_root() -> Path:
    """Where ``cases/``, ``reports/``, ``images/`` and ``.repro-envs/`` are by default: the checkout
    when the harness runs from one, else the current directory (an installed harness's REPO_ROOT
    is site-packages)."""
    return REPO_ROOT if (REPO_ROOT / "pyproject.toml").is_file() else Path.cwd()


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


@dataclass(frozen=True)
class PreparedEnv:
    """A realised environment: where its interpreter is and what got installed."""

    id: str
    spec: EnvSpec
    backend: str
    python_path: str
    installed: Mapping[str, str]
    reused: bool
    build_s: float
    image: Mapping[str, str] | None = None
    cuda: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class CellRequest:
    """Everything needed to run one cell, independent of the backend."""

    case_dir: Path
    script: Path
    shims: tuple[Path, ...]
    argv: tuple[str, ...]
    sim: bool
    gpu: bool
    env: Mapping[str, str]
    timeout: float
    cell_dir: Path  # the cell's private scratch folder (its cwd), outside the run's output folder
    log_path: Path
    label: str = ""
    private: tuple[Path, ...] = ()  # what the cell must neither see nor be told about (the output folder)
    log_fd: int | None = None  # the log, opened by the harness (write through it, not the path, when given)

    def child_spec(self, *, sim_root: Path = SIM_ROOT, case_dir: Path | None = None,
                   cell_dir: Path | None = None) -> dict[str, Any]:
        """The JSON the child runner reads; paths can be re-rooted (e.g. inside a container)."""
        case = case_dir or self.case_dir
        cell = cell_dir or self.cell_dir
        return {
            "script": str(case / self.script.relative_to(self.case_dir)),
            "shims": [str(case / s.relative_to(self.case_dir)) for s in self.shims],
            "argv": list(self.argv),
            "sim": self.sim,
            "sim_root": str(sim_root),
            "outcome": str(cell / "outcome.json"),
        }


@dataclass
class ChildOutcome:
    status: CellStatus
    duration_s: float = 0.0
    exit_code: int | None = None
    signal: str | None = None
    exception: dict[str, Any] | None = None
    imported: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    image: Mapping[str, str] | None = None


class Backend(Protocol):
    name: str

    def prepare(self, spec: EnvSpec, progress: Progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        """Realise (or reuse) the environment; raise EnvBuildError when it cannot be done. Nothing the
        build runs may see ``private`` (as for cells: the output folder)."""
        ...

    def is_ready(self, spec: EnvSpec) -> bool:
        """Is the environment there already (``prepare`` reuses it), or would ``prepare`` build it?"""
        ...

    def build_log(self, spec: EnvSpec) -> Path | None:
        """Where ``prepare`` writes the build's output while it builds (followed for progress), if anywhere."""
        ...

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        """Does this environment see a real CUDA device? ``(False, reason)`` skips its cuda cells."""
        ...

    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        """Run one cell to completion (or timeout); never raise for what the repro did."""
        ...

    def cancel(self) -> None:
        """Stop every running cell now (Ctrl-C); safe to call from another thread."""
        ...


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
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
