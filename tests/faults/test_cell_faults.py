"""Faults a repro can commit: hang, signal, memory, output floods, exits in odd places, leaks."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from tests.faults.conftest import SIGNATURE_SCRIPT, cell, results_of, run_harness, start_harness, verdict, write_case
from tests.faults.processes import new_token, processes_with, wait_until

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except (OSError, IndexError):
        return False


@pytest.mark.fault("repro hangs forever")
def test_hang_times_out_and_leaves_no_orphan(tmp_path):
    token = new_token()
    write_case(tmp_path / "cases", "hang", """
        import argparse, os, subprocess, sys, time
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        if a.variant == "buggy":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ["FAULT_TOKEN"]])
            time.sleep(3600)
    """, timeout=3)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "out"),
                       env={"FAULT_TOKEN": token})
    results = results_of(tmp_path / "out")[0]
    assert proc.returncode == 1
    hung = cell(results, "hang", "buggy")
    assert hung["status"] == "timeout" and verdict(results, "hang")["verdict"] == "infra-error"
    assert cell(results, "hang", "fixed")["judgement"] == "confirmed"
    assert wait_until(lambda: not processes_with(token), timeout=5), "the repro's child outlived the timeout"


@pytest.mark.fault("repro segfaults / is killed by a signal")
def test_signal_is_named_and_other_cells_run(tmp_path):
    write_case(tmp_path / "cases", "segv", """
        import argparse, os, signal
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        if a.variant == "buggy":
            import ctypes; ctypes.string_at(0)
        if a.variant == "killed":
            os.kill(os.getpid(), signal.SIGTERM)
    """, variants={
        "buggy": {"role": "buggy", "expect": {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}},
        "killed": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        "fixed": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
    })
    run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "out"))
    results = results_of(tmp_path / "out")[0]
    assert (cell(results, "segv", "buggy")["status"], cell(results, "segv", "buggy")["signal"]) == ("crashed", "SIGSEGV")
    assert cell(results, "segv", "killed")["signal"] == "SIGTERM"
    assert cell(results, "segv", "fixed")["judgement"] == "confirmed"


@pytest.mark.fault("repro exhausts memory")
def test_memory_limit_gives_oom(tmp_path):
    write_case(tmp_path / "cases", "hog", """
        import argparse
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        if a.variant == "buggy":
            blocks = [bytearray(256 * 1024 * 1024) for _ in range(64)]
    """)
    run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--memory-limit", "1",
                "--output", str(tmp_path / "out"))
    results = results_of(tmp_path / "out")[0]
    hog = cell(results, "hog", "buggy")
    assert hog["status"] == "oom" and hog["judgement"] == "infra-error"
    assert cell(results, "hog", "fixed")["judgement"] == "confirmed"


def _peak_rss_mb(pid: int, stop: threading.Event, seen: list[int]) -> None:
    while not stop.is_set():
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    seen.append(int(line.split()[1]) // 1024)
        except OSError:
            return
        time.sleep(0.2)


@pytest.mark.fault("repro prints 1 GB to stdout, or binary / invalid UTF-8")
def test_output_flood_is_truncated_and_harness_memory_bounded(tmp_path):
    write_case(tmp_path / "cases", "flood", """
        import argparse, sys
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        sys.stdout.buffer.write(b"\\xff\\xfe\\x00 invalid utf-8 first\\n")
        if a.variant == "buggy":
            line = b"y" * (1024 * 1024 - 1) + b"\\n"
            for _ in range(1024):
                sys.stdout.buffer.write(line)
            sys.stdout.flush()
            raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
    """)
    harness = start_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                            "--output", str(tmp_path / "out"))
    stop, seen = threading.Event(), []
    watcher = threading.Thread(target=_peak_rss_mb, args=(harness.pid, stop, seen))
    watcher.start()
    harness.communicate(timeout=600)
    stop.set()
    watcher.join()
    results = results_of(tmp_path / "out")[0]
    flood = cell(results, "flood", "buggy")
    assert flood["judgement"] == "confirmed"
    log = next((tmp_path / "out").glob("*")) / flood["log"]
    assert log.stat().st_size < 8 * 1024 * 1024
    text = log.read_bytes()
    assert b"[repro-matrix: log truncated" in text and b"\xff\xfe" in text
    assert max(seen) < 400, f"harness peak RSS {max(seen)} MB while the repro printed 1 GB"


@pytest.mark.fault("repro exits in a finally, forks a survivor, or changes cwd/env")
def test_odd_exits_and_leaks_do_not_change_results(tmp_path):
    write_case(tmp_path / "cases", "odd", """
        import argparse, os, subprocess, sys
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        assert "LEAKED" not in os.environ, "environment leaked from an earlier cell"
        if a.variant == "buggy":
            try:
                raise RuntimeError("Expected all tensors to be on the same device, cuda:0 and cpu!")
            finally:
                print("finally runs")
        if a.variant == "exit-in-finally":
            try:
                raise ValueError("swallowed")
            finally:
                sys.exit(0)
        if a.variant == "leaker":
            os.environ["LEAKED"] = "1"
            os.chdir("/")
            survivor = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ["FAULT_TOKEN"]],
                                        start_new_session=False)
    """, variants={
        "buggy": {"role": "buggy", "expect": {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}},
        "exit-in-finally": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        "leaker": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        "after": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
    })
    token = new_token()
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                       "--output", str(tmp_path / "out"), env={"FAULT_TOKEN": token})
    results = results_of(tmp_path / "out")[0]
    assert proc.returncode == 0, proc.stdout
    assert [cell(results, "odd", v)["status"] for v in ("buggy", "exit-in-finally", "leaker", "after")] == \
        ["raised", "passed", "passed", "passed"]
    assert wait_until(lambda: not processes_with(token), timeout=5)
    assert os.getcwd() != "/"


def test_signature_script_helper_is_valid(tmp_path):
    write_case(tmp_path / "cases", "ok", SIGNATURE_SCRIPT)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "o"))
    assert proc.returncode == 0, proc.stdout
