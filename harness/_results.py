"""Results of a run: the records, the run folder, and atomic writes of ``results.json``.

Every report (JSON, JUnit, HTML, the terminal summary) renders from :meth:`RunRecord.serialize`.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness._exceptions import ReportWriteError

RESULTS_VERSION = 1


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


@dataclass
class CellRecord:
    case: str
    variant: str
    role: str
    lane: str
    expected: str
    environment: str | None = None
    status: str = "skipped"
    judgement: str = "skipped"
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

    def serialize(self) -> dict[str, Any]:
        return asdict(self)


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
    verdicts: list[dict[str, Any]] = field(default_factory=list)
    load_errors: list[str] = field(default_factory=list)

    def serialize(self) -> dict[str, Any]:
        return {
            "version": RESULTS_VERSION,
            "run": {"id": self.id, "started": self.started, "finished": self.finished, "status": self.status,
                    "exit_code": self.exit_code, "harness_version": self.harness_version, "host": self.host,
                    "selection": self.selection, "load_errors": self.load_errors},
            "cases": self.cases,
            "environments": self.environments,
            "cells": [cell.serialize() for cell in self.cells],
            "verdicts": self.verdicts,
        }


def new_run_dir(output: Path) -> tuple[str, Path]:
    """Create a fresh run folder; the id is time-ordered and never collides (exclusive mkdir).

    ``REPRO_MATRIX_RUN_ID`` gives every shard of one CI run the same id, so the site merges them; the
    folder then gets a numeric suffix if that id is already taken in ``output``.
    """
    output = output.resolve()  # cells run in their own folders: every path handed to them is absolute
    output.mkdir(parents=True, exist_ok=True)
    shared = os.environ.get("REPRO_MATRIX_RUN_ID", "").strip()
    if shared:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,100}", shared):
            raise ReportWriteError(f"REPRO_MATRIX_RUN_ID={shared!r}: use letters, digits, '.', '_' and '-' only")
        for n in range(1000):
            folder = output / (shared if n == 0 else f"{shared}.{n}")
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            return shared, folder
    while True:
        run_id = f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{secrets.token_hex(3)}"
        folder = output / run_id
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return run_id, folder


def write_json_atomic(path: Path, data: Any) -> None:
    """Write to a temp file in the same folder, fsync, then rename: readers see old or new, never half."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1, sort_keys=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise ReportWriteError(f"could not write {path}: {error.strerror or error}; "
                               "the previous version of the file is intact") from error
