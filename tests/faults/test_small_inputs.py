"""Small inputs that once misled the tools (issue 19 section 4): a folder given to cuda-sim as a script, a
dangling symlink in the cases folder, one cases folder given twice, a repro that deletes its own folder."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.checkout import SOURCE_PATH
from tests.faults.conftest import REPO, SIGNATURE_SCRIPT, cell, results_of, run_harness, verdict, write_case

pytestmark = pytest.mark.slow


@pytest.mark.fault("cuda-sim given a folder instead of a script")
def test_cuda_sim_given_a_folder_says_so_in_one_line(tmp_path):
    env = {**os.environ, "PYTHONPATH": SOURCE_PATH}  # the simulator's distribution, in the checkout
    proc = subprocess.run([sys.executable, "-m", "cuda_sim", str(tmp_path)], cwd=REPO, capture_output=True,
                          text=True, timeout=120, env=env)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert str(tmp_path) in proc.stderr and "__main__.py" in proc.stderr


@pytest.mark.fault("a dangling symlink in the cases folder")
def test_a_dangling_case_folder_symlink_is_named_not_skipped(tmp_path):
    write_case(tmp_path / "cases", "real", SIGNATURE_SCRIPT)
    (tmp_path / "cases" / "ghost").symlink_to(tmp_path / "nowhere")
    proc = run_harness("validate", "--cases-dir", str(tmp_path / "cases"))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    said = proc.stdout + proc.stderr
    assert "ghost" in said and "symlink" in said and "does not exist" in said, said
    assert "Traceback" not in said


@pytest.mark.fault("the same --cases-dir given twice")
def test_the_same_cases_dir_twice_runs_each_case_once(tmp_path):
    write_case(tmp_path / "cases", "twice", SIGNATURE_SCRIPT)
    cases = str(tmp_path / "cases")
    proc = run_harness("cases", "--cases-dir", cases, "--cases-dir", f"{cases}/../cases", "--lane", "cpu",
                       "--output", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "not run" not in proc.stdout + proc.stderr and "duplicate" not in proc.stdout + proc.stderr
    results = results_of(tmp_path / "out")[0]
    assert verdict(results, "twice")["verdict"] == "confirmed"
    assert len([c for c in results["cells"] if c["case"] == "twice"]) == 2


DELETES_ITS_FOLDER = """
    import argparse, os, shutil
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    shutil.rmtree(os.getcwd(), ignore_errors=True)
    if a.variant == "buggy":
        raise RuntimeError("Expected all tensors to be on the same device")
"""


@pytest.mark.fault("a repro deletes its own working folder")
@pytest.mark.parametrize("namespaces", ["1", "0"])
def test_a_repro_that_deletes_its_own_folder_is_reported_as_that(tmp_path, namespaces):
    """Sealed, the cell's folder is a mount point: its contents go, the folder stays, the runner records the
    result. Without namespaces the folder goes too: the cell's reason says the repro deleted it."""
    write_case(tmp_path / "cases", "selfdelete", DELETES_ITS_FOLDER)
    run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "out"),
                env={"REPRO_MATRIX_NAMESPACES": namespaces})
    results = results_of(tmp_path / "out")[0]
    record = cell(results, "selfdelete", "buggy")
    if record["status"] == "raised":  # recorded: nothing to explain
        assert namespaces == "1", record
        return
    assert "deleted its own working folder" in record["reason"], record
    assert "without a Python exception" not in record["reason"].split("(")[0], record
