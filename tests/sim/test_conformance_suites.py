"""The conformance runner (harness/conformance): its data files, its per-test comparison, the recorder that
survives a killed pytest, and (slow) the CI subset of real libraries' suites under cuda-sim."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from harness.conformance import _sources, _suites
from harness.conformance._compare import UNEXPLAINED, compare
from harness.conformance._runs import Pass, Result, run_pass
from harness.conformance._suites import Cuda, Library, Triage, TriageEntry, load_libraries

ROOT = Path(__file__).resolve().parents[2]


def _library(**changes) -> Library:
    fields = {"name": "demo", "sdist": "demo", "version": "1.0", "sha256": "0" * 64, "requires": ("pytest==9.2.0",),
              "tests": ("tests",), "subset": ("tests",)}
    fields.update(changes)
    return Library(**fields)


def test_checked_in_library_files_load():
    loaded = load_libraries()
    assert not loaded.problems, "\n".join(map(str, loaded.problems))
    assert len(loaded.libraries) >= 12
    for library in loaded.libraries.values():
        assert library.subset, f"{library.name} has no subset"
        assert all("==" in r for r in library.requires)
        assert all(entry.reason for entry in library.triage)
    assert {lib.name for lib in loaded.libraries.values() if lib.ci} == {"accelerate", "peft", "ignite"}


GOOD = "sdist: d\nversion: '1'\nsha256: " + "a" * 64 + "\ncuda: automatic\ntests: [t]\n"


@pytest.mark.parametrize(("body", "problem"), [
    (GOOD + "requirs: [a==1]\n", "did you mean 'requires'"),
    (GOOD + "requires: [numpy]\n", "unpinned"),
    (GOOD + "requires: [torch==2.1]\n", "torch is pinned"),
    (GOOD.replace("sdist: d\n", ""), "'sdist' is required"),
    (GOOD.replace("cuda: automatic", "cuda: yes"), "how the suite picks CUDA"),
    (GOOD.replace("cuda: automatic", "cuda: {arg: [--device]}"), "did you mean 'args'"),
    (GOOD.replace("a" * 64, "abc"), "64 hex digits"),
    (GOOD + "triage:\n  t::a: {class: simulator-gpa, reason: x}\n", "is not one of"),
    (GOOD + "triage:\n  t::a: {class: cuda-only}\n", "a reason is required"),
    ("tests: [\n", "malformed YAML"),  # the one bounded loader's words (harness/_io.py)
])
def test_a_bad_library_file_is_skipped_naming_file_and_fix(tmp_path, body, problem):
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "bad.yaml").write_text(body)
    loaded = load_libraries(tmp_path)
    assert list(loaded.libraries) == ["good"]  # the other library still loads
    [error] = loaded.problems
    assert str(tmp_path / "bad.yaml") in str(error) and problem in str(error)


def test_a_library_file_outside_the_repo_runs_alone(tmp_path):
    own = tmp_path / "mylib.yaml"
    own.write_text(GOOD.replace("cuda: automatic", "cuda: {args: [--device, cuda], env: {MYLIB_DEVICE: cuda}}"))
    proc = subprocess.run([sys.executable, "-m", "harness.conformance", "--library-file", str(own), "--list"],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("mylib: d==1") and "cuda: --device cuda, MYLIB_DEVICE=cuda" in proc.stdout
    assert "accelerate" not in proc.stdout


def _conformance(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "harness.conformance", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_a_checked_in_library_file_given_by_path_runs_alone():
    """Naming a built-in file with --library-file is that library, not a clash with itself."""
    proc = _conformance("--library-file", "harness/conformance/libraries/einops.yaml", "--list")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("einops: ") and "accelerate" not in proc.stdout and "skipped" not in proc.stderr


def test_library_files_that_are_all_refused_stop_the_run_instead_of_running_every_library(tmp_path):
    bad = tmp_path / "mylib.yaml"
    bad.write_text("tests: [\n")
    proc = _conformance("--library-file", str(bad), "--list")
    assert proc.returncode == 2 and "no --library-file could be used" in proc.stderr
    said = proc.stdout + proc.stderr
    assert str(bad) in said and "malformed YAML" in said and "accelerate" not in said


def _pass(mode: str, **results: str) -> Pass:
    run = Pass(mode, cpu_seconds=10.0 if mode == "cpu" else 12.0)
    for test, outcome in results.items():
        message = "Expected all tensors to be on the same device, but found ..." if outcome == "device" else "boom"
        run.results[test] = Result("failed" if outcome == "device" else outcome, 0.1, message)
    run.collected = list(results)
    return run


def test_compare_flags_unexplained_and_counts_triaged():
    cpu = _pass("cpu", a="passed", b="passed", c="skipped", d="skipped", e="failed", f="passed", g="passed")
    sim = _pass("sim", a="passed", b="failed", c="passed", d="device", e="failed", f="skipped", g="passed")
    triage = Triage({"demo": (TriageEntry("b", "cuda-only", "CUDA kernel numerics"),
                              TriageEntry("g", "simulator-gap", "fixed since"))})
    result = compare(_library(), ("tests",), cpu, sim, triage)
    kinds = {row.test: row.kind for row in result.rows}
    # b: triaged; d: a CUDA-gated test failing under the sim with a device error, not triaged; e fails on the
    # CPU too (not the simulator's); f is skipped by the library under CUDA (its own choice).
    assert kinds == {"b": "cuda-only", "d": UNEXPLAINED}
    assert result.false_device_errors == 1
    assert result.newly_run == 1  # c
    assert result.stale == ["g"]
    assert result.ratio == pytest.approx(1.2)
    assert result.same_tests_ratio == pytest.approx(1.0)  # a and g: wall durations (no CPU time recorded)
    cpu.results["a"].cpu, sim.results["a"].cpu, cpu.results["g"].cpu, sim.results["g"].cpu = 1.0, 3.0, 1.0, 1.0
    assert result.same_tests_ratio == pytest.approx(2.0)  # CPU time where both passes recorded it
    data = result.serialize()
    assert data["triage"]["unexplained"] == 1 and data["cpu_time_ratio"] == 1.2


def test_a_cuda_twin_is_compared_with_its_cpu_test():
    """Suites that add 'cuda' to a device parametrization only when cuda is available: the plain pass never
    collects `t[cuda-x]`; its oracle is `t[cpu-x]`."""
    cpu = _pass("cpu", **{"t[cpu-x]": "passed", "t[cpu-y]": "passed", "u[cpu]": "failed", "v[torch.cpu.c]": "passed"})
    sim = _pass("sim", **{"t[cpu-x]": "passed", "t[cpu-y]": "passed", "u[cpu]": "failed", "v[torch.cpu.c]": "passed",
                          "t[cuda-x]": "passed", "t[cuda-y]": "device", "u[cuda:0]": "failed", "v[torch.gpu.c]": "failed"})
    result = compare(_library(), ("tests",), cpu, sim, Triage({}))
    assert [(row.test, row.cpu, row.kind) for row in result.rows] == [
        ("t[cuda-y]", "passed (cpu twin)", UNEXPLAINED), ("v[torch.gpu.c]", "passed (cpu twin)", UNEXPLAINED)]
    assert result.false_device_errors == 1 and result.newly_run == 1  # t[cuda-x]; u fails on the CPU too


def _write_project(root: Path) -> None:
    (root / "tests").mkdir(parents=True)
    (root / "tests" / "test_demo.py").write_text(textwrap.dedent("""
        import os, signal
        def test_first():
            pass
        def test_killed():
            os.kill(os.getpid(), signal.SIGKILL)
        def test_after_kill():
            pass
        def test_fails():
            assert 1 == 2
    """))


def test_a_killed_pytest_loses_one_test_and_the_rest_runs(tmp_path):
    _write_project(tmp_path / "src")
    # The recorder must be importable in the child; the library venv has harness on a .pth, here PYTHONPATH.
    library = _library(env={"PYTHONPATH": str(ROOT)}, timeout=300)
    run = run_pass(library, "cpu", Path(sys.prefix), tmp_path / "src", ("tests",), tmp_path / "out", lambda _: None)
    outcomes = {test.split("::")[-1]: result.outcome for test, result in run.results.items()}
    assert outcomes == {"test_first": "passed", "test_killed": "crashed", "test_after_kill": "passed",
                        "test_fails": "failed"}
    assert run.processes == 2 and run.cpu_seconds > 0
    # per-test process CPU time (the same-tests ratio), for every test that finished
    assert all(r.cpu is not None and r.cpu >= 0 for t, r in run.results.items() if not t.endswith("test_killed"))
    assert "SIGKILL" in run.results["tests/test_demo.py::test_killed"].message
    assert (tmp_path / "out" / "junit-1.xml").exists()


def test_sim_pass_runs_cuda_gated_tests_and_reports_not_simulated(tmp_path):
    tests = tmp_path / "src" / "tests"
    tests.mkdir(parents=True)
    (tests / "test_gpu.py").write_text(textwrap.dedent("""
        import pytest, torch
        needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
        @needs_cuda
        def test_on_cuda():
            assert (torch.ones(2, device="cuda") * 2).device.type == "cuda"
        @needs_cuda
        def test_mix():
            torch.ones(2, device="cuda") + torch.ones(2)
        @needs_cuda
        def test_second_gpu():
            torch.zeros(1, device="cuda:1")
    """))
    library = _library(env={"PYTHONPATH": str(ROOT)}, timeout=300)
    runs = {mode: run_pass(library, mode, Path(sys.prefix), tmp_path / "src", ("tests",), tmp_path / mode,
                           lambda _: None) for mode in ("cpu", "sim")}
    outcome = {mode: {t.split("::")[-1]: r.outcome for t, r in run.results.items()} for mode, run in runs.items()}
    assert outcome["cpu"] == dict.fromkeys(("test_on_cuda", "test_mix", "test_second_gpu"), "skipped")
    assert outcome["sim"] == {"test_on_cuda": "passed", "test_mix": "failed", "test_second_gpu": "not-simulated"}
    assert "same device" in runs["sim"].results["tests/test_gpu.py::test_mix"].message
    assert runs["sim"].results["tests/test_gpu.py::test_second_gpu"].message.startswith("not simulated:")
    result = compare(library, ("tests",), runs["cpu"], runs["sim"], Triage({}))
    assert {row.test.split("::")[-1]: row.kind for row in result.rows} == {
        "test_mix": UNEXPLAINED, "test_second_gpu": UNEXPLAINED}
    assert result.newly_run == 1 and result.false_device_errors == 1


def test_the_simulated_pass_alone_gets_the_suites_cuda_switch(tmp_path):
    """A suite that picks its device from an option or a variable gets them in the simulated pass only."""
    tests = tmp_path / "src" / "tests"
    tests.mkdir(parents=True)
    (tests / "conftest.py").write_text(textwrap.dedent("""
        import os
        def pytest_addoption(parser):
            parser.addoption("--device", default="cpu")
        def pytest_generate_tests(metafunc):
            if "device" in metafunc.fixturenames:
                metafunc.parametrize("device", [metafunc.config.getoption("--device") + os.environ.get("SUFFIX", "")])
    """))
    (tests / "test_dev.py").write_text(textwrap.dedent("""
        import torch
        def test_on(device):
            assert torch.ones(2, device=device).device == torch.device(device)
    """))
    library = _library(env={"PYTHONPATH": str(ROOT)}, timeout=300,
                       cuda=Cuda(args=("--device", "cuda"), env={"SUFFIX": ":0"}))
    runs = {mode: run_pass(library, mode, Path(sys.prefix), tmp_path / "src", ("tests",), tmp_path / mode,
                           lambda _: None) for mode in ("cpu", "sim")}
    assert {t: r.outcome for t, r in runs["cpu"].results.items()} == {"tests/test_dev.py::test_on[cpu]": "passed"}
    assert {t: r.outcome for t, r in runs["sim"].results.items()} == {"tests/test_dev.py::test_on[cuda:0]": "passed"}


@pytest.mark.slow
def test_ci_subset_has_no_unexplained_failure(tmp_path):
    """The CI subset of every library, both passes; fails on any test that fails under cuda-sim without a
    triage entry. Environments are cached under .repro-envs/conformance (first run builds them)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness.conformance", "--ci", "--output", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600, env={**os.environ})
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, f"exit {proc.returncode} after {elapsed:.0f} s\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["version"] == 1 and summary["selection"] == "subset" and not summary["not_run"]
    assert {lib["library"] for lib in summary["libraries"]} == {
        lib.name for lib in _suites.load_libraries().libraries.values() if lib.ci}
    for lib in summary["libraries"]:
        assert lib["sim"]["counts"].get("passed", 0) > 0, lib["library"]
        assert lib["triage"]["unexplained"] == 0


def test_a_cached_environment_runs_this_checkouts_simulator(tmp_path):
    # a cache another checkout built (or a copied one): its venv's shim names that checkout's harness
    library = _library()
    venv = tmp_path / "envs" / f"demo-{_sources._env_key(library)}"
    site = venv / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    other = tmp_path / "other-checkout" / "harness"
    other.mkdir(parents=True)
    (venv / "repro-matrix-path").mkdir()
    (venv / "repro-matrix-path" / "harness").symlink_to(other, target_is_directory=True)
    (site / "zz_repro_matrix.pth").write_text("/elsewhere/repro-matrix-path\n")
    (venv / ".complete").write_text("pins\n")

    assert _sources.build_env(library, tmp_path, lambda message: None) == venv  # reused, not rebuilt

    assert (venv / "repro-matrix-path" / "harness").resolve() == (ROOT / "harness").resolve()
    assert (site / "zz_repro_matrix.pth").read_text() == f"{venv / 'repro-matrix-path'}\n"
