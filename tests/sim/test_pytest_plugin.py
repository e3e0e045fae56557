"""The pytest plugin (`pytest --cuda-sim`), run for real on a small project outside the repo.

Each test runs pytest in a subprocess with the plugin loaded by `-p` (tests/sim/test_package.py runs the
same project with the plugin registered by an installed wheel's entry point instead).
"""

from __future__ import annotations

import os
import stat
import sys
import textwrap
from pathlib import Path

import pytest
from plugin_project import MIX_MESSAGE, run_pytest, write_project

from tests.checkout import SOURCE_PATH

REPO = Path(__file__).resolve().parents[2]
PLUGIN = ("-p", "cuda_sim.pytest_plugin")
AFTER_FIXTURE = "test_fixture.py::test_after_the_fixture_nothing_is_left"  # true only without the flag

pytestmark = pytest.mark.slow  # each test starts pytest processes that import torch


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "CUDA_SIM"))}
    env["PYTHONPATH"] = SOURCE_PATH
    return {**env, **extra}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "userproject")


def _run(project: Path, *args: str, **env: str):
    return run_pytest(sys.executable, project, *PLUGIN, *args, env=_env(**env))


def test_loaded_but_off_it_imports_nothing(tmp_path):
    """Installed in every session of the venv: off, it must not import torch nor say anything."""
    (tmp_path / "test_plain.py").write_text(textwrap.dedent("""
        import sys

        def test_torch_not_imported():
            assert "torch" not in sys.modules
            assert "cuda_sim._session" not in sys.modules
    """))
    proc, outcomes = _run(tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert outcomes == {"test_plain.test_torch_not_imported": ("passed", "")}
    assert "cuda-sim" not in proc.stdout


def test_without_the_flag_cuda_tests_skip_and_the_fixture_simulates(project):
    proc, outcomes = _run(project)
    assert outcomes["test_devices.test_scale_on_cuda"] == ("skipped", "CUDA not available")
    assert outcomes["test_devices.test_scale_fixed_on_cuda"] == ("skipped", "CUDA not available")
    assert outcomes["test_devices.test_needs_cuda_marker_runs"] == ("skipped", "needs_cuda: no CUDA device")
    assert "test_generated.TestLinearCUDA.test_forward_stays_on_device" not in outcomes
    assert outcomes["test_generated.TestLinearCPU.test_forward_stays_on_device"][0] == "passed"
    for name in ("test_fixture_simulates", "test_marker_simulates", "test_after_the_fixture_nothing_is_left"):
        assert outcomes[f"test_fixture.{name}"][0] == "passed", proc.stdout
    # a crash of the simulator's own code is a failure that names the simulator's frame
    assert outcomes["test_internal.test_simulator_crash"][0] == "failed"
    assert "cuda-sim itself crashed at cuda_sim/_placement.py:" in proc.stdout
    assert "CUDA-SIM INTERNAL ERROR test_internal.py::test_simulator_crash - at cuda_sim/_placement.py:" in proc.stdout
    assert "cuda-sim: on" not in proc.stdout  # no session-wide simulation: no header line
    assert "2 test(s) ran on simulated CUDA" in proc.stdout  # the fixture's test and the marker's


def test_the_flag_runs_the_cuda_tests_on_simulated_cuda(project):
    proc, outcomes = _run(project, "--cuda-sim", "--deselect", AFTER_FIXTURE, "--deselect", "test_internal.py")
    assert outcomes["test_devices.test_scale_on_cuda"] == ("failed", f"RuntimeError: {MIX_MESSAGE}")
    for name in ("test_devices.test_scale_fixed_on_cuda", "test_devices.test_needs_cuda_marker_runs",
                 "test_generated.TestLinearCUDA.test_forward_stays_on_device",
                 "test_generated.TestLinearCPU.test_forward_stays_on_device",
                 "test_fixture.test_fixture_simulates", "test_fixture.test_marker_simulates"):
        assert outcomes[name][0] == "passed", (name, proc.stdout)
    # not simulated: a skip with its reason, counted apart from real skips
    assert outcomes["test_devices.test_second_gpu"] == (
        "skipped", "not simulated: device cuda:1 (the simulated host has a single GPU, cuda:0)")
    assert proc.returncode == 1
    assert "cuda-sim: on, one simulated CUDA device (cuda:0) over the CPU; torch 2." in proc.stdout
    assert "1 failed, 7 passed, 2 deselected, 1 not simulated" in proc.stdout
    assert ("6 test(s) ran on simulated CUDA (placed or computed a tensor on cuda:0); 1 not simulated (skipped; "
            "--cuda-sim-strict fails them); 0 cuda-sim internal error(s)") in proc.stdout
    assert "NOT SIMULATED test_devices.py::test_second_gpu - not simulated: device cuda:1" in proc.stdout


def test_strict_from_the_ini_file_and_the_environment(project):
    (project / "pytest.ini").write_text("[pytest]\ncuda_sim = true\n")
    proc, outcomes = _run(project, "test_devices.py", PYTEST_CUDA_SIM="strict")
    assert outcomes["test_devices.test_second_gpu"][0] == "failed"
    assert "not simulated: device cuda:1" in outcomes["test_devices.test_second_gpu"][1]
    assert "not-simulated tests fail (strict)" in proc.stdout
    assert "1 not simulated (failed: --cuda-sim-strict)" in proc.stdout
    assert "2 failed, 3 passed" in proc.stdout
    # the environment variable turns off what the ini file turns on
    proc, outcomes = _run(project, "test_devices.py", PYTEST_CUDA_SIM="0")
    assert outcomes["test_devices.test_scale_on_cuda"] == ("skipped", "CUDA not available")
    proc, _ = _run(project, "test_devices.py", PYTEST_CUDA_SIM="maybe")
    assert proc.returncode == 4 and "PYTEST_CUDA_SIM='maybe': expected 1, strict or 0" in proc.stderr


def _fake_gpu_host(tmp_path: Path) -> str:
    """A PATH whose nvidia-smi lists a GPU, as on a GPU host (none exists here, CI included)."""
    folder = tmp_path / "gpu-host-bin"
    folder.mkdir()
    smi = folder / "nvidia-smi"
    smi.write_text('#!/bin/sh\n[ "$1" = "-L" ] && echo "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-5e1c)"\n')
    smi.chmod(smi.stat().st_mode | stat.S_IEXEC)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def test_refuses_to_hide_a_real_gpu_unless_forced(project, tmp_path):
    path = _fake_gpu_host(tmp_path)
    proc, outcomes = _run(project, "--cuda-sim", "test_devices.py", PATH=path)
    assert proc.returncode == 4 and not outcomes
    assert ("--cuda-sim refuses to run on a host with a real GPU (nvidia-smi lists GPU 0: NVIDIA A100-SXM4-40GB "
            "(UUID: GPU-5e1c)): the simulation would hide it") in proc.stderr
    assert "--cuda-sim-force" in proc.stderr
    proc, outcomes = _run(project, "--cuda-sim", "--cuda-sim-force", "test_devices.py", PATH=path)
    assert "FORCED over a real GPU, which the tests cannot see: nvidia-smi lists GPU 0" in proc.stdout
    assert outcomes["test_devices.test_scale_fixed_on_cuda"][0] == "passed"
    # the fixture on a GPU host runs its test on the GPU, unsimulated (here: none answers, so it fails)
    proc, outcomes = _run(project, "test_fixture.py::test_fixture_simulates", PATH=path)
    assert outcomes["test_fixture.test_fixture_simulates"][0] == "failed"


def test_xdist_workers_follow_the_controller(project):
    proc, outcomes = _run(project, "--cuda-sim", "-n", "2", "--deselect", AFTER_FIXTURE,
                          "--deselect", "test_internal.py")
    assert outcomes["test_devices.test_scale_on_cuda"] == ("failed", f"RuntimeError: {MIX_MESSAGE}")
    assert outcomes["test_generated.TestLinearCUDA.test_forward_stays_on_device"][0] == "passed"
    assert outcomes["test_devices.test_second_gpu"][0] == "skipped"
    assert "2 workers [" in proc.stdout
    assert "cuda-sim: on" in proc.stdout
    assert "1 failed, 7 passed, 1 not simulated in" in proc.stdout  # workers deselect: not in the count
    assert "6 test(s) ran on simulated CUDA" in proc.stdout



CONFTEST_DEVICES = {
    "conftest.py": """
        import pytest
        import torch

        DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])  # built at import


        def pytest_addoption(parser):
            parser.addoption("--device", action="append", default=None)


        def pytest_generate_tests(metafunc):
            if "device" in metafunc.fixturenames:
                wanted = metafunc.config.getoption("device") or DEVICES
                for device in wanted:
                    if device not in DEVICES:
                        pytest.skip(f"Device {device!r} is not available")
                metafunc.parametrize("device", wanted)
    """,
    "test_on_devices.py": """
        import torch


        def test_ones(device):
            assert torch.ones(2, device=device).device.type == device


        def test_mix(device):
            torch.ones(2, device=device) + torch.ones(2)


        def test_assertion(device):
            assert device == "nowhere"
    """,
}


def test_a_root_conftest_that_lists_devices_at_import_sees_cuda(tmp_path):
    for name, text in CONFTEST_DEVICES.items():
        (tmp_path / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    proc, outcomes = _run(tmp_path, "--cuda-sim", "--device", "cuda")
    assert outcomes["test_on_devices.test_ones[cuda]"] == ("passed", ""), proc.stdout + proc.stderr
    assert outcomes["test_on_devices.test_mix[cuda]"] == ("failed", f"RuntimeError: {MIX_MESSAGE}")
    assert outcomes["test_on_devices.test_assertion[cuda]"][0] == "failed"
    assert "switched on before the initial conftests were imported (pytest_load_initial_conftests)" in proc.stdout
    # the emulated device error is the simulator's; the plain assertion is not
    assert "1 failure(s) raised by cuda-sim" in proc.stdout
    assert "RAISED BY CUDA-SIM test_on_devices.py::test_mix[cuda] - emulated CUDA error" in proc.stdout
    assert "RAISED BY CUDA-SIM test_on_devices.py::test_assertion" not in proc.stdout
