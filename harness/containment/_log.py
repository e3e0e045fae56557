"""A bounded log: a process's output copied into a file, its first and last part kept, the cut marked.

A repro printing gigabytes costs at most :data:`LOG_HEAD_BYTES` + :data:`LOG_TAIL_BYTES` of disk, and the pipe is
always drained (a full disk only stops the writing), so the child never blocks on its output.
"""

from __future__ import annotations

import contextlib
import os
from collections import deque
from pathlib import Path

LOG_HEAD_BYTES = 2 * 1024 * 1024
LOG_TAIL_BYTES = 1024 * 1024


class BoundedLog:
    """Copies a byte stream into a file, keeping head and tail, marking the cut."""

    def __init__(self, path: Path, fd: int | None = None) -> None:
        # O_NOFOLLOW: a symlink planted where the log goes is never written through.
        fd = os.dup(fd) if fd is not None else os.open(
            path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
        self._handle = os.fdopen(fd, "ab")
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
                self._handle.flush()  # the log is followed live (progress shows its last line)
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
