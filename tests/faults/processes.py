"""Find a repro's processes from the host: cells may run in a pid namespace, where the pids they see
(and could write to a file) mean nothing outside. A unique token in a process's command line does."""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path


def new_token() -> str:
    return f"repro-matrix-fault-{uuid.uuid4().hex}"


def processes_with(token: str) -> list[int]:
    """Live (not zombie) processes whose command line contains ``token``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if token.encode() in cmdline and state != b"Z":
            found.append(int(entry))
    return found


def wait_until(condition, timeout: float = 60, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return bool(condition())
