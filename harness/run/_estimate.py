"""How long a run will take, said before it starts: from the earlier runs in its output folder, else a count.

Each planned cell takes the duration of its last real run (one that ran the repro: not skipped, not
interrupted, not an infra-error) in the output folder's earlier runs; an environment to build takes its last
build time there. Cells and environments never timed count at the median of those that were. Earlier
results are read as untrusted input: only finite, non-negative numbers under a day are used.
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_RUNS_READ = 30  # the newest runs of the folder: enough for every cell of a sharded suite
MAX_RESULTS_BYTES = 64 * 1024 * 1024
NOT_TIMED = ("skipped", "interrupted", "infra-error")


@dataclass(frozen=True)
class History:
    cells: dict[tuple[str, str, str], float]  # (case, lane, variant) -> seconds
    environments: dict[str, float]  # environment id -> build seconds


@dataclass(frozen=True)
class Estimate:
    cells: int
    cells_timed: int
    environments: int  # to build
    environments_timed: int
    seconds: float | None  # wall clock with the run's jobs; None without history

    def describe(self, jobs: int, output: Path) -> str:
        builds = f", {self.environments} environment(s) to build first" if self.environments else ""
        if self.seconds is None:
            return (f"estimate: {self.cells} cell(s){builds}; no earlier run in {output} times them "
                    "(the next run there will give an estimate)")
        timed = f"{self.cells_timed} of {self.cells} cell(s)"
        if self.environments:
            timed += f" and {self.environments_timed} of {self.environments} build(s)"
        return (f"estimate: about {_minutes(self.seconds)} with {jobs} job(s) for {self.cells} cell(s){builds} "
                f"({timed} timed by earlier runs in {output}, the rest at their median)")


def read_history(output: Path, wanted: set[tuple[str, str, str]]) -> History:
    cells: dict[tuple[str, str, str], float] = {}
    environments: dict[str, float] = {}
    for results in _newest_results(output):
        for cell in as_records(results.get("cells")):
            key = (str(cell.get("case")), str(cell.get("lane")), str(cell.get("variant")))
            seconds = as_seconds(cell.get("duration_s"))
            if key in wanted and key not in cells and seconds is not None and cell.get("status") not in NOT_TIMED:
                cells[key] = seconds
        envs = results.get("environments")
        for env in envs.values() if isinstance(envs, dict) else ():
            seconds = as_seconds(env.get("build_s")) if isinstance(env, dict) else None
            if seconds and not env.get("reused") and str(env.get("id")) not in environments:
                environments[str(env.get("id"))] = seconds
        if wanted <= cells.keys():
            break
    return History(cells, environments)


def estimate(cells: Sequence[tuple[str, str, str]], builds: Sequence[str], history: History, jobs: int) -> Estimate:
    cell_times = [history.cells[c] for c in cells if c in history.cells]
    build_times = [history.environments[e] for e in builds if e in history.environments]
    if not cell_times:
        return Estimate(len(cells), 0, len(builds), len(build_times), None)
    total = _with_median(cell_times, len(cells)) + (_with_median(build_times, len(builds)) if build_times else 0.0)
    return Estimate(len(cells), len(cell_times), len(builds), len(build_times), total / max(1, min(jobs, len(cells))))


def _with_median(known: list[float], count: int) -> float:
    return sum(known) + (count - len(known)) * statistics.median(known)


def _newest_results(output: Path) -> Iterable[dict[str, Any]]:
    try:
        runs = sorted((p for p in output.iterdir() if p.is_dir() and not p.is_symlink()), reverse=True)
    except OSError:
        return
    for run in runs[:_RUNS_READ]:
        data = read_results_file(run / "results.json")
        if data is not None:
            yield data


def read_results_file(path: Path) -> dict[str, Any] | None:
    """A stored results.json as a dict; None when it is missing, a link, too large or not a JSON object."""
    try:
        if path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_RESULTS_BYTES:
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def as_records(value: object) -> list[dict[str, Any]]:
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def as_seconds(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and 0 <= value < 86400 else None


def _minutes(seconds: float) -> str:
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{seconds / 60:.0f} min"
