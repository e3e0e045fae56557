"""The docker backend judges real cases exactly as the venv backend does (CI: .ci/run).

Builds the CPU images of two real cases with ``python -m harness images``, runs both cases with
``--backend docker`` and with ``--backend venv``, and compares every verdict and every cell. Slow: the
first run builds five torch images (minutes each on 2 cores); later runs reuse them by tag.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = ("var-resume", "lycoris-extract-diff")
LANES = tuple(os.environ.get("REPRO_PARITY_LANES", "cpu,cuda-sim").split(","))

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def harness(*args: str, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **env, "COLUMNS": "200"})


def results_of(output: Path) -> dict:
    (run,) = [p for p in output.iterdir() if (p / "results.json").is_file()]
    return json.loads((run / "results.json").read_text())


def cells_of(results: dict) -> dict[tuple[str, str, str], tuple]:
    return {(c["case"], c["lane"], c["variant"]): (c["status"], c["judgement"], c["signature_matched"],
                                                   (c["exception"] or {}).get("type"))
            for c in results["cells"]}


@pytest.fixture(scope="module")
def runs(local_base, tmp_path_factory) -> dict[str, dict]:
    env = {"REPRO_DOCKER_BASE": local_base}
    selection = [arg for case in CASES for arg in ("--case", case)]
    lanes = [arg for lane in LANES for arg in ("--lane", lane)]
    built = harness("images", *selection, env=env, timeout=5400)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    results = {}
    for backend in ("venv", "docker"):
        output = tmp_path_factory.mktemp(backend)
        proc = harness("cases", "--backend", backend, *lanes, *selection, "--output", str(output), "--jobs", "2",
                       env=env, timeout=3600)
        assert proc.returncode in (0, 1), proc.stdout[-4000:] + proc.stderr[-4000:]
        results[backend] = results_of(output)
    return results


def test_verdicts_equal(runs):
    verdicts = {name: {(v["case"], v["lane"]): v["verdict"] for v in result["verdicts"]}
                for name, result in runs.items()}
    assert set(verdicts["docker"]) == {(case, lane) for case in CASES for lane in LANES}
    assert verdicts["docker"] == verdicts["venv"]


def test_every_cell_did_the_same(runs):
    assert cells_of(runs["docker"]) == cells_of(runs["venv"])


def test_docker_results_name_their_images(runs):
    docker = runs["docker"]
    assert docker["run"]["selection"]["backend"] == "docker"
    ran = [c for c in docker["cells"] if c["status"] not in ("skipped", "infra-error")]
    assert ran and all(c["image"] and c["image"]["tag"].startswith("repro-matrix/torch-cpu:") for c in ran)
    assert all(c["image"]["id"].startswith("sha256:") for c in ran)
    for env in docker["environments"].values():
        assert env["backend"] == "docker" and env["image"] and env["installed"].get("torch", "").startswith("2.13.0")
    # Same packages where both backends installed the same pins.
    venv_torch = {e["installed"].get("torch") for e in runs["venv"]["environments"].values()}
    docker_torch = {e["installed"].get("torch") for e in docker["environments"].values()}
    assert docker_torch == venv_torch


def test_no_container_outlives_the_run(runs, docker_client):
    from harness.docker import labelled_containers

    left = [c for c in labelled_containers(docker_client) if c.labels.get("repro-matrix.cell", "").startswith(CASES)]
    assert left == []
