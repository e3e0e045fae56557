"""The cross-run static site: find stored runs and previous sites, merge, extend history, write pages.

Output layout::

    index.html            latest real verdict per case and lane, staleness alarm, recent runs
    cases/<case>.html     verdict per run over time, flips with the environment diff
    runs/<run-id>/        each kept run's own report (index.html, junit.xml, results.json, logs/)
    history.json          everything the next build needs to extend this one (see _history.py)
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import re
import shutil
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from harness._exceptions import ReportWriteError, UsageError
from harness.report._checked import current, digest_of, remembered
from harness.report._history import History
from harness.report._inputs import (
    MAX_RESULTS_BYTES,
    check_results,
    parse_json,
    read_results_bytes,
    results_of,
)
from harness.report._io import ReportInputError, write_json_atomic
from harness.report._merge import merge_shards
from harness.report._safe import UnsafePath, read_inside
from harness.report._site_pages import write_pages
from harness.report._site_reports import _Found, _place_reports, _Shard
from harness.report._timeline import StaleItem
from harness.run._recover import recovered_results

_MAX_DEPTH = 6
KEEP_REPORTS = 50  # per-run reports the site carries: seven weeks of nightly runs; CI artifacts keep 30 days
# history.json grows by ~7 KB per run (1,000 nightly runs of 5 cases: 6.5 MB); above this it is refused unread.
MAX_HISTORY_BYTES = 256 * 2**20


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
        problems = f", {len(self.problems)} input problem(s) listed on the front page" if self.problems else ""
        return (f"site {self.index}: {_count(self.runs, 'run')} ({len(self.new_runs)} new), "
                f"{_count(self.cases, 'case')}, {_count(self.reports_kept, 'run report')} kept{alarms}{problems}")


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"




def build_site(inputs: Iterable[Path], output: Path, stale_days: int = 7, now: datetime | None = None, *,
               keep_reports: int | None = KEEP_REPORTS) -> SiteSummary:
    """Build (or extend) the static site in ``output`` from run folders, folders of runs and published sites.

    ``keep_reports`` bounds how many per-run reports (newest first) the site carries; history keeps
    every run's verdicts regardless. ``None`` keeps them all. Every input is untrusted: a results.json or
    history entry that fails its checks is skipped and listed in ``SiteSummary.problems``. Raises UsageError
    when ``output`` is a file or overlaps the inputs, ReportWriteError when the site cannot be written.
    """
    inputs, output = [Path(p) for p in inputs], Path(output)
    if stale_days < 1 or (keep_reports is not None and keep_reports < 0):
        raise UsageError(f"stale_days must be at least 1 (got {stale_days}) and keep_reports at least 0 "
                         f"(got {keep_reports})")
    check_output(inputs, output)
    # Parsing a thousand results.json makes millions of objects and no cycles: the cyclic GC would only
    # rescan them over and over (about 40% of the build's CPU time).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with _locked(output), remembered():
            _remove_leftovers(output)
            return _build(inputs, output, stale_days, (now or datetime.now(UTC)).astimezone(UTC), keep_reports)
    finally:
        if gc_was_enabled:
            gc.enable()


# What a killed build leaves: temp folders and files (tempfile's 8 random characters) and a swapped-out report.
_LEFTOVER = re.compile(r"\.[^/]+\.(?:[a-z0-9_]{8}|old)")


@contextlib.contextmanager
def _locked(output: Path) -> Iterator[None]:
    """Hold a lock on the output folder itself (flock of its descriptor: no lock file to publish or to leave
    behind): two builds into one folder would mix their pages and histories."""
    try:
        output.mkdir(parents=True, exist_ok=True)
        fd = os.open(output, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise ReportWriteError(f"could not write the site into {output}: {error.strerror or error}; check that "
                               "the folder is writable") from error
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise UsageError(f"another report build is writing into {output} (it holds a lock on the folder); "
                             "wait for it to finish, or give another --output") from None
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _remove_leftovers(output: Path) -> None:
    """Remove what a killed build left half-written, so that it is never published."""
    for folder in (output, output / "runs", output / "cases"):
        try:
            with os.scandir(folder) as scan:
                entries = [e for e in scan if _LEFTOVER.fullmatch(e.name)]
        except (FileNotFoundError, NotADirectoryError):
            continue
        for entry in entries:
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(entry.path)


def check_output(inputs: list[Path], output: Path) -> None:
    """Refuse an output the build would damage: a file, a run folder or a folder inside one, or a folder of
    runs given as input (the site's history.json would turn it into a "site" and hide its runs from later
    builds). Extending a site in place (``--input site --output site``) stays allowed."""
    if output.exists() and not output.is_dir():
        raise UsageError(f"--output {output} is a file; give a folder for the site (e.g. reports/site)")
    out = output.resolve()
    for folder in (out, *out.parents):
        if (folder / "results.json").exists():
            raise UsageError(f"--output {output} is inside the run folder {folder}: the site would overwrite "
                             "that run's report and hide the run from later builds; choose a folder outside "
                             "every run folder (e.g. reports/site)")
    output_is_site = (out / "history.json").is_file()
    for path in inputs:
        folder = (path.parent if path.is_file() else path).resolve()
        if folder == out and not output_is_site:
            raise UsageError(f"--output {output} is also an --input folder of runs: the site would be written "
                             "among the runs it reads; choose a folder of its own (e.g. reports/site)")
        if out in folder.parents and not output_is_site:
            raise UsageError(f"--output {output} contains the --input {path}: the site's history.json would "
                             "hide those runs from later builds; choose a folder beside them (e.g. reports/site)")


def _build(inputs: list[Path], output: Path, stale_days: int, now: datetime, keep_reports: int | None) -> SiteSummary:
    found = _discover(inputs, output.resolve())
    history = History()
    report_sources: dict[str, Path] = {}
    for site in found.sites:
        previous = _read_history(site, found.problems)
        history.extend(previous)
        report_sources.update({run_id: site / "runs" / run_id for run_id in previous.runs
                               if (site / "runs" / run_id / "results.json").is_file()})
    merged: dict[str, list[_Shard]] = {}
    checked = current()
    for run_id, shards in found.runs.items():
        prepared = shards[0].prepared if len(shards) == 1 else None
        if prepared is None:
            prepared = history.prepare(merge_shards([shard.data for shard in shards]))
            if checked is not None and len(shards) == 1 and shards[0].digest is not None:
                checked.keep_prepared(shards[0].digest, prepared)
        history.add(prepared)
        merged[run_id] = shards
    try:
        output.mkdir(parents=True, exist_ok=True)
        kept = _place_reports(history, merged, report_sources, output, keep_reports, found)
        latest, stale = write_pages(history, output, now=now, stale_days=stale_days, problems=found.problems)
        write_json_atomic(output / "history.json", history.to_dict(now), indent=None)
    except OSError as error:
        raise ReportWriteError(f"could not write the site into {output}: {error.strerror or error}"
                               f"{f' ({error.filename})' if error.filename else ''}; check that the folder is "
                               "writable and the disk has room") from error
    return SiteSummary(output=output, runs=len(history.runs), new_runs=tuple(sorted(merged)),
                       cases=len(history.cases), reports_kept=kept, latest=latest, stale=tuple(stale),
                       problems=tuple(found.problems))


def _read_history(site: Path, problems: list[str]) -> History:
    """A site's history.json; one that cannot be read at all stops the build (its history would be lost)."""
    path = site / "history.json"
    try:
        raw = read_inside(site, "history.json", limit=MAX_HISTORY_BYTES, allow_links=True)
    except UnsafePath as error:
        raise ReportInputError(f"{path}: not read: {error}") from error
    return History.from_dict(parse_json(raw, path), str(path), problems)


