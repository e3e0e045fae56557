"""Cells running side by side share the cores for intra-op threads, unless the user or the case says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.run._execute import cell_environment, usable_cores

REPO = Path(__file__).resolve().parents[2]
THREADS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


@pytest.fixture
def no_thread_settings(monkeypatch):
    for name in THREADS:
        monkeypatch.delenv(name, raising=False)


def test_a_lone_cell_keeps_the_libraries_defaults(no_thread_settings):
    assert cell_environment({"A": "1"}, 1) == {"A": "1"}


def test_side_by_side_cells_get_a_share_of_the_cores(no_thread_settings, monkeypatch):
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    assert cell_environment({"A": "1"}, 2) == {"A": "1", "OMP_NUM_THREADS": "4", "MKL_NUM_THREADS": "4"}
    assert cell_environment({}, 16)["OMP_NUM_THREADS"] == "1"


@pytest.mark.parametrize("name", THREADS)
def test_a_thread_count_the_user_set_is_left_alone(no_thread_settings, monkeypatch, name):
    monkeypatch.setenv(name, "3")
    assert cell_environment({"A": "1"}, 2) == {"A": "1"}  # the child inherits the user's setting


@pytest.mark.parametrize("name", THREADS)
def test_a_thread_count_the_case_set_is_left_alone(no_thread_settings, name):
    assert cell_environment({name: "3"}, 2) == {name: "3"}


def test_cells_of_a_parallel_run_see_their_share(tmp_path):
    case = tmp_path / "cases" / "threads"
    case.mkdir(parents=True)
    (case / "repro.py").write_text(
        "import os\nraise RuntimeError('threads ' + ' '.join(str(os.environ.get(n)) for n in "
        f"{THREADS!r}))\n")
    expect = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
    (case / "case.yaml").write_text(yaml.safe_dump({
        "id": "threads", "title": "thread settings fixture", "upstream": {"issue": "https://example.invalid/1"},
        "signature": "threads", "summary": "fixture", "requires": ["torch==2.13.0"], "timeout": 60,
        "variants": {"buggy": {"role": "buggy", "expect": expect},
                     "own": {"role": "fix", "env": {"OMP_NUM_THREADS": "3"}, "expect": expect}},
    }))
    env = {k: v for k, v in os.environ.items() if k not in THREADS}
    proc = subprocess.run([sys.executable, "-m", "harness", "cases", "--cases-dir", str(tmp_path / "cases"),
                           "--lane", "cpu", "--jobs", "2", "--output", str(tmp_path / "out")],
                          cwd=REPO, capture_output=True, text=True, timeout=600,
                          env={**env, "PYTHONPATH": str(REPO)})
    results = json.loads(next((tmp_path / "out").glob("*/results.json")).read_text())
    messages = {c["variant"]: c["exception"]["message"] for c in results["cells"]}
    share = max(1, usable_cores() // 2)
    assert messages == {"buggy": f"threads {share} {share}", "own": "threads 3 None"}, proc.stdout + proc.stderr
