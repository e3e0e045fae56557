"""A crash of the simulator's own code is told apart from what the simulated program raised.

The crash is real: the test breaks the simulator's placement counter (`cuda_sim._activity`), so the
simulator's own next placement raises inside cuda_sim/. Every other error below passes through the
simulator's frames and belongs to the program.
"""

from __future__ import annotations

import json
import textwrap

import pytest
import torch
from cuda_sim import NotSimulatedError, _activity, simulate
from cuda_sim._crash import internal_error


def _raised(action) -> BaseException:
    with pytest.raises(Exception) as caught:  # any error: the point is telling them apart
        action()
    return caught.value


@pytest.fixture
def broken_counter():
    saved = _activity.placements
    _activity.placements = None
    yield
    _activity.placements = saved


def test_a_crash_of_the_simulator_names_its_frame(broken_counter):
    with simulate():
        error = _raised(lambda: torch.ones(2, device="cuda"))
    assert isinstance(error, TypeError)
    site = internal_error(error)
    assert site is not None and site.startswith("cuda_sim/_placement.py:") and site.endswith(" in place_storage")
    # raised from it, the crash is still found
    try:
        raise RuntimeError("a library wrapped it") from error
    except RuntimeError as wrapped:
        assert internal_error(wrapped) == site


def test_the_programs_own_errors_are_not_crashes():
    with simulate():
        cuda = torch.ones(2, 3, device="cuda")
        errors = [
            _raised(lambda: cuda @ torch.ones(3, 2)),  # the simulated device error (a raise, on purpose)
            _raised(lambda: cuda @ torch.ones(2, 2, device="cuda")),  # a CPU kernel's shape error
            _raised(lambda: cuda[torch.tensor([5])]),  # IndexError from the kernel
            _raised(lambda: cuda.to("cuda", "cuda")),  # an argument error (to(1.5) is float64 for torch)
            _raised(lambda: cuda.view("x")),  # torch's argument parser, called by the simulator
            _raised(lambda: torch.ones(1, device="cuda:1")),  # not simulated
            _raised(lambda: cuda.numpy()),
        ]
    assert isinstance(errors[0], RuntimeError) and "same device" in str(errors[0])
    assert isinstance(errors[5], NotSimulatedError)
    assert [internal_error(e) for e in errors] == [None] * len(errors)


@pytest.mark.slow  # builds (or reuses) a torch environment and runs cells through the harness
def test_the_harness_judges_a_simulator_crash_as_infra_error(tmp_path):
    from tests.faults.conftest import cell, results_of, run_harness, verdict, write_case

    write_case(tmp_path / "cases", "sim-crash", textwrap.dedent("""
        import argparse
        import torch
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device")
        a = p.parse_args()
        if a.variant == "buggy":
            # the simulator is importable in cuda-sim cells only; by name, since validate refuses a torch-only
            # variant whose repro imports a library (the simulator is not one a case could pin)
            import importlib
            _activity = importlib.import_module("cuda_sim._activity")
            _activity.placements = None  # the simulator's next placement crashes in its own code
        print(torch.ones(2, device=a.device) * 2)
    """))
    output = tmp_path / "reports"
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cuda-sim", "--output", str(output))
    results = results_of(output)[0]
    buggy = cell(results, "sim-crash", "buggy", "cuda-sim")
    assert buggy["status"] == "infra-error" and buggy["judgement"] == "infra-error", json.dumps(buggy, indent=1)
    assert buggy["reason"].startswith("cuda-sim internal error at cuda_sim/_placement.py:")
    assert "in place_storage: TypeError: unsupported operand" in buggy["reason"]
    assert buggy["exception"]["sim_internal"].startswith("cuda_sim/_placement.py:")
    lane = verdict(results, "sim-crash", "cuda-sim")
    assert lane["verdict"] == "infra-error" and "cuda-sim internal error" in lane["reason"]
    assert proc.returncode == 1
