"""Errors of the conformance runner, shown at its one boundary (``_cli.main``)."""

from __future__ import annotations

from pathlib import Path

from harness._exceptions import HarnessError


class ConformanceFileError(HarnessError):
    """A library file cannot be used; the message names the file and the fix."""

    def __init__(self, path: Path, problem: str, *, fix: str = "", line: int | None = None) -> None:
        self.path, self.problem, self.fix, self.line = path, problem, fix, line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        return f"{where}: {self.problem}" + (f"\n  fix: {self.fix}" if self.fix else "")


class SourceError(HarnessError):
    """A library's sdist or environment could not be had (download, checksum, install). Other libraries run."""
