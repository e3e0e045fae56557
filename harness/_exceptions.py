"""Every error the harness reports to a user, in one place.

Each class renders a message that names the file (where there is one), the problem and the fix.
The command line shows them at a single boundary (``_cli.main``).
"""

from __future__ import annotations

from pathlib import Path


class HarnessError(Exception):
    """Base class: an error the user can act on."""


class CaseFileError(HarnessError):
    """A case file that cannot be loaded. Other cases still run."""

    def __init__(self, path: Path, problem: str, *, fix: str = "", line: int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.fix = fix
        self.line = line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else str(self.path)
        text = f"{where}: {self.problem}"
        return f"{text}\n  fix: {self.fix}" if self.fix else text


class SelectionError(HarnessError):
    """The user asked for a case, lane or variant that does not exist, or for nothing at all."""


class EmptySelectionError(SelectionError):
    """The selection is valid but matches no cell."""


class UsageError(HarnessError):
    """A command-line argument that cannot be honoured."""


class EnvBuildError(HarnessError):
    """An environment (venv or image) could not be realised."""

    def __init__(self, message: str, log_path: Path | None = None) -> None:
        self.message = message
        self.log_path = log_path
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"{self.message} (log: {self.log_path})" if self.log_path else self.message


class ReportWriteError(HarnessError):
    """Results could not be written (disk full, permissions). Earlier results are left intact."""
