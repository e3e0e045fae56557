"""The `imported` capture: a map stored once per environment gives what computing it per cell gave."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness.environments._spec import EnvSpec
from harness.environments._venv import VenvBackend
from harness.environments._venv_build import _OWNERS
from harness.run._backend import CHILD_RUNNER, CellRequest
from harness.run._child import _computed_versions, _imported_versions, _stored_versions, owners_record


def _request(tmp_path: Path, source: str, name: str = "cell") -> CellRequest:
    case = tmp_path / "case"
    case.mkdir(exist_ok=True)
    (case / f"{name}.py").write_text(source)
    cell = tmp_path / name
    return CellRequest(case_dir=case, script=case / f"{name}.py", shims=(), argv=(), sim=False, gpu=False, env={},
                       timeout=120, cell_dir=cell, log_path=cell / "log.txt")


def _computed_in_child(python: str, request: CellRequest) -> dict[str, str]:
    """The child runner on a spec without the map: every cell's capture before the map existed."""
    request.cell_dir.mkdir(parents=True, exist_ok=True)
    spec = request.cell_dir / "plain-spec.json"
    spec.write_text(json.dumps(request.child_spec()))
    subprocess.run([python, str(CHILD_RUNNER), str(spec)], cwd=request.cell_dir, capture_output=True, timeout=120,
                   check=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    return json.loads((request.cell_dir / "outcome.json").read_text())["imported"]


def test_a_built_environment_stores_the_map_and_cells_report_the_same_versions(tmp_path):
    backend = VenvBackend(root=tmp_path / "envs")
    env = backend.prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    folder = Path(env.python_path).parent.parent
    record = json.loads((folder / _OWNERS).read_text())
    assert record["owners"]["six"] == ["six"] and record["versions"] == {"six": "1.16.0"}
    outcome = backend.run_cell(env, _request(tmp_path, "import six\n"))
    assert outcome.status == "passed" and outcome.imported == {"six": "1.16.0"}
    assert _computed_in_child(env.python_path, _request(tmp_path, "import six\n", "plain")) == outcome.imported
    assert backend.run_cell(env, _request(tmp_path, "print('nothing imported')\n", "none")).imported == {}

    (folder / _OWNERS).unlink()  # an environment built before the map was stored
    again = backend.prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    assert again.reused and json.loads((folder / _OWNERS).read_text()) == record
    (folder / _OWNERS).write_text('{"paths": [')  # unreadable: the child computes the map itself
    assert backend.run_cell(env, _request(tmp_path, "import six\n", "bad-map")).imported == {"six": "1.16.0"}


def test_modules_loaded_by_importlib_metadata_count_as_before(tmp_path):
    # Computing the map per cell imported importlib.metadata (zipfile, csv, email...) before reading
    # sys.modules; a distribution owning such a name was reported, so it still is.
    backend = VenvBackend(root=tmp_path / "envs")
    env = backend.prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    folder = Path(env.python_path).parent.parent
    site = next((folder / "lib").glob("python3*/site-packages"))
    info = site / "zipowner-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: zipowner\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("zipfile\n")
    (folder / _OWNERS).unlink()
    backend.prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    request = _request(tmp_path, "print('imports nothing')\n")
    imported = backend.run_cell(env, request).imported
    assert imported == _computed_in_child(env.python_path, _request(tmp_path, "print('x')\n", "plain"))
    assert imported == {"zipowner": "1.0"}

def test_a_torch_environment_gets_the_same_versions_from_the_map(tmp_path):
    backend = VenvBackend()  # the shared cache: the fixture cases' environment
    env = backend.prepare(EnvSpec(requires=("torch==2.13.0",)), lambda message: None)
    folder = Path(env.python_path).parent.parent
    probe = ("import importlib.util, json, torch\n"  # harness/ must not go on sys.path (it shadows _bisect)
             f"spec = importlib.util.spec_from_file_location('_child', {str(CHILD_RUNNER)!r})\n"
             "_child = importlib.util.module_from_spec(spec)\n"
             "spec.loader.exec_module(_child)\n"
             f"stored = _child._stored_versions({str(folder / _OWNERS)!r})\n"
             "print(json.dumps([stored, _child._computed_versions()]))\n")
    proc = subprocess.run([env.python_path, "-c", probe], capture_output=True, text=True, timeout=300, check=True,
                          env={**os.environ, "PYTHONPYCACHEPREFIX": str(folder / ".pycache")})
    stored, computed = json.loads(proc.stdout.splitlines()[-1])
    assert stored is not None and stored == computed
    assert stored["torch"].startswith("2.13.0") and "typing_extensions" in stored


@pytest.fixture
def record_file(tmp_path: Path) -> str:
    path = tmp_path / "owners.json"
    path.write_text(json.dumps(owners_record()))
    return str(path)


def test_the_record_gives_what_computing_gives(record_file):
    stored = _stored_versions(record_file)
    assert stored is not None and stored == _computed_versions()
    assert "pytest" in stored


def _fake_distribution(folder: Path) -> Path:
    info = folder / "fakedist-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fakedist\nVersion: 1.0\n")
    (info / "top_level.txt").write_text("fakemod\n")
    (folder / "fakemod.py").write_text("")
    return folder


def test_distributions_the_repro_put_on_sys_path_are_seen(record_file, tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(_fake_distribution(tmp_path / "vendored")))
    monkeypatch.delitem(sys.modules, "fakemod", raising=False)
    __import__("fakemod")
    assert _stored_versions(record_file) is None
    assert _imported_versions(record_file)["fakedist"] == "1.0"


def test_a_changed_removed_or_reordered_sys_path_entry_invalidates_the_record(record_file, monkeypatch):
    record = json.loads(Path(record_file).read_text())
    site = next(p for p, names in record["paths"].items() if names)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if p != site])
    assert _stored_versions(record_file) is None
    monkeypatch.setattr(sys, "path", list(reversed(list(record["paths"]))))
    assert _stored_versions(record_file) is None
    monkeypatch.setattr(sys, "path", list(record["paths"]))
    assert _stored_versions(record_file) is not None
    record["paths"][site] = [*record["paths"][site], "newly-installed-1.0.dist-info"]
    Path(record_file).write_text(json.dumps(record))
    assert _stored_versions(record_file) is None


def test_a_finder_that_finds_distributions_invalidates_the_record(record_file, monkeypatch):
    class Finder:
        def find_spec(self, *args: object) -> None:
            return None

        def find_distributions(self, *args: object) -> list:
            return []

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    assert _stored_versions(record_file) is None
