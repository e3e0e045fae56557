"""No container outlives a run: Ctrl-C and SIGTERM through the real command line, and a SIGKILLed run's
containers swept by the next one."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.docker, pytest.mark.slow]


@pytest.fixture
def slow_hang(fixture_cases) -> Path:
    """The 'hangs' fixture with a timeout long enough to interrupt it by hand."""
    case = fixture_cases / "hangs" / "case.yaml"
    case.write_text(case.read_text().replace("timeout: 3", "timeout: 600"))
    return fixture_cases


@pytest.fixture
def start_run():
    """Starts ``python -m harness cases --backend docker``; kills what is still running at teardown, so a
    failed assertion never leaves a hanging run (and its container) behind for the next test."""
    started: list[subprocess.Popen] = []

    def start(cases: Path, output: Path, base: str, *names: str) -> subprocess.Popen:
        started.append(_popen_run(cases, output, base, *names))
        return started[-1]

    yield start
    for process in started:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)  # lets the run remove its containers
            try:
                process.communicate(timeout=HANG_GUARD_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()


def _popen_run(cases: Path, output: Path, base: str, *names: str) -> subprocess.Popen:
    selection = [arg for name in names for arg in ("--case", name)]
    return subprocess.Popen([sys.executable, "-m", "harness", "cases", "--backend", "docker", "--lane", "cpu",
                             "--cases-dir", str(cases), *selection, "--output", str(output), "--jobs", "2"],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env={**os.environ, "REPRO_DOCKER_BASE": base})


def hang_containers(client) -> list:
    from harness.docker import labelled_containers

    return [c for c in labelled_containers(client) if c.labels.get("repro-matrix.cell", "").startswith("hangs/")]


# Waits end on what they wait for; these bounds only stop a hung test, however loaded the machine.
HANG_GUARD_S = 600


def wait_for_running_hang(output: Path, process: subprocess.Popen) -> None:
    """Until the hanging repro has printed its first line (its cell log, streamed from the container as it runs)."""
    deadline = time.monotonic() + HANG_GUARD_S
    while time.monotonic() < deadline and process.poll() is None:
        logs = output.glob("*/logs/hangs/cpu/buggy.log")
        if any("behaviour=hang" in log.read_text(encoding="utf-8", errors="replace") for log in logs):
            return
        time.sleep(0.2)
    pytest.fail(f"the hanging cell never started: {process.communicate(timeout=HANG_GUARD_S)[0][-3000:]}")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_interrupting_a_run_removes_its_containers(docker_client, fixture_image, local_base, slow_hang, tmp_path,
                                                   sig, start_run):
    process = start_run(slow_hang, tmp_path, local_base, "hangs")
    wait_for_running_hang(tmp_path, process)
    process.send_signal(sig)
    output, _ = process.communicate(timeout=HANG_GUARD_S)
    assert process.returncode == 130, output[-3000:]
    assert hang_containers(docker_client) == []
    (results,) = tmp_path.glob("*/results.json")
    run = json.loads(results.read_text())
    assert run["run"]["status"] == "interrupted"
    buggy = next(c for c in run["cells"] if c["variant"] == "buggy")
    assert buggy["status"] == "interrupted"


def test_containers_of_a_killed_run_are_swept_by_the_next_run(docker_client, fixture_image, local_base, slow_hang,
                                                              tmp_path, start_run):
    process = start_run(slow_hang, tmp_path / "killed", local_base, "hangs")
    wait_for_running_hang(tmp_path / "killed", process)
    process.kill()
    process.communicate(timeout=HANG_GUARD_S)
    assert hang_containers(docker_client), "SIGKILL cannot clean up: the container is still there"
    second = start_run(slow_hang, tmp_path / "next", local_base, "confirmed")
    output, _ = second.communicate(timeout=HANG_GUARD_S)
    assert second.returncode == 0, output[-3000:]
    assert hang_containers(docker_client) == []
