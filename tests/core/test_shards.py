"""``shards``: the nightly's shard count from measured cell durations (docs/reports.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness._cli import main
from harness.cases._load import load_cases
from harness.run._lanes import LANE_TABLE
from harness.run._plan import Cell, shard_cases
from harness.run._shards import MAX_SHARDS, Measured, plan_shards, read_measured

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"
LANES = ["cpu", "cuda-sim"]


@pytest.fixture(scope="module")
def cases():
    loaded = load_cases([FIXTURES])
    assert not loaded.errors and len(loaded.cases) == 5
    return list(loaded.cases)


def _durations(cases, seconds: float) -> dict[tuple[str, str, str], float]:
    return {(c.id, lane, v): seconds for c in cases for lane in LANES for v in c.variants}


def _measured(cells: dict, builds: dict | None = None) -> Measured:
    return Measured(cells, builds or {}, 1)


def _write_run(folder: Path, started: str, cells: list[dict]) -> None:
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({"version": 1, "run": {"id": folder.name, "started": started},
                                                     "cells": cells}))


def _cell(case: str, lane: str, variant: str, seconds: object, status: str = "passed") -> dict:
    return {"case": case, "lane": lane, "variant": variant, "duration_s": seconds, "status": status}


def test_the_fewest_shards_whose_slowest_fits_the_target(cases):
    # 5 cases x 2 lanes x 2 variants at 150 s: 600 s a case, 3000 s in all with one job.
    plan = plan_shards(cases, LANES, _measured(_durations(cases, 150)), target_s=20 * 60, jobs=1, overhead_s=0, default=9)
    assert plan.shards == 3 and plan.fits  # 2 cases, 2 cases, 1 case: 1200 s, 1200 s, 600 s
    assert sorted(plan.seconds) == [600, 1200, 1200]
    for k, seconds in enumerate(plan.seconds, start=1):  # the shards --shard K/3 really runs
        assert seconds == 600 * len(shard_cases(cases, k, 3))
    assert plan.matrix() == [1, 2, 3]
    two_jobs = plan_shards(cases, LANES, _measured(_durations(cases, 150)), target_s=20 * 60, jobs=2, overhead_s=0, default=9)
    assert two_jobs.shards == 2  # 3 cases at 1800 s / 2 jobs = 900 s
    overhead = plan_shards(cases, LANES, _measured(_durations(cases, 150)), target_s=20 * 60, jobs=2, overhead_s=400, default=9)
    assert overhead.shards == 3  # 900 s + 400 s no longer fits; 600 s + 400 s does
    assert "3 shard(s): the slowest about 16.7 min, fits the target of 20 min (20 of 20 cell(s)" in \
        overhead.describe(20 * 60)


def test_unmeasured_cells_count_at_the_median_and_nothing_measured_gives_the_default(cases):
    some = {key: 300.0 for key in list(_durations(cases, 0))[:4]}  # one case measured at 4 x 300 s
    plan = plan_shards(cases, LANES, _measured(some), target_s=30 * 60, jobs=1, overhead_s=0, default=9)
    assert plan.cells_timed == 4 and plan.cells == 20
    assert plan.shards == 5 and max(plan.seconds) == 1200  # every case at 1200 s: two would be 2400 s
    empty = plan_shards(cases, LANES, _measured({}), target_s=30 * 60, jobs=1, overhead_s=0, default=4)
    assert (empty.shards, empty.cells_timed) == (4, 0)
    assert "no measured cell" in empty.describe(30 * 60)


def test_a_case_longer_than_the_target_is_said_not_to_fit(cases):
    slow = _durations(cases, 30)
    slow[(cases[0].id, "cpu", next(iter(cases[0].variants)))] = 4000
    plan = plan_shards(cases, LANES, _measured(slow), target_s=30 * 60, jobs=1, overhead_s=0, default=2)
    assert not plan.fits and plan.shards == min(MAX_SHARDS, len(cases))
    assert "does NOT fit" in plan.describe(30 * 60)


def test_cold_shards_also_build_their_environments(cases):
    # Every fixture variant pins only torch: one environment, which each cold shard builds for itself.
    cell = Cell(cases[0], next(iter(cases[0].variants.values())), LANE_TABLE["cpu"])
    builds = {f"venv-{cell.env_spec().key()}": 600.0, "venv-not-in-the-catalogue": 5000.0}
    warm = plan_shards(cases, LANES, _measured(_durations(cases, 150), builds), target_s=20 * 60, jobs=1,
                       overhead_s=0, default=9)
    cold = plan_shards(cases, LANES, _measured(_durations(cases, 150), builds), target_s=20 * 60, jobs=1,
                       overhead_s=0, default=9, cold=True)
    assert (warm.shards, cold.shards) == (3, 5)  # 2 cases + a build = 1800 s: only one case a shard fits
    assert cold.seconds == [1200.0] * 5


def test_cells_unsupported_on_their_lane_cost_nothing(fixture_cases):
    path = fixture_cases / "confirmed" / "case.yaml"
    path.write_text(path.read_text().replace("expect: {cpu: passes, cuda: passes, cuda-sim: passes}",
                                             'expect: {cpu: "unsupported: needs a GPU", cuda: passes, cuda-sim: passes}'))
    cases = list(load_cases([fixture_cases]).cases)
    plan = plan_shards(cases, LANES, _measured(_durations(cases, 150)), target_s=10**5, jobs=1, overhead_s=0,
                       default=9)
    assert plan.cells == 19 and plan.seconds == [19 * 150]  # the unsupported cell neither runs nor is measured


def test_durations_are_the_newest_measured_per_cell_from_nested_folders(tmp_path):
    artifacts = tmp_path / "artifacts"
    _write_run(artifacts / "results-cpu-1" / "old", "2026-11-20T02:00:00+00:00",
               [_cell("a", "cpu", "buggy", 100), _cell("b", "cpu", "buggy", 50)])
    _write_run(artifacts / "results-cpu-2" / "new", "2026-11-21T02:00:00+00:00",
               [_cell("a", "cpu", "buggy", 10), _cell("b", "cpu", "buggy", 5, status="skipped"),
                _cell("c", "cpu", "buggy", 5, status="infra-error"), _cell("d", "cuda", "buggy", 7),
                _cell("e", "cpu", "buggy", "7"), _cell("f", "cpu", "buggy", float("inf")),
                _cell("g", "cpu", "buggy", -1), _cell("h", "cuda-sim", "fix", 3)])
    (artifacts / "garbage").mkdir()
    (artifacts / "garbage" / "results.json").write_text("{not json")
    (artifacts / "list").mkdir()
    (artifacts / "list" / "results.json").write_text("[1, 2]")
    measured = read_measured([artifacts], LANES)
    assert measured.files == 2
    assert measured.cells == {("a", "cpu", "buggy"): 10, ("b", "cpu", "buggy"): 50, ("h", "cuda-sim", "fix"): 3}
    single = read_measured([artifacts / "results-cpu-1" / "old" / "results.json"], LANES)
    assert single.files == 1 and single.cells[("a", "cpu", "buggy")] == 100


def test_the_command_prints_the_count_and_writes_github_outputs(tmp_path, capsys):
    loaded = load_cases([FIXTURES]).cases
    _write_run(tmp_path / "runs" / "r1", "2026-11-21T02:00:00+00:00",
               [_cell(c.id, lane, v, 600) for c in loaded for lane in LANES for v in c.variants])
    out = tmp_path / "github-output"
    out.write_text("earlier=1\n")
    code = main(["shards", "--results", str(tmp_path / "runs"), "--cases-dir", str(FIXTURES), "--jobs", "2",
                 "--target-minutes", "30", "--overhead-minutes", "5", "--github-output", str(out)])
    assert code == 0
    # 2400 s a case over 2 jobs: one case (1200 s + 300 s) fits 30 min, two (2700 s) do not: 5 shards
    assert "shards=5" in capsys.readouterr().out
    assert out.read_text() == "earlier=1\ncount=5\nmatrix=[1, 2, 3, 4, 5]\n"
    assert main(["shards", "--results", str(tmp_path / "none"), "--cases-dir", str(FIXTURES), "--default", "3"]) == 0
    assert "shards=3" in capsys.readouterr().out
    with pytest.raises(SystemExit) as usage:
        main(["shards", "--cases-dir", str(FIXTURES), "--target-minutes", "0"])
    assert usage.value.code == 2  # out of range: a usage error
