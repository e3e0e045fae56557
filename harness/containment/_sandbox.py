"""Environment builds run sealed, like cells: what each build step may see and write.

Installing packages runs code a case chose: a local requirement's ``setup.py`` or PEP 517 backend, any
sdist a pin resolves to, and afterwards every step that starts the environment's interpreter (a planted
``.pth`` file runs there). Every step gets an allow-listed environment (containment/_seal.py
``build_environment``: no GITHUB_TOKEN, AWS_*, PYPI_*...). Where bwrap runs, a step is sealed as a cell is
(its own pid, IPC, UTS, user and cgroup namespaces, a new session, no capabilities, a minimal /dev, a fresh
/proc) but keeps the host's network, and sees of the host only the system folders, the interpreters, the
folders below and, read-only, uv's and pip's settings in HOME. Otherwise, where namespaces work (see
_supervise.py), it sees the whole filesystem read-only, the run's output hidden, a private /tmp and
/dev/shm. Either way it may write only:

* ``uv venv`` and the install of what has a wheel (``--no-build``: no code a case chose runs): the
  environment's build folder (``.building-*``) and uv's shared cache;
* resolving and building from source (a build backend runs): the build's own uv cache (``own_cache``), a
  venv of its own and the copies of local requirement folders (in-tree builds write ``build/`` and
  ``*.egg-info`` there), never the shared cache or the environment (harness/environments/_venv_build.py
  ``EnvBuilder._install``);
* ``patch``: the build folder; the bytecode compilation the build folder, without ``site``;
* the site-packages query, the freeze and the module-owner map: nothing;
* the CUDA probe: its own bytecode cache in the environment.

As root, every step but ``uv venv`` of the environment, the install of wheels, ``patch`` and the bytecode
compilation (no package code runs in those: ``seal(harness_uid=True)``) runs as a private unprivileged uid that
owns its writable folders, as a cell does (so does the wheelhouse's ``pip wheel``: environments/_wheelhouse.py).
HOME stays, read-only, so uv finds its configuration and credentials (as root, copies for a private uid);
TMPDIR and XDG_CACHE_HOME point into the private /tmp. The network stays (uv needs the index). Without
namespaces the steps run as before, contained by the subreaper only.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from urllib.parse import unquote, urlsplit

from packaging.requirements import InvalidRequirement, Requirement

from harness._exceptions import EnvBuildError
from harness.containment._process import Confinement, run_helper
from harness.run._backend import CHILD_RUNNER

_COPY_FILES, _COPY_BYTES = 50_000, 1 << 30  # as for the environment key: a package, not a filesystem
_BUILDS = ".repro-matrix-builds"  # environments under construction, inside uv's cache (see build_place)
_uv_caches: dict[tuple[str | None, ...], Path | None] = {}


class BuildSandbox:
    """One build's confinement factory and scratch folder (its steps' private /tmp and source copies)."""

    def __init__(self, *, env_root: Path, private: Sequence[Path], env: Mapping[str, str],
                 uses: Iterable[Path] = (), requires: Sequence[str] = ()) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="repro-build-"))
        self.sources = self.scratch / "src"  # copies of local requirement folders, uv's resolution
        self.sources.mkdir()
        # uv's cache for the steps that may run code a case chose (resolving, building from source): the
        # shared cache is never writable to them (see environments/_venv_build.py EnvBuilder._install).
        self.own_cache = self.scratch / "uv-cache"
        self.own_cache.mkdir()
        interpreters = (Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).resolve().parents[1])
        # Read-only binds only matter for what the private /tmp would cover (a checkout, a find-links folder
        # or the environments under /tmp); everything else is read-only anyway.
        local = [path for _, path in map(_local_source, requires) if path is not None]
        # Under bwrap these are all a build sees of the host besides the system folders: of the checkout only
        # the child runner's folder (its module map step); steps run in / (see HelperProcess).
        seen = [CHILD_RUNNER.parent, env_root.resolve(), *interpreters, *uses, *local, *_paths_in(env)]
        # Folders only: a file under /tmp is bound back through the folder holding it.
        self.readonly = tuple(dict.fromkeys(p if p.is_dir() else p.parent for p in seen if p.exists()))
        self.private = tuple(private)

    def seal(self, *writable: Path, gpu: bool = False, harness_uid: bool = False) -> Confinement:
        """The confinement of one step that may write ``writable`` (and its private /tmp) only; ``gpu``: it
        sees the NVIDIA devices (the CUDA probe). As root the step runs as a private uid that owns
        ``writable`` (given to it), unless ``harness_uid``: a step that runs no package code and writes what
        root owns (uv's shared cache, the environment)."""
        return Confinement(hide=self.private, readonly=self.readonly, writable=writable, sealed=True,
                           scratch=self.scratch, private_home=False, gpu=gpu,
                           harness_uid=harness_uid).usable([*self.readonly, *writable])

    def local_copies(self, requires: Sequence[str]) -> list[str]:
        """``requires`` with each local folder replaced by a copy in the scratch folder: an in-tree build
        (setuptools writes ``build/`` and ``*.egg-info`` beside ``setup.py``) writes there, never into a
        case folder or the checkout. Files (wheels, sdist archives) are read where they are."""
        rewritten = []
        for index, text in enumerate(requires):
            requirement, path = _local_source(text)
            if requirement is None or path is None or not path.is_dir() or path.is_symlink():
                rewritten.append(text)
                continue
            copy = self.sources / f"{index}-{requirement.name}"
            _copy_tree(path, copy)
            requirement.url = copy.as_uri()
            rewritten.append(str(requirement))
        return rewritten

    def __enter__(self) -> BuildSandbox:
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 trace: TracebackType | None) -> None:
        shutil.rmtree(self.scratch, ignore_errors=True)  # never follows a symlink a build left there


