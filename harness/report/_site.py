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
import functools
import gc
import hashlib
import json
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness._exceptions import ReportWriteError, UsageError
from harness.report._checked import current, digest_of, remembered
from harness.report._history import History
from harness.report._inputs import (
    MAX_RESULTS_BYTES,
    check_results,
    parse_json,
    read_results,
    read_results_bytes,
    results_of,
)
from harness.report._io import ReportInputError, copy_logs, write_json_atomic
from harness.report._merge import merge_shards
from harness.report._run import write_run_reports
from harness.report._safe import UnsafePath, inside, read_inside
from harness.report._site_pages import write_pages
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


@dataclass(slots=True)
class _Shard:
    """One run folder's checked results.json. Contents the record of checked inputs knows come with their
    history entry (``prepared``) and stay unparsed bytes until a run report needs them."""

    folder: Path
    digest: str | None  # of the results.json bytes; None when no record is kept or the run was recovered
    parsed: dict[str, Any] | None = None
    raw: bytes | None = None
    prepared: dict[str, Any] | None = None

    @property
    def data(self) -> dict[str, Any]:
        if self.parsed is None:
            assert self.raw is not None
            self.parsed, self.raw = json.loads(self.raw), None  # bytes known to pass every check
        return self.parsed


@dataclass(slots=True)
class _Found:
    runs: dict[str, list[_Shard]] = field(default_factory=dict)
    sites: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    seen: set[Path] = field(default_factory=set)


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


def _place_reports(history: History, merged: Mapping[str, list[_Shard]],
                   sources: Mapping[str, Path], output: Path, keep: int | None, found: _Found) -> int:
    problems = found.problems
    newest_first = [run["id"] for run in history.ordered_runs()][::-1]
    keep_ids = set(newest_first if keep is None else newest_first[:max(keep, 0)])
    kept = 0
    for run_id in newest_first:
        record = history.runs[run_id]
        dest = inside(output, output / "runs" / run_id)  # run ids are checked on reading; this is the backstop
        if run_id not in keep_ids:
            if dest.is_dir() and not dest.is_symlink():
                shutil.rmtree(dest)
            record["report"] = None
            continue
        if run_id in merged:
            _publish_unless_unchanged(dest, merged[run_id], found)
        elif run_id in sources and sources[run_id].resolve() != dest.resolve():
            _carry_report(sources[run_id], dest, problems)
        present = (dest / "index.html").is_file()
        record["report"] = f"runs/{run_id}/index.html" if present else None
        kept += present
    return kept


def _publish_unless_unchanged(dest: Path, shards: list[_Shard], found: _Found) -> None:
    """Publish the run's report, unless the record of checked inputs says that this very report (same input
    bytes and logs, same report code) was published into ``dest`` and ``dest`` still holds exactly that."""
    checked = current()
    key = _inputs_key(dest, shards) if checked is not None else None
    if checked is not None and key is not None and key in checked.published and \
            checked.published[key] == _fingerprint(dest):
        return
    before = len(found.problems)
    results = merge_shards([shard.data for shard in shards])
    _replace_dir(dest, functools.partial(_publish_run, results=results, shards=shards, problems=found.problems))
    fingerprint = _fingerprint(dest)
    if checked is not None and key is not None and fingerprint is not None and len(found.problems) == before:
        checked.publish(key, fingerprint)  # a report with refused logs is redone, so that they are listed again


@functools.cache
def _report_code_version() -> str:
    sha = hashlib.sha256()
    here = Path(__file__).resolve().parent
    for path in sorted(p for p in here.rglob("*") if p.is_file() and p.suffix != ".pyc"):
        sha.update(path.relative_to(here).as_posix().encode() + b"\0" + path.read_bytes())
    return sha.hexdigest()


def _inputs_key(dest: Path, shards: list[_Shard]) -> str | None:
    """What a run report is made from: the shards' results.json bytes, their logs' identity, the report code."""
    sha = hashlib.sha256(f"{dest.resolve()}\0{_report_code_version()}".encode())
    for shard in shards:
        folder, digest = shard.folder, shard.digest
        if digest is None:
            return None
        sha.update(f"\0{folder.resolve()}\0{digest}".encode())
        for log in dict.fromkeys(c["log"] for c in shard.data.get("cells", []) if c.get("log")):
            try:
                info = os.lstat(folder / log)
                sha.update(f"\0{log}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_mode}".encode())
            except OSError:
                sha.update(f"\0{log}:-".encode())
    return sha.hexdigest()


def _fingerprint(folder: Path) -> str | None:
    """The names and contents of every file under ``folder``; None when it holds anything but plain files and
    folders (or is not there)."""
    if folder.is_symlink() or not folder.is_dir():
        return None
    sha = hashlib.sha256()
    for root, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted([*files, *(d for d in dirs if os.path.islink(os.path.join(root, d)))]):
            path = os.path.join(root, name)
            info = os.lstat(path)
            if not stat.S_ISREG(info.st_mode):
                return None
            with open(path, "rb") as handle:
                sha.update(f"{os.path.relpath(path, folder)}\0{info.st_size}\0".encode() + handle.read())
    return sha.hexdigest()


def _carry_report(source: Path, dest: Path, problems: list[str]) -> None:
    """A run report from another site: its results.json is checked like any run's and the report re-rendered
    (a published page is never copied: what it says comes from checked data only)."""
    try:
        results = read_results(source)
    except ReportInputError as error:
        problems.append(f"{error}; its report is not carried into the site")
        return
    _replace_dir(dest, functools.partial(_publish_run, results=results, shards=[_Shard(source, None, parsed=results)],
                                         problems=problems))


def _publish_run(dest: Path, *, results: dict[str, Any], shards: list[_Shard], problems: list[str]) -> None:
    """The run's report in the site: copies of the logs its cells name, and results.json, junit.xml and
    index.html written from the checked (and merged) results, never copied from the run folder."""
    for shard in shards:
        problems += copy_logs(shard.folder, shard.data, dest)
    write_json_atomic(dest / "results.json", results)
    write_run_reports(dest, results)


def _replace_dir(dest: Path, fill: Callable[[Path], None]) -> None:
    """Fill a temp folder beside dest, then swap it in: a half-copied report is never published."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        fill(tmp)
        os.chmod(tmp, 0o755)
        if dest.exists() or dest.is_symlink():
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
