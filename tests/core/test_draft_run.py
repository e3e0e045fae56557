"""validate runs a filled-in draft that installs, and refuses one that does not confirm (harness/run/_draft_run.py):
whether a draft can work is known only by running it (graded49: text2brain's report filled in with nibabel's releases
resolved, built and imported cleanly, and passed)."""

from __future__ import annotations

import shutil
from pathlib import Path

from harness.cases._placeholders import SKELETON_HEADER
from tests.faults.conftest import run_harness, write_case

_HEAD = f'"""Repro. {SKELETON_HEADER} report.txt: the call filled in by its author."""\n'
_ARGS = """
import argparse
import torch
p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
"""
CONFIRMS = _HEAD + _ARGS + """
if a.variant == "buggy":
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices")
"""
STALE = _HEAD + _ARGS + "torch.zeros(1)  # the author's call reaches no bug\n"
ELSEWHERE = _HEAD + _ARGS + """
if a.variant == "buggy":
    torch.ones(2) @ torch.ones(3)  # the call fails, but not as the report did
"""


def _validate(tmp_path: Path, name: str, script: str, *options: str):
    write_case(tmp_path / name, f"draft-{name}", script)
    return run_harness("validate", *options, "--cases-dir", str(tmp_path / name), timeout=600)


def test_a_draft_whose_buggy_variant_reproduces_and_whose_fix_passes_is_valid(tmp_path):
    proc = _validate(tmp_path, "good", CONFIRMS)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "1 case file(s) valid, 0 invalid" in out, out
    assert "running 1 filled-in draft(s) as `cases --case ID` would" in out
    assert "every draft run confirmed or was skipped" in out


def test_a_draft_that_runs_clean_or_fails_otherwise_is_refused_naming_lane_verdict_and_logs(tmp_path):
    stale = _validate(tmp_path, "stale", STALE)
    out = stale.stdout
    assert stale.returncode == 2 and "0 case file(s) valid, 1 invalid" in out, out + stale.stderr
    assert "draft-stale/case.yaml: the filled-in draft does not confirm on lane cpu: stale-repro: buggy: " in out
    assert "does not confirm on lane cuda-sim: stale-repro" in out
    logs = out.split("the cells' logs are in ")[1].split()[0]
    assert any(Path(logs).glob("*/results.json")), logs  # kept for the author to read
    shutil.rmtree(logs)

    other = _validate(tmp_path, "other", ELSEWHERE)
    assert other.returncode == 2 and "does not confirm on lane cpu: failed-differently" in other.stdout, other.stdout
    assert "inconsistent" in other.stdout or "size" in other.stdout, other.stdout
    shutil.rmtree(other.stdout.split("the cells' logs are in ")[1].split()[0])


def test_no_run_and_static_check_installs_only(tmp_path):
    assert _validate(tmp_path, "norun", STALE, "--no-run").returncode == 0
    static = _validate(tmp_path, "static", STALE, "--static")
    assert static.returncode == 0 and "running" not in static.stdout
