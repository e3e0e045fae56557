"""Run one child process under a supervisor: timeout, bounded log, nothing left behind.

Every process the harness starts (cells, uv, patch, probes) runs under ``_supervise.py``, which kills
the command's whole tree when it ends, times out, is interrupted, or when the harness dies (see there).
The child's stdout and stderr go through one pipe into the cell's log. The log keeps the first and
the last part of the output and marks what it dropped, so a repro printing gigabytes costs bounded
memory and disk.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.containment._launch import Confinement as Confinement
from harness.containment._launch import _Supervised
from harness.containment._launch import namespaces_wanted as namespaces_wanted
from harness.containment._log import BoundedLog

_DRAIN_S = 2.0  # output still arriving after the supervisor is gone; then the pipe is abandoned


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    timed_out: bool
    interrupted: bool
    duration_s: float
    dropped_bytes: int
    error: str = ""  # the supervisor could not run the command (an infra-error, never the repro's fault)
    containment: str = ""  # "bwrap", "namespaces" or "subreaper" (see _supervise.py)
    notes: tuple[str, ...] = ()
    oom_killed: bool = False  # the cell's memory cgroup killed a process of it


def _returncode(status: dict[str, Any]) -> int | None:
    raw = status.get("status")
    code = os.waitstatus_to_exitcode(raw) if isinstance(raw, int) else None
    # bwrap ends with 128 + N when its command died of signal N: read as the signal (a repro that exits with
    # such a code itself is told apart by its outcome record, see _outcome._agrees).
    if status.get("containment") == "bwrap" and code is not None and 128 < code < 128 + signal.NSIG:
        return 128 - code
    return code


class RunningProcess:
    """A started cell; :meth:`wait` returns when it and everything it started are gone."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_path: Path, timeout: float,
                 memory_limit_bytes: int | None = None, confinement: Confinement | None = None,
                 log_fd: int | None = None, on_output: Callable[[bytes], None] | None = None) -> None:
        self._log = BoundedLog(log_path, log_fd)
        self._on_output = on_output  # sees every chunk as it arrives (a build's progress), capped log or not
        self._drain_until: float | None = None
        self.held_open = False
        self._supervised = _Supervised(argv, env=env, cwd=cwd, timeout=timeout,
                                       memory_limit_bytes=memory_limit_bytes, confinement=confinement,
                                       stderr=subprocess.STDOUT)
        self._proc = self._supervised.proc
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        """Copy output until end of file, or until shortly after the supervisor is gone: a process that
        escaped it (and still holds the pipe) must not stall the cell."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        while self._drain_until is None or time.monotonic() < self._drain_until:
            if not poller.poll(100):
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            self._log.feed(chunk)
            if self._on_output is not None:
                self._on_output(chunk)
        else:
            self.held_open = True
        self._proc.stdout.close()

    def interrupt(self) -> None:
        self._supervised.interrupt()

    def wait(self) -> ProcessResult:
        supervised = self._supervised
        if not _wait_exit(self._proc, supervised.backstop()):
            supervised.kill_supervisor()
        self._drain_until = time.monotonic() + _DRAIN_S
        self._reader.join()
        status = supervised.status()
        supervised.remove_private_tmp()
        if status.get("notes"):  # what the containment could not do here (e.g. no namespaces): say it in the log
            notes = "; ".join(str(n) for n in status["notes"])
            self._log.feed(f"\n[repro-matrix: containment {status.get('containment')}: {notes}]\n".encode())
        if self.held_open:
            self._log.feed(b"\n[repro-matrix: stopped reading: a process that escaped the cell held its output open]\n")
        self._log.close()
        duration = status.get("duration_s", time.perf_counter() - supervised.started)
        return ProcessResult(_returncode(status), bool(status.get("timed_out")),
                             supervised._interrupted.is_set() or bool(status.get("interrupted")), float(duration),
                             self._log.dropped, error=str(status.get("error") or ""),
                             containment=str(status.get("containment") or ""),
                             notes=tuple(str(n) for n in status.get("notes") or ()),
                             oom_killed=bool(status.get("oom_killed")))


@dataclass(frozen=True)
class HelperResult:
    returncode: int | None
    stdout: str
    stderr: str
    timed_out: bool
    error: str = ""
    containment: str = ""  # as for cells: "namespaces" or "subreaper"
    notes: tuple[str, ...] = ()  # what the containment could not do here


class HelperProcess:
    """A helper (uv, patch, a probe) under the same supervisor: it dies with the harness and on Ctrl-C.
    With a ``confinement`` it is sealed like a cell (environment builds run code a case chose)."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], timeout: float, cwd: Path | None = None,
                 confinement: Confinement | None = None) -> None:
        if cwd is None:  # a build step starts in /: the harness's folder (a checkout) is not bound for it
            cwd = Path("/") if confinement is not None and confinement.build else Path.cwd()
        self._supervised = _Supervised(argv, env=env, cwd=cwd, timeout=timeout,
                                       memory_limit_bytes=None, confinement=confinement, stderr=subprocess.PIPE)

    def interrupt(self) -> None:
        self._supervised.interrupt()

    def result(self) -> HelperResult:
        supervised = self._supervised
        try:
            out, err = supervised.proc.communicate(timeout=supervised.backstop())
        except subprocess.TimeoutExpired:
            supervised.kill_supervisor()
            out, err = supervised.proc.communicate()
        status = supervised.status()
        supervised.remove_private_tmp()
        return HelperResult(_returncode(status), out.decode(errors="replace"), err.decode(errors="replace"),
                            bool(status.get("timed_out")), str(status.get("error") or ""),
                            containment=str(status.get("containment") or ""),
                            notes=tuple(str(n) for n in status.get("notes") or ()))


def run_helper(argv: Sequence[str], *, env: Mapping[str, str], timeout: float, cwd: Path | None = None,
               confinement: Confinement | None = None) -> HelperResult:
    return HelperProcess(argv, env=env, timeout=timeout, cwd=cwd, confinement=confinement).result()


def _wait_exit(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Reap ``proc`` if it exits within ``timeout`` seconds; False when it is still running.

    ``Popen.wait(timeout=...)`` polls with sleeps growing to 50 ms, so a cell's end was noticed up to
    50 ms late. A pidfd becomes readable the moment the process exits; without one (Linux < 5.3, a
    seccomp filter refusing the call) Popen's polling wait still does the job.
    """
    if proc.returncode is not None:  # reaped already: its pid may belong to another process by now
        return True
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return False
        return True
    try:
        if not _readable_within(pidfd, timeout):
            return False
    finally:
        os.close(pidfd)
    proc.wait()  # already exited: reaps at once and records the return code
    return True


def _readable_within(fd: int, timeout: float) -> bool:
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    deadline = time.monotonic() + timeout
    while True:
        remaining = deadline - time.monotonic()
        # poll() takes milliseconds as a C int: wait in slices of at most an hour for very long timeouts.
        if poller.poll(max(0, min(remaining, 3600.0)) * 1000):
            return True
        if remaining <= 3600.0:
            return False


def signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
