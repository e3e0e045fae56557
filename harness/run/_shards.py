"""``shards``: how many shards a sharded run needs so that each fits a target time, from measured durations.

Reads stored results.json files (a reports folder, a folder of downloaded CI artifacts: searched to a small
depth), takes each cell's newest measured duration (cells the run estimate would time: not skipped,
interrupted or infra-error), and places the catalogue's cells on shards exactly as ``--shard K/N`` does
(``shard_cases``). A shard's time is its cells' seconds over the run's parallel jobs, plus a fixed overhead
(checkout, installs, cache restore). Cells never measured count at the median of those that were. The answer
is the fewest shards whose slowest shard fits the target. Results files are untrusted input: anything
unreadable is skipped, as for the run estimate.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.cases._load import Case
from harness.run._estimate import NOT_TIMED, as_records, as_seconds, read_results_file
from harness.run._plan import shard_cases

MAX_SHARDS = 32
_MAX_FILES = 500  # results.json files read: ample for a month of nightly artifacts
_MAX_DEPTH = 4  # DIR/results.json, DIR/<run>/results.json, DIR/<artifact>/<run>/results.json, one more

Cell = tuple[str, str, str]  # (case, lane, variant)


@dataclass(frozen=True)
class ShardPlan:
    shards: int
    seconds: list[float]  # per shard, estimated wall clock (overhead included)
    cells: int
    cells_timed: int
    fits: bool  # False: even MAX_SHARDS (or one shard per case) leaves a shard over the target
    files: int  # results.json files read

    def matrix(self) -> list[int]:
        return list(range(1, self.shards + 1))

    def describe(self, target_s: float) -> str:
        if self.cells_timed == 0:
            return (f"{self.shards} shard(s): no measured cell in {self.files} results.json file(s); "
                    "the default count is used")
        slowest = max(self.seconds)
        verdict = "fits" if self.fits else "does NOT fit (a shard cannot be split below one case)"
        return (f"{self.shards} shard(s): the slowest about {slowest / 60:.1f} min, {verdict} the target of "
                f"{target_s / 60:.0f} min ({self.cells_timed} of {self.cells} cell(s) measured in "
                f"{self.files} results.json file(s), the rest at their median)")


def read_durations(paths: Sequence[Path], lanes: Sequence[str]) -> tuple[dict[Cell, float], int]:
    """Each wanted cell's newest measured duration (by its run's start time) and the files read."""
    newest: dict[Cell, tuple[str, float]] = {}
    files = 0
    for results in _results_files(paths):
        files += 1
        run = results.get("run")
        started = str(run.get("started") or "") if isinstance(run, dict) else ""
        for cell in as_records(results.get("cells")):
            key = (str(cell.get("case")), str(cell.get("lane")), str(cell.get("variant")))
            seconds = as_seconds(cell.get("duration_s"))
            if key[1] not in lanes or seconds is None or cell.get("status") in NOT_TIMED:
                continue
            if key not in newest or started > newest[key][0]:
                newest[key] = (started, seconds)
    return {key: seconds for key, (_, seconds) in newest.items()}, files


def plan_shards(cases: Sequence[Case], lanes: Sequence[str], durations: dict[Cell, float], *, target_s: float,
                jobs: int, overhead_s: float, default: int, files: int = 0) -> ShardPlan:
    cells = [(case.id, lane, variant) for case in cases for lane in lanes for variant in case.variants]
    timed = [durations[c] for c in cells if c in durations]
    if not timed:
        return ShardPlan(default, [], len(cells), 0, True, files)
    median = statistics.median(timed)
    per_case = {case.id: sum(durations.get((case.id, lane, v), median) for lane in lanes for v in case.variants)
                for case in cases}
    most = max(1, min(MAX_SHARDS, len(cases)))
    for total in range(1, most + 1):
        seconds = [overhead_s + sum(per_case[c.id] for c in shard_cases(cases, k, total)) / max(1, jobs)
                   for k in range(1, total + 1)]
        if max(seconds) <= target_s or total == most:
            return ShardPlan(total, seconds, len(cells), len(timed), max(seconds) <= target_s, files)
    raise AssertionError("unreachable: the loop returns at its last count")


def _results_files(paths: Sequence[Path]) -> Iterator[dict[str, Any]]:
    found = 0
    for path in paths:
        for file in _walk(path, _MAX_DEPTH):
            if found >= _MAX_FILES:
                return
            data = read_results_file(file)
            if data is not None:
                found += 1
                yield data


def _walk(folder: Path, depth: int) -> Iterator[Path]:
    if folder.is_symlink():
        return
    if folder.is_file():
        yield folder
        return
    yield folder / "results.json"  # (read_results_file skips it when absent)
    if depth <= 0:
        return
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return
    for child in children:
        yield from _walk(child, depth - 1)
