"""As root, a package build does not run as root: it cannot read root-only host files.

A source distribution's build backend runs code a case chose. As root in bwrap mode it runs as a private
unprivileged uid, as a cell does (harness/containment/_launch.py ``Confinement.private_uid``), so a file
that only root may read (mode 0600, owned by root) stays closed to it even where bwrap binds it, and it
writes nothing outside its own folders. Tried for real: an sdist whose in-tree backend tries both and
records what it managed in the wheel it builds (the only place a build's writes survive).
"""

from __future__ import annotations

import io
import json
import os
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from harness.containment import _seal
from harness.containment._process import run_helper
from harness.containment._sandbox import BuildSandbox
from harness.environments._spec import EnvSpec
from harness.environments._venv import VenvBackend
from harness.environments._wheelhouse import host_python, pip_wheel
from tests.faults.conftest import REPO
from tests.faults.test_build_cache import WHEELMAKER, _wheel

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(os.geteuid() != 0, reason="a root-only file can be made, and tried, as root only")]

SECRET = "root-only secret\n"
# The backend: tries to read the root-only file and to write beside it and into the environments folder,
# then builds a wheel whose seen.json says what happened and which uid it ran as.
BACKEND = '''
import json, os, pathlib

def _attempts():
    seen = {{"uid": os.getuid()}}
    try:
        seen["read"] = "done: " + pathlib.Path({secret!r}).read_text()
    except OSError as error:
        seen["read"] = repr(error)
    for name, target in {targets!r}.items():
        try:
            pathlib.Path(target).write_text("written by a package build")
            seen[name] = "done"
        except OSError as error:
            seen[name] = repr(error)
    return seen

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import wheelmaker
    seen = json.dumps(_attempts()).encode()
    return wheelmaker.wheel(pathlib.Path(wheel_directory), "rootprobe",
                            {{"rootprobe/__init__.py": b"", "rootprobe/seen.json": seen}})
'''


def _sdist(folder: Path, secret: Path, targets: dict[str, str]) -> Path:
    """rootprobe-1.0.tar.gz: an in-tree PEP 517 backend (no build requirement: no index is asked)."""
    files = {"pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n'
                               '[project]\nname = "rootprobe"\nversion = "1.0"\n',
             "backend.py": BACKEND.format(secret=str(secret), targets=targets),
             "wheelmaker.py": WHEELMAKER,
             "PKG-INFO": "Metadata-Version: 2.1\nName: rootprobe\nVersion: 1.0\n"}
    archive = folder / "rootprobe-1.0.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"rootprobe-1.0/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return archive


SOURCE_BACKEND = '''
import pathlib

def get_requires_for_build_wheel(config_settings=None):
    return []

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    import wheelmaker
    return wheelmaker.wheel(pathlib.Path(wheel_directory), "frombuild",
                            {"frombuild/__init__.py": b"VALUE = 'source'\\n"})
'''


def source_package(folder: Path) -> Path:
    """frombuild: a local folder with an in-tree backend and no build requirement (no index is asked)."""
    source = folder / "built-src"
    source.mkdir()
    (source / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "backend"\n'
                                           'backend-path = ["."]\n')
    (source / "backend.py").write_text(SOURCE_BACKEND)
    (source / "wheelmaker.py").write_text(WHEELMAKER)
    return source


def _root_only(path: Path) -> Path:
    path.write_text(SECRET)
    os.chown(path, 0, 0)
    os.chmod(path, 0o600)
    return path


@pytest.mark.fault("a package build reads root-only host files (as root)")
def test_a_source_build_cannot_read_a_root_only_file_or_write_outside_its_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", "1")
    monkeypatch.delenv(_seal.BWRAP_VARIABLE, raising=False)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "shared-uv-cache"))
    _seal.bwrap.cache_clear()
    try:
        if _seal.bwrap()[0] is None:
            pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
        sdists, envs = tmp_path / "sdists", tmp_path / "envs"
        sdists.mkdir()
        secret = _root_only(sdists / "root-only.txt")  # bound read-only into the build (beside the sdist)
        targets = {"write-beside": str(sdists / "planted"), "write-envs": str(envs / "planted"),
                   "write-cache": str(tmp_path / "shared-uv-cache" / "planted")}
        archive = _sdist(sdists, secret, targets)
        env = VenvBackend(root=envs).prepare(EnvSpec(requires=(f"rootprobe @ {archive.as_uri()}",)),
                                             lambda message: None)
    finally:
        _seal.bwrap.cache_clear()
    site = next(Path(env.python_path).parent.parent.glob("lib/python3*/site-packages"))
    seen = json.loads((site / "rootprobe" / "seen.json").read_text())
    assert seen["uid"] != 0, seen
    assert "Permission" in seen["read"] and SECRET not in seen["read"], seen
    for name, target in targets.items():
        assert not seen[name].startswith("done") and not Path(target).exists(), (name, seen)
    # what the build installed is the harness's now, not the build's private uid's
    assert {p.stat().st_uid for p in (site / "rootprobe").iterdir()} | {(site / "rootprobe").stat().st_uid} == {0}


