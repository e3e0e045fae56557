"""A package build cannot poison uv's shared cache for later builds.

uv finds a cache entry by where it came from and never re-checks the files it unpacked there, and an
environment's files are hardlinks of those files: a build that rewrote a cached file, or planted an entry,
would change every environment made from it, now and later, whatever case they belong to. No code a case
chose may run while the shared cache, or a file linked from it, is writable (harness/environments/_venv_build.py
``EnvBuilder._install``). Two ways in, each tried for real, in bwrap mode and in the fallback layer:

* ``source-build``: a local package's PEP 517 backend (run to resolve it, then to build it) rewrites every
  cached copy of another package's module in place and plants a file at the cache's top;
* ``pth``: a wheel (installed without building) ships a ``.pth`` file, which runs in every later step that
  starts the environment's interpreter; it rewrites the other package's module in its own environment,
  a hardlink of the shared cache's copy.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.containment import _seal
from harness.environments._spec import EnvSpec
from harness.environments._venv import VenvBackend

pytestmark = pytest.mark.slow

GENUINE = "VALUE = 'genuine'\n"
# Rewrites, in place, every victim/__init__.py it finds under the folders given; records what it managed.
ATTACK = '''
import json, os, pathlib
def attack(folders, planted):
    done = []
    for folder in folders:
        for root, _, files in os.walk(folder):
            if os.path.basename(root) == "victim" and "__init__.py" in files:
                try:
                    with open(os.path.join(root, "__init__.py"), "r+") as handle:
                        handle.write("VALUE = 'POISON!'\\n")
                    done.append(root)
                except OSError:
                    pass
    if planted:
        try:
            pathlib.Path(planted).write_text("planted by a package build")
            done.append(planted)
        except OSError:
            pass
    return done
'''

BACKEND = ATTACK + '''
def _attack():
    attack({folders!r}, {planted!r})

def get_requires_for_build_wheel(config_settings=None):
    _attack()
    return []

def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _attack()
    info = pathlib.Path(metadata_directory) / "hostilepkg-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\\nName: hostilepkg\\nVersion: 1.0\\n")
    return info.name

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _attack()
    import wheelmaker
    return wheelmaker.wheel(pathlib.Path(wheel_directory), "hostilepkg", {{"hostilepkg/__init__.py": b""}})
'''

# A wheel by hand (the test's own, and the hostile backend's): files, METADATA, WHEEL and RECORD.
WHEELMAKER = '''
import base64, hashlib, zipfile

def wheel(folder, name, files):
    info = f"{name}-1.0.dist-info"
    files = {**files, f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {name}\\nVersion: 1.0\\n".encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
    record = [f"{path},sha256={base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()},"
              f"{len(data)}" for path, data in files.items()]
    files[f"{info}/RECORD"] = ("\\n".join([*record, f"{info}/RECORD,,"]) + "\\n").encode()
    target = folder / f"{name}-1.0-py3-none-any.whl"
    with zipfile.ZipFile(target, "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return target.name
'''

# The .pth hook: runs at every start of the environment's interpreter (site), looks for victim beside it.
PTH_HOOK = ATTACK + '''
import sys
attack([p for p in sys.path if p.endswith("site-packages")], None)
'''


def _wheel(folder: Path, name: str, files: dict[str, bytes]) -> Path:
    namespace: dict[str, object] = {}
    exec(WHEELMAKER, namespace)  # the same code the hostile backend uses, so the two wheels agree
    folder.mkdir(parents=True, exist_ok=True)
    return folder / namespace["wheel"](folder, name, files)  # type: ignore[operator]


def _hostile_source(folder: Path, shared: Path, planted: Path) -> Path:
    package = folder / "hostile-src"
    package.mkdir(parents=True)
    (package / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                            'backend-path = ["."]\n')
    (package / "backend.py").write_text(BACKEND.format(folders=[str(shared)], planted=str(planted)))
    (package / "wheelmaker.py").write_text(WHEELMAKER)
    return package


def _build(backend: VenvBackend, *requires: str) -> Path:
    env = backend.prepare(EnvSpec(requires=requires), lambda message: None)
    return Path(env.python_path).parent.parent


def _victims(*folders: Path) -> dict[str, str]:
    return {str(p): p.read_text() for folder in folders for p in folder.rglob("victim/__init__.py")}


@pytest.mark.fault("a package build poisons uv's shared cache")
@pytest.mark.parametrize("attack", ["source-build", "pth"])
@pytest.mark.parametrize("sandbox", ["bwrap", "fallback"])
def test_a_build_cannot_change_what_later_builds_take_from_the_shared_cache(tmp_path, monkeypatch, attack, sandbox):
    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", "1")
    if sandbox == "fallback":
        monkeypatch.setenv(_seal.BWRAP_VARIABLE, "0")
    _seal.bwrap.cache_clear()  # decided once per process: again for this mode, and after it for the next test
    try:
        if sandbox == "bwrap" and _seal.bwrap()[0] is None:
            pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
        _run_attack(tmp_path, monkeypatch, attack)
    finally:
        _seal.bwrap.cache_clear()


def _run_attack(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, attack: str) -> None:
    shared, wheels = tmp_path / "shared-uv-cache", tmp_path / "wheels"
    monkeypatch.setenv("UV_CACHE_DIR", str(shared))
    backend = VenvBackend(root=tmp_path / "envs")  # local wheels only: no index is asked
    victim = _wheel(wheels, "victim", {"victim/__init__.py": GENUINE.encode()})
    first = _build(backend, f"victim @ {victim.as_uri()}")  # an earlier case's environment
    assert set(_victims(shared).values()) == {GENUINE}, "the victim never reached the shared cache"
    planted = shared / "planted-by-a-build"
    if attack == "source-build":
        hostile = f"hostilepkg @ {_hostile_source(tmp_path, shared, planted).as_uri()}"
    else:
        hook = _wheel(wheels, "evilpth", {"evilpth.pth": b"import evilpth_hook\n",
                                           "evilpth_hook.py": PTH_HOOK.encode()})
        hostile = f"evilpth @ {hook.as_uri()}"
    attacked = _build(backend, f"victim @ {victim.as_uri()}", hostile)
    other = _wheel(wheels, "other", {"other/__init__.py": b""})
    later = _build(backend, f"victim @ {victim.as_uri()}", f"other @ {other.as_uri()}")  # a later case's
    seen = _victims(shared, first, later)
    assert len(seen) >= 3 and set(seen.values()) == {GENUINE}, json.dumps(seen, indent=1)
    assert not planted.exists(), "a build planted a file in uv's shared cache"
    site = next((attacked / "lib").glob("python3*/site-packages"))
    assert (site / "victim" / "__init__.py").read_text() == GENUINE
    # the hostile package was installed all the same: built from source, or its .pth in place
    assert (site / "hostilepkg" / "__init__.py").is_file() if attack == "source-build" else (site / "evilpth.pth").is_file()
