"""Results of a run: the records, the run folder, and atomic writes of ``results.json``.

Every report (JSON, JUnit, HTML, the terminal summary) renders from :meth:`RunRecord.serialize`.

Only the harness writes a run folder, through a descriptor opened when it created the folder, and
never through a symlink or into a folder someone else planted (see :class:`RunFolder`). Each cell's
record is appended to ``cells.jsonl`` as it finishes and results.json names the harness process, so a
run whose harness died (SIGKILL, a power cut) is found by :func:`recover_dead_run` and finalised as
``interrupted`` with the cells it finished.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import shutil
import socket
import stat
import threading
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypedDict, cast

from harness._exceptions import ReportWriteError, UsageError
from harness._io import write_atomic_at
from harness._vocabulary import RUN_ID, CellStatus, Verdict

if TYPE_CHECKING:
    from harness.run._judge import VerdictRecord

RESULTS_VERSION = 1


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class CellDict(TypedDict):
    """One cell as results.json stores it (harness/results.schema.json "cells"): :meth:`CellRecord.serialize`."""

    case: str
    variant: str
    role: str
    lane: str
    expected: str
    environment: str | None
    status: CellStatus
    judgement: str
    reason: str
    started: str | None
    duration_s: float
    exit_code: int | None
    signal: str | None
    exception: dict[str, Any] | None
    signature_matched: bool
    log: str | None
    shims: list[str]
    patches: list[str]
    imported: dict[str, str]
    image: dict[str, str] | None
    torch: dict[str, Any] | None


class RunDict(TypedDict):
    id: str
    started: str
    finished: str | None
    status: str
    exit_code: int | None
    harness_version: str
    host: dict[str, Any]
    selection: dict[str, Any]
    load_errors: list[str]
    harness_process: dict[str, Any]


class ResultsDict(TypedDict):
    """A run's results.json (harness/results.schema.json): :meth:`RunRecord.serialize`."""

    version: int
    run: RunDict
    cases: dict[str, Any]
    environments: dict[str, Any]
    cells: list[CellDict]
    verdicts: list[VerdictRecord]


@dataclass
class CellRecord:
    case: str
    variant: str
    role: str
    lane: str
    expected: str
    environment: str | None = None
    status: CellStatus = "skipped"
    judgement: Verdict = Verdict.SKIPPED
    reason: str = ""
    started: str | None = None
    duration_s: float = 0.0
    exit_code: int | None = None
    signal: str | None = None
    exception: dict[str, Any] | None = None
    signature_matched: bool = False
    log: str | None = None
    shims: list[str] = field(default_factory=list)
    patches: list[str] = field(default_factory=list)
    imported: dict[str, str] = field(default_factory=dict)
    image: dict[str, str] | None = None
    torch: dict[str, Any] | None = None  # ran with a host torch (--python): which, and what the variant pins

    def __post_init__(self) -> None:
        self.judgement = Verdict(self.judgement)  # a plain word given (a test, an old record) becomes the enum

    def serialize(self) -> CellDict:
        data = asdict(self)
        data["judgement"] = self.judgement.value
        return cast(CellDict, data)


@dataclass
class RunRecord:
    id: str
    started: str
    host: dict[str, Any]
    selection: dict[str, Any]
    harness_version: str
    finished: str | None = None
    status: str = "running"
    exit_code: int | None = None
    cases: dict[str, Any] = field(default_factory=dict)
    environments: dict[str, Any] = field(default_factory=dict)
    cells: list[CellRecord] = field(default_factory=list)
    verdicts: list[VerdictRecord] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)
    harness_process: dict[str, Any] = field(default_factory=lambda: harness_process())

    def serialize(self) -> ResultsDict:
        return {
            "version": RESULTS_VERSION,
            "run": {"id": self.id, "started": self.started, "finished": self.finished, "status": self.status,
                    "exit_code": self.exit_code, "harness_version": self.harness_version, "host": self.host,
                    "selection": self.selection, "load_errors": self.load_errors,
                    "harness_process": self.harness_process},
            "cases": self.cases,
            "environments": self.environments,
            "cells": bounded_cells([cell.serialize() for cell in self.cells]),
            "verdicts": self.verdicts,
        }


