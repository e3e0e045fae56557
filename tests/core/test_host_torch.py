"""Host torch (``cases --python``) and offline builds (``--find-links DIR --offline``).

The slow tests make their own stand-in for a GPU node's interpreter: a venv in a temporary folder with
torch and numpy installed by uv from pip's configured sources (about 2 s from uv's cache here).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from harness import uv_index_environment
from harness._exceptions import UsageError
from harness.environments._hosttorch import HostTorch, is_family, pinned_torch, probe_host_torch
from harness.environments._index import offline_hint
from harness.environments._venv_build import find_uv

REPO = Path(__file__).resolve().parents[2]
CASE = """\
id: host-probe
title: "Fixture: which torch and which packages a cell sees"
upstream: {issue: "https://example.invalid/issue/1", fix: "https://example.invalid/pull/2"}
signature: "Expected all tensors to be on the same device"
exception: RuntimeError
summary: Test fixture for host torch; not a documented bug.
requires: [torch==2.13.0]
timeout: 120
variants:
  buggy:
    role: buggy
    args: [--behaviour, signature]
    expect: {cpu: reproduces, cuda: reproduces, cuda-sim: reproduces}
  fixed:
    role: fix
    args: [--behaviour, clean]
    expect: {cpu: passes, cuda: passes, cuda-sim: passes}
  patched:
    role: fix
    patches: [torch.diff]
    expect: {cpu: passes, cuda: passes, cuda-sim: passes}
"""
REPRO = """\
import argparse, importlib.util, torch
parser = argparse.ArgumentParser()
parser.add_argument("--variant"); parser.add_argument("--device"); parser.add_argument("--behaviour", default="clean")
args = parser.parse_args()
# The host stand-in has numpy; the case does not pin it: it must not leak in from the host.
assert importlib.util.find_spec("numpy") is None, "numpy leaked in from the host interpreter"
if args.behaviour == "signature":
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices")
"""
PATCH = "--- a/torch/version.py\n+++ b/torch/version.py\n@@ -1 +1 @@\n-x\n+y\n"


def host(**kw: object) -> HostTorch:
    values = {"executable": "/gpu/python3", "python": "3.12", "dists": (("nvidia-cublas-cu13", "13.0"),
              ("torch", "2.11.0+cu130"), ("triton", "3.5.0")),
              "entries": ("/site/torch", "/site/torch-2.11.0+cu130.dist-info", "/site/nvidia", "/site/triton"),
              "requires": ("filelock", "sympy>=1.13.3", "typing-extensions>=4.10.0")}
    return HostTorch(**{**values, **kw})  # type: ignore[arg-type]


def test_the_torch_family_is_left_to_the_host_and_the_rest_installed():
    requires, overrides = host().requirements(["torch==2.13.0", "torchvision==0.28", "transformers==4.57.1",
                                               "sympy==1.13.3", "nvidia-nccl-cu12==2.1"])
    assert requires == ("transformers==4.57.1", "sympy==1.13.3", "filelock", "typing-extensions>=4.10.0")
    assert overrides == ('nvidia-cublas-cu13 ; python_version < "0"', 'torch ; python_version < "0"',
                         'triton ; python_version < "0"')
    assert is_family("pytorch-triton==3.0") and is_family("Torch_Audio") is False and is_family("torchaudio")
    # CUDA builds of torch 2.11+ require NVIDIA's CUDA Python packages: the host's, never on a wheelhouse (a dry run
    # with torch 2.14.1+cu130 failed every environment on `cuda-toolkit[cublas]==13.0.3` before they were family)
    assert all(map(is_family, ("cuda-toolkit[cublas,cudart]==13.0.3", "cuda-bindings<14,>=13.0.3",
                               "cuda_pathfinder==1.9")))
    assert not is_family("cuda-sim") and not is_family("cudatoolkit-extra")
    assert pinned_torch(["numpy", "torch==2.13.0"]) == "2.13.0" and pinned_torch(["numpy"]) is None


def test_a_variant_that_patches_torch_or_pins_what_the_host_lacks_is_skipped(tmp_path):
    patch = tmp_path / "torch.diff"
    patch.write_text(PATCH)
    assert "patches the torch family itself (torch.diff: torch)" in host().skip_reason(["torch==2.13.0"], [patch])
    other = tmp_path / "tf.diff"
    other.write_text(PATCH.replace("torch/", "transformers/"))
    assert host().skip_reason(["torch==2.13.0"], [other]) is None
    assert "pins torchvision==0.28, which the host interpreter" in host().skip_reason(["torchvision==0.28"], [])


def test_an_interpreter_without_torch_is_a_usage_error(tmp_path):
    subprocess.run([find_uv(), "venv", "-q", str(tmp_path / "bare"), "--python", sys.executable], check=True)
    with pytest.raises(UsageError, match="has no torch installed"):
        probe_host_torch(tmp_path / "bare" / "bin" / "python")
    with pytest.raises(UsageError, match="no such interpreter"):
        probe_host_torch(tmp_path / "missing" / "python")


def test_an_offline_failure_names_the_missing_wheel():
    uv = ("x No solution found when resolving dependencies:\n  ╰─▶ Because sympy was not found in the "
          "provided package locations and you require sympy>=1.13.3, we can conclude ...")
    text = offline_hint(uv, Path("/wheels"))
    assert text.startswith("offline: /wheels holds no wheel for sympy; make the folder on a connected machine")


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory) -> Path:
    """A second interpreter standing in for a GPU node's: its own torch, and numpy (which must not leak)."""
    folder = tmp_path_factory.mktemp("gpu-node") / "python"
    env = {**os.environ, **uv_index_environment()}
    subprocess.run([find_uv(), "venv", "-q", str(folder), "--python", sys.executable], check=True, env=env)
    proc = subprocess.run([find_uv(), "pip", "install", "-q", "--python", str(folder / "bin" / "python"),
                           "torch==2.13.0", "numpy"], env=env, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        pytest.skip(f"uv could not install torch==2.13.0 from pip's configured sources: {proc.stderr[-300:]}")
    return folder / "bin" / "python"


@pytest.fixture(scope="module")
def cases_dir(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("cases")
    (root / "host-probe").mkdir()
    (root / "host-probe" / "case.yaml").write_text(CASE)
    (root / "host-probe" / "repro.py").write_text(REPRO)
    (root / "host-probe" / "torch.diff").write_text(PATCH)
    return root


def harness(*args: str, envs: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "harness", "cases", *args], cwd=REPO, capture_output=True,
                          text=True, timeout=600, env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO),
                                                       "REPRO_MATRIX_ENVS": str(envs)})


