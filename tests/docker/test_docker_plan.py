"""Image planning without a daemon: build args, tags (stable and sensitive), labels, the catalogue."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from harness._exceptions import UsageError
from harness.cases._load import PatchFile, load_cases
from harness.docker import ImageSettings, catalog, plan_image
from harness.docker._catalog import flavour_for_lane, flavours_for_lanes
from harness.docker._plan import WHEELHOUSE_PIP_SOURCE, default_base, normalise_requirements, settle_bases
from harness.environments._spec import EnvSpec

REPO = Path(__file__).resolve().parents[2]
DATA = Path(__file__).with_name("data")
SPEC = EnvSpec(requires=("torch==2.13.0", "numpy"))
LOCAL = ImageSettings(cpu_base="localbase/python:3.11", cuda_base="localbase/python:3.11")


def test_dockerfile_defaults_are_public_images():
    assert default_base(REPO / "images/torch/Dockerfile") == "python:3.11-slim-bookworm"
    assert default_base(REPO / "images/torch/Dockerfile.cuda").startswith("nvidia/cuda:")


def test_build_args_for_an_air_gapped_build():
    args = plan_image(SPEC, "cpu", settings=LOCAL).build_args()
    assert args == {"PYTHON_VERSION": SPEC.python, "REQUIREMENTS": "numpy torch==2.13.0",
                    "BASE_IMAGE": "localbase/python:3.11", "PIP_SOURCE": WHEELHOUSE_PIP_SOURCE}


def test_build_args_online_keep_the_dockerfile_defaults():
    plan = plan_image(SPEC, "cuda", settings=ImageSettings(pip_source="index"))
    assert plan.build_args() == {"PYTHON_VERSION": SPEC.python, "REQUIREMENTS": "numpy torch==2.13.0"}
    assert plan.dockerfile.name == "Dockerfile.cuda"
    custom = replace(plan.settings, index_args="--index-url https://mirror.example/simple")
    assert replace(plan, settings=custom).build_args()["PIP_SOURCE"] == "--index-url https://mirror.example/simple"


def test_requirements_lose_whitespace_and_markers_are_decided_for_the_image_python():
    got = normalise_requirements(["torch == 2.13.0", 'old; python_version < "3.0"',
                                  'new >= 1; python_version >= "3.8"', "pkg[extra]>=1,<2"], "3.11")
    assert got == ("new>=1", "pkg[extra]<2,>=1", "torch==2.13.0")
    assert all(" " not in r for r in got)


def test_tag_is_stable_across_processes_and_requirement_order():
    tag = plan_image(SPEC, "cpu", settings=LOCAL).tag
    assert plan_image(EnvSpec(requires=("numpy", "torch==2.13.0")), "cpu", settings=LOCAL).tag == tag
    code = ("from harness.environments._spec import EnvSpec; from harness.docker import ImageSettings, plan_image; "
            "print(plan_image(EnvSpec(requires=('torch==2.13.0', 'numpy')), 'cpu', "
            "settings=ImageSettings(cpu_base='localbase/python:3.11')).tag)")
    other = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, check=True,
                           env={**os.environ, "PYTHONHASHSEED": "123"})
    assert other.stdout.strip() == tag
    assert tag.startswith("repro-matrix/torch-cpu:") and len(tag.rpartition(":")[2]) == 12


def test_tag_changes_with_everything_that_changes_the_image(tmp_path):
    base = plan_image(SPEC, "cpu", settings=LOCAL)
    patch = PatchFile.from_path(DATA / "six-marker.diff")
    variants = {
        "pin": plan_image(EnvSpec(requires=("torch==2.13.0", "numpy==2.0.0")), "cpu", settings=LOCAL),
        "patch": plan_image(EnvSpec(requires=SPEC.requires, patches=(patch,)), "cpu", settings=LOCAL),
        "python": plan_image(EnvSpec(requires=SPEC.requires, python="3.12"), "cpu", settings=LOCAL),
        "base": plan_image(SPEC, "cpu", settings=replace(LOCAL, cpu_base="other/python:3.11")),
        "flavour": plan_image(SPEC, "cuda", settings=LOCAL),
        "layout": plan_image(SPEC, "cpu", settings=replace(LOCAL, layout="flat")),
    }
    copied = tmp_path / "torch"
    shutil.copytree(REPO / "images/torch", copied)
    with (copied / "Dockerfile").open("a") as handle:
        handle.write("# one more line\n")
    variants["dockerfile"] = plan_image(SPEC, "cpu", image_dir=copied, settings=LOCAL)
    tags = {name: plan.tag for name, plan in variants.items()}
    assert base.tag not in tags.values()
    assert len(set(tags.values())) == len(tags)
    # Same recipe from another base: the hint for "built FROM another base" relies on this.
    assert variants["base"].recipe_hash == base.recipe_hash


def test_patch_content_not_path_decides_the_tag(tmp_path):
    moved = tmp_path / "renamed.diff"
    shutil.copyfile(DATA / "six-marker.diff", moved)
    one = plan_image(EnvSpec(SPEC.requires, (PatchFile.from_path(DATA / "six-marker.diff"),)), "cpu", settings=LOCAL)
    two = plan_image(EnvSpec(SPEC.requires, (PatchFile.from_path(moved),)), "cpu", settings=LOCAL)
    assert one.tag == two.tag


def test_labels_record_pins_base_and_patches():
    patch = PatchFile.from_path(DATA / "six-marker.diff")
    plan = plan_image(EnvSpec(SPEC.requires, (patch,)), "cpu", settings=LOCAL)
    labels = plan.labels()
    assert json.loads(labels["repro-matrix.requires"]) == ["numpy", "torch==2.13.0"]
    assert labels["repro-matrix.base"] == "localbase/python:3.11"
    assert json.loads(labels["repro-matrix.patches"]) == [
        {"file": "tests/docker/data/six-marker.diff", "sha256": patch.sha256}]
    assert labels["repro-matrix.recipe"] == plan.recipe_hash
    assert labels["repro-matrix.flavour"] == "cpu"


def test_settings_from_environment():
    settings = ImageSettings.from_env({"REPRO_DOCKER_BASE": "a:1", "REPRO_DOCKER_CUDA_BASE": "b:2",
                                       "REPRO_DOCKER_PIP_SOURCE": "index", "REPRO_DOCKER_LAYOUT": "flat"})
    assert (settings.base_for("cpu"), settings.base_for("cuda")) == ("a:1", "b:2")
    assert settings.network() == "host" and settings.layout == "flat"
    assert ImageSettings.from_env({}).network() == "none"
    with pytest.raises(UsageError, match="REPRO_DOCKER_PIP_SOURCE"):
        ImageSettings.from_env({"REPRO_DOCKER_PIP_SOURCE": "pypi"})


def test_missing_dockerfile_is_a_usage_error(tmp_path):
    (tmp_path / "Dockerfile").write_text("ARG BASE_IMAGE=x\nFROM ${BASE_IMAGE}\n")
    with pytest.raises(UsageError, match=r"no Dockerfile\.cuda"):
        plan_image(SPEC, "cuda", image_dir=tmp_path)
    with pytest.raises(UsageError, match="ARG BASE_IMAGE"):
        (tmp_path / "Dockerfile.cuda").write_text("FROM scratch\n")
        plan_image(SPEC, "cuda", image_dir=tmp_path)


def test_lanes_map_to_flavours():
    assert [flavour_for_lane(lane) for lane in ("cpu", "cuda-sim", "cuda")] == ["cpu", "cpu", "cuda"]
    assert flavours_for_lanes(["cpu", "cuda-sim"]) == ("cpu",)


def test_cases_sharing_pins_share_an_image():
    cases = load_cases([REPO / "tests/fixtures/cases"]).cases
    entries = catalog(cases, ["cpu"], LOCAL)
    assert len(entries) == 1  # every fixture variant is plain torch==2.13.0
    assert set(entries[0].case_ids) == {case.id for case in cases}
    assert len(entries[0].users) == sum(len(case.variants) for case in cases)
    both = catalog(cases, ["cpu", "cuda"], LOCAL)
    assert sorted(e.plan.flavour for e in both) == ["cpu", "cuda"]


def test_wheelhouse_python_has_pip_and_the_image_python_version():
    from harness._exceptions import EnvBuildError
    from harness.docker._build import host_python

    python = host_python(SPEC.python)
    check = subprocess.run([python, "-c", "import pip, sys; print('%d.%d' % sys.version_info[:2])"],
                           capture_output=True, text=True, check=True)
    assert check.stdout.strip() == SPEC.python
    with pytest.raises(EnvBuildError, match=r"python2\.6 with pip"):
        host_python("2.6")


CUDA_DEFAULT = default_base(REPO / "images/torch/Dockerfile.cuda")


def test_an_absent_default_base_is_replaced_by_the_local_base_and_said_so():
    only_local = {"localbase/python:3.11"}.__contains__
    settings, note = settle_bases(ImageSettings(), ("cpu",), only_local, environ={})
    assert (settings.cpu_base, settings.cuda_base) == ("localbase/python:3.11", None)
    assert note == ("base image: localbase/python:3.11 for cpu images: python:3.11-slim-bookworm is not on this "
                    "host, so the local base scripts/docker-setup.sh made is used (REPRO_DOCKER_BASE chooses another)")
    both, note = settle_bases(ImageSettings(), ("cpu", "cuda"), only_local, environ={})
    assert (both.cpu_base, both.cuda_base) == ("localbase/python:3.11", "localbase/python:3.11")
    assert "\n" not in note and f"python:3.11-slim-bookworm, {CUDA_DEFAULT} are not on this host" in note
    assert "REPRO_DOCKER_BASE / REPRO_DOCKER_CUDA_BASE" in note
    # The tag is the one an explicit REPRO_DOCKER_BASE gives: images built either way are found either way.
    assert plan_image(SPEC, "cpu", settings=settings).tag == plan_image(SPEC, "cpu", settings=LOCAL).tag


def test_the_base_is_left_alone_when_set_or_when_the_default_is_here():
    only_local = {"localbase/python:3.11"}.__contains__
    chosen = ImageSettings(cpu_base="mine/python:3.11")
    assert settle_bases(chosen, ("cpu", "cuda"), only_local, environ={}) == (
        replace(chosen, cuda_base="localbase/python:3.11"),
        f"base image: localbase/python:3.11 for cuda images: {CUDA_DEFAULT} is not on this host, so the local base "
        "scripts/docker-setup.sh made is used (REPRO_DOCKER_CUDA_BASE chooses another)")
    everything = {"localbase/python:3.11", "python:3.11-slim-bookworm"}.__contains__
    assert settle_bases(ImageSettings(), ("cpu",), everything, environ={}) == (ImageSettings(), None)
    # No local base either: nothing to switch to (the missing image's error says how to build one).
    assert settle_bases(ImageSettings(), ("cpu",), lambda tag: False, environ={}) == (ImageSettings(), None)
    # scripts/docker-setup.sh's REPRO_BASE_IMAGE names the local base it built.
    renamed, note = settle_bases(ImageSettings(), ("cpu",), {"my/base:1"}.__contains__,
                                 environ={"REPRO_BASE_IMAGE": "my/base:1"})
    assert renamed.cpu_base == "my/base:1" and note.startswith("base image: my/base:1 for cpu images")


def test_the_legacy_builders_coloured_stderr_lines_are_said_without_colour(tmp_path):
    """The legacy builder wraps a step's stderr in ANSI colours: noteworthy lines (the host-compatibility
    step's, an error) must still be said live."""
    import io

    from harness.docker._build import _handle_chunk

    said: list[str] = []
    chunk = {"stream": "\x1b[91m[repro-matrix: compat torchvision-ops-on-cpu-torch: why; wrote a, b into s]\n\x1b[0m"}
    _handle_chunk(chunk, io.StringIO(), "Step 5/9 : RUN x", ([], []), said.append, verbose=False)
    assert said == ["  [repro-matrix: compat torchvision-ops-on-cpu-torch: why; wrote a, b into s]"]


def test_an_image_recipe_holds_the_compat_fix_only_for_torchvision_sets(monkeypatch, tmp_path):
    from harness.environments import _compat

    with_tv = plan_image(EnvSpec(("torch==2.13.0", "torchvision==0.28.0")), "cpu")
    without = plan_image(EnvSpec(("torch==2.13.0",)), "cpu")
    hashes = with_tv.recipe_hash, without.recipe_hash
    changed = tmp_path / "_torchvision_compat.py"
    changed.write_text(_compat.RUNTIME.read_text() + "# changed\n")
    monkeypatch.setattr(_compat, "RUNTIME", changed)
    assert with_tv.recipe_hash != hashes[0]  # an image with the old fix is rebuilt
    assert without.recipe_hash == hashes[1]