# What one case's cells may add to results.json (messages, tracebacks, imported versions): a case with many
# variants whose repros raise long messages once made a 35 MB file that `report` refused, losing every other
# case's verdicts with it. Over its share, a case's cells keep short texts; the logs keep everything.
CASE_BYTES = 256 * 1024
RUN_BYTES = 16 * 2**20  # and the run as a whole, well under the report's 32 MB bound
_TRIMMED_CHARS, _TRIMMED_FRAMES, _TRIMMED_IMPORTS = 500, 3, 20


def bounded_cells(cells: list[CellDict]) -> list[CellDict]:
    """``cells``, with the cells of each case over :data:`CASE_BYTES` (and of every case when the run is over
    :data:`RUN_BYTES`) trimmed to short texts, said in their reason."""
    sizes = [len(json.dumps(cell)) for cell in cells]
    per_case: dict[str, int] = {}
    for cell, size in zip(cells, sizes, strict=True):
        per_case[cell["case"]] = per_case.get(cell["case"], 0) + size
    everything = sum(sizes) > RUN_BYTES
    return [_trimmed(cell, per_case[cell["case"]]) if everything or per_case[cell["case"]] > CASE_BYTES else cell
            for cell in cells]


def _trimmed(cell: CellDict, case_bytes: int) -> CellDict:
    short = dict(cell)
    exception = cell.get("exception")
    if exception:
        short["exception"] = {**exception, "message": str(exception.get("message", ""))[:_TRIMMED_CHARS],
                              "traceback": list(exception.get("traceback") or [])[-_TRIMMED_FRAMES:]}
    imported = cell.get("imported") or {}
    short["imported"] = dict(sorted(imported.items(), key=lambda kv: kv[0] != "torch")[:_TRIMMED_IMPORTS])
    note = (f" [trimmed in results.json: this case's cells came to {case_bytes >> 10} KiB, over its share of "
            f"{CASE_BYTES >> 10} KiB; the cell's log has everything]")
    short["reason"] = str(cell.get("reason", ""))[:_TRIMMED_CHARS] + note
    return cast(CellDict, short)


def new_run_dir(output: Path) -> tuple[str, Path]:
    """Create a fresh run folder; the id is time-ordered and never collides (exclusive mkdir).

    ``REPRO_MATRIX_RUN_ID`` gives every shard of one CI run the same id, so the site merges them; the
    folder then gets a numeric suffix if that id is already taken in ``output``.
    """
    shared = os.environ.get("REPRO_MATRIX_RUN_ID", "").strip()
    if shared and not RUN_ID.fullmatch(shared):  # a bad setting: exit 2, not 4
        raise UsageError(f"REPRO_MATRIX_RUN_ID={shared[:120]!r}: use at most 101 letters, digits, '.', '_' and '-', "
                         "starting with a letter or digit (e.g. gh-${{ github.run_id }})")
    output = output.resolve()  # cells run in their own folders: every path handed to them is absolute
    if output.exists() and not output.is_dir():
        raise ReportWriteError(f"--output {output} is a file, not a folder: name a folder (it is created if missing)")
    try:
        output.mkdir(parents=True, exist_ok=True)
        return _new_run_folder(output)
    except OSError as error:
        raise ReportWriteError(f"cannot create a run folder in {output}: {error.strerror or error}; "
                               "give --output a folder you can write to") from error


def _new_run_folder(output: Path) -> tuple[str, Path]:
    shared = os.environ.get("REPRO_MATRIX_RUN_ID", "").strip()
    if shared:  # checked by new_run_dir
        for n in range(1000):
            folder = output / (shared if n == 0 else f"{shared}.{n}")
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return shared, folder
    while True:  # microseconds: runs started within one second still sort in the order they started
        run_id = f"{datetime.now(UTC):%Y%m%dT%H%M%S.%fZ}-{secrets.token_hex(3)}"
        folder = output / run_id
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return run_id, folder