def only_run(output: Path) -> dict:
    (run,) = [p for p in output.iterdir() if (p / "results.json").exists()]
    return json.loads((run / "results.json").read_text())


@pytest.mark.slow  # about 15 s: one environment build (2 s), four cells, two of them cuda-sim
def test_cells_run_with_the_host_torch_and_say_so(stand_in, cases_dir, tmp_path):
    proc = harness("--cases-dir", str(cases_dir), "--python", str(stand_in), "--lane", "cpu", "--lane", "cuda-sim",
                   "--output", str(tmp_path / "out"), envs=tmp_path / "envs")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = only_run(tmp_path / "out")
    jsonschema.validate(results, json.loads((REPO / "harness" / "results.schema.json").read_text()))
    ran = [c for c in results["cells"] if c["variant"] != "patched"]
    assert {c["judgement"] for c in ran} == {"confirmed"}  # numpy stayed out (the repro asserts it)
    for cell in ran:
        assert cell["torch"]["source"] == "host" and cell["torch"]["version"] == "2.13.0+cpu"
        assert cell["torch"]["pinned"] == "2.13.0" and cell["torch"]["python"] == str(stand_in.absolute())
    (env,) = results["environments"].values()
    assert env["installed"]["torch"] == "2.13.0+cpu" and "numpy" not in env["installed"]
    assert env["host_torch"]["version"] == "2.13.0+cpu"
    patched = [c for c in results["cells"] if c["variant"] == "patched"]
    assert patched and all(c["status"] == "skipped" and "patches the torch family itself" in c["reason"]
                           for c in patched)
    assert "ran with host torch 2.13.0+cpu instead of 2.13.0: 4 cell(s)" in proc.stdout
    page = (tmp_path / "out" / results["run"]["id"] / "index.html").read_text()
    assert "host torch 2.13.0+cpu instead of 2.13.0" in page


@pytest.mark.slow  # about 3 s: the build fails at once, nothing runs
def test_offline_without_the_wheel_names_it(stand_in, cases_dir, tmp_path):
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    proc = harness("--cases-dir", str(cases_dir), "--python", str(stand_in), "--lane", "cpu", "--variant", "fixed",
                   "--find-links", str(wheels), "--offline", "--output", str(tmp_path / "out"), envs=tmp_path / "envs")
    results = only_run(tmp_path / "out")
    (cell,) = results["cells"]
    assert proc.returncode == 1 and cell["judgement"] == "infra-error", proc.stdout + proc.stderr
    assert f"offline: {wheels} holds no wheel for " in cell["reason"]
    named = cell["reason"].split("holds no wheel for ")[1].split(";")[0]
    assert named.split("=")[0].split(">")[0] in {"filelock", "sympy", "typing-extensions", "networkx", "jinja2",
                                                 "fsspec", "setuptools"}
