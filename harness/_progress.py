"""Live progress on a terminal: one spinner line per running cell above the finished-cell lines.

Without a terminal (CI logs) it prints a plain ``start <cell>`` line instead, so a log shows what ran.
"""

from __future__ import annotations

import threading
from types import TracebackType

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.text import Text

from harness._text import for_terminal


class LiveCells:
    def __init__(self, console: Console) -> None:
        self.console = console
        self._lock = threading.Lock()
        self._tasks: dict[str, TaskID] = {}
        self._progress = (
            Progress(SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn(),
                     console=console, transient=True)
            if console.is_terminal else None
        )

    def __enter__(self) -> LiveCells:
        if self._progress:
            self._progress.start()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._progress:
            self._progress.stop()

    def started(self, key: str) -> None:
        if self._progress is None:
            self.console.print(Text(f"start {for_terminal(key, one_line=True)}", style="dim"))
            return
        with self._lock:
            self._tasks[key] = self._progress.add_task(f"running {for_terminal(key, one_line=True)}", total=None)

    def finished(self, key: str) -> None:
        if self._progress is None:
            return
        with self._lock:
            task = self._tasks.pop(key, None)
        if task is not None:
            self._progress.remove_task(task)
