"""The issue's "done when": wheels built from a clean checkout, installed in fresh venvs, used outside the repo.

Everything is real: the tracked files copied out of the repo, `uv build` (repro-matrix and cuda-sim, the
simulator's own distribution), `uv venv` / `python -m venv`, installs from the configured index (torch==2.13.0
from its local wheel), then `cuda-sim`, `pytest --cuda-sim` (plugin found through the installed entry point),
pytest-xdist workers and `repro-matrix` run from a folder outside the repo; and cuda-sim alone, with torch and
pytest only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import cuda_sim
import pytest
from cuda_sim import _startup
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from plugin_project import MIX_MESSAGE, run_pytest, write_project

from harness import uv_index_environment
from harness.environments._venv_build import find_uv
from tests.checkout import copy_checkout

REPO = Path(__file__).resolve().parents[2]
TORCH = "torch==2.13.0"

pytestmark = pytest.mark.slow

TRAIN = """
    import sys
    import torch

    print("argv", sys.argv[1:], "name", __name__, "cuda", torch.cuda.is_available())
    weights = torch.nn.Linear(4, 2).to("cuda")
    print("device", next(weights.parameters()).device)
    if "--mix" in sys.argv:
        weights(torch.ones(1, 4))
    sys.exit(7 if "--lr" in sys.argv else 0)
"""



def _clean_env(**extra: str) -> dict[str, str]:
    """No PYTHONPATH, no virtualenv of ours, the index settings uv needs: the harness must come from the venv."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "VIRTUAL_ENV", _startup.ENV) and not k.startswith(("PYTEST_", "NOX_"))}
    return {**env, **uv_index_environment(), **extra}


def _run(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)


def _build(source: Path, name: str) -> Path:
    """``uv build`` of the project in ``source``: its wheel (an sdist is built too)."""
    dist = source / "dist"
    built = _run([find_uv(), "build", "--out-dir", str(dist), str(source)], source, _clean_env())
    assert built.returncode == 0, built.stderr[-3000:]
    wheels = list(dist.glob(f"{name}-*.whl"))
    assert len(wheels) == 1 and list(dist.glob(f"{name}-*.tar.gz")), built.stderr[-3000:]
    return wheels[0]


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_checkout(tmp_path_factory.mktemp("checkout"))


@pytest.fixture(scope="module")
def wheel(checkout: Path) -> Path:
    return _build(checkout, "repro_matrix")


@pytest.fixture(scope="module")
def sim_wheel(checkout: Path) -> Path:
    return _build(checkout / "cuda-sim", "cuda_sim")


