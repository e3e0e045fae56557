"""The docker backend judges real cases exactly as the venv backend does (CI: .ci/run).

Builds the CPU images of two real cases with ``python -m harness images``, runs both cases with
``--backend docker`` and with ``--backend venv``, and compares every verdict and every cell. The cases:
var-resume (five variants in two images, one of them patched torch) and onetrainer-validation-device
(four variants sharing one transformers + diffusers image): three torch images, a few minutes each to
build cold on 2 cores. Each phase is a test of its own (images, venv run, docker run), so a run shows
progress between them instead of one long silent setup.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CASES = ("var-resume", "onetrainer-validation-device")
LANES = tuple(os.environ.get("REPRO_PARITY_LANES", "cpu,cuda-sim").split(","))
SELECTION = tuple(arg for case in CASES for arg in ("--case", case))

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
def parity_env(local_base) -> dict[str, str]:
    return {"REPRO_DOCKER_BASE": local_base}


@pytest.fixture(scope="module")
def images(parity_env) -> str:
    built = harness("images", *SELECTION, env=parity_env, timeout=5400)
    assert built.returncode == 0, built.stdout[-4000:] + built.stderr[-4000:]
    return built.stdout


def _run(backend: str, env: dict[str, str], output: Path) -> dict:
    lanes = [arg for lane in LANES for arg in ("--lane", lane)]
    proc = harness("cases", "--backend", backend, *lanes, *SELECTION, "--output", str(output), "--jobs", "2",
                   env=env, timeout=3600)
    assert proc.returncode in (0, 1), proc.stdout[-4000:] + proc.stderr[-4000:]
    return results_of(output)


@pytest.fixture(scope="module")
def venv_run(parity_env, tmp_path_factory) -> dict:
    return _run("venv", parity_env, tmp_path_factory.mktemp("venv"))


@pytest.fixture(scope="module")
def docker_run(images, parity_env, tmp_path_factory) -> dict:
    return _run("docker", parity_env, tmp_path_factory.mktemp("docker"))


@pytest.fixture(scope="module")
def runs(venv_run, docker_run) -> dict[str, dict]:
    return {"venv": venv_run, "docker": docker_run}


def test_the_cases_images_are_built(images):
    """Phase 1: one image per distinct environment (var-resume: patched and plain torch; onetrainer: one)."""
    lines = [line for line in images.splitlines() if line.startswith("[")]
    assert len([line for line in lines if " built " in line or " present " in line]) == 3, images


def test_the_venv_run_covers_every_cell(venv_run):
    """Phase 2: the reference run (the venv backend)."""
    assert {(c["case"], c["lane"]) for c in venv_run["cells"]} == {(case, lane) for case in CASES for lane in LANES}


def test_the_docker_run_covers_every_cell(docker_run, venv_run):
    """Phase 3: the same selection in containers."""
    assert len(docker_run["cells"]) == len(venv_run["cells"])


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
