"""The site's per-run reports: which runs keep one, publishing each (unless unchanged) or carrying it over from a
previous site, and swapping a finished report folder into place."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.report._checked import current
from harness.report._history import History
from harness.report._inputs import read_results
from harness.report._io import ReportInputError, copy_logs, write_json_atomic
from harness.report._merge import merge_shards
from harness.report._run import write_run_reports
from harness.report._safe import inside


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
