"""Runs whose harness died (SIGKILL, a lost machine): found by the next run into the same output folder and
finalised as ``interrupted``, with the cells they finished (``cells.jsonl``) and their verdicts."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path
from typing import Any

from harness.run._judge import lane_verdicts
from harness.run._results import CELLS_LOG, RunFolder, boot_id, start_ticks, utc_now


def harness_alive(process: Any) -> bool | None:
    """Is the harness process described by ``process`` still running? None: not on this host, can't tell."""
    if not isinstance(process, dict) or process.get("hostname") != socket.gethostname():
        return None
    pid = process.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return None
    if process.get("boot_id") and process.get("boot_id") != boot_id():
        return False  # the host rebooted since
    ticks = start_ticks(pid)
    if ticks is None:
        return False
    return process.get("start_ticks") in (None, ticks)


def recover_dead_run(run_dir: Path) -> bool:
    """Finalise a run whose harness died on this host: status ``running`` but its process gone.

    The run becomes ``interrupted`` (exit code 130) with the cells it finished (``cells.jsonl``) and
    their verdicts, written back to its results.json. Returns True when it finalised the run; False for
    any other run (finished, still running, from another host, or unreadable).
    """
    try:
        folder = RunFolder(run_dir)
    except OSError:
        return False
    try:
        data = dead_run_results(folder, _read_json(folder, "results.json"))
        if data is None:
            return False
        folder.write_json("results.json", data)
        return True
    except RecursionError:  # nested just shallow enough to parse, too deep to write back: not a run of ours
        return False
    finally:
        folder.close()


def recovered_results(run_dir: Path, data: Any, *, limit: int) -> dict[str, Any] | None:
    """What :func:`recover_dead_run` would write, without writing anything (for readers such as ``report``,
    which must never write into their inputs): ``data`` (the run's results.json, already read) finalised as
    interrupted with the cells of ``cells.jsonl`` (read only if at most ``limit`` bytes), or None when the run
    is not a dead one of this host."""
    try:
        folder = RunFolder(run_dir)
    except OSError:
        return None
    try:
        return dead_run_results(folder, data, limit=limit)
    finally:
        folder.close()


def dead_run_results(folder: RunFolder, data: Any, *, limit: int = 256 * 1024 * 1024) -> dict[str, Any] | None:
    run = data.get("run") if isinstance(data, dict) else None
    if not isinstance(run, dict) or run.get("status") != "running" or harness_alive(run.get("harness_process")) in (
            None, True):
        return None
    cells = _read_cells(folder, limit)
    cases = data.get("cases") if isinstance(data.get("cases"), dict) else {}
    run = {**run, "status": "interrupted", "exit_code": 130, "finished": run.get("finished") or utc_now(),
           "interrupted_reason": "the harness process died mid-run (killed, or the machine stopped); "
                                 "the cells it finished are kept"}
    return {**data, "run": run, "cells": cells, "verdicts": lane_verdicts(list(cases), cells)}


_CELL_KEYS = ("case", "lane", "variant", "judgement")


def looks_running(run_dir: Path) -> bool:
    """A cheap look at the head of a run's results.json (the run's status is written near the top); False for
    anything that is not a regular file reached without a symlink (a FIFO there must not block a later run)."""
    try:
        folder = RunFolder(run_dir)
    except OSError:
        return False
    try:
        return b'"status": "running"' in _read_regular(folder, "results.json", _MAX_READ, head=8192)
    except OSError:
        return False
    finally:
        folder.close()


def _read_json(folder: RunFolder, name: str) -> Any:
    try:
        return json.loads(_read_regular(folder, name, _MAX_READ))
    except (OSError, ValueError, RecursionError):  # RecursionError: "[[[[..." nested 100,000 deep
        return None


_MAX_READ = 256 * 1024 * 1024


def _read_regular(folder: RunFolder, name: str, limit: int, *, head: int | None = None) -> bytes:
    """The file (its first ``head`` bytes when given); OSError unless it is a regular file of at most ``limit``
    bytes. Opened non-blocking: a FIFO (or a device) must not hold the reader."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder._fd)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise OSError(f"{name} is not a regular file of a sane size")
        return handle.read(limit if head is None else head)


def _read_cells(folder: RunFolder, limit: int) -> list[dict[str, Any]]:
    try:
        text = _read_regular(folder, CELLS_LOG, limit).decode(errors="replace")
    except OSError:
        return []
    cells = []
    for line in text.splitlines():
        try:
            cell = json.loads(line)
        except (ValueError, RecursionError):
            continue  # the line being written when the harness died
        if isinstance(cell, dict) and all(isinstance(cell.get(k), str) for k in _CELL_KEYS):
            cells.append(cell)
    return cells