def test_a_private_uid_build_step_still_reads_uv_and_pip_settings(tmp_path):
    """Index credentials in a 0600 ``~/.netrc`` of root's reach the steps that resolve and build (uv needs
    them), as copies; the step runs as a private uid, the harness's own steps as uid 0."""
    _seal.bwrap.cache_clear()
    if _seal.bwrap()[0] is None:
        pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
    home = tmp_path / "home"
    (home / ".config" / "uv").mkdir(parents=True)
    (home / ".netrc").write_text("machine index.invalid login me password pw\n")
    (home / ".netrc").chmod(0o600)
    (home / ".config" / "uv" / "uv.toml").write_text("native-tls = true\n")
    (home / ".config" / "uv" / "uv.toml").chmod(0o600)
    env = {**os.environ, "HOME": str(home)}
    script = 'id -u; cat "$HOME/.netrc" "$HOME/.config/uv/uv.toml"'
    seen = {}
    for harness_uid in (False, True):
        with BuildSandbox(env_root=tmp_path / "envs", private=(), env=env) as sandbox:
            proc = run_helper(["sh", "-c", script], env=env, timeout=60,
                              confinement=sandbox.seal(harness_uid=harness_uid))
        assert proc.returncode == 0 and proc.containment == "bwrap", proc
        uid, *settings = proc.stdout.splitlines()
        assert settings == ["machine index.invalid login me password pw", "native-tls = true"], proc.stdout
        seen[harness_uid] = int(uid)
    assert seen[True] == 0 and seen[False] >= _seal.UID_BASE, seen


def test_a_build_step_that_a_private_uid_could_not_serve_stays_uid_0_and_says_why(tmp_path):
    _seal.bwrap.cache_clear()
    if _seal.bwrap()[0] is None:
        pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
    closed = tmp_path / "closed"  # a folder the step reads, readable by root alone
    closed.mkdir(mode=0o700)
    with BuildSandbox(env_root=tmp_path / "envs", private=(), env=os.environ, uses=[closed]) as sandbox:
        proc = run_helper(["id", "-u"], env=os.environ, timeout=60, confinement=sandbox.seal())
    assert proc.returncode == 0 and proc.stdout.strip() == "0", proc
    assert any("not a private uid" in note and f"chmod o+rx {closed}" in note for note in proc.notes), proc.notes


@pytest.mark.fault("a package build reads root-only host files (as root)")
def test_the_docker_wheelhouse_build_of_an_sdist_cannot_read_a_root_only_file(tmp_path, monkeypatch):
    """The docker backend's host-side ``pip wheel`` builds sdists too: as root it runs as a private uid that
    builds into a folder of its own; the harness moves the wheel into the wheel folder and makes it root's."""
    from harness.docker._build import fill_wheelhouse
    from harness.docker._plan import ImageSettings, plan_image

    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", "1")
    monkeypatch.delenv(_seal.BWRAP_VARIABLE, raising=False)
    _seal.bwrap.cache_clear()
    try:
        if _seal.bwrap()[0] is None:
            pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
        sdists, wheels = tmp_path / "sdists", tmp_path / "context" / "wheels"
        sdists.mkdir()
        wheels.mkdir(parents=True)
        secret = _root_only(sdists / "root-only.txt")
        targets = {"write-beside": str(sdists / "planted"), "write-wheels": str(wheels / "planted.whl")}
        archive = _sdist(sdists, secret, targets)
        plan = plan_image(EnvSpec((f"rootprobe @ {archive.as_uri()}",)), "cpu", image_dir=REPO / "images" / "torch",
                          settings=ImageSettings(pip_source="wheelhouse"))
        fill_wheelhouse(plan, wheels, tmp_path / "build.log", lambda line: None)
    finally:
        _seal.bwrap.cache_clear()
    (wheel,) = wheels.glob("rootprobe-*.whl")
    with zipfile.ZipFile(wheel) as archive_file:
        seen = json.loads(archive_file.read("rootprobe/seen.json"))
    assert seen["uid"] != 0, seen
    assert "Permission" in seen["read"] and SECRET not in seen["read"], seen
    for name, target in targets.items():
        assert not seen[name].startswith("done") and not Path(target).exists(), (name, seen)
    assert list(wheels.iterdir()) == [wheel]
    assert (wheel.stat().st_uid, wheel.stat().st_mode & 0o777) == (0, 0o644)


