"""The harness's host-compatibility fix for a torchvision whose compiled ops cannot load beside a CPU torch.

A stand-in torchvision reproduces the real failure: its import registers a fake kernel for
``torchvision::nms`` (as torchvision's ``_meta_registrations`` does), which raises "operator
torchvision::nms does not exist" unless its ``_C.so`` defined the operator. Its ``_C.so`` is either not a
library at all (it cannot load, as the CUDA build beside a CPU torch) or an empty library that loads. It is
installed in a throwaway venv that sees the test's torch, where the build step (``--apply``) runs as a
backend runs it.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from harness.environments import _compat
from harness.environments._compat import PTH_NAME, compat_key, read_record, reason_to_apply
from harness.environments._spec import EnvSpec
from harness.environments._torchvision_compat import MODULE, PTH_LINE
from harness.environments._venv import VenvBackend

INIT = '''import torch

@torch.library.register_fake("torchvision::nms")
def _nms(dets, scores, iou_threshold):
    return dets.new_empty(0, dtype=torch.long)
'''
CHECK = ("import sys, site; site.addsitedir(sys.argv[1]); before = 'torch' in sys.modules; import torchvision, torch; "
         "print(before, torch._C._dispatch_has_kernel_for_dispatch_key('torchvision::nms', 'Meta'))")


def _loadable_library(folder: Path) -> bytes:
    """An empty shared library (cc), which ``torch.ops.load_library`` loads."""
    cc = shutil.which("cc")
    if cc is None:
        pytest.skip("no C compiler to build a loadable _C.so")
    (folder / "empty.c").write_text("int repro_matrix_empty;\n")
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(folder / "empty.so"), str(folder / "empty.c")], check=True)
    return (folder / "empty.so").read_bytes()


def _stand_in(site: Path, library: bytes) -> Path:
    package = site / "torchvision"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(INIT)
    (package / "_C.so").write_bytes(library)
    return site


def _venv_with_stand_in(folder: Path, library: bytes) -> tuple[str, Path]:
    """A venv (no pip) whose site-packages holds the stand-in and a .pth to this interpreter's torch."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = str(folder / "bin" / "python")
    site = Path(subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    import torch

    torch_site = Path(torch.__file__).parents[1]
    (site / "zz-test-torch.pth").write_text(f"{torch_site}\n")
    return python, _stand_in(site, library)


def _apply(python: str, site: Path) -> subprocess.CompletedProcess[str]:
    """The build step, as the venv backend and the docker images run it."""
    return subprocess.run([python, "-I", "-B", str(_compat.RUNTIME), "--apply", str(site)], capture_output=True,
                          text=True, timeout=300)


def _import(site: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-I", "-c", CHECK, str(site)], capture_output=True, text=True,
                          timeout=300)


def _probe(site: Path) -> dict[str, object]:
    code = ("import sys, site, runpy; site.addsitedir(sys.argv[1]); sys.argv[1:] = ['--probe']; "
            f"runpy.run_path({str(_compat.RUNTIME)!r}, run_name='__main__')")
    proc = subprocess.run([sys.executable, "-I", "-c", code, str(site)], capture_output=True, text=True,
                          timeout=300, check=True)
    found: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return found


@pytest.mark.parametrize(("found", "applies"), [
    ({"torchvision": "0.28.0", "torch": "2.13.0+cpu", "torch_cuda": None, "ops_error": "libc10_cuda.so: x"}, True),
    ({"torchvision": "0.28.0", "torch": "2.13.0+cu128", "torch_cuda": "12.8", "ops_error": "undefined symbol"},
     False),  # a CUDA torch (the real-GPU lane): left alone, whatever the ops do
    ({"torchvision": "0.28.0", "torch": "2.13.0+cpu", "torch_cuda": None, "ops_error": ""}, False),  # _C loads
    ({"torchvision": None}, False),
])
def test_the_fix_applies_only_to_a_cpu_torch_whose_torchvision_ops_cannot_load(found, applies):
    reason = reason_to_apply(found)
    assert (reason is not None) == applies
    if applies:
        assert reason == ("torch 2.13.0+cpu is a CPU build and torchvision 0.28.0's compiled ops cannot load "
                          "beside it (libc10_cuda.so: x)")


def test_sets_naming_torchvision_are_keyed_by_the_fix(tmp_path, monkeypatch):
    with_tv = EnvSpec(requires=("torch==2.13.0", "torchvision==0.28.0"), python="3.11")
    without = EnvSpec(requires=("torch==2.13.0", "numpy==1.26.4"), python="3.11")
    assert compat_key(without.requires) is None
    assert compat_key(("torch==2.13.0", "TorchVision @ file:///x/tv.whl")) is not None
    keys = with_tv.key(), without.key()
    changed = tmp_path / "_torchvision_compat.py"
    changed.write_text(_compat.RUNTIME.read_text() + "# changed\n")
    monkeypatch.setattr(_compat, "RUNTIME", changed)
    assert with_tv.key() != keys[0]  # a cached environment with the old fix is rebuilt
    assert without.key() == keys[1]  # every other environment stays cached


def test_without_the_fix_the_stand_in_fails_as_torchvision_does(tmp_path):
    site = _stand_in(tmp_path / "site", b"not a shared library")
    proc = _import(site)
    assert proc.returncode != 0
    assert "operator torchvision::nms does not exist" in proc.stderr


def test_the_step_applies_it_where_the_ops_cannot_load_and_the_import_completes(tmp_path):
    python, site = _venv_with_stand_in(tmp_path / "env", b"not a shared library")
    step = _apply(python, site)
    assert step.returncode == 0, step.stderr
    (line,) = read_record(step.stdout)
    assert line.startswith("torchvision-ops-on-cpu-torch: torch ") and "is a CPU build" in line
    assert f"[repro-matrix: compat {line}; wrote {MODULE}.py, {PTH_NAME} into {site}]" in step.stderr
    assert (site / f"{MODULE}.py").read_bytes() == _compat.RUNTIME.read_bytes()
    proc = _import(site)
    assert proc.returncode == 0, proc.stderr
    before, declared = proc.stdout.split()
    assert before == "False"  # the .pth imports no torch by itself: only the lookup of torchvision does
    assert declared == "True"


def test_where_the_ops_load_the_step_does_nothing_and_the_hook_declares_nothing(tmp_path):
    python, site = _venv_with_stand_in(tmp_path / "env", _loadable_library(tmp_path))
    found = _probe(site)
    assert found["ops_error"] == ""
    assert reason_to_apply(found) is None
    step = _apply(python, site)
    assert step.returncode == 0, step.stderr
    assert read_record(step.stdout) == ()
    assert not (site / PTH_NAME).exists()
    # Even were it there, it must not declare what the real _C.so defines.
    shutil.copyfile(_compat.RUNTIME, site / f"{MODULE}.py")
    (site / PTH_NAME).write_text(PTH_LINE)
    proc = _import(site)
    assert proc.returncode != 0
    assert "operator torchvision::nms does not exist" in proc.stderr


def test_the_step_fails_when_torchvision_still_does_not_import(tmp_path):
    python, site = _venv_with_stand_in(tmp_path / "env", b"not a shared library")
    (site / "torchvision" / "__init__.py").write_text(INIT + "raise ImportError('broken for another reason')\n")
    step = _apply(python, site)
    assert step.returncode == 1
    assert "torchvision does not import even with" in step.stderr and "broken for another reason" in step.stderr
    assert step.stdout == ""


@pytest.mark.parametrize("text", ["", "not json", '{"other": 1}', '{"compat": [1]}'])
def test_a_record_that_is_not_one_is_an_error(text):
    with pytest.raises(ValueError, match="not a compat record"):
        read_record(text)


def _wheel(folder: Path, library: bytes) -> Path:
    files = {"torchvision/__init__.py": INIT.encode(), "torchvision/_C.so": library,
             "torchvision-0.0.1.dist-info/METADATA": b"Metadata-Version: 2.1\nName: torchvision\nVersion: 0.0.1\n",
             "torchvision-0.0.1.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                  b"Tag: py3-none-any\n"}
    record = "".join(f"{name},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
                     f"{len(data)}\n" for name, data in files.items())
    path = folder / "torchvision-0.0.1-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        archive.writestr("torchvision-0.0.1.dist-info/RECORD", record + "torchvision-0.0.1.dist-info/RECORD,,\n")
    return path


@pytest.mark.slow
def test_the_venv_backend_applies_it_records_it_and_leaves_other_environments_alone(tmp_path):
    backend = VenvBackend(root=tmp_path / "envs")
    (tmp_path / "broken").mkdir()
    wheel = _wheel(tmp_path / "broken", b"not a shared library")
    env = backend.prepare(EnvSpec(requires=("torch==2.13.0", f"torchvision @ {wheel.as_uri()}")), lambda m: None)
    assert len(env.compat) == 1 and env.compat[0].startswith("torchvision-ops-on-cpu-torch: torch 2.13.0")
    folder = Path(env.python_path).parents[1]
    assert "[repro-matrix: compat torchvision-ops-on-cpu-torch:" in folder.with_suffix(".build.log").read_text()
    assert list(folder.glob(f"lib/python3*/site-packages/{PTH_NAME}"))
    proc = subprocess.run([env.python_path, "-c", "import torchvision"], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert backend.prepare(env.spec, lambda m: None).compat == env.compat  # the record, when reused

    plain = backend.prepare(EnvSpec(requires=("six==1.16.0",)), lambda m: None)
    assert plain.compat == ()
    assert not list(Path(plain.python_path).parents[1].glob(f"lib/python3*/site-packages/{PTH_NAME}"))
