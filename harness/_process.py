"""Run one child process: own process group, timeout, bounded log, nothing left behind.

The child's stdout and stderr go through one pipe into the cell's log. The log keeps the first and
the last part of the output and marks what it dropped, so a repro printing gigabytes costs bounded
memory and disk. When the cell ends (clean, failed or timed out) its whole process group is killed,
so a repro that forked a long-lived child cannot leak into later cells.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

LOG_HEAD_BYTES = 2 * 1024 * 1024
LOG_TAIL_BYTES = 1024 * 1024
_GRACE_S = 5.0


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    timed_out: bool
    interrupted: bool
    duration_s: float
    dropped_bytes: int


class _BoundedLog:
    """Copies a byte stream into a file, keeping head and tail, marking the cut."""

    def __init__(self, path: Path) -> None:
        self._handle = path.open("ab")
        self._written = 0
        self._tail: deque[bytes] = deque()
        self._tail_size = 0
        self.dropped = 0
        self.write_error: OSError | None = None

    def feed(self, chunk: bytes) -> None:
        if self.write_error:
            self.dropped += len(chunk)
            return
        room = LOG_HEAD_BYTES - self._written
        if room > 0:
            try:
                self._handle.write(chunk[:room])
            except OSError as error:  # disk full: keep draining the pipe so the child never blocks
                self.write_error = error
                self.dropped += len(chunk)
                return
            self._written += min(room, len(chunk))
            chunk = chunk[room:]
        if not chunk:
            return
        self._tail.append(chunk)
        self._tail_size += len(chunk)
        while self._tail_size - len(self._tail[0]) >= LOG_TAIL_BYTES:
            self.dropped += len(self._tail[0])
            self._tail_size -= len(self._tail.popleft())

    def close(self) -> None:
        joined = b"".join(self._tail)
        tail = joined[-LOG_TAIL_BYTES:] if len(joined) > LOG_TAIL_BYTES else joined
        self.dropped += len(joined) - len(tail)
        try:
            if self.write_error:
                self._handle.write(f"\n[repro-matrix: log incomplete: {self.write_error}]\n".encode())
            elif self.dropped:
                marker = f"\n[repro-matrix: log truncated, {self.dropped} bytes dropped here]\n"
                self._handle.write(marker.encode())
            self._handle.write(tail)
            self._handle.close()
        except OSError:
            with contextlib.suppress(OSError):
                self._handle.close()


def kill_group(pgid: int, sig: int = signal.SIGKILL) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


class RunningProcess:
    """A started child; :meth:`wait` enforces the timeout, :meth:`interrupt` stops it from elsewhere."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str], cwd: Path, log_path: Path,
                 memory_limit_bytes: int | None = None) -> None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        self._log = _BoundedLog(log_path)
        self._interrupted = threading.Event()
        self._started = time.perf_counter()
        self._proc = subprocess.Popen(
            list(argv), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=_limit_memory(memory_limit_bytes) if memory_limit_bytes else None,
        )
        self._reader = threading.Thread(target=self._pump, daemon=True)
        self._reader.start()

    def _pump(self) -> None:
        assert self._proc.stdout is not None
        for chunk in iter(lambda: self._proc.stdout.read1(65536), b""):  # type: ignore[union-attr]
            self._log.feed(chunk)

    def interrupt(self) -> None:
        self._interrupted.set()
        kill_group(self._proc.pid, signal.SIGTERM)

    def wait(self, timeout: float) -> ProcessResult:
        timed_out = False
        if not _wait_exit(self._proc, timeout):
            timed_out = True
            kill_group(self._proc.pid, signal.SIGTERM)
            if not _wait_exit(self._proc, _GRACE_S):
                kill_group(self._proc.pid, signal.SIGKILL)
                self._proc.wait()
        duration = time.perf_counter() - self._started
        # The leader is gone; sweep anything it left in its group (forked daemons, workers).
        kill_group(self._proc.pid, signal.SIGKILL)
        self._reader.join(timeout=10)
        self._log.close()
        return ProcessResult(self._proc.returncode, timed_out, self._interrupted.is_set(), duration,
                             self._log.dropped)


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


def _limit_memory(limit: int):  # noqa: ANN202 - a preexec_fn closure
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def signal_name(returncode: int | None) -> str | None:
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"