def write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temp file in the same folder, fsync, then rename: readers see old or new, never half."""
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise ReportWriteError(f"could not write {path}: {error.strerror or error}") from error
    try:
        _write_json_at(folder, path.name, data, path)
    finally:
        os.close(folder)


def _write_json_at(folder: int, name: str, data: Any, shown: Path) -> None:
    try:
        text = json.dumps(data, indent=1, sort_keys=False) + "\n"
        write_atomic_at(folder, name, text, before_replace=_clear_for_file)
    except OSError as error:
        raise ReportWriteError(f"could not write {shown}: {error.strerror or error}; "
                               "the previous version of the file is intact") from error


def _clear_for_file(folder: int, name: str) -> None:
    """A folder where our file goes (a cell replaced results.json with one) is removed; a symlink is
    replaced by the rename itself, never followed."""
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.stat(name, dir_fd=folder, follow_symlinks=False).st_mode):
            shutil.rmtree(name, dir_fd=folder)


class RunFolder:
    """A run's folder, written through a descriptor opened at creation: files land in the folder the
    harness made even if its path is swapped, and no symlink planted inside is followed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        self._lock = threading.Lock()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)

    def write_json(self, name: str, data: Any) -> None:
        _write_json_at(self._fd, name, data, self.path / name)

    def append_cell(self, record: CellRecord) -> None:
        """One line per finished cell, fsync'd: what survives the harness dying mid-run."""
        line = (json.dumps(record.serialize()) + "\n").encode()
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
        with self._lock:
            try:
                try:
                    fd = os.open(CELLS_LOG, flags, 0o644, dir_fd=self._fd)
                except OSError as error:
                    if error.errno != errno.ELOOP:
                        raise
                    os.unlink(CELLS_LOG, dir_fd=self._fd)  # a planted symlink is replaced, never followed
                    fd = os.open(CELLS_LOG, flags, 0o644, dir_fd=self._fd)
                try:
                    os.write(fd, line)
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except OSError as error:  # the record is still in memory and in results.json at the end
                raise ReportWriteError(f"could not append to {self.path / CELLS_LOG}: {error.strerror}") from error

    def new_file(self, parts: Sequence[str], text: str) -> tuple[Path, int]:
        """Create ``parts`` (e.g. logs/case/lane/variant.log) afresh with ``text``; returns its path and an
        open descriptor for appending. Folders on the way are created or entered without following symlinks;
        whatever was at the file's place before is removed."""
        folder = os.dup(self._fd)
        try:
            for part in parts[:-1]:
                inner = _enter(folder, part)
                os.close(folder)
                folder = inner
            _clear_for_file(folder, parts[-1])
            with contextlib.suppress(FileNotFoundError):
                os.unlink(parts[-1], dir_fd=folder)
            fd = os.open(parts[-1], os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                         0o644, dir_fd=folder)
        finally:
            os.close(folder)
        os.write(fd, text.encode())
        return self.path.joinpath(*parts), fd


CELLS_LOG = "cells.jsonl"


def _enter(folder: int, name: str) -> int:
    """Open (creating it if needed) the real folder ``name``: anything else in its place is removed."""
    for _ in range(3):
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o755, dir_fd=folder)
        try:
            return os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
        except OSError as error:
            if error.errno not in (errno.ELOOP, errno.ENOTDIR):
                raise
            os.unlink(name, dir_fd=folder)  # a symlink or a file planted where our folder goes
    raise OSError(errno.EEXIST, f"{name} keeps being replaced")


# -- what identifies the harness process (run/_recover.py finalises runs whose harness died) ------------
def harness_process() -> dict[str, Any]:
    """What identifies this harness process later: pid, host, boot and the pid's start time (pid reuse)."""
    return {"pid": os.getpid(), "hostname": socket.gethostname(), "boot_id": boot_id(),
            "start_ticks": start_ticks(os.getpid())}


def boot_id() -> str | None:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return None


def start_ticks(pid: int) -> int | None:
    try:
        stat_line = Path(f"/proc/{pid}/stat").read_bytes()
        return int(stat_line[stat_line.rindex(b")") + 2:].split()[19])
    except (OSError, ValueError, IndexError):
        return None
