"""Live progress on a terminal: one spinner line per running cell or environment build above the finished-cell
lines, showing the last line its log wrote (a compile step, a download) and how long it has run.

Without a terminal (CI logs) it prints a plain ``start <cell>`` line instead, then, for anything running longer
than a heartbeat interval, one ``still running`` line per interval with the last line of its log: a
four-minute C++ extension build is never a silent stretch.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from harness._exceptions import UsageError
from harness._io import for_terminal

HEARTBEAT_S = 60.0  # without a terminal: how often a long-running cell or build says where it is
HEARTBEAT_VARIABLE = "REPRO_MATRIX_HEARTBEAT_S"  # to change that (seconds)
_TERMINAL_REFRESH_S = 2.0  # on a terminal: how often the spinner lines take the logs' last lines
_TAIL_BYTES = 4096
_SHOWN_CHARS = 110


@dataclass
class _Running:
    key: str
    log: Path | None
    started: float = field(default_factory=time.monotonic)
    task: TaskID | None = None
    said: float = 0.0  # monotonic time of the last heartbeat line


class LiveCells:
    def __init__(self, console: Console, heartbeat_s: float | None = None) -> None:
        self.console = console
        self.heartbeat_s = heartbeat_s if heartbeat_s is not None else heartbeat_interval()
        self._lock = threading.Lock()
        self._running: dict[str, _Running] = {}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._progress = (
            Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                     console=console, transient=True)
            if console.is_terminal else None
        )

    def __enter__(self) -> LiveCells:
        if self._progress:
            self._progress.start()
        self._thread = threading.Thread(target=self._watch, name="progress", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._progress:
            self._progress.stop()

    def started(self, key: str, log: Path | None = None) -> None:
        shown = for_terminal(key, one_line=True)
        with self._lock:
            running = self._running[key] = _Running(key, log)
            if self._progress is not None:
                running.task = self._progress.add_task(f"running {shown}", total=None)
        if self._progress is None:
            self.console.print(Text(f"start {shown}", style="dim"))

    def finished(self, key: str) -> None:
        with self._lock:
            running = self._running.pop(key, None)
        if running is not None and running.task is not None and self._progress is not None:
            self._progress.remove_task(running.task)

    # -- the watcher thread ---------------------------------------------------------------------------
    def _watch(self) -> None:
        interval = _TERMINAL_REFRESH_S if self._progress is not None else min(self.heartbeat_s, 5.0)
        while not self._stop.wait(interval):
            self.beat()

    def beat(self, now: float | None = None) -> None:
        """Show where each running thing is: refresh the spinner lines, or print the heartbeats that are due."""
        now = time.monotonic() if now is None else now
        with self._lock:
            running = list(self._running.values())
        for item in running:
            line = last_line(item.log) if item.log else ""
            shown = for_terminal(item.key, one_line=True)
            if self._progress is not None and item.task is not None:
                self._progress.update(item.task, description=f"running {shown}" + (f": {line}" if line else ""))
            elif self._progress is None and now - max(item.started, item.said) >= self.heartbeat_s:
                item.said = now
                elapsed = round(now - item.started)  # not int(): (t + 61) - t can be 60.99999... in floats
                self.console.print(Text(f"still running {shown} ({elapsed // 60}m{elapsed % 60:02d}s)"
                                        + (f": {line}" if line else ""), style="dim"))


def heartbeat_interval() -> float:
    text = os.environ.get(HEARTBEAT_VARIABLE, "").strip()
    try:
        value = float(text) if text else HEARTBEAT_S
    except ValueError:
        raise UsageError(f"{HEARTBEAT_VARIABLE}={text!r}: give the seconds between heartbeat lines, e.g. 60") from None
    if not 0.5 <= value <= 3600:
        raise UsageError(f"{HEARTBEAT_VARIABLE}={text!r}: give 0.5 to 3600 seconds")
    return value


def last_line(path: Path) -> str:
    """The last non-empty line of a log (its tail only: logs can be large), shown as plain, shortened text."""
    try:
        with path.open("rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - _TAIL_BYTES))
            tail = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in tail.replace("\r", "\n").splitlines() if line.strip()]
    if not lines:
        return ""
    text = for_terminal(lines[-1], one_line=True)
    return text if len(text) <= _SHOWN_CHARS else text[: _SHOWN_CHARS - 3] + "..."
