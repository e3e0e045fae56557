"""Start one command under the supervisor (``_supervise.py``) with what it may see of the host.

``Confinement`` says what a supervised process may see; ``_Supervised`` writes the supervisor's
configuration (bwrap's plan, the fallback layers' seal), starts it with the harness's lifeline and
reads its report. ``_process`` runs cells and helpers through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness.containment import _seal

_GRACE_S = 5.0
SUPERVISOR = Path(__file__).with_name("_supervise.py")


@dataclass(frozen=True)
class Confinement:
    """What a supervised process may see of the host, where namespaces allow it (see _supervise.py)."""

    hide: tuple[Path, ...] = ()  # covered by an empty read-only folder (the run's output)
    readonly: tuple[Path, ...] = ()  # the repository, case folders, environments
    writable: tuple[Path, ...] = ()  # exceptions inside read-only folders (an environment's caches)
    # Everything else read-only as well, with a private /tmp (HOME and TMPDIR) and /dev/shm: nothing the
    # process writes outside ``writable`` outlives it (see _supervise._seal). Folders under /tmp that the
    # process needs must be listed in ``writable`` or ``readonly``.
    sealed: bool = False
    scratch: Path | None = None  # where the private /tmp is made (default: beside the process's cwd)
    # False (environment builds): HOME stays, read-only, so uv finds its configuration and credentials;
    # XDG_CACHE_HOME then points into the private /tmp for what a build backend caches.
    private_home: bool = True
    gpu: bool = False  # a GPU lane: sealed by bwrap, the cell gets the NVIDIA devices
    # A build step that writes what the harness owns (uv's shared cache, the environment) and runs no code a
    # package chose: as root it stays bwrap's uid 0 without capabilities. Every other sealed step, as root,
    # runs as a private unprivileged uid, its writable folders given to that uid.
    harness_uid: bool = False

    @property
    def build(self) -> bool:
        """An environment build step: it keeps the host's network (the index) and sees uv's settings."""
        return self.sealed and not self.private_home

    def private_uid(self) -> bool:
        """As root, does bwrap run this step as a private unprivileged uid? Cells always (by_bwrap says
        otherwise where a folder is out of its reach); a build step unless it is ``harness_uid``, or a
        folder it reads is out of that uid's reach (then it stays uid 0, and its log says why)."""
        return not self.build or (not self.harness_uid and not _seal.unreachable(self.readonly))

    @property
    def by_bwrap(self) -> bool:
        """Sealed by bubblewrap (cells, and environment builds with the network kept)."""
        return (self.sealed and namespaces_wanted() and _seal.bwrap()[0] is not None
                and (self.build or not _seal.unreachable(self.readonly)))

    def not_sealed_because(self) -> list[str]:
        """Why a cell that bwrap would seal runs in the fallback layer (said in its log)."""
        if not (self.sealed and namespaces_wanted() and _seal.bwrap()[0]):
            return []
        if self.build:
            if self.harness_uid:
                return []
            return [f"runs as uid 0 without capabilities, not a private uid: {folder} is not readable by other "
                    f"users (chmod o+rx {folder})" for folder in _seal.unreachable(self.readonly)]
        return [f"NOT sealed by bwrap: {folder} is not readable by other users, and bwrap runs as a private "
                f"uid (chmod o+rx {folder})" for folder in _seal.unreachable(self.readonly)]

    def usable(self, needed: Sequence[Path]) -> Confinement:
        """Never hide a folder that holds something the process needs (e.g. ``--output /``), unless what it
        needs there is a writable folder: those stay reachable inside a hidden one."""
        hide = tuple(p for p in self.hide
                     if not any(_within(n, p) and not any(_within(n, w) for w in self.writable) for n in needed))
        return replace(self, hide=hide)


def _within(path: Path, folder: Path) -> bool:
    return path == folder or folder in path.parents


def namespaces_wanted() -> bool:
    """``REPRO_MATRIX_NAMESPACES=0`` turns the namespace layer off (the subreaper still contains cells)."""
    return os.environ.get("REPRO_MATRIX_NAMESPACES", "1").strip().lower() not in ("0", "false", "no", "off")


_lifeline_lock = threading.Lock()
_lifeline: tuple[int, int, int] | None = None  # read end, write end, owner pid


def _lifeline_fd() -> int:
    """The read end of a pipe only this process can write to: it breaks when the harness dies, however it
    dies. Both ends are close-on-exec; each supervisor inherits the read end alone."""
    global _lifeline
    with _lifeline_lock:
        if _lifeline is None or _lifeline[2] != os.getpid():
            _lifeline = (*os.pipe(), os.getpid())
        return _lifeline[0]


