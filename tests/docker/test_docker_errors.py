"""The errors a user meets, produced for real: no daemon, image missing, build failure."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness._exceptions import HarnessError
from harness.docker import (
    DockerUnavailableError,
    ImageBuildError,
    ImageMissingError,
    ImageSettings,
    build_image,
    connect,
    plan_image,
)
from harness.docker._build import make_context
from harness.environments._spec import EnvSpec

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def no_daemon(tmp_path, monkeypatch) -> str:
    """DOCKER_HOST pointing at a socket path where nothing listens."""
    address = f"unix://{tmp_path}/docker.sock"
    monkeypatch.setenv("DOCKER_HOST", address)
    return address


def harness(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env={**os.environ, **env, "COLUMNS": "250"})


# docker's UnixHTTPConnection.connect leaves its socket unclosed when connect() fails (docker 7.2); collected
# here, its ResourceWarning would fail whichever test the garbage collector happened to run in.
@pytest.mark.filterwarnings(r"ignore:Exception ignored in. <socket\.socket .*family=1:pytest.PytestUnraisableExceptionWarning")
def test_no_daemon_names_the_socket_and_how_to_start_one(no_daemon):
    with pytest.raises(DockerUnavailableError) as caught:
        connect()
    message = str(caught.value)
    assert no_daemon in message
    assert "scripts/docker-setup.sh" in message and "dockerd --bridge=none --iptables=false" in message
    assert isinstance(caught.value, HarnessError)
    del caught  # its traceback holds the socket
    gc.collect()


def test_no_daemon_from_the_command_line(no_daemon, tmp_path):
    images = harness("images", "--list", env={"DOCKER_HOST": no_daemon})
    assert images.returncode == 2, images.stdout + images.stderr
    assert "no Docker daemon reachable" in images.stdout and no_daemon in images.stdout
    cases = harness("cases", "--backend", "docker", "--lane", "cpu", "--cases-dir", "tests/fixtures/cases",
                    "--case", "confirmed", "--output", str(tmp_path), env={"DOCKER_HOST": no_daemon})
    assert cases.returncode == 2, cases.stdout + cases.stderr
    assert "no Docker daemon reachable" in cases.stdout
    assert "Traceback" not in cases.stdout + cases.stderr


def test_wheelhouse_failure_shows_pip_output(tmp_path):
    plan = plan_image(EnvSpec(requires=("repro-matrix-no-such-package==0.0.1",)), "cpu")
    log = tmp_path / "build.log"
    log.write_text("")
    with pytest.raises(ImageBuildError) as caught:
        make_context(plan, tmp_path, log, say=lambda text: None)
    assert "repro-matrix-no-such-package" in str(caught.value)
    assert caught.value.log_path == log
    assert "No matching distribution" in str(caught.value) or "ERROR" in str(caught.value)


@pytest.mark.docker
def test_image_missing_says_which_command_builds_it(docker_client):
    from harness.docker import DockerBackend

    cases = _fixture_cases()
    confirmed = next(c for c in cases if c.id == "confirmed").variants["buggy"]
    never = ImageSettings(cpu_base="repro-matrix-test/never-built:1")
    backend = DockerBackend(settings=never, cases=cases, lanes=("cpu",))
    with pytest.raises(ImageMissingError) as caught:
        backend.prepare(EnvSpec(requires=confirmed.requires, patches=confirmed.patches), progress=print)
    message = str(caught.value)
    assert "is not built; build it with: nox -s images -- --case confirmed" in message
    assert "torch==2.13.0" in message
    with pytest.raises(ImageMissingError, match=r"nox -s images -- --case <id>"):
        backend.prepare(EnvSpec(requires=("torch==2.13.0", "unused-by-any-case==1")), progress=print)


@pytest.mark.docker
def test_image_missing_names_the_case_and_another_base(docker_client, tiny_build, tiny_spec, tiny_settings):
    from harness.docker._client import missing_image_message

    plan, _, _ = tiny_build
    elsewhere = plan_image(tiny_spec, "cpu", settings=ImageSettings(cpu_base="some/other-base:1"))
    message = missing_image_message(docker_client, elsewhere, ["my-case"])
    assert "nox -s images -- --case my-case" in message
    assert f"built FROM {plan.base}" in message and "REPRO_DOCKER_BASE" in message
    cuda = plan_image(tiny_spec, "cuda", settings=ImageSettings(cuda_base="some/other-base:1"))
    assert "--lane cuda" in missing_image_message(docker_client, cuda, ["my-case"])


@pytest.fixture(params=["sdk", "buildkit"])
def builder(request) -> str:
    if request.param == "buildkit":
        from harness.docker._buildkit import buildkit_cli

        try:
            buildkit_cli()
        except HarnessError as error:
            pytest.skip(str(error))
    return request.param


@pytest.mark.docker
def test_build_failure_names_the_failing_step_and_shows_the_log_tail(docker_client, local_base, tmp_path,
                                                                     dangling_ids, builder):
    # pip inside the build with no network and no wheelhouse: the install step must fail.
    settings = ImageSettings(cpu_base=local_base, pip_source="index", build_network="none", builder=builder)
    plan = plan_image(EnvSpec(requires=("six==1.17.0",)), "cpu", settings=settings)
    before = dangling_ids()
    with pytest.raises(ImageBuildError) as caught:
        build_image(docker_client, plan, log_path=tmp_path / "fail.log", say=lambda text: None)
    assert dangling_ids() - before == set()  # the half-built stage is removed
    message = str(caught.value)
    assert "failed at " in message and "RUN set -f" in message
    assert "--- last lines of the build log ---" in message and "six" in message
    assert caught.value.log_path == tmp_path / "fail.log"
    assert docker_client.images.list(name=plan.tag) == []


@pytest.mark.docker
def test_missing_base_image_says_how_to_make_one(docker_client, tmp_path, builder):
    settings = ImageSettings(cpu_base="repro-matrix-test/no-such-base:1", pip_source="index", builder=builder)
    plan = plan_image(EnvSpec(requires=("six==1.17.0",)), "cpu", settings=settings)
    with pytest.raises(ImageBuildError) as caught:
        build_image(docker_client, plan, log_path=tmp_path / "base.log", say=lambda text: None)
    message = str(caught.value)
    assert "repro-matrix-test/no-such-base:1" in message
    assert "scripts/docker-setup.sh" in message


def _fixture_cases():
    from harness.cases._load import load_cases

    return load_cases([REPO / "tests/fixtures/cases"]).cases


@pytest.mark.docker
def test_image_missing_says_how_to_retag_an_untagged_copy(docker_client, tiny_build):
    """Same recipe and base but not under the expected tag (``docker load`` of a save by id): say so."""
    from harness.docker._client import missing_image_message

    plan, _, _ = tiny_build
    message = missing_image_message(docker_client, plan, ["my-case"])
    image_id = docker_client.images.get(plan.tag).id.removeprefix("sha256:")[:12]
    assert f"exists without this tag: docker tag {image_id} {plan.tag}" in message
    assert "REPRO_DOCKER_BASE" not in message


def test_a_disk_usage_query_waits_for_the_one_the_daemon_is_running(monkeypatch):
    """Two runs pruning at once: the daemon refuses the second `system df` until the first ends (seen on a
    shared daemon); the second waits instead of failing its build. Other API errors still raise."""
    from docker.errors import APIError

    from harness.docker import _clean

    monkeypatch.setattr(_clean.time, "sleep", lambda seconds: None)
    answers: list = [APIError("500 Server Error: a disk usage operation is already running"), {"BuildCache": []}]

    class Client:
        def df(self):
            answer = answers.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer

    assert _clean.build_cache_ids(Client()) == set() and not answers
    answers[:] = [APIError("500 Server Error: something else")]
    with pytest.raises(APIError, match="something else"):
        _clean.build_cache_ids(Client())
