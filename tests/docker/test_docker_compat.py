"""The docker images get the harness's host-compatibility step, the one the venv backend runs.

On a CPU-only host the wheelhouse holds the CPU torch and the one torchvision for it, a CUDA build whose
``_C.so`` cannot load beside it. The image for a real case that pins torchvision (timm-mixup-cpu-one-hot-cuda,
buggy variant) is built for real (the SDK's legacy builder): its build log and its record say the fix was applied, torchvision imports
in a container as a cell's does, and without the fix's hook the same image's import fails (the premise).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cases._load import load_case
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells

REPO = Path(__file__).resolve().parents[2]
CASE = "timm-mixup-cpu-one-hot-cuda"
APPLIED = ("torchvision-ops-on-cpu-torch: torch 2.13.0+cpu is a CPU build and torchvision 0.28.0's compiled ops "
           "cannot load beside it (")  # then the loader's reason: a CUDA library it cannot find
WITHOUT_HOOK = ("import sys; sys.meta_path[:] = [f for f in sys.meta_path if 'BeforeTorchvision' not in repr(f)]; "
                "import torchvision")

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_an_image_for_a_torchvision_case_applies_and_records_the_fix(docker_client, local_base, tmp_path):
    from harness.docker import ImageSettings, build_image, plan_image

    case = load_case(REPO / "cases" / CASE)
    (cell,) = [c for c in plan_cells([case], [LANE_TABLE["cpu"]]) if c.variant.name == "buggy"]
    # The legacy builder: it drops its build stage after each build, so the step runs on every build (BuildKit
    # may answer it from a cache another build left, and then its log has no line to show).
    settings = ImageSettings(cpu_base=local_base, builder="sdk")
    plan = plan_image(cell.env_spec(), "cpu", settings=settings)
    said: list[str] = []
    result = build_image(docker_client, plan, log_path=tmp_path / "build.log", say=said.append)
    try:
        _check_the_image(docker_client, case, cell, settings, plan, result, said)
    finally:  # a torch image is 1.5 GB: CI's disk keeps none of them
        docker_client.images.remove(plan.tag, force=True)


def _check_the_image(docker_client, case, cell, settings, plan, result, said) -> None:
    from docker.errors import ContainerError

    from harness.docker import DockerBackend

    assert f"[repro-matrix: compat {APPLIED}" in result.log_path.read_text()
    assert any(line.strip().startswith(f"[repro-matrix: compat {APPLIED}") for line in said), said

    backend = DockerBackend(settings=settings, cases=[case], lanes=("cpu",))
    try:
        env = backend.prepare(cell.env_spec(), lambda message: None)
    finally:
        backend.cancel()
    assert len(env.compat) == 1 and env.compat[0].startswith(APPLIED)  # what results.json records
    assert "cannot open shared object file" in env.compat[0]

    run = {"network_mode": "none", "read_only": True, "remove": True, "stderr": True, "tmpfs": {"/tmp": ""}}
    code = "import torch, torchvision; print(torch.__version__, torch.version.cuda, torchvision.__version__)"
    torch, cuda, torchvision = docker_client.containers.run(plan.tag, ["python", "-I", "-c", code], **run).split()[-3:]
    assert (torch, cuda) == (b"2.13.0+cpu", b"None") and torchvision.startswith(b"0.28.0+cu")  # the CUDA build
    with pytest.raises(ContainerError, match="operator torchvision::nms does not exist"):
        docker_client.containers.run(plan.tag, ["python", "-I", "-c", WITHOUT_HOOK], **run)