def uv_cache_dir(uv: str, env: Mapping[str, str]) -> Path | None:
    """uv's cache folder as uv resolves it (its variables, its configuration), made if missing: a sealed
    build keeps it writable. None when the cache is off (``UV_NO_CACHE``: uv then caches in its /tmp)."""
    if env.get("UV_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no", "off"):
        return None
    key = (uv, *(env.get(name) for name in ("UV_CACHE_DIR", "XDG_CACHE_HOME", "HOME")))
    if key not in _uv_caches:
        proc = run_helper([uv, "cache", "dir"], env=env, timeout=60)
        lines = proc.stdout.strip().splitlines()
        if proc.returncode != 0 or not lines:
            raise EnvBuildError(f"'uv cache dir' failed (exit {proc.returncode}): {proc.stderr.strip()[-300:]}")
        folder = Path(lines[-1].strip())
        folder.mkdir(parents=True, exist_ok=True)
        _uv_caches[key] = folder
    return _uv_caches[key]


def build_place(cache: Path | None, folder: Path) -> Path:
    """Where to build the environment that ends up at ``folder``: inside uv's cache when both are on one
    filesystem. uv hardlinks installed files from its cache (torch once on disk, not once per environment,
    and seconds instead of a 750 MB copy), and a hardlink cannot cross mounts: the sealed steps get the
    cache as one writable mount, so the environment is built in it and renamed to ``folder`` when done.
    Otherwise at ``folder`` itself (uv then copies, as it did before). What an earlier build of the same
    environment left there is removed (the caller holds the environment's lock)."""
    if cache is None or not cache.is_dir() or os.stat(cache).st_dev != os.stat(folder.parent).st_dev:
        return folder
    area = cache / _BUILDS
    area.mkdir(exist_ok=True)
    stem = folder.name.rsplit("-", 2)[0]  # .building-<env id>: the pid and a random part follow
    for stale in area.glob(f"{stem}-*"):
        if not _builder_alive(stale.name):  # the area is shared by every environment root on this cache
            shutil.rmtree(stale, ignore_errors=True)
    return area / folder.name if _renames(area, folder.parent) else folder


def _builder_alive(name: str) -> bool:
    """Is the process that named this build folder (``.building-<env id>-<pid>-<random>``) still running? Another
    harness with another environment root may be building the same environment in the shared area right now."""
    try:
        pid = int(name.rsplit("-", 2)[1])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def _renames(source: Path, target: Path) -> bool:
    """Can a folder be renamed from ``source`` to ``target``? Not across mounts (EXDEV), even of one filesystem."""
    probe = Path(tempfile.mkdtemp(prefix=".rename-probe-", dir=source))
    moved = target / probe.name
    try:
        os.rename(probe, moved)
    except OSError:
        probe.rmdir()
        return False
    moved.rmdir()
    return True


def _paths_in(env: Mapping[str, str]) -> list[Path]:
    """Local folders and files uv's and pip's variables name (find-links, file:// indexes, constraint files)."""
    found = []
    for name, value in env.items():
        if not name.startswith(("UV_", "PIP_")):
            continue
        for item in re.split(r"[\s,]+", value):
            if item.startswith("file://"):
                found.append(Path(unquote(urlsplit(item).path)))
            elif item.startswith("/"):
                found.append(Path(item))
    return found


def _local_source(text: str) -> tuple[Requirement | None, Path | None]:
    """The requirement and the path it installs from, for ``name @ file:///...``; (None, None) otherwise."""
    try:
        requirement = Requirement(text)
    except InvalidRequirement:
        return None, None
    if not requirement.url or urlsplit(requirement.url).scheme != "file":
        return None, None
    return requirement, Path(unquote(urlsplit(requirement.url).path))


def _copy_tree(source: Path, target: Path) -> None:
    """Copy a local requirement's folder: regular files, folders and symlinks (as links), without the
    build outputs the environment key ignores too (top-level ``build``/``dist``, ``*.egg-info``,
    ``__pycache__``). Anything else (a FIFO, a device) is refused: reading it could hang the run."""
    budget = [_COPY_FILES, _COPY_BYTES]
    try:
        for root, dirs, files in os.walk(source):
            here = Path(root)
            (target / here.relative_to(source)).mkdir(parents=True, exist_ok=True)
            kept = []
            for name in dirs:
                if (here / name).is_symlink():
                    files.append(name)
                elif not (name == "__pycache__" or name.endswith(".egg-info")
                          or (here == source and name in ("build", "dist"))):
                    kept.append(name)
            dirs[:] = kept
            for name in files:
                _copy_entry(here / name, target / (here / name).relative_to(source), budget)
    except OSError as error:
        raise EnvBuildError(f"local requirement {source} could not be copied for its build: {error}") from error
    if budget[0] < 0 or budget[1] < 0:
        raise EnvBuildError(f"local requirement {source} holds more than {_COPY_FILES} files or "
                            f"{_COPY_BYTES >> 20} MiB: point the case at the package's own folder, a wheel or an sdist")


def _copy_entry(source: Path, target: Path, budget: list[int]) -> None:
    if budget[0] < 0 or budget[1] < 0:
        return
    info = os.lstat(source)
    if stat.S_ISLNK(info.st_mode):
        os.symlink(os.readlink(source), target)
        return
    if not stat.S_ISREG(info.st_mode):
        raise EnvBuildError(f"local requirement file {source} is not a regular file, folder or symlink: "
                            "a package folder holds only those")
    budget[0] -= 1
    fd = os.open(source, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as reader, open(target, "xb") as writer:
        while block := reader.read(1 << 20):
            budget[1] -= len(block)
            if budget[1] < 0:
                return
            writer.write(block)
    os.chmod(target, info.st_mode & 0o777)
