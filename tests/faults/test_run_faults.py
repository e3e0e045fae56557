"""Faults around the run: broken environments, interrupts, concurrent runs, a full disk, hostile text."""

from __future__ import annotations

import json
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from tests.faults import conftest
from tests.faults.conftest import SIGNATURE_SCRIPT, cell, results_of, run_harness, start_harness, verdict, write_case
from tests.faults.processes import new_token, processes_with, wait_until

pytestmark = pytest.mark.slow


@pytest.mark.fault("environment install fails (bad pin, no network)")
def test_unresolvable_pin_is_infra_error_with_uv_message(tmp_path):
    write_case(tmp_path / "cases", "badpin", SIGNATURE_SCRIPT,
               requires=["torch==2.13.0", "repro-matrix-no-such-package-xyz==9.9.9"])
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                       "--output", str(tmp_path / "out"))
    results = results_of(tmp_path / "out")[0]
    assert proc.returncode == 1
    assert verdict(results, "badpin")["verdict"] == "infra-error"
    for variant in ("buggy", "fixed"):
        c = cell(results, "badpin", variant)
        assert c["status"] == "infra-error" and "environment could not be built" in c["reason"]
    log = (next((tmp_path / "out").iterdir()) / cell(results, "badpin", "buggy")["log"]).read_text()
    assert "repro-matrix-no-such-package-xyz" in log and "uv pip" in log
    env = results["environments"][cell(results, "badpin", "buggy")["environment"]]
    assert env["error"]


@pytest.mark.fault("environment install fails (bad pin, no network)")
def test_unreachable_index_is_infra_error(tmp_path):
    write_case(tmp_path / "cases", "offline", SIGNATURE_SCRIPT, requires=["torch==2.13.0", "six==1.16.0"])
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                       "--output", str(tmp_path / "out"),
                       env={"UV_INDEX_URL": "http://127.0.0.1:9/simple", "UV_NO_CACHE": "1",
                            "REPRO_MATRIX_ENVS": str(tmp_path / "envs"), "UV_EXTRA_INDEX_URL": ""})
    results = results_of(tmp_path / "out")[0]
    assert proc.returncode == 1
    assert verdict(results, "offline")["verdict"] == "infra-error"
    assert "127.0.0.1:9" in cell(results, "offline", "buggy")["reason"] or "six" in cell(results, "offline", "buggy")["reason"]


def _wait_for(process: subprocess.Popen, text: str, timeout: float = 300) -> str:
    seen = ""
    deadline = time.time() + timeout
    assert process.stdout is not None
    while time.time() < deadline:
        line = process.stdout.readline()
        seen += line
        if text in line:
            return seen
    raise AssertionError(f"{text!r} not seen in time:\n{seen}")


@pytest.mark.fault("Ctrl-C / SIGTERM mid-run")
def _ignore_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


# "ignored": started as a background shell starts a command (`cmd &`, a CI step), with SIGINT ignored
@pytest.mark.parametrize(("sig", "start"), [(signal.SIGINT, None), (signal.SIGTERM, None),
                                            (signal.SIGINT, _ignore_sigint)], ids=["SIGINT", "SIGTERM", "ignored"])
def test_interrupt_keeps_finished_cells_and_marks_the_rest(tmp_path, sig, start, monkeypatch):
    token = new_token()
    monkeypatch.setenv("FAULT_TOKEN", token)
    write_case(tmp_path / "cases", "slow", """
        import argparse, os, subprocess, sys, time
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        if a.variant == "zz-hangs":
            child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ["FAULT_TOKEN"]])
            time.sleep(3600)
    """, variants={
        "quick": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        "zz-hangs": {"role": "buggy", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        "zzz-never": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
    })
    harness = start_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                            "--output", str(tmp_path / "out"), preexec_fn=start)
    _wait_for(harness, "start slow/cpu/zz-hangs")
    assert wait_until(lambda: processes_with(token), timeout=60)
    harness.send_signal(sig)
    harness.communicate(timeout=60)
    assert harness.returncode == 130
    results = results_of(tmp_path / "out")[0]
    assert results["run"]["status"] == "interrupted" and results["run"]["exit_code"] == 130
    assert cell(results, "slow", "quick")["judgement"] == "confirmed"
    assert cell(results, "slow", "zz-hangs")["status"] == "interrupted"
    assert cell(results, "slow", "zzz-never")["status"] == "interrupted"
    assert wait_until(lambda: not processes_with(token), timeout=5), "the repro's child outlived the interrupt"