def test_the_wheelhouse_build_reuses_the_wheels_already_in_the_folder(tmp_path):
    """As root the private uid sees the wheel folder read-only, as ``--find-links``: a wheel already there is
    reused (here with no index at all), and stays the file it was."""
    _seal.bwrap.cache_clear()
    if _seal.bwrap()[0] is None:
        pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
    wheels = tmp_path / "wheels"
    there = _wheel(wheels, "reused", {"reused/__init__.py": b""})
    before = there.stat()
    python = host_python(f"{sys.version_info.major}.{sys.version_info.minor}")
    proc = pip_wheel(python, ["reused==1.0"], wheels, tmp_path / "wheel.log", root=wheels, extra=["--no-index"])
    assert proc.returncode == 0 and proc.containment == "bwrap", (tmp_path / "wheel.log").read_text()
    assert list(wheels.iterdir()) == [there] and there.stat().st_ino == before.st_ino
    assert "the wheel folder has it already" in (tmp_path / "wheel.log").read_text()


def test_a_source_builds_own_venv_is_made_without_its_own_uv_cache(tmp_path, monkeypatch):
    """As root each private-uid step is given (chowned) what it may write. After the resolution the build's own
    uv cache can hold its build requirements unpacked (torch: ~15,000 files, benchmarks/chown_walk.py), so only
    the steps that use that cache get it: the resolution and the build; ``uv venv`` of the build's own venv
    writes that venv alone, with no cache (uv makes a throwaway one in its private /tmp)."""
    steps = _recorded_steps(monkeypatch)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "shared-uv-cache"))
    env = VenvBackend(root=tmp_path / "envs").prepare(
        EnvSpec(requires=(f"frombuild @ {source_package(tmp_path).as_uri()}",)), lambda message: None)
    assert Path(env.python_path).is_file()
    own = [argv[1:3] for argv, writable, _ in steps if any(p.name == "uv-cache" for p in writable)]
    assert own == [["pip", "compile"], ["pip", "install"]], own  # a URL: resolved as a pylock.toml at once
    (venv,) = [(writable, env) for argv, writable, env in steps if argv[1] == "venv" and argv[-1].endswith("/built")]
    assert [p.name for p in venv[0]] == ["built"] and venv[1]["UV_NO_CACHE"] == "1", venv


def _recorded_steps(monkeypatch) -> list[tuple[list[str], tuple[Path, ...], dict[str, str]]]:
    """Each build step as it runs: its argv, what it may write, its environment."""
    from harness.environments._venv_build import EnvBuilder

    steps: list[tuple[list[str], tuple[Path, ...], dict[str, str]]] = []
    step = EnvBuilder._step

    def recorded(self, log, argv, env, confinement):
        steps.append((argv, tuple(confinement.writable), env))
        return step(self, log, argv, env, confinement)

    monkeypatch.setattr(EnvBuilder, "_step", recorded)
    return steps


def _compiles(steps) -> list[tuple[str, bool]]:
    """Each ``uv pip compile``: its output format and whether it had the build's own cache."""
    return [("pylock" if "pylock.toml" in argv else "requirements", any(p.name == "uv-cache" for p in writable))
            for argv, writable, _ in steps if argv[1:3] == ["pip", "compile"]]


def test_a_resolution_of_wheels_alone_writes_no_pylock(tmp_path, monkeypatch):
    """For a ``pylock.toml`` uv unpacks each local wheel it resolves to hash it (a find-links torch: 700 MB and
    ~9 s a build); wheels alone are resolved as requirements and checked with ``--no-build`` instead."""
    steps = _recorded_steps(monkeypatch)
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "shared-uv-cache"))
    env = VenvBackend(root=tmp_path / "envs").prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    assert Path(env.python_path).is_file()
    assert _compiles(steps) == [("requirements", True), ("requirements", False)], steps
    (check,) = [argv for argv, _, _ in steps if "--no-build" in argv and argv[1:3] == ["pip", "compile"]]
    assert "-c" in check


def test_an_index_package_without_a_wheel_is_found_and_built_from_source(tmp_path, monkeypatch):
    """An sdist named by name and version (no URL): the ``--no-build`` check fails, the ``pylock.toml`` says
    which package to build, and the build installs it."""
    steps = _recorded_steps(monkeypatch)
    links = tmp_path / "links"
    links.mkdir()
    source = source_package(tmp_path)
    with tarfile.open(links / "frombuild-1.0.tar.gz", "w:gz") as archive:
        archive.add(source, arcname="frombuild-1.0")
    found = os.environ.get("UV_FIND_LINKS", "")
    monkeypatch.setenv("UV_FIND_LINKS", ",".join(filter(None, (str(links), found))))
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "shared-uv-cache"))
    env = VenvBackend(root=tmp_path / "envs").prepare(EnvSpec(requires=("frombuild==1.0",)), lambda message: None)
    site = next(Path(env.python_path).parent.parent.glob("lib/python3*/site-packages"))
    assert (site / "frombuild" / "__init__.py").read_text() == "VALUE = 'source'\n"
    assert _compiles(steps) == [("requirements", True), ("requirements", False), ("pylock", True)], steps
