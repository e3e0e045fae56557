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
from harness.conformance._errors import ConformanceFileError
from harness.conformance._runs import Pass, Result, run_pass
from harness.conformance._suites import Library, Triage, TriageEntry, load_libraries, load_triage

ROOT = Path(__file__).resolve().parents[2]


def _library(**changes) -> Library:
    fields = {"name": "demo", "sdist": "demo", "version": "1.0", "sha256": "0" * 64, "requires": ("pytest==9.2.0",),
              "tests": ("tests",), "subset": ("tests",)}
    fields.update(changes)
    return Library(**fields)


def test_checked_in_suites_and_triage_load():
    libraries = load_libraries()
    assert len(libraries) >= 3
    for library in libraries.values():
        assert library.subset, f"{library.name} has no CI subset"
        assert all("==" in r for r in library.requires)
    triage = load_triage(libraries=libraries)
    assert all(entry.reason for entries in triage.entries.values() for entry in entries)


@pytest.mark.parametrize(("body", "problem"), [
    ("libraries:\n  demo: {sdist: d, version: '1', sha256: x, tests: [t], requirs: [a==1]}\n", "did you mean 'requires'"),
    ("libraries:\n  demo: {sdist: d, version: '1', sha256: x, tests: [t], requires: [numpy]}\n", "unpinned"),
    ("libraries:\n  demo: {sdist: d, version: '1', sha256: x, tests: [t], requires: [torch==2.1]}\n", "torch is pinned"),
    ("libraries:\n  demo: {version: '1', sha256: x, tests: [t]}\n", "'sdist' is required"),
    ("libraries: [\n", "not valid YAML"),
])
def test_bad_suites_file_names_file_and_fix(tmp_path, body, problem):
    path = tmp_path / "suites.yaml"
    path.write_text(body)
    with pytest.raises(ConformanceFileError) as error:
        load_libraries(path)
    assert str(path) in str(error.value) and problem in str(error.value)


def test_bad_triage_entries_are_refused(tmp_path):
    path = tmp_path / "triage.yaml"
    libraries = {"demo": _library()}
    path.write_text("demo:\n  t::a: {class: simulator-gpa, reason: x}\n")
    with pytest.raises(ConformanceFileError, match="is not one of"):
        load_triage(path, libraries)
    path.write_text("demo:\n  t::a: {class: cuda-only}\n")
    with pytest.raises(ConformanceFileError, match="a reason is required"):
        load_triage(path, libraries)
    path.write_text("dmeo:\n  t::a: {class: cuda-only, reason: x}\n")
    with pytest.raises(ConformanceFileError, match="did you mean 'demo'"):
        load_triage(path, libraries)


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
    data = result.serialize()
    assert data["triage"]["unexplained"] == 1 and data["cpu_time_ratio"] == 1.2


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


@pytest.mark.slow
def test_ci_subset_has_no_unexplained_failure(tmp_path):
    """The CI subset of every library, both passes; fails on any test that fails under cuda-sim without a
    triage entry. Environments are cached under .repro-envs/conformance (first run builds them)."""
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "harness.conformance", "--subset", "--output", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=3600, env={**os.environ})
    elapsed = time.monotonic() - start
    assert proc.returncode == 0, f"exit {proc.returncode} after {elapsed:.0f} s\n{proc.stdout[-6000:]}\n{proc.stderr[-3000:]}"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["version"] == 1 and summary["selection"] == "subset" and not summary["not_run"]
    assert {lib["library"] for lib in summary["libraries"]} == set(_suites.load_libraries())
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
