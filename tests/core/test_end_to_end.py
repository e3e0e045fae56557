"""The real command line against fixture cases: every verdict produced for real on the CPU.

Runs ``python -m harness cases`` in a subprocess, as ``nox -s cases`` does, with real uv-built
environments (shared with the repo's environment cache so repeated runs reuse them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]


def harness(*args: str, cwd: Path = REPO, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO)})


def only_run(output: Path) -> dict:
    runs = [p for p in output.iterdir() if (p / "results.json").exists()]
    assert len(runs) == 1, runs
    return json.loads((runs[0] / "results.json").read_text())


@pytest.fixture(scope="module")
def fixture_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess, dict, Path]:
    output = tmp_path_factory.mktemp("reports")
    proc = harness("cases", "--cases-dir", "tests/fixtures/cases", "--output", str(output), "--jobs", "2")
    return proc, only_run(output), output


def test_each_fixture_gets_its_verdict_on_cpu(fixture_run):
    proc, results, _ = fixture_run
    cpu = {v["case"]: v["verdict"] for v in results["verdicts"] if v["lane"] == "cpu"}
    assert cpu == {"confirmed": "confirmed", "fix-regressed": "fix-regressed", "stale-repro": "stale-repro",
                   "failed-differently": "failed-differently", "hangs": "infra-error"}
    assert proc.returncode == 1, proc.stdout + proc.stderr


def test_unavailable_lanes_are_reported_skipped_with_reasons(fixture_run):
    _, results, _ = fixture_run
    cuda = [v for v in results["verdicts"] if v["lane"] == "cuda"]
    assert cuda and all(v["verdict"] == "skipped" and "no NVIDIA GPU" in v["reason"] for v in cuda)
    assert {v["lane"] for v in results["verdicts"]} == {"cpu", "cuda", "cuda-sim"}


def test_results_json_has_the_promised_shape(fixture_run):
    _, results, output = fixture_run
    schema = json.loads((REPO / "harness" / "results.schema.json").read_text())
    jsonschema.validate(results, schema)
    assert results["version"] == 1
    run = results["run"]
    assert run["status"] == "completed" and run["exit_code"] == 1 and run["finished"]
    assert {"os", "python", "cpu", "gpus"} <= set(run["host"])
    timeout_cell = next(c for c in results["cells"] if c["case"] == "hangs" and c["lane"] == "cpu"
                        and c["variant"] == "buggy")
    assert timeout_cell["status"] == "timeout" and timeout_cell["judgement"] == "infra-error"
    confirmed = next(c for c in results["cells"] if c["case"] == "confirmed" and c["lane"] == "cpu"
                     and c["variant"] == "buggy")
    assert confirmed["exception"]["type"] == "RuntimeError" and confirmed["signature_matched"] is True
    assert confirmed["environment"] in results["environments"]
    assert results["environments"][confirmed["environment"]]["installed"]["torch"].startswith("2.13.0")
    log = output / results["run"]["id"] / confirmed["log"]
    assert "Expected all tensors" in log.read_text()


def test_one_case_exits_zero_and_reuses_its_environment(tmp_path, fixture_run):
    proc = harness("cases", "--cases-dir", "tests/fixtures/cases", "--case", "confirmed", "--lane", "cpu",
                   "--output", str(tmp_path))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = only_run(tmp_path)
    assert [v["verdict"] for v in results["verdicts"]] == ["confirmed"]
    assert all(env["reused"] for env in results["environments"].values())


def test_broken_case_file_is_reported_and_the_others_still_run(tmp_path, fixture_cases):
    (fixture_cases / "stale-repro" / "case.yaml").write_text("id: stale-repro\ntitle: [broken\n")
    proc = harness("cases", "--cases-dir", str(fixture_cases), "--case", "confirmed", "--case", "stale-repro",
                   "--lane", "cpu", "--output", str(tmp_path))
    assert proc.returncode == 2
    assert "stale-repro/case.yaml" in proc.stdout and "malformed YAML" in proc.stdout
    results = only_run(tmp_path)
    assert [v["case"] for v in results["verdicts"]] == ["confirmed"]
    assert results["run"]["load_errors"]


@pytest.mark.parametrize(("args", "code", "text"), [
    (["--case", "nope"], 2, "unknown case 'nope'"),
    (["--lane", "gpu"], 2, "invalid choice: 'gpu'"),
    (["--variant", "zzz"], 2, "unknown variant 'zzz'"),
    (["--shard", "3/2"], 2, "K must be between 1 and N"),
])
def test_bad_selection_is_a_clear_error(tmp_path, args, code, text):
    proc = harness("cases", "--cases-dir", "tests/fixtures/cases", "--output", str(tmp_path), *args)
    assert proc.returncode == code
    assert text in proc.stdout + proc.stderr


def test_shards_share_a_run_id_from_the_environment(tmp_path):
    for shard in ("1/2", "2/2"):
        proc = subprocess.run(
            [sys.executable, "-m", "harness", "cases", "--cases-dir", "tests/fixtures/cases", "--lane", "cpu",
             "--case", "confirmed", "--case", "stale-repro", "--shard", shard, "--output", str(tmp_path)],
            cwd=REPO, capture_output=True, text=True, timeout=600,
            env={**os.environ, "REPRO_MATRIX_RUN_ID": "nightly-42"})
        assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    folders = sorted(p.name for p in tmp_path.iterdir())
    assert folders == ["nightly-42", "nightly-42.1"]
    ids = {json.loads((tmp_path / f / "results.json").read_text())["run"]["id"] for f in folders}
    cases = [json.loads((tmp_path / f / "results.json").read_text())["run"]["selection"]["cases"] for f in folders]
    assert ids == {"nightly-42"} and sorted(c for shard in cases for c in shard) == ["confirmed", "stale-repro"]


def test_relative_output_folder(tmp_path):
    proc = harness("cases", "--cases-dir", str(REPO / "tests/fixtures/cases"), "--case", "confirmed", "--lane", "cpu",
                   "--output", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert only_run(tmp_path / "out")["verdicts"][0]["verdict"] == "confirmed"


def test_list_shows_cases_without_running(tmp_path):
    proc = harness("cases", "--cases-dir", "tests/fixtures/cases", "--list")
    assert proc.returncode == 0
    assert "stale-repro" in proc.stdout and "https://example.invalid/issue/1" in proc.stdout
