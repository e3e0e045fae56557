"""The project's words, each defined once: verdicts (order, colours), lanes, cell statuses, exit codes,
id patterns and the torch pin. DESIGN.md "Vocabulary" says what they mean.

Standard library only: ``noxfile.py`` imports it before any dependency is installed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum, StrEnum
from typing import Literal, get_args

# ---- verdicts -------------------------------------------------------------------------------------------------


class Verdict(StrEnum):
    CONFIRMED = "confirmed"
    FIX_REGRESSED = "fix-regressed"
    STALE_REPRO = "stale-repro"
    FAILED_DIFFERENTLY = "failed-differently"
    INFRA_ERROR = "infra-error"
    SKIPPED = "skipped"

    @property
    def ok(self) -> bool:
        """Verdicts that let ``nox -s cases`` exit 0."""
        return self in (Verdict.CONFIRMED, Verdict.SKIPPED)


# Worst first: a fix that no longer holds is the news a maintainer must see before anything else;
# "skipped" sorts last so any real verdict outranks it.
SEVERITY: tuple[Verdict, ...] = (
    Verdict.FIX_REGRESSED, Verdict.STALE_REPRO, Verdict.FAILED_DIFFERENTLY,
    Verdict.INFRA_ERROR, Verdict.CONFIRMED, Verdict.SKIPPED,
)
OK_VERDICTS = frozenset(v.value for v in Verdict if v.ok)
MISSING = "missing"  # the site only: no record at all, neither run nor skipped


@dataclass(frozen=True, slots=True)
class Style:
    background: str  # the site's cell colours
    foreground: str
    terminal: str  # a rich style for the same verdict in the terminal
    meaning: str


# Colour is never the only channel: every cell, on the site and in the terminal, also prints the verdict word.
STYLES: dict[str, Style] = {
    Verdict.CONFIRMED: Style("#c8e6c9", "#1b5e20", "bold green", "bugs reproduce where documented, fixes hold"),
    Verdict.FIX_REGRESSED: Style("#ef9a9a", "#7f0000", "bold white on red", "a fix or workaround stopped working"),
    Verdict.STALE_REPRO: Style("#ffcc80", "#6d3a00", "bold black on dark_orange",
                               "a buggy variant ran clean: the repro no longer shows the bug"),
    Verdict.FAILED_DIFFERENTLY: Style("#ce93d8", "#4a148c", "bold magenta",
                                      "failed with an error that does not match the signature"),
    Verdict.INFRA_ERROR: Style("#90a4ae", "#102027", "bold cyan", "the harness or environment could not run a cell"),
    Verdict.SKIPPED: Style("#eeeeee", "#555555", "dim", "not run here: lane absent or every variant unsupported"),
    MISSING: Style("#ffffff", "#888888", "dim", "no result recorded"),
}
STYLES = {str(word): style for word, style in STYLES.items()}  # plain-str keys: templates and JSON see words
RICH_STYLES: dict[str, str] = {word: style.terminal for word, style in STYLES.items()}

# ---- lanes and cells ------------------------------------------------------------------------------------------

LaneName = Literal["cpu", "cuda", "cuda-sim"]
LANES: tuple[LaneName, ...] = get_args(LaneName)

# What one cell did (DESIGN.md "result"); the judge turns it into a Verdict.
CellStatus = Literal["passed", "raised", "exited", "crashed", "timeout", "oom", "infra-error", "skipped",
                     "interrupted"]
CELL_STATUSES: tuple[CellStatus, ...] = get_args(CellStatus)
Role = Literal["buggy", "fix"]

# ---- exit codes -----------------------------------------------------------------------------------------------


class ExitCode(IntEnum):
    OK = 0
    VERDICTS = 1
    BAD_INPUT = 2
    EMPTY = 3
    WRITE = 4
    INTERRUPTED = 130


EXIT_MEANINGS: dict[int, str] = {
    ExitCode.OK: "every verdict confirmed or skipped",
    ExitCode.VERDICTS: "some verdict needs attention (or, after a Python traceback, the harness itself failed)",
    ExitCode.BAD_INPUT: "bad input (a case file or an argument)",
    ExitCode.EMPTY: "the selection matched nothing",
    ExitCode.WRITE: "results could not be written",
    ExitCode.INTERRUPTED: "interrupted",
}
# Commands that judge nothing say what their codes mean for them.
COMMAND_MEANINGS: dict[str, dict[int, str]] = {
    "validate": {0: "every case file is valid", 2: "a case file is invalid (see above)"},
    "new": {0: "the case skeleton is written", 2: "bad input (see above)"},
    "report": {0: "the site is built"}, "clean": {0: "done"}, "images": {0: "done"},
    "wheelhouse": {0: "the wheelhouse is made"},
}


def exit_meaning(command: str, code: int) -> str:
    """What ``repro-matrix COMMAND`` exiting with ``code`` means (the noxfile prints it)."""
    return {**EXIT_MEANINGS, **COMMAND_MEANINGS.get(command, {})}.get(code, "unexpected exit code")


# ---- names ----------------------------------------------------------------------------------------------------
# Names that end up in file names and URLs of the site, also read from untrusted results.json and history.json.
# Always used with fullmatch: a pattern ending in "$" also accepts a trailing newline under re.search.
CASE_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")  # harness/case.schema.json "id"
VARIANT = re.compile(r"[a-z0-9]+([-.+][a-z0-9]+)*\+?")  # harness/case.schema.json variant names
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}")  # a run folder's name (and REPRO_MATRIX_RUN_ID)
MAX_NAME = 64  # case ids and variant names: the case schema's bound; cases/<id>.html must be a valid file name

# ---- torch ----------------------------------------------------------------------------------------------------
TORCH_VERSION = "2.13.0"  # what runs on the development and CI hosts (a local CPU wheel)
TORCH_PIN = f"torch=={TORCH_VERSION}"  # always pinned: an unpinned torch pulls a multi-GB CUDA build
