"""Docker test plumbing: a daemon, the local base image, a tiny image, cells in throwaway cases.

Tests marked ``docker`` need a reachable daemon (``docker_client``, tests/conftest.py) and the local base
image (``scripts/docker-setup.sh`` makes both). Without them they are skipped, unless
``REPRO_REQUIRE_DOCKER=1`` (CI), where a missing daemon is a failure. The tiny image holds ``six`` (with a patch) instead of torch, so it builds in
seconds; the torch images are exercised by the parity test.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from harness.cases._load import PatchFile, load_case
from harness.environments._spec import EnvSpec
from harness.run._backend import CellRequest
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).with_name("data")
LOCAL_BASE = "localbase/python:3.11"
TINY_REQUIRES = ("six==1.17.0",)


@pytest.fixture(scope="session")
def local_base(docker_client, docker_unavailable) -> str:
    base = os.environ.get("REPRO_DOCKER_BASE") or LOCAL_BASE
    from harness.docker._client import find_image

    if find_image(docker_client, base) is None:
        docker_unavailable(f"base image {base} is missing: run scripts/docker-setup.sh")
    return base


@pytest.fixture(scope="session")
def fixture_image(docker_client, local_base: str) -> str:
    """The fixture cases' one environment (torch==2.13.0) as an image, built once per session with the real
    ``python -m harness images`` command; its tag."""
    from harness.docker import ImageSettings, plan_image

    built = subprocess.run([sys.executable, "-m", "harness", "images", "--cases-dir", "tests/fixtures/cases",
                            "--case", "hangs"], cwd=REPO, capture_output=True, text=True, timeout=1800,
                           env={**os.environ, "REPRO_DOCKER_BASE": local_base})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    spec = plan_cells([load_case(REPO / "tests" / "fixtures" / "cases" / "hangs")], [LANE_TABLE["cpu"]])[0].env_spec()
    return plan_image(spec, "cpu", settings=ImageSettings(cpu_base=local_base)).tag


@pytest.fixture(scope="session")
def tiny_settings(local_base: str):
    from harness.docker import ImageSettings

    return ImageSettings(cpu_base=local_base, cuda_base=local_base)


@pytest.fixture(scope="session")
def tiny_spec() -> EnvSpec:
    return EnvSpec(requires=TINY_REQUIRES, patches=(PatchFile.from_path(DATA / "six-marker.diff"),))


@pytest.fixture(scope="session")
def tiny_build(docker_client, tiny_settings, tiny_spec, tmp_path_factory):
    """The tiny CPU image, built for real once per session (cached layers make repeats quick)."""
    from harness.docker import build_image, plan_image

    plan = plan_image(tiny_spec, "cpu", settings=tiny_settings)
    log = tmp_path_factory.mktemp("build") / "tiny.build.log"
    lines: list[str] = []
    before = _dangling(docker_client)
    result = build_image(docker_client, plan, log_path=log, say=lines.append)
    lines.extend(f"new dangling image {i}" for i in _dangling(docker_client) - before)
    return plan, result, lines


@pytest.fixture
def dangling_ids(docker_client):
    return lambda: _dangling(docker_client)


def _dangling(client) -> set[str]:
    return {image.id for image in client.images.list(filters={"dangling": True})}


@pytest.fixture(scope="session")
def tiny_cuda_image(docker_client, tiny_settings, tiny_spec, tmp_path_factory):
    """The tiny image in the CUDA flavour (Dockerfile.cuda on the local base: no GPU libraries)."""
    from harness.docker import build_image, plan_image
    from harness.docker._client import find_image

    plan = plan_image(tiny_spec, "cuda", settings=tiny_settings)
    if find_image(docker_client, plan.tag) is None:
        build_image(docker_client, plan, log_path=tmp_path_factory.mktemp("build") / "cuda.log", say=print)
    return plan


@pytest.fixture
def backend(tiny_build, tiny_settings):
    from harness.docker import DockerBackend

    made = DockerBackend(memory_limit_bytes=512 * 1024**2, settings=tiny_settings)
    yield made
    made.cancel()


@pytest.fixture
def containers_of(docker_client):
    """The containers (any state) labelled with a run id."""
    from harness.docker import labelled_containers

    return lambda run_id: labelled_containers(docker_client, f"repro-matrix.run={run_id}")


@pytest.fixture
def cell_request(tmp_path):
    """A factory: a throwaway case folder holding ``script`` and a request to run it."""
    return lambda script, **options: _make_request(tmp_path, script, **options)


def _make_request(tmp_path: Path, script: str, *, timeout: float = 60, gpu: bool = False,
                 env: dict[str, str] | None = None) -> CellRequest:
    case_dir = tmp_path / "case"
    case_dir.mkdir(exist_ok=True)
    (case_dir / "repro.py").write_text(textwrap.dedent(script))
    log = tmp_path / "logs" / "cell.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("# header\n")
    return CellRequest(case_dir=case_dir, script=case_dir / "repro.py", shims=(),
                       argv=("--variant", "v", "--device", "cuda" if gpu else "cpu"), sim=False, gpu=gpu,
                       env=env or {}, timeout=timeout, cell_dir=tmp_path / "cell", log_path=log,
                       label="test/cpu/v")
