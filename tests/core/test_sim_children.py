"""Python processes a repro starts join its cell's lane: simulated on cuda-sim, plain on cpu.

A real ``python -m harness cases`` run over a fixture case whose repro starts
``subprocess.run([sys.executable, "-c", ...])`` in a real uv-built environment where repro-matrix is
not installed: the harness's own line in that environment's site-packages must bring the child in.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.core.test_end_to_end import harness, only_run

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "cases" / "confirmed"

CASE = """\
id: sim-children
title: "Fixture: a repro whose child Python process must share the cell's lane"
upstream: {issue: "https://example.invalid/issue/1", fix: "https://example.invalid/pull/2"}
signature: "child did not share the lane"
exception: RuntimeError
summary: Test fixture for child processes on cuda-sim; not a documented bug.
requires: [torch==2.13.0]
timeout: 120
variants:
  buggy:
    role: buggy
    args: []
    expect: {cpu: passes, cuda: passes, cuda-sim: passes}
  fixed:
    role: fix
    args: []
    env: {FIXTURE_VARIANT: fixed}  # validate refuses a fix that runs exactly what the buggy one runs
    expect: {cpu: passes, cuda: passes, cuda-sim: passes}
"""

REPRO = '''\
"""Fixture repro: its child must see CUDA exactly when this process does (test data, not a bug)."""

import subprocess
import sys

import torch

CHILD = """
import torch
print("child cuda available:", torch.cuda.is_available(), flush=True)
try:
    torch.ones(2, device="cuda") + torch.ones(2)
    print("child mixed devices: no error")
except Exception as error:
    print("child mixed devices:", type(error).__name__, error)
"""

simulated = torch.cuda.is_available()
child = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=100)
print(child.stdout, child.stderr, sep="\\n", flush=True)
if child.returncode != 0:
    raise RuntimeError(f"child did not share the lane: exit {child.returncode}")
joined = ("child cuda available: True" in child.stdout
          and "Expected all tensors to be on the same device" in child.stdout)
if joined != simulated:
    raise RuntimeError(f"child did not share the lane (parent simulated: {simulated}): {child.stdout!r}")
print("child shared the lane")
'''


def test_children_of_a_cuda_sim_cell_are_simulated_and_of_a_cpu_cell_plain(tmp_path: Path):
    cases = tmp_path / "cases"
    shutil.copytree(FIXTURE, cases / "sim-children")
    (cases / "sim-children" / "case.yaml").write_text(CASE)
    (cases / "sim-children" / "repro.py").write_text(REPRO)
    output = tmp_path / "reports"
    proc = harness("cases", "--cases-dir", str(cases), "--case", "sim-children", "--lane", "cpu",
                   "--lane", "cuda-sim", "--output", str(output), "--jobs", "1")
    results = only_run(output)
    cells = {(c["lane"], c["variant"]): c for c in results["cells"]}
    assert set(cells) == {(lane, v) for lane in ("cpu", "cuda-sim") for v in ("buggy", "fixed")}, \
        proc.stdout + proc.stderr
    run_dir = output / results["run"]["id"]
    for (lane, _), cell in cells.items():
        log = (run_dir / cell["log"]).read_text()
        assert cell["status"] == "passed", json.dumps(cell, indent=1) + log
        assert "child shared the lane" in log
        if lane == "cuda-sim":
            assert "child cuda available: True" in log and "cuda:0 and cpu" in log, log
        else:
            assert "child cuda available: False" in log, log
