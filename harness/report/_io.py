"""Files: atomic writes, reading logs, copying a run's logs into the site."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness._exceptions import HarnessError
from harness._io import write_atomic
from harness._io import write_json_atomic as write_json
from harness.containment._log import LOG_HEAD_BYTES, LOG_TAIL_BYTES
from harness.report._common import clean_text
from harness.report._safe import Confined, UnsafePath, split_relative

RESULTS_VERSION = 1
# A log copied into the site keeps its first and last part, as the harness's own cap (logs written by the harness
# are never larger; a hostile artifact's may be).
SITE_LOG_HEAD, SITE_LOG_TAIL = LOG_HEAD_BYTES, LOG_TAIL_BYTES


class ReportInputError(HarnessError, ValueError):
    """A stored run or history the report cannot use (missing, unreadable, unsafe, or a newer format)."""


def write_text_atomic(path: Path, text: str) -> None:
    """:func:`harness._io.write_atomic`, making the folder first: a static host sees old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, text)


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 1) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, data, indent=indent)


def log_tail(files: Confined, log: str | None, *, lines: int = 40, max_bytes: int = 16384) -> str | None:
    """The last lines of a cell's log, cleaned for HTML/XML; None when there is no log it may read.

    ``files`` is the run folder: the log is read only from inside it, never through a symlink (see _safe.py).
    """
    if not log:
        return None
    try:
        data, size = files.read_tail(log, max_bytes=max_bytes)
    except (UnsafePath, OSError):
        return None
    text = data.decode("utf-8", errors="replace")
    kept = text.splitlines()[-lines:]
    if size > max_bytes and kept:
        kept[0] = "..." + kept[0]
    return clean_text("\n".join(kept))


def log_problem(files: Confined, log: str | None) -> str | None:
    """Why a cell's log cannot be shown or linked (None when it can, or when the cell has none)."""
    if not log:
        return None
    try:
        with files.open(log):
            return None
    except UnsafePath as error:
        return str(error)


def copy_logs(source: Path, results: Mapping[str, Any], dest: Path) -> list[str]:
    """Copy the logs the run's cells name (and nothing else from the run folder) into ``dest``.

    Each is copied, never linked (a later run must not be able to change a published file), mode 0644,
    only when it is a regular file inside ``source`` reached without a symlink. Returns what was refused.
    """
    problems = []
    made: set[Path] = set()
    with Confined(source) as files:
        for log in dict.fromkeys(c["log"] for c in results.get("cells", []) if c.get("log")):
            target = dest.joinpath(*split_relative(log))
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            with contextlib.suppress(FileNotFoundError):
                target.unlink()  # a later shard's copy of the same cell wins, as in the merge
            try:
                files.copy(log, target, head=SITE_LOG_HEAD, tail=SITE_LOG_TAIL)
            except UnsafePath as error:
                if not error.missing:  # a cell interrupted before its log existed is no news
                    problems.append(f"{source}: log not published: {error}")
    return problems
