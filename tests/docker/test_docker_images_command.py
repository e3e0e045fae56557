"""``python -m harness images`` for real: the base it settles on, and two builds of one image at once.

No REPRO_DOCKER_BASE on a host without a registry: ``images`` and ``cases --backend docker`` settle on the
local base scripts/docker-setup.sh made, say so in one line, and agree on the image (its tag holds the base).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harness.docker._client import find_image
from harness.docker._plan import LOCAL_BASE, default_base

REPO = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.docker, pytest.mark.slow]


def harness(*args: str) -> subprocess.CompletedProcess:
    unset = ("REPRO_DOCKER_BASE", "REPRO_DOCKER_CUDA_BASE", "REPRO_BASE_IMAGE")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=600, env={**env, "COLUMNS": "250", "FORCE_COLOR": "0"})


def test_images_and_docker_runs_use_the_local_base_without_being_told(docker_client, local_base, fixture_image,
                                                                       tmp_path):
    default = default_base(REPO / "images" / "torch" / "Dockerfile")
    if local_base != LOCAL_BASE or find_image(docker_client, default) is not None:
        pytest.skip(f"needs {LOCAL_BASE} and no {default} (a host without a registry)")
    note = (f"base image: {LOCAL_BASE} for cpu images: {default} is not on this host, so the local base "
            "scripts/docker-setup.sh made is used (REPRO_DOCKER_BASE chooses another)")
    selection = ("--cases-dir", "tests/fixtures/cases", "--case", "confirmed")

    listed = harness("images", "--list", *selection)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    assert listed.stdout.count(note) == 1, listed.stdout
    (row,) = [line for line in listed.stdout.splitlines() if fixture_image in line]
    assert "built" in row and "missing" not in row

    run = harness("cases", "--backend", "docker", "--lane", "cpu", *selection, "--output", str(tmp_path))
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.count(note) == 1, run.stdout
    (results,) = tmp_path.glob("*/results.json")
    cells = json.loads(results.read_text())["cells"]
    assert {cell["image"]["tag"] for cell in cells} == {fixture_image}
    assert {cell["judgement"] for cell in cells} == {"confirmed"}


def test_a_build_of_the_same_image_elsewhere_is_waited_for(fixture_image, local_base):
    """While another `images` holds an image's lock (it is building it), this one waits, then finds it built."""
    from filelock import FileLock

    from harness.docker._backend import image_log_dir
    from harness.docker._cli import _file_name

    lock = FileLock(str(image_log_dir() / f"{_file_name(fixture_image)}.lock"))
    command = [sys.executable, "-m", "harness", "images", "--cases-dir", "tests/fixtures/cases", "--case", "hangs"]
    env = {**os.environ, "REPRO_DOCKER_BASE": local_base, "COLUMNS": "250", "FORCE_COLOR": "0"}
    with lock:
        waiting = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True)
        try:
            assert waiting.stdout is not None
            first = waiting.stdout.readline()
            assert first.startswith(f"[1/1] waiting for another build of {fixture_image}"), first
            time.sleep(1)
            assert waiting.poll() is None  # still waiting while the lock is held
        except BaseException:
            waiting.kill()
            raise
    rest, _ = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, rest
    assert f"[1/1] {fixture_image} present" in rest and "building" not in rest