def _discover(inputs: list[Path], output: Path) -> _Found:
    found = _Found()
    for path in inputs:
        if not path.exists():
            raise ReportInputError(f"{path}: no such file or folder")
        if path.is_file():
            if path.name not in ("results.json", "history.json"):
                raise ReportInputError(f"{path}: expected a run folder, a folder of runs, a site folder, "
                                       "results.json or history.json")
            _visit(path.parent, found, _MAX_DEPTH, output, explicit=True)
        else:
            _visit(path, found, 0, output, explicit=True)
    return found


def _visit(folder: Path, found: _Found, depth: int, output: Path, *, explicit: bool = False) -> None:
    key = folder.resolve()
    if key in found.seen:
        return
    found.seen.add(key)
    if (folder / "history.json").is_file():
        if explicit or key == output:
            found.sites.append(folder)  # a published site: its runs/ copies are already in its history
            return
        # A history.json inside a folder of runs (an artifact, say) is not trusted to extend the history.
        found.problems.append(f"{folder}: a history.json inside a folder of runs is not read; give the site "
                              "as its own --input to extend its history")
    if os.path.lexists(folder / "results.json"):  # a symlinked one is refused (and listed) when read
        _add_run(folder, found)
        return
    if depth >= _MAX_DEPTH:
        return
    try:
        with os.scandir(folder) as entries:
            # Never through a symlink: an artifact's "runs -> /" must not walk the host.
            children = sorted(e.path for e in entries
                              if e.is_dir(follow_symlinks=False) and not e.name.startswith("."))
    except OSError as error:
        found.problems.append(f"{folder}: not read: {error.strerror or error}")
        return
    for child in children:
        _visit(Path(child), found, depth + 1, output)


def _add_run(folder: Path, found: _Found) -> None:
    try:
        raw = read_results_bytes(folder)
        checked = current()
        if checked is not None:
            known = digest_of(raw)
            prepared = checked.prepared(known)
            # A run still "running" may be a dead one to recover (below), which the bytes alone do not decide.
            if prepared is not None and prepared["record"]["status"] != "running":
                found.runs.setdefault(prepared["record"]["id"], []).append(
                    _Shard(folder, known, raw=raw, prepared=prepared))
                return
        results, digest = results_of(raw, folder / "results.json")
    except ReportInputError as error:
        found.problems.append(str(error))  # one broken artifact must not stop the others from publishing
        return
    # A run left at "running" by a harness that died on this host is published as interrupted with the cells
    # it finished; the report never writes into its inputs, so the run folder itself stays as it is.
    recovered = recovered_results(folder, results, limit=MAX_RESULTS_BYTES)
    if recovered is not None:
        digest = None
        try:
            results = check_results(recovered, folder / "cells.jsonl")
        except ReportInputError as error:
            found.problems.append(str(error))
            return
    found.runs.setdefault(results["run"]["id"], []).append(_Shard(folder, digest, parsed=results))

