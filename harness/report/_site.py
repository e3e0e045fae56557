"""The cross-run static site: find stored runs and previous sites, merge, extend history, write pages.

Output layout::

    index.html            latest real verdict per case and lane, staleness alarm, recent runs
    cases/<case>.html     verdict per run over time, flips with the environment diff
    runs/<run-id>/        each kept run's own report (index.html, junit.xml, results.json, logs/)
    history.json          everything the next build needs to extend this one (see _history.py)
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.report._history import History
from harness.report._io import (
    ReportInputError,
    copy_logs,
    copy_report,
    load_results,
    read_json,
    write_json_atomic,
)
from harness.report._merge import merge_shards
from harness.report._run import write_run_reports
from harness.report._site_pages import write_pages
from harness.report._timeline import StaleItem

SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_MAX_DEPTH = 6
KEEP_REPORTS = 50  # per-run reports the site carries: seven weeks of nightly runs; CI artifacts keep 30 days


@dataclass(frozen=True, slots=True)
class SiteSummary:
    output: Path
    runs: int
    new_runs: tuple[str, ...]
    cases: int
    reports_kept: int
    latest: Mapping[tuple[str, str], str]
    stale: tuple[StaleItem, ...]
    problems: tuple[str, ...]

    @property
    def index(self) -> Path:
        return self.output / "index.html"

    def __str__(self) -> str:
        alarms = f", {len(self.stale)} stale" if self.stale else ""
        problems = f", {len(self.problems)} unreadable input(s)" if self.problems else ""
        return (f"site {self.index}: {self.runs} runs ({len(self.new_runs)} new), {self.cases} cases, "
                f"{self.reports_kept} run reports kept{alarms}{problems}")


@dataclass(slots=True)
class _Found:
    runs: dict[str, list[tuple[Path, dict[str, Any]]]] = field(default_factory=dict)
    sites: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)


def build_site(inputs: Iterable[Path], output: Path, stale_days: int = 7, now: datetime | None = None, *,
               keep_reports: int | None = KEEP_REPORTS) -> SiteSummary:
    """Build (or extend) the static site in ``output`` from run folders, folders of runs and published sites.

    ``keep_reports`` bounds how many per-run reports (newest first) the site carries; history keeps
    every run's verdicts regardless. ``None`` keeps them all.
    """
    # Parsing a thousand results.json makes millions of objects and no cycles: the cyclic GC would only
    # rescan them over and over (about 40% of the build's CPU time).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _build(list(inputs), Path(output), stale_days, (now or datetime.now(UTC)).astimezone(UTC), keep_reports)
    finally:
        if gc_was_enabled:
            gc.enable()


def _build(inputs: list[Path], output: Path, stale_days: int, now: datetime, keep_reports: int | None) -> SiteSummary:
    found = _discover([Path(p) for p in inputs])
    history = History()
    report_sources: dict[str, Path] = {}
    for site in found.sites:
        previous = History.from_dict(read_json(site / "history.json"), str(site / "history.json"))
        history.extend(previous)
        report_sources.update({run_id: site / "runs" / run_id for run_id in previous.runs
                               if SAFE_ID.match(run_id) and (site / "runs" / run_id / "index.html").is_file()})
    merged: dict[str, tuple[dict[str, Any], list[Path]]] = {}
    for run_id, shards in found.runs.items():
        results = merge_shards([data for _, data in shards])
        history.ingest(results)
        merged[run_id] = (results, [folder for folder, _ in shards])
    output.mkdir(parents=True, exist_ok=True)
    kept = _place_reports(history, merged, report_sources, output, keep_reports)
    latest, stale = write_pages(history, output, now=now, stale_days=stale_days, problems=found.problems)
    write_json_atomic(output / "history.json", history.to_dict(now), indent=None)
    return SiteSummary(output=output, runs=len(history.runs), new_runs=tuple(sorted(merged)),
                       cases=len(history.cases), reports_kept=kept, latest=latest, stale=tuple(stale),
                       problems=tuple(found.problems))


def _discover(inputs: list[Path]) -> _Found:
    found = _Found()
    for path in inputs:
        if not path.exists():
            raise ReportInputError(f"{path}: no such file or folder")
        if path.is_file():
            if path.name not in ("results.json", "history.json"):
                raise ReportInputError(f"{path}: expected a run folder, a folder of runs, a site folder, "
                                       "results.json or history.json")
            _visit(path.parent, found, _MAX_DEPTH)
        else:
            _visit(path, found, 0)
    return found


def _visit(folder: Path, found: _Found, depth: int) -> None:
    key = folder.resolve()
    if key in found.seen:
        return
    found.seen.add(key)
    if (folder / "history.json").is_file():
        found.sites.append(folder)  # a published site: its runs/ copies are already in its history
        return
    if (folder / "results.json").is_file():
        _add_run(folder, found)
        return
    if depth >= _MAX_DEPTH:
        return
    with os.scandir(folder) as entries:
        children = sorted(e.path for e in entries if e.is_dir() and not e.name.startswith("."))
    for child in children:
        _visit(Path(child), found, depth + 1)


def _add_run(folder: Path, found: _Found) -> None:
    try:
        results = load_results(folder / "results.json")
    except ReportInputError as error:
        found.problems.append(str(error))  # one broken artifact must not stop the others from publishing
        return
    run_id = str(results["run"]["id"])
    if not SAFE_ID.match(run_id):
        found.problems.append(f"{folder / 'results.json'}: run id {run_id!r} is not a safe folder name; skipped")
        return
    found.runs.setdefault(run_id, []).append((folder, results))


def _place_reports(history: History, merged: Mapping[str, tuple[dict[str, Any], list[Path]]],
                   sources: Mapping[str, Path], output: Path, keep: int | None) -> int:
    newest_first = [run["id"] for run in history.ordered_runs()][::-1]
    keep_ids = set(newest_first if keep is None else newest_first[:max(keep, 0)])
    kept = 0
    for run_id in newest_first:
        record = history.runs[run_id]
        dest = output / "runs" / run_id
        if not SAFE_ID.match(run_id) or run_id not in keep_ids:
            if SAFE_ID.match(run_id) and dest.is_dir():
                shutil.rmtree(dest)
            record["report"] = None
            continue
        if run_id in merged:
            _replace_dir(dest, functools.partial(_write_report, results=merged[run_id][0], folders=merged[run_id][1]))
        elif run_id in sources and sources[run_id].resolve() != dest.resolve():
            _replace_dir(dest, functools.partial(_copy_into, sources[run_id]))
        present = (dest / "index.html").is_file()
        record["report"] = f"runs/{run_id}/index.html" if present else None
        kept += present
    return kept


def _copy_into(source: Path, dest: Path) -> None:
    copy_report(source, dest)


def _write_report(dest: Path, *, results: dict[str, Any], folders: list[Path]) -> None:
    if len(folders) == 1 and (folders[0] / "index.html").is_file():
        copy_report(folders[0], dest)
        return
    for folder in folders:
        copy_logs(folder, dest)
    write_json_atomic(dest / "results.json", results)
    write_run_reports(dest, results)


def _replace_dir(dest: Path, fill: Callable[[Path], None]) -> None:
    """Fill a temp folder beside dest, then swap it in: a half-copied report is never published."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)
        if dest.exists():
            old = dest.with_name(f".{dest.name}.old")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(dest, old)
            os.replace(tmp, dest)
            shutil.rmtree(old, ignore_errors=True)
        else:
            os.replace(tmp, dest)
    except BaseException:
        with contextlib.suppress(OSError):
            shutil.rmtree(tmp)
        raise