class _Supervised:
    """One command under ``_supervise.py``: its own timeout, its tree killed at the end and with us."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, timeout: float,
                 memory_limit_bytes: int | None, confinement: Confinement | None, stderr: int) -> None:
        if confinement is not None and confinement.build:  # no GITHUB_TOKEN, AWS_*, PYPI_*... in any mode
            env = _seal.build_environment(env)
        config = {"argv": [str(a) for a in argv], "env": dict(env), "cwd": str(cwd), "timeout": float(timeout),
                  "grace": _GRACE_S, "memory_limit": memory_limit_bytes, "parent": os.getpid(),
                  "namespaces": confinement is not None and namespaces_wanted()}
        self.private_tmp: Path | None = None
        if confinement is not None:
            config.update(hide=[str(p) for p in confinement.hide], readonly=[str(p) for p in confinement.readonly],
                          writable=[str(p) for p in confinement.writable])
        if confinement is not None and confinement.by_bwrap:
            self.private_tmp = Path(tempfile.mkdtemp(prefix=f"{cwd.name or 'root'}-tmp-",
                                                     dir=confinement.scratch or cwd.parent))
            self._seal(config, confinement, cwd, memory_limit_bytes)
            if confinement.build:  # what the build step could not get (a private uid), said in its log
                config["notes"] = confinement.not_sealed_because()
        elif confinement is not None and confinement.sealed:
            # the fallback layers refuse what bwrap's outer filter refuses too (setuid files, keyrings...)
            config["seccomp"] = (_seal.seccomp_program(inner=False) or b"").hex()
        if confinement is not None and confinement.sealed and config["namespaces"] and not confinement.by_bwrap:
            config["notes"] = confinement.not_sealed_because()
            # The process's /tmp: a folder beside its cwd (in the harness's scratch folder), removed after it.
            self.private_tmp = Path(tempfile.mkdtemp(prefix=f"{cwd.name or 'root'}-tmp-",
                                                     dir=confinement.scratch or cwd.parent))
            config.update(sealed=True, tmp=str(self.private_tmp), home=os.environ.get("HOME"),
                          keep_home=not confinement.private_home)
        self.timeout = float(timeout)
        self._interrupted = threading.Event()
        self._status_r, status_w = os.pipe()
        lifeline = _lifeline_fd()
        self.started = time.perf_counter()
        try:
            self.proc = subprocess.Popen(
                [sys.executable, "-I", "-S", "-B", str(SUPERVISOR), str(lifeline), str(status_w)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr, pass_fds=(lifeline, status_w),
                start_new_session=True, env={}, cwd="/",
            )
        finally:
            os.close(status_w)
        assert self.proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.write(json.dumps(config).encode())
        self.proc.stdin.close()
        self.proc.stdin = None  # communicate() must not touch it again

    def _seal(self, config: dict[str, Any], confinement: Confinement, cwd: Path, memory_limit: int | None) -> None:
        assert self.private_tmp is not None
        # Half the cell's memory at most: tmpfs pages count against the memory cgroup too.
        shm = min(_seal.SHM_BYTES, memory_limit // 2) if memory_limit else _seal.SHM_BYTES
        build = confinement.build
        settings = _seal.build_settings(config["env"]) if build else []
        plan = _seal.plan(readonly=confinement.readonly, writable=confinement.writable, hide=confinement.hide,
                          tmp=self.private_tmp, cwd=cwd, gpu=confinement.gpu, shm_bytes=shm, network=build,
                          files=settings, copies=self._settings_copies(settings, confinement))
        config.update(bwrap={"binary": _seal.bwrap()[0], **plan}, pids=_seal.cell_pids(), uid_base=_seal.UID_BASE,
                      chown=[str(self.private_tmp), *(str(w) for w in confinement.writable)], namespaces=False,
                      build=build, private_uid=confinement.private_uid())
        if build:  # HOME stays for uv's settings (only those are bound); a build backend caches in /tmp
            config["env"].update(XDG_CACHE_HOME="/tmp/.cache", TMPDIR="/tmp")
        else:
            config["env"].update(HOME="/tmp", TMPDIR="/tmp")

    def _settings_copies(self, settings: Sequence[Path], confinement: Confinement) -> dict[Path, Path]:
        """As root, a build step's private uid cannot read root's 0600 ``~/.netrc`` or uv's credentials: it
        gets copies in its private /tmp (given to it with the folder), bound at their places. Index
        credentials reach the steps that resolve and build, as uv needs (docs/security.md)."""
        if os.geteuid() != 0 or not confinement.private_uid():
            return {}
        assert self.private_tmp is not None
        copies = {}
        for index, place in enumerate(settings):
            copy = self.private_tmp / f".settings-{index}"
            if place.is_dir():
                shutil.copytree(place, copy, symlinks=True, ignore=_special_files)
            elif place.is_file():  # never a FIFO or a device: opening one could hang the harness
                shutil.copy2(place, copy)
            else:
                continue
            copies[place] = copy
        return copies

    def interrupt(self) -> None:
        self._interrupted.set()
        with contextlib.suppress(ProcessLookupError):
            if self.proc.returncode is None:
                self.proc.send_signal(signal.SIGTERM)  # the supervisor stops its command, then its tree

    def backstop(self) -> float:
        """How long to wait for the supervisor itself: it enforces the timeout, this only guards against it hanging."""
        return self.timeout + _GRACE_S + 30

    def kill_supervisor(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()  # its namespace (or its pdeathsig-armed init) takes the command along
        self.proc.wait()

    def status(self) -> dict[str, Any]:
        data = b""
        with contextlib.suppress(OSError):
            while chunk := os.read(self._status_r, 65536):
                data += chunk
        os.close(self._status_r)
        try:
            status = json.loads(data)
        except ValueError:
            return {"error": f"the process supervisor ended without a report (exit {self.proc.returncode})"}
        return status if isinstance(status, dict) else {"error": "the process supervisor sent no report"}

    def remove_private_tmp(self) -> None:
        if self.private_tmp is not None:
            shutil.rmtree(self.private_tmp, ignore_errors=True)  # never follows a symlink left there


def _special_files(folder: str, names: list[str]) -> set[str]:
    """What a copy of a settings folder leaves out: anything but folders, regular files and symlinks."""
    return {name for name in names if not (os.path.islink(os.path.join(folder, name))
                                           or os.path.isdir(os.path.join(folder, name))
                                           or os.path.isfile(os.path.join(folder, name)))}
