"""The conformance summary: ``summary.json`` (versioned, written atomically) and the table on the terminal."""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

from harness._io import write_atomic
from harness.conformance._compare import UNEXPLAINED, Comparison, median_ratio
from harness.conformance._sources import TORCH
from harness.conformance._suites import TRIAGE_CLASSES

VERSION = 1
CPU_TIME_NOTE = ("process CPU time (user + system) of each pytest pass and every process it waited for, "
                 "from getrusage(RUSAGE_CHILDREN); OMP_NUM_THREADS=MKL_NUM_THREADS=1 in both passes")


def summary(comparisons: Sequence[Comparison], failed: dict[str, str], subset: bool) -> dict[str, object]:
    ratio = median_ratio(list(comparisons))
    return {
        "version": VERSION,
        "generated": datetime.now(UTC).isoformat(timespec="seconds"),
        "host": {"python": platform.python_version(), "machine": platform.machine(), "cores": os.cpu_count()},
        "torch": TORCH, "selection": "subset" if subset else "full", "cpu_time": CPU_TIME_NOTE,
        "median_cpu_time_ratio": None if ratio is None else round(ratio, 3),
        "libraries": [c.serialize() for c in comparisons],
        "not_run": failed,  # library -> why it could not run (download, install)
    }


def write_json(path: Path, data: dict[str, object]) -> None:
    """Atomically, mode 0644 (harness._io.write_atomic: mkstemp's 0600 hid the report from a web server)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, json.dumps(data, indent=1) + "\n")


def _cell(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def table(comparisons: Sequence[Comparison], failed: dict[str, str]) -> list[str]:
    head = ["library", "tests", "cpu pass", "sim pass", "newly run", *TRIAGE_CLASSES, UNEXPLAINED,
            "false dev err", "cpu s", "sim s", "ratio", "same tests"]
    rows = [head]
    for c in comparisons:
        cpu_pass = sum(1 for r in c.cpu.results.values() if r.outcome == "passed")
        sim_pass = sum(1 for r in c.sim.results.values() if r.outcome == "passed")
        rows.append([c.library.name, str(len(c.cpu.collected)), str(cpu_pass), str(sim_pass), str(c.newly_run),
                     *(str(c.count(k)) for k in (*TRIAGE_CLASSES, UNEXPLAINED)), str(c.false_device_errors),
                     _cell(c.cpu.cpu_seconds, ".1f"), _cell(c.sim.cpu_seconds, ".1f"),
                     _ratio(c.ratio), _ratio(c.same_tests_ratio)])
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    lines = ["  ".join(cell.rjust(w) if i else cell.ljust(w) for i, (cell, w) in enumerate(zip(r, widths, strict=True)))
             for r in rows]
    ratio = median_ratio(list(comparisons))
    lines.append(f"median CPU-time ratio (sim / cpu): {_ratio(ratio)} over {len(comparisons)} libraries"
                 " ('same tests': CPU time of the tests both passes passed)")
    lines += [f"{name}: not run: {why}" for name, why in failed.items()]
    return lines


def details(comparisons: Sequence[Comparison], emit: Callable[[str], None]) -> None:
    """The unexplained tests (with the simulated pass's message) and stale triage entries."""
    for c in comparisons:
        for row in c.rows:
            if row.kind == UNEXPLAINED:
                emit(f"NEW {c.library.name} {row.test}: cpu {row.cpu}, sim {row.sim}: {row.message}")
        for test in c.stale:
            emit(f"stale triage entry ({c.library.name}): {test} passes under the simulation now; remove it")
        for note in c.sim.notes + c.cpu.notes:
            emit(f"{c.library.name}: {note}")


def markdown(comparisons: Sequence[Comparison], failed: dict[str, str]) -> str:
    """summary.md: the table and, per library, each triage class with its tests (docs/conformance.md quotes it)."""
    lines = table(comparisons, failed)
    out = ["```", *lines, "```", ""]
    for c in comparisons:
        out.append(f"### {c.library.name} ({c.library.sdist}=={c.library.version})")
        for kind in (*TRIAGE_CLASSES, UNEXPLAINED):
            rows = [row for row in c.rows if row.kind == kind]
            if rows:
                out.append(f"- {kind}: {len(rows)}")
                out += [f"  - `{row.test}` (cpu {row.cpu}, sim {row.sim}): {row.reason or row.message}" for row in rows]
        out.append("")
    return "\n".join(out)
