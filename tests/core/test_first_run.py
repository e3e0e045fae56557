"""A run that talks: an estimate before the first cell, environment builds counted, each result printed when its
cell ends (the summary and results.json stay in plan order), and heartbeats for anything long and quiet."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from harness.cases._load import PatchFile
from harness.environments._spec import EnvSpec
from harness.run._estimate import History, estimate, read_history
from harness.run._progress import LiveCells, last_line

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "cases"


def harness(*args: str, **env: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**os.environ, "COLUMNS": "200", **env})


def result_lines(output: str) -> list[str]:
    """The per-cell lines, ``[ n/10] verdict  case · lane · variant ...``, as printed."""
    return [line for line in output.splitlines() if re.match(r"^\[\s*\d+/\d+\] ", line)]


@pytest.mark.slow
def test_results_come_as_cells_end_and_the_record_keeps_plan_order(tmp_path):
    # hangs/buggy runs into its 3 s timeout while the other job finishes the cells planned after it
    proc = harness("cases", "--cases-dir", str(FIXTURES), "--lane", "cpu", "--case", "hangs", "--case", "stale-repro",
                   "--output", str(tmp_path), "--jobs", "2")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = result_lines(proc.stdout)
    order = [re.search(r"(\S+) · cpu · (\S+)", line).groups() for line in lines]
    assert order.index(("hangs", "buggy")) == len(order) - 1, lines  # printed last: it ended last
    assert [line.split("]")[0] for line in lines] == [f"[{n}/4" for n in range(1, 5)]  # counts what has ended
    (results,) = tmp_path.glob("*/results.json")
    cells = [(c["case"], c["variant"]) for c in json.loads(results.read_text())["cells"]]
    assert cells == [("hangs", "buggy"), ("hangs", "fixed"), ("stale-repro", "buggy"), ("stale-repro", "fixed")]


@pytest.mark.slow
def test_the_estimate_counts_first_then_times_from_the_earlier_run(tmp_path):
    common = ("cases", "--cases-dir", str(FIXTURES), "--lane", "cpu", "--case", "confirmed", "--output", str(tmp_path))
    envs = str(tmp_path.parent / "envs")  # a cache of its own: the environment is built by this run
    first = harness(*common, REPRO_MATRIX_ENVS=envs)
    assert first.returncode == 0, first.stdout + first.stderr
    assert (f"estimate: 2 cell(s), 1 environment(s) to build first; no earlier run in {tmp_path} times them"
            in first.stdout), first.stdout
    spec = EnvSpec(requires=("torch==2.13.0",))
    assert f"environment 1/1 venv-{spec.key()}: creating (torch==2.13.0)" in first.stdout
    assert re.search(rf"environment 1/1 venv-{spec.key()}: ready in \d", first.stdout)

    second = harness(*common, REPRO_MATRIX_ENVS=envs)
    assert second.returncode == 0, second.stdout + second.stderr
    line = next(line for line in second.stdout.splitlines() if line.startswith("estimate:"))
    assert re.fullmatch(rf"estimate: about \d+ s with \d+ job\(s\) for 2 cell\(s\) \(2 of 2 cell\(s\) timed by "
                        rf"earlier runs in {re.escape(str(tmp_path))}, the rest at their median\)", line), line
    assert "environment 1/1" not in second.stdout  # nothing to build


def test_estimate_uses_each_cell_s_last_real_run_and_medians_for_the_rest(tmp_path):
    def write_run(name: str, cells: list[dict], environments: dict | None = None) -> None:
        (tmp_path / name).mkdir()
        (tmp_path / name / "results.json").write_text(json.dumps({"cells": cells, "environments": environments or {}}))

    write_run("20260101T000000Z-aaaaaa", [
        {"case": "a", "lane": "cpu", "variant": "v", "status": "passed", "duration_s": 100.0},
        {"case": "b", "lane": "cpu", "variant": "v", "status": "raised", "duration_s": 30.0}],
        {"venv-1": {"id": "venv-1", "reused": False, "build_s": 50.0}})
    write_run("20260102T000000Z-bbbbbb", [
        {"case": "a", "lane": "cpu", "variant": "v", "status": "passed", "duration_s": 10.0},  # newer: wins
        {"case": "b", "lane": "cpu", "variant": "v", "status": "infra-error", "duration_s": 0.5},  # not a real run
        {"case": "c", "lane": "cpu", "variant": "v", "status": "passed", "duration_s": float("nan")}],
        {"venv-1": {"id": "venv-1", "reused": True, "build_s": 0.0}})
    (tmp_path / "20260103T000000Z-cccccc").mkdir()
    (tmp_path / "20260103T000000Z-cccccc" / "results.json").write_text("{not json")  # skipped, not fatal
    wanted = {("a", "cpu", "v"), ("b", "cpu", "v"), ("c", "cpu", "v")}
    history = read_history(tmp_path, wanted)
    assert history == History({("a", "cpu", "v"): 10.0, ("b", "cpu", "v"): 30.0}, {"venv-1": 50.0})
    # c at the median of a and b (20 s); venv-1's build 50 s, venv-2's at the median of the builds (50 s)
    got = estimate(sorted(wanted), ["venv-1", "venv-2"], history, jobs=2)
    assert (got.cells, got.cells_timed, got.environments, got.environments_timed) == (3, 2, 2, 1)
    assert got.seconds == pytest.approx((10 + 30 + 20 + 50 + 50) / 2)
    assert "about 80 s with 2 job(s) for 3 cell(s), 2 environment(s) to build first" in got.describe(2, tmp_path)
    assert estimate(sorted(wanted), [], History({}, {}), jobs=2).seconds is None


def test_environment_lines_tell_same_pins_apart_by_their_patches(tmp_path):
    diff = tmp_path / "revert-x.diff"
    diff.write_text("--- a/x.py\n+++ b/x.py\n")
    plain = EnvSpec(requires=("torch==2.13.0", "numpy"))
    patched = EnvSpec(requires=("torch==2.13.0", "numpy"), patches=(PatchFile.from_path(diff),))
    assert plain.summary() == "torch==2.13.0, numpy"
    assert patched.summary() == "torch==2.13.0, numpy; patched: revert-x.diff"
    assert EnvSpec(requires=("torch==2.13.0",), python="3.99").summary() == "torch==2.13.0; python 3.99"


def test_heartbeat_without_a_terminal_says_how_long_and_the_log_s_last_line(tmp_path):
    out = io.StringIO()
    live = LiveCells(Console(file=out, force_terminal=False, width=200), heartbeat_s=60)
    log = tmp_path / "cell.log"
    log.write_text("# header\nBuilding extension module cpu_adam...\n[1/3] c++ -c cpu_adam.cpp\n\n")
    live.started("deepspeed/cpu/buggy", log)
    started = live._running["deepspeed/cpu/buggy"].started
    live.beat(now=started + 30)  # not due yet
    live.beat(now=started + 61)
    live.beat(now=started + 90)  # the next is due 60 s after the last one
    live.beat(now=started + 125)
    live.finished("deepspeed/cpu/buggy")
    live.beat(now=started + 500)  # finished: quiet
    assert out.getvalue().splitlines() == [
        "start deepspeed/cpu/buggy",
        "still running deepspeed/cpu/buggy (1m01s): [1/3] c++ -c cpu_adam.cpp",
        "still running deepspeed/cpu/buggy (2m05s): [1/3] c++ -c cpu_adam.cpp"]


def test_on_a_terminal_the_spinner_line_shows_the_log_s_last_line(tmp_path):
    live = LiveCells(Console(file=io.StringIO(), force_terminal=True, width=200))
    log = tmp_path / "build.log"
    log.write_text("$ uv pip install deepspeed==0.14.2\n")
    live.started("environment 1/3: building venv-abc", log)
    live.beat()
    (task,) = live._progress.tasks
    assert task.description == "running environment 1/3: building venv-abc: $ uv pip install deepspeed==0.14.2"


def test_last_line_is_short_plain_text(tmp_path):
    log = tmp_path / "x.log"
    log.write_bytes(b"first\n" + b"x" * 10_000 + b"\n\x1b]0;title\x07\x1b[2Jlast \xff line\r\n")
    line = last_line(log)
    assert line.endswith("last \ufffd line") and not any(ord(ch) < 32 for ch in line)  # escapes shown, not obeyed
    assert last_line(tmp_path / "missing.log") == ""
    (tmp_path / "long.log").write_text("y" * 500)
    assert len(last_line(tmp_path / "long.log")) == 110


@pytest.mark.slow
def test_a_long_quiet_cell_gets_heartbeats_in_a_ci_log(fixture_cases, tmp_path):
    case = fixture_cases / "hangs" / "case.yaml"
    case.write_text(case.read_text().replace("timeout: 3", "timeout: 10"))
    proc = harness("cases", "--cases-dir", str(fixture_cases), "--lane", "cpu", "--case", "hangs", "--variant", "buggy",
                   "--output", str(tmp_path), REPRO_MATRIX_HEARTBEAT_S="1")
    beats = [line for line in proc.stdout.splitlines() if line.startswith("still running hangs/cpu/buggy")]
    assert len(beats) >= 3, proc.stdout
    assert beats[-1].endswith("fixture variant=buggy device=cpu behaviour=hang"), beats  # what the cell printed
    bad = harness("cases", "--cases-dir", str(FIXTURES), "--lane", "cpu", "--output", str(tmp_path),
                  REPRO_MATRIX_HEARTBEAT_S="soon")
    assert bad.returncode == 2 and "REPRO_MATRIX_HEARTBEAT_S='soon'" in bad.stdout
