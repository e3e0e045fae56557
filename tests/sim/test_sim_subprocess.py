"""Child Python processes join the simulation (cuda_sim/_startup.py, the wheel's cuda_sim.pth).

Gap G4: accelerate's test_map_location runs `accelerate launch <file>`; under `pytest --cuda-sim` the
child started plain (no GPU), so the test's CUDA branch never ran and it passed hollow. Here the
repo's own cuda_sim.pth is processed the way site-packages processes it (``site.addsitedir``) in real
child interpreters; tests/sim/test_package.py checks the installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cuda_sim import _startup
from plugin_project import run_pytest

from tests.checkout import SOURCE_PATH

REPO = Path(__file__).resolve().parents[2]
PTH = REPO / "cuda-sim" / _startup.PTH_NAME

CHILD = """
    import site, sys
    site.addsitedir({site_dir!r})  # processes cuda_sim.pth as interpreter start-up does
    print("harness loaded before torch:", any(m.startswith("cuda_sim._session") for m in sys.modules))
    import torch
    print("cuda:", torch.cuda.is_available())
    if torch.cuda.is_available():
        print("device:", torch.ones(1).cuda().device)
        try:
            torch.ones(1, device="cuda") + torch.ones(1)
        except RuntimeError as error:
            print("mix:", error)
"""


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _startup.ENV and not k.startswith("PYTEST_")}
    return {**env, "PYTHONPATH": SOURCE_PATH, **extra}


def _child(tmp_path: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    site_dir = tmp_path / "site"
    site_dir.mkdir(exist_ok=True)
    (site_dir / _startup.PTH_NAME).write_text(PTH.read_text())
    code = textwrap.dedent(CHILD.format(site_dir=str(site_dir)))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False)


def test_the_pth_file_is_the_startup_line():
    assert PTH.read_text() == _startup.PTH_LINE
    assert _startup.PTH_LINE.startswith("import ")  # site.py executes only lines starting with import


def test_a_child_with_the_variable_joins_when_it_imports_torch(tmp_path):
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    done = _child(tmp_path, _env(**{_startup.ENV: "1", "TMPDIR": str(scratch)}))
    assert done.returncode == 0, done.stderr[-3000:]
    assert list(scratch.iterdir()) == []  # the stub toolkit's folder goes with a simulation never stopped
    assert done.stdout.splitlines() == [
        "harness loaded before torch: False", "cuda: True", "device: cuda:0",
        "mix: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"]


@pytest.mark.parametrize("value", [None, "0", ""])
def test_a_child_without_the_variable_starts_plain(tmp_path, value):
    env = _env() if value is None else _env(**{_startup.ENV: value})
    done = _child(tmp_path, env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["harness loaded before torch: False", "cuda: False"]


PARENT_TEST = """
    import os, subprocess, sys

    def test_child_sees_the_variable():
        out = subprocess.run([sys.executable, "-c", "import os; print(os.environ.get('CUDA_SIM_SUBPROCESS'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
        assert out == {expected!r}
"""


@pytest.mark.parametrize(("flag", "expected"), [(True, "1"), (False, "None")])
def test_pytest_cuda_sim_exports_the_variable_to_children(tmp_path, flag, expected):
    project = tmp_path / "project"
    project.mkdir()
    (project / "test_parent.py").write_text(textwrap.dedent(PARENT_TEST.format(expected=expected)))
    args = ["-p", "cuda_sim.pytest_plugin", *(["--cuda-sim"] if flag else []), "test_parent.py"]
    proc, outcomes = run_pytest(sys.executable, project, *args, env=_env())
    assert outcomes == {"test_parent.test_child_sees_the_variable": ("passed", "")}, proc.stdout[-3000:]
    if flag:
        assert "child Python processes join (CUDA_SIM_SUBPROCESS=1)" in proc.stdout


def test_the_cuda_sim_command_exports_the_variable(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text("import os, subprocess, sys\n"
                      "print(subprocess.run([sys.executable, '-c', 'import os; print(os.environ[\"CUDA_SIM_SUBPROCESS\"])'],"
                      " capture_output=True, text=True, check=True).stdout.strip())\n")
    done = subprocess.run([sys.executable, "-m", "cuda_sim", str(script)], capture_output=True, text=True,
                          env=_env(), timeout=300, check=False, cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr[-3000:]


def test_conformance_environments_carry_the_startup_line(tmp_path):
    """The conformance runner links this checkout into each library's venv (no wheel there): its children
    (accelerate's test_map_location runs `accelerate launch`) join the simulated pass the same way."""
    from harness.conformance._sources import _link_harness

    site_dir = tmp_path / "venv" / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    site_dir.mkdir(parents=True)
    _link_harness(tmp_path / "venv")
    assert sorted(p.name for p in site_dir.glob("*.pth")) == ["zz_repro_matrix.pth", "zzz_cuda_sim.pth"]
    assert (site_dir / "zzz_cuda_sim.pth").read_text() == _startup.PTH_LINE
    code = (f"import site; site.addsitedir({str(site_dir)!r}); import torch, harness; "
            "print(torch.cuda.is_available(), harness.__file__)")
    env = {k: v for k, v in _env(**{_startup.ENV: "1"}).items() if k != "PYTHONPATH"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
                          check=False, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == ["True", str(tmp_path / "venv" / "repro-matrix-path" / "harness" / "__init__.py")]
