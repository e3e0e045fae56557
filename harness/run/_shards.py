"""``shards``: how many shards a sharded run needs so that each fits a target time, from measured durations.

Reads stored results.json files (a reports folder, a folder of downloaded CI artifacts: searched to a small
depth), takes each cell's newest measured duration (cells the run estimate would time: not skipped,
interrupted or infra-error), and places the catalogue's cells on shards exactly as ``--shard K/N`` does
(``shard_cases``). A shard's time is its cells' seconds over the run's parallel jobs, plus a fixed overhead
(checkout, installs, cache restore); with ``--cold``, also the builds of its environments (their newest measured
build, by environment id: the venv backend's content key). Cells (and builds) never measured count at the median
of those that were; cells ``unsupported`` on their lane never run and count nothing. The answer
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
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells, shard_cases

MAX_SHARDS = 32
_MAX_FILES = 500  # results.json files read: ample for a month of nightly artifacts
_MAX_DEPTH = 4  # DIR/results.json, DIR/<run>/results.json, DIR/<artifact>/<run>/results.json, one more

CellKey = tuple[str, str, str]  # (case, lane, variant)


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


@dataclass(frozen=True)
class Measured:
    cells: dict[CellKey, float]  # newest measured duration of each cell
    builds: dict[str, float]  # environment id -> seconds its newest real build took (not a reuse)
    files: int  # results.json files read


def read_measured(paths: Sequence[Path], lanes: Sequence[str]) -> Measured:
    """Each wanted cell's newest measured duration and each environment's newest build, by run start time."""
    cells: dict[CellKey, tuple[str, float]] = {}
    builds: dict[str, tuple[str, float]] = {}
    files = 0
    for results in _results_files(paths):
        files += 1
        run = results.get("run")
        started = str(run.get("started") or "") if isinstance(run, dict) else ""
        for cell in as_records(results.get("cells")):
            key = (str(cell.get("case")), str(cell.get("lane")), str(cell.get("variant")))
            seconds = as_seconds(cell.get("duration_s"))
            if key[1] in lanes and seconds is not None and cell.get("status") not in NOT_TIMED:
                _keep_newest(cells, key, started, seconds)
        envs = results.get("environments")
        for env in as_records(list(envs.values()) if isinstance(envs, dict) else None):
            seconds = as_seconds(env.get("build_s"))
            if seconds and not env.get("reused"):
                _keep_newest(builds, str(env.get("id")), started, seconds)
    return Measured({k: v for k, (_, v) in cells.items()}, {k: v for k, (_, v) in builds.items()}, files)


def _keep_newest(table: dict[Any, tuple[str, float]], key: Any, started: str, seconds: float) -> None:
    if key not in table or started > table[key][0]:
        table[key] = (started, seconds)


def plan_shards(cases: Sequence[Case], lanes: Sequence[str], measured: Measured, *, target_s: float, jobs: int,
                overhead_s: float, default: int, cold: bool = False) -> ShardPlan:
    """The fewest shards whose slowest fits ``target_s``; ``cold``: each shard also builds its environments."""
    cells = [c for c in plan_cells(cases, [LANE_TABLE[lane] for lane in lanes])
             if c.variant.expect[c.lane.name].kind != "unsupported"]  # (a cell that never runs costs nothing)
    keyed = [((cell.case.id, cell.lane.name, cell.variant.name), cell) for cell in cells]
    timed = [measured.cells[key] for key, _ in keyed if key in measured.cells]
    if not timed:
        return ShardPlan(default, [], len(cells), 0, True, measured.files)
    median = statistics.median(timed)
    per_case: dict[str, float] = {}
    envs: dict[str, set[str]] = {}
    for key, cell in keyed:
        per_case[key[0]] = per_case.get(key[0], 0.0) + measured.cells.get(key, median)
        envs.setdefault(key[0], set()).add(f"venv-{cell.env_spec().key()}")
    build_median = statistics.median(measured.builds.values()) if measured.builds else 0.0

    def shard_seconds(members: Sequence[Case]) -> float:
        work = sum(per_case.get(c.id, 0.0) for c in members)
        if cold:
            needed = {env for c in members for env in envs.get(c.id, ())}
            work += sum(measured.builds.get(env, build_median) for env in needed)
        return overhead_s + work / max(1, jobs)

    most = max(1, min(MAX_SHARDS, len(cases)))
    for total in range(1, most + 1):
        seconds = [shard_seconds(shard_cases(cases, k, total)) for k in range(1, total + 1)]
        if max(seconds) <= target_s or total == most:
            return ShardPlan(total, seconds, len(cells), len(timed), max(seconds) <= target_s, measured.files)
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
