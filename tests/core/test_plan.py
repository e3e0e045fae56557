"""Selection and matrix expansion: case x lane x variant, shards, and clear errors for unknown names."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from harness._exceptions import SelectionError
from harness.cases._load import load_cases
from harness.run._plan import Selection, parse_shard, plan_cells, select_cases, select_lanes, shard_cases


@pytest.fixture
def cases(fixture_cases):
    return list(load_cases([fixture_cases]).cases)


def test_every_case_every_lane_every_variant(cases):
    cells = plan_cells(cases, select_lanes(Selection()))
    assert len(cells) == 5 * 3 * 2
    assert cells[0].key == "confirmed/cpu/buggy"
    assert len({c.key for c in cells}) == len(cells)


def test_selection_by_case_lane_variant(cases):
    chosen = select_cases(cases, Selection(cases=("stale-repro", "confirmed")))
    assert [c.id for c in chosen] == ["stale-repro", "confirmed"]
    lanes = select_lanes(Selection(lanes=("cuda-sim", "cpu")))
    cells = plan_cells(chosen, lanes, ("fixed",))
    assert [c.key for c in cells] == ["stale-repro/cuda-sim/fixed", "stale-repro/cpu/fixed",
                                      "confirmed/cuda-sim/fixed", "confirmed/cpu/fixed"]


@pytest.mark.parametrize(
    ("selection", "message"),
    [
        (Selection(cases=("confirmd",)), "unknown case 'confirmd' (did you mean 'confirmed'?)"),
        (Selection(variants=("fixd",)), "unknown variant 'fixd' (did you mean 'fixed'?)"),
    ],
)
def test_unknown_names_are_errors_with_suggestions(cases, selection, message):
    with pytest.raises(SelectionError, match=message.replace("(", r"\(").replace(")", r"\)").replace("?", r"\?")):
        select_cases(cases, selection)


def test_unknown_lane():
    with pytest.raises(SelectionError, match="unknown lane 'gpu'"):
        select_lanes(Selection(lanes=("gpu",)))


def test_parse_shard():
    assert parse_shard("2/3") == (2, 3)
    for bad in ("0/3", "4/3", "x", "1-2"):
        with pytest.raises(SelectionError):
            parse_shard(bad)


def test_retired_cases_run_only_when_named(cases):
    retired = cases[0].__class__(**{**cases[0].__dict__, "status": "retired", "retired_reason": "gone"})
    pool = [retired, *cases[1:]]
    assert retired not in select_cases(pool, Selection())
    assert select_cases(pool, Selection(cases=(retired.id,))) == [retired]


@given(total=st.integers(min_value=1, max_value=6))
def test_shards_partition_the_cases_deterministically(total):
    from tests.conftest import FIXTURE_CASES

    cases = list(load_cases([FIXTURE_CASES]).cases)
    shards = [shard_cases(cases, k, total) for k in range(1, total + 1)]
    assert sorted(c.id for shard in shards for c in shard) == sorted(c.id for c in cases)
    assert shards == [shard_cases(cases, k, total) for k in range(1, total + 1)]
    sizes = [sum(len(c.variants) for c in shard) for shard in shards]
    assert max(sizes) - min(sizes) <= max(len(c.variants) for c in cases)
