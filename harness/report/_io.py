"""Files: atomic writes, reading results and logs, copying a run's report folder."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from harness.report._common import clean_text

RESULTS_VERSION = 1
REPORT_FILES = ("results.json", "junit.xml", "index.html")


class ReportInputError(ValueError):
    """A stored run or history the report cannot use (missing, unreadable, or a newer format)."""


def write_text_atomic(path: Path, text: str) -> None:
    """Temp file in the same folder, then rename: a reader (or a static host) sees old or new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp makes 0600, which a web server running as another user cannot read
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 1) -> None:
    separators = (",", ":") if indent is None else None
    write_text_atomic(path, json.dumps(data, indent=indent, separators=separators, ensure_ascii=False) + "\n")


def read_json(path: Path) -> Any:
    try:
        with path.open("rb") as handle:
            return json.load(handle)
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as error:
        raise ReportInputError(f"{path}: cannot read ({error})") from error


def load_results(path: Path) -> dict[str, Any]:
    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("run"), dict):
        raise ReportInputError(f"{path}: not a repro-matrix results.json (no 'run' object)")
    version = data.get("version")
    if version != RESULTS_VERSION:
        raise ReportInputError(f"{path}: results version {version!r}; this report reads version "
                               f"{RESULTS_VERSION} (upgrade repro-matrix to read newer runs)")
    if not data["run"].get("id"):
        raise ReportInputError(f"{path}: the run has no id")
    return data


def log_tail(run_dir: Path, log: str | None, *, lines: int = 40, max_bytes: int = 16384) -> str | None:
    """The last lines of a cell's log, cleaned for HTML/XML; None when there is no log to read."""
    if not log:
        return None
    path = run_dir / log
    try:
        with path.open("rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace")
    kept = text.splitlines()[-lines:]
    if size > max_bytes and kept:
        kept[0] = "..." + kept[0]
    return clean_text("\n".join(kept))


def link_or_copy(source: str | Path, dest: str | Path) -> None:
    """Hard-link when source and dest share a filesystem (reports are only ever replaced, never edited in
    place, so a link cannot change under the site), copy otherwise."""
    try:
        os.link(source, dest)
    except OSError:
        shutil.copy2(source, dest)


def copy_report(source: Path, dest: Path) -> None:
    """Copy a run folder's report files and logs (nothing else: scratch folders stay behind)."""
    if source.resolve() == dest.resolve():
        return
    dest.mkdir(parents=True, exist_ok=True)
    for name in REPORT_FILES:
        if (source / name).is_file():
            link_or_copy(source / name, dest / name)
    copy_logs(source, dest)


def copy_logs(source: Path, dest: Path) -> None:
    if (source / "logs").is_dir():
        shutil.copytree(source / "logs", dest / "logs", copy_function=link_or_copy, dirs_exist_ok=True)