@pytest.mark.fault("two runs at once into the same output folder")
def test_two_concurrent_runs_both_complete(tmp_path):
    write_case(tmp_path / "cases", "twice", SIGNATURE_SCRIPT)
    args = ("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "out"))
    first, second = start_harness(*args), start_harness(*args)
    first.communicate(timeout=300)
    second.communicate(timeout=300)
    assert (first.returncode, second.returncode) == (0, 0)
    runs = results_of(tmp_path / "out")
    assert len(runs) == 2 and runs[0]["run"]["id"] != runs[1]["run"]["id"]
    for results in runs:
        assert verdict(results, "twice")["verdict"] == "confirmed"
        run_dir = tmp_path / "out" / results["run"]["id"]
        ET.parse(run_dir / "junit.xml")
        assert (run_dir / "index.html").stat().st_size > 0


@pytest.fixture
def tiny_disk(tmp_path):
    yield from conftest.tmpfs_folder(tmp_path / "disk", "size=400k", "mounting a small tmpfs")


@pytest.mark.fault("disk full while writing results")
def test_disk_full_is_a_clear_error_and_earlier_results_survive(tmp_path, tiny_disk):
    write_case(tmp_path / "cases", "filler", """
        import argparse, sys
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        for _ in range(2000):
            print("x" * 1000)
    """)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                       "--output", str(tiny_disk))
    assert proc.returncode == 4, proc.stdout
    assert "No space left on device" in proc.stdout and "previous version of the file is intact" in proc.stdout
    run_dir = next(p for p in tiny_disk.iterdir() if p.is_dir())
    earlier = json.loads((run_dir / "results.json").read_text())
    assert earlier["version"] == 1 and earlier["run"]["id"] == run_dir.name


@pytest.mark.fault("captured text with HTML/JS in it")
def test_hostile_text_is_escaped_in_every_report(tmp_path):
    hostile = "<script>alert(1)</script><img src=x onerror=alert(2)> [bold red]markup[/] & \\x1b[31m"
    write_case(tmp_path / "cases", "hostile", f"""
        import argparse
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        print({hostile!r})
        if a.variant == "buggy":
            raise RuntimeError("Expected all tensors to be on the same device " + {hostile!r})
    """)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                       "--output", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "[bold red]markup[/]" in proc.stdout  # rich printed it as text, not as markup
    results = results_of(tmp_path / "out")[0]
    run_dir = tmp_path / "out" / results["run"]["id"]
    assert hostile in cell(results, "hostile", "buggy")["exception"]["message"]
    html = (run_dir / "index.html").read_text()
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert "<img src=x" not in html
    junit = ET.parse(run_dir / "junit.xml")
    assert any(hostile in (el.text or "") + str(el.attrib) for el in junit.iter())


SLOW_SETUP = """
import time
time.sleep(300)
from setuptools import setup
setup(name="slowpkg", version="1.0")
"""


@pytest.mark.fault("Ctrl-C / SIGTERM mid-run")
def test_interrupt_during_an_environment_build_is_interrupted_not_infra_error(tmp_path, monkeypatch):
    """Ctrl-C while uv builds a package stops the build; the cells waiting for it are ``interrupted``
    (the run was stopped), not ``infra-error`` (the build did not fail)."""
    folder = write_case(tmp_path / "cases", "slowbuild", SIGNATURE_SCRIPT, requires=["torch==2.13.0", "slowpkg @ PKG"])
    (folder / "pkg").mkdir()
    (folder / "pkg" / "setup.py").write_text(SLOW_SETUP)
    (folder / "case.yaml").write_text((folder / "case.yaml").read_text().replace("PKG", (folder / "pkg").as_uri()))
    monkeypatch.setenv("REPRO_MATRIX_ENVS", str(tmp_path / "envs"))
    process = start_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                            str(tmp_path / "out"))
    try:
        _wait_for(process, "building")
        # uv runs setup.py first while resolving (`uv pip compile`: the package's metadata)
        assert wait_until(lambda: any("uv pip compile" in log.read_text()
                                      for log in (tmp_path / "envs").glob("*.build.log")), timeout=120)
        time.sleep(2)  # uv is running setup.py now
        process.send_signal(signal.SIGINT)
        output, _ = process.communicate(timeout=120)
    finally:
        process.kill()
    assert process.returncode == 130, output
    results = results_of(tmp_path / "out")[0]
    for variant in ("buggy", "fixed"):
        record = cell(results, "slowbuild", variant)
        assert record["status"] == "interrupted", record
        assert "interrupted while its environment was being built" in record["reason"], record