def _new_venv(folder: Path, *packages: str) -> Path:
    env = _clean_env()
    made = _run([find_uv(), "venv", "--python", sys.executable, str(folder)], folder.parent, env)
    assert made.returncode == 0, made.stderr
    installed = _run([find_uv(), "pip", "install", "--python", str(folder / "bin" / "python"), *packages],
                     folder.parent, env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    return folder


@pytest.fixture(scope="module")
def venv(wheel: Path, sim_wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with both wheels, pytest and pytest-xdist, and (at first) no torch."""
    return _new_venv(tmp_path_factory.mktemp("venv") / "venv", str(wheel), str(sim_wheel), "pytest", "pytest-xdist")


def _dist_info(wheel: Path) -> str:
    return wheel.name.split("-")[0] + "-" + wheel.name.split("-")[1] + ".dist-info"


def test_the_wheel_carries_the_package_and_nothing_else(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"harness", _dist_info(wheel)}
    for needed in ("harness/case.schema.json", "harness/results.schema.json", "harness/py.typed",
                   "harness/report/templates/run.html", "harness/report/templates/style.css",
                   "harness/sim/__init__.py", "harness/docker/_build.py", "harness/run/_child.py"):
        assert needed in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    entry_points = zipfile.ZipFile(wheel).read(f"{_dist_info(wheel)}/entry_points.txt").decode()
    assert "repro-matrix = harness._cli:main" in entry_points
    assert "cuda-sim" not in entry_points and "pytest11" not in entry_points  # cuda-sim's own
    metadata = zipfile.ZipFile(wheel).read(f"{_dist_info(wheel)}/METADATA").decode()
    assert "Requires-Dist: cuda-sim>=0.1" in metadata
    assert "Requires-Dist: torch" not in metadata


def test_the_simulator_wheel_is_lean(sim_wheel):
    """cuda-sim's wheel: the package, the .pth line, the command, the plugin; no dependency at all."""
    names = zipfile.ZipFile(sim_wheel).namelist()
    assert {n.split("/")[0] for n in names} == {"cuda_sim", "cuda_sim.pth", _dist_info(sim_wheel)}
    # site-packages/cuda_sim.pth: children of a simulated process join it (cuda_sim/_startup.py)
    assert zipfile.ZipFile(sim_wheel).read("cuda_sim.pth").decode() == _startup.PTH_LINE
    for needed in ("cuda_sim/__init__.py", "cuda_sim/pytest_plugin.py", "cuda_sim/py.typed", "cuda_sim/_join.py"):
        assert needed in names
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc")]
    entry_points = zipfile.ZipFile(sim_wheel).read(f"{_dist_info(sim_wheel)}/entry_points.txt").decode()
    assert "cuda-sim = cuda_sim.__main__:main" in entry_points
    assert "[pytest11]\ncuda_sim = cuda_sim.pytest_plugin" in entry_points
    metadata = zipfile.ZipFile(sim_wheel).read(f"{_dist_info(sim_wheel)}/METADATA").decode()
    assert "Requires-Dist" not in metadata
    assert f"Version: {cuda_sim.__version__}" in metadata


def test_installed_outside_the_repo(venv, tmp_path):
    """cuda-sim and `pytest --cuda-sim` from a project folder outside the repo, before and after torch."""
    bin_dir = venv / "bin"
    env = _clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    project = write_project(tmp_path / "userproject")
    (project / "train.py").write_text(textwrap.dedent(TRAIN))
    python = str(bin_dir / "python")

    # no torch yet: one clear line each, no traceback
    no_torch = _run([str(bin_dir / "cuda-sim"), "train.py", "--lr", "1e-4"], project, env)
    assert no_torch.returncode == 2 and "Traceback" not in no_torch.stderr
    assert "cuda-sim: cuda-sim needs torch (tested with torch 2.13 and 2.14), but this Python" in no_torch.stderr
    bare = tmp_path / "no-conftest"  # the project's conftest imports torch itself
    bare.mkdir()
    (bare / "test_x.py").write_text("def test_x():\n    pass\n")
    proc, _ = run_pytest(python, bare, "--cuda-sim", env=env)
    assert proc.returncode == 4 and "--cuda-sim: cuda-sim needs torch" in proc.stderr
    assert "Traceback" not in proc.stderr

    added = _run([find_uv(), "pip", "install", "--python", python, TORCH], project, env)
    assert added.returncode == 0, added.stderr[-3000:]
    where = _run([python, "-c", "import harness, cuda_sim; print(harness.__file__, cuda_sim.__file__)"], project, env)
    assert [p.startswith(str(venv)) for p in where.stdout.split()] == [True, True], where.stdout  # not the repo's

    ran = _run([str(bin_dir / "cuda-sim"), "train.py", "--lr", "1e-4"], project, env)
    assert ran.returncode == 7, ran.stderr
    assert ran.stdout.splitlines() == ["argv ['--lr', '1e-4'] name __main__ cuda True", "device cuda:0"]
    mixed = _run([str(bin_dir / "cuda-sim"), "train.py", "--mix"], project, env)
    assert mixed.returncode == 1
    assert mixed.stderr.strip().splitlines()[-1].startswith("RuntimeError: Expected all tensors to be on the same")

    # without the flag both CUDA tests skip; with it the placement bug fails with real CUDA's message
    _, plain = run_pytest(python, project, "test_devices.py", env=env)
    assert plain["test_devices.test_scale_on_cuda"] == ("skipped", "CUDA not available")
    assert plain["test_devices.test_scale_fixed_on_cuda"] == ("skipped", "CUDA not available")
    proc, sim = run_pytest(python, project, "--cuda-sim", "test_devices.py", env=env)
    assert sim["test_devices.test_scale_on_cuda"] == ("failed", f"RuntimeError: {MIX_MESSAGE}")
    assert sim["test_devices.test_scale_fixed_on_cuda"] == ("passed", "")
    assert sim["test_devices.test_second_gpu"] == (
        "skipped", "not simulated: device cuda:1 (the simulated host has a single GPU, cuda:0)")
    assert "1 not simulated" in proc.stdout and "cuda-sim: on" in proc.stdout
    _, strict = run_pytest(python, project, "--cuda-sim", "--cuda-sim-strict", "test_devices.py", env=env)
    assert strict["test_devices.test_second_gpu"][0] == "failed"
    # the fixture and the marker, without the flag
    _, fixture = run_pytest(python, project, "test_fixture.py", env=env)
    assert {name: outcome for name, (outcome, _) in fixture.items()} == {
        "test_fixture.test_fixture_simulates": "passed", "test_fixture.test_marker_simulates": "passed",
        "test_fixture.test_after_the_fixture_nothing_is_left": "passed"}
    # two xdist workers, each simulating
    proc, workers = run_pytest(python, project, "--cuda-sim", "-n", "2", "test_devices.py", "test_generated.py",
                               env=env)
    assert "2 workers [" in proc.stdout
    assert workers["test_devices.test_scale_on_cuda"] == ("failed", f"RuntimeError: {MIX_MESSAGE}")
    assert workers["test_generated.TestLinearCUDA.test_forward_stays_on_device"][0] == "passed"
    assert workers["test_devices.test_second_gpu"][0] == "skipped"
    assert "4 test(s) ran on simulated CUDA" in proc.stdout


CHILD = ("import torch; print(torch.cuda.is_available(), "
         "torch.ones(1).to('cuda').device if torch.cuda.is_available() else '')")
CHILD_TEST = f"""
import subprocess, sys

def test_child_process():
    out = subprocess.run([sys.executable, "-c", {CHILD!r}], capture_output=True, text=True, check=True).stdout
    print("child:", out)
"""


def test_child_processes_join_the_simulation(venv, tmp_path):
    """G4: a test's child Python process (accelerate launch, torchrun, subprocess) runs simulated too."""
    bin_dir = venv / "bin"
    env = _clean_env(PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    python = str(bin_dir / "python")
    assert _run([find_uv(), "pip", "install", "--python", python, TORCH], tmp_path, env).returncode == 0
    project = tmp_path / "children"
    project.mkdir()
    (project / "test_child.py").write_text(CHILD_TEST)
    simulated = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "-s", "--cuda-sim", "test_child.py"], project,
                     env)
    assert simulated.returncode == 0 and "child: True cuda:0" in simulated.stdout, simulated.stdout[-3000:]
    plain = _run([python, "-m", "pytest", "-p", "no:cacheprovider", "-s", "test_child.py"], project, env)
    assert plain.returncode == 0 and "child: False" in plain.stdout, plain.stdout[-3000:]
    (project / "parent.py").write_text(f"import subprocess, sys\nsubprocess.run([sys.executable, '-c', {CHILD!r}])\n")
    launched = _run([str(bin_dir / "cuda-sim"), "parent.py"], project, env)
    assert launched.returncode == 0 and launched.stdout.strip() == "True cuda:0", launched.stderr[-3000:]
    # without the variable the .pth line costs one lookup: cuda_sim is not even imported
    bare = _run([python, "-c", "import sys; print('cuda_sim' in sys.modules)"], project, env)
    assert bare.stdout.strip() == "False"


def test_harness_cli_installed_uses_the_current_directory(venv, tmp_path):
    """`repro-matrix` outside the repo: cases/ and reports/ are those of the current directory."""
    shutil.copytree(REPO / "tests" / "fixtures" / "cases" / "confirmed", tmp_path / "cases" / "confirmed")
    env = _clean_env()
    validated = _run([str(venv / "bin" / "repro-matrix"), "validate"], tmp_path, env)
    assert validated.returncode == 0, validated.stdout + validated.stderr
    assert "1 case file(s) valid, 0 invalid" in validated.stdout
    listed = _run([str(venv / "bin" / "repro-matrix"), "cases", "--list"], tmp_path, env)
    assert listed.returncode == 0 and "confirmed" in listed.stdout


def test_pip_install_of_the_source_tree(tmp_path):
    """`pip install ./cuda-sim .` from a clean checkout; in that venv (no torch) cuda-sim says what is missing."""
    source = copy_checkout(tmp_path / "checkout")
    folder = tmp_path / "pipvenv"
    env = _clean_env()
    assert _run([sys.executable, "-m", "venv", str(folder)], tmp_path, env).returncode == 0
    installed = _run([str(folder / "bin" / "python"), "-m", "pip", "install", "-q", "./cuda-sim", "."], source, env)
    assert installed.returncode == 0, installed.stderr[-3000:]
    helped = _run([str(folder / "bin" / "repro-matrix"), "--help"], tmp_path, env)
    assert helped.returncode == 0 and "cases" in helped.stdout
    script = tmp_path / "train.py"
    script.write_text("print('never runs')\n")
    no_torch = _run([str(folder / "bin" / "cuda-sim"), str(script)], tmp_path, env)
    assert no_torch.returncode == 2 and "cuda-sim needs torch" in no_torch.stderr
    assert "never runs" not in no_torch.stdout


LEAN_TEST = """
import pytest
import torch


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA")
def test_a_device_mismatch_raises_what_cuda_raises():
    weights = torch.ones(2, device="cuda")
    assert weights.device == torch.device("cuda", 0)
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device, but found at least "
                                           "two devices, cuda:0 and cpu!"):
        weights + torch.ones(2)
"""
# Every distribution installed in a venv, with what it requires (extras left out: none are asked for).
DISTRIBUTIONS = ("import json; from importlib import metadata; print(json.dumps({d.metadata['Name'].lower(): "
                 "[r for r in (d.requires or []) if 'extra ==' not in r] for d in metadata.distributions()}))")


def _closure(requires: dict[str, list[str]], roots: tuple[str, ...]) -> set[str]:
    """The names reachable from ``roots`` through what the installed distributions require (markers for this
    Python and platform; extras never asked for are left out)."""
    named = {canonicalize_name(name): wants for name, wants in requires.items()}
    seen: set[str] = set()
    todo = [canonicalize_name(r) for r in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for text in named.get(name, []):
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate():
                todo.append(canonicalize_name(requirement.name))
    return seen


def test_the_simulator_alone_with_torch_and_pytest(checkout, tmp_path):
    """The issue's done-condition: cuda-sim installs alone in a fresh venv next to torch and pytest (nothing of
    repro-matrix comes with it), and its plugin, registered by the install, runs a test on simulated CUDA."""
    folder = _new_venv(tmp_path / "lean", TORCH, "pytest", str(checkout / "cuda-sim"))
    python = str(folder / "bin" / "python")
    env = _clean_env(PATH=f"{folder / 'bin'}{os.pathsep}{os.environ['PATH']}")
    listed = _run([python, "-c", DISTRIBUTIONS], tmp_path, env)
    assert listed.returncode == 0, listed.stderr[-3000:]
    requires = json.loads(listed.stdout)
    installed = {canonicalize_name(name) for name in requires}
    assert installed == _closure(requires, ("torch", "pytest")) | {"cuda-sim"}, sorted(installed)
    assert requires["cuda-sim"] == []
    assert not installed & {"repro-matrix", "rich", "jsonschema", "fastjsonschema", "regex", "pyyaml"}
    assert _run([python, "-c", "import harness"], tmp_path, env).returncode == 1
    print(f"lean venv: {len(installed)} distributions: {', '.join(sorted(installed))}")

    project = tmp_path / "project"
    project.mkdir()
    (project / "test_lean.py").write_text(LEAN_TEST)
    simulated, outcomes = run_pytest(python, project, "--cuda-sim", env=env)
    assert outcomes == {"test_lean.test_a_device_mismatch_raises_what_cuda_raises": ("passed", "")}, \
        simulated.stdout[-3000:]
    assert "cuda-sim: on" in simulated.stdout
    plain, outcomes = run_pytest(python, project, env=env)
    assert outcomes == {"test_lean.test_a_device_mismatch_raises_what_cuda_raises": ("skipped", "no CUDA")}, \
        plain.stdout[-3000:]
