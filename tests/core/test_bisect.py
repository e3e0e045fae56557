"""Bisect over releases: unit rules, and a real run over releases of a tiny package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness._cases import load_case
from harness._exceptions import SelectionError
from harness._results import CellRecord
from harness.authoring._bisect import outcome_of, select_range, variant_with

REPO = Path(__file__).resolve().parents[2]
FIXTURE = REPO / "tests" / "fixtures" / "bisect" / "six-regression"


def test_variant_with_replaces_only_that_package():
    variant = load_case(FIXTURE).variants["buggy"]
    changed = variant_with(variant, "six", "1.16.0")
    assert changed.requires == ("six==1.16.0", "torch==2.13.0")
    assert changed.name == "six==1.16.0" and changed.expect == variant.expect


def test_select_range_orders_and_filters():
    versions = ["0.14.0", "0.14.1rc1", "0.14.1", "0.14.2", "0.15.0"]
    assert select_range(versions, "0.14.1", "0.14.2") == ["0.14.1", "0.14.2"]
    assert select_range(versions, None, "0.14.1", pre=True) == ["0.14.0", "0.14.1rc1", "0.14.1"]
    with pytest.raises(SelectionError):
        select_range(versions, "1.0", None)


@pytest.mark.parametrize(("status", "matched", "outcome"), [
    ("raised", True, "reproduces"), ("passed", False, "passes"), ("raised", False, "fails-differently"),
    ("timeout", False, "infra-error"), ("infra-error", False, "infra-error"),
])
def test_outcome_of(status, matched, outcome):
    record = CellRecord(case="c", variant="v", role="buggy", lane="cpu", expected="reproduces", status=status,
                        signature_matched=matched)
    assert outcome_of(record) == outcome


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["linear", "binary"])
def test_real_bisect_finds_the_transitions(tmp_path, mode):
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "bisect", "--cases-dir", str(FIXTURE.parent), "--case", "six-regression",
         "--package", "six", "--versions", "1.12.0,1.13.0,1.14.0,1.15.0,1.16.0,1.17.0", "--from", "1.13.0",
         "--lane", "cpu", "--mode", mode, "--output", str(tmp_path)],
        cwd=REPO, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    report = json.loads(next(tmp_path.glob("*/bisect.json")).read_text())
    outcomes = {row["version"]: row["outcome"] for row in report["rows"]}
    assert "1.12.0" not in outcomes
    assert outcomes["1.13.0"] == "reproduces" and outcomes["1.17.0"] == "passes"
    assert [(t["from"], t["to"]) for t in report["transitions"]] == [("1.15.0", "1.16.0")]
    if mode == "binary":
        assert len(outcomes) == 4  # of 5: both ends, then halving
