"""What a private-uid build leaves behind crosses into the harness's folders the same way across filesystems.

As root, a build step that runs package code writes only folders of its own (a scratch folder under /tmp);
the harness then moves what it made into place: the wheelhouse's wheels (environments/_wheelhouse.py
``adopt_wheels``), a source build's installed files (environments/_split.py ``move_added``). Where the
scratch folder and the target are on different filesystems (a tmpfs /tmp, an environments folder or uv's
cache on another disk) a rename cannot cross: the move becomes a copy, and the environment is built in
place instead of in uv's cache (containment/_sandbox.py ``build_place``). Each path is driven for real here
with a tmpfs mounted for the test (root only: CI runs as root), and must keep what the rename keeps: the
files land, they are root's, no link is followed, and nothing stays in the scratch folder.
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from harness._exceptions import EnvBuildError
from harness.containment import _seal
from harness.containment._sandbox import build_place
from harness.environments._spec import EnvSpec
from harness.environments._split import move_added, snapshot
from harness.environments._venv import VenvBackend
from harness.environments._wheelhouse import adopt_wheels, host_python, pip_wheel
from tests.faults.conftest import tmpfs_folder
from tests.faults.test_build_cache import _wheel
from tests.faults.test_build_identity import _root_only, _sdist, source_package

PRIVATE_UID = _seal.UID_BASE + 1  # what a private-uid step's files are owned by
WHY = "another filesystem for the target (a tmpfs mount)"


@pytest.fixture
def other_fs(tmp_path: Path):
    """A tmpfs folder: another device than ``tmp_path`` (where the scratch folders are)."""
    folder = tmp_path / "other-fs"
    for mounted in tmpfs_folder(folder, "size=64m", WHY):
        assert os.stat(mounted).st_dev != os.stat(tmp_path).st_dev
        yield mounted


def _private(path: Path, mode: int = 0o644) -> Path:
    os.chown(path, PRIVATE_UID, PRIVATE_UID, follow_symlinks=False)
    if not path.is_symlink():
        path.chmod(mode)
    return path


def _private_file(path: Path, data: bytes, mode: int = 0o644) -> Path:
    path.write_bytes(data)
    return _private(path, mode)


def test_wheels_a_private_uid_built_are_copied_across_filesystems_as_a_rename_would_move_them(tmp_path, other_fs):
    built, wheels = tmp_path / "built", other_fs / "wheels"
    built.mkdir()
    wheels.mkdir()
    secret = _root_only(tmp_path / "root-only.txt")
    _private_file(built / "good-1.0-py3-none-any.whl", b"a wheel", 0o600)
    (built / "link-1.0-py3-none-any.whl").symlink_to(secret)
    _private_file(built / "hard-1.0-py3-none-any.whl", b"linked")
    os.link(built / "hard-1.0-py3-none-any.whl", tmp_path / "elsewhere")
    os.mkfifo(built / "fifo-1.0-py3-none-any.whl")
    (built / "there-1.0-py3-none-any.whl").write_bytes(b"the built one")
    (wheels / "there-1.0-py3-none-any.whl").write_bytes(b"the one reused")
    (built / "notes.txt").write_text("not a wheel")
    umask = os.umask(0o077)  # the harness's umask does not decide a wheel's mode
    try:
        left = adopt_wheels(built, wheels)
    finally:
        os.umask(umask)
    assert [line.split(" ", 1)[0] for line in left] == ["fifo-1.0-py3-none-any.whl", "hard-1.0-py3-none-any.whl",
                                                         "link-1.0-py3-none-any.whl", "notes.txt",
                                                         "there-1.0-py3-none-any.whl"], left
    good = wheels / "good-1.0-py3-none-any.whl"
    info = good.stat()
    assert good.read_bytes() == b"a wheel" and info.st_dev == os.stat(other_fs).st_dev and info.st_nlink == 1
    assert (info.st_uid, info.st_gid, stat.S_IMODE(info.st_mode)) == (0, 0, 0o644)
    assert sorted(p.name for p in wheels.iterdir()) == ["good-1.0-py3-none-any.whl", "there-1.0-py3-none-any.whl"]
    assert (wheels / "there-1.0-py3-none-any.whl").read_bytes() == b"the one reused"
    assert not (built / "good-1.0-py3-none-any.whl").exists()  # moved, not copied and kept


def test_a_wheel_that_does_not_fit_the_other_filesystem_leaves_no_part_of_itself(tmp_path):
    built, full = tmp_path / "built", tmp_path / "small"
    built.mkdir()
    for small in tmpfs_folder(full, "size=1m", WHY):
        _private_file(built / "big-1.0-py3-none-any.whl", b"x" * (2 << 20))
        (left,) = adopt_wheels(built, small)
        assert left.startswith("big-1.0-py3-none-any.whl could not be moved") and "No space" in left, left
        assert list(small.iterdir()) == [] and (built / "big-1.0-py3-none-any.whl").stat().st_size == 2 << 20


@pytest.mark.parametrize("where", ["same filesystem", "another filesystem"])
def test_what_a_source_build_installed_moves_in_the_same_way_across_filesystems(tmp_path, request, where):
    """A rename on one filesystem, a copy across two: either way the files are root's, a symlink stays a link
    (its target is never read), a set-uid bit does not survive on a file that root now owns, and nothing
    stays behind in the build's folder."""
    if os.geteuid() != 0:
        pytest.skip("files of a private uid, adopted by root: as root only (CI runs as root)")
    env = (request.getfixturevalue("other_fs") if where == "another filesystem" else tmp_path) / "env"
    aside = tmp_path / "aside"
    for root in (aside, env):
        (root / "site").mkdir(parents=True)
    (env / "site" / "shared").mkdir()  # a namespace folder another package installed: merged file by file
    (env / "site" / "shared" / "a.py").write_text("a")
    before = snapshot(aside)
    secret = _root_only(tmp_path / "root-only.txt")
    package = _private_tree(aside / "site" / "pkg", secret)
    (aside / "site" / "shared").mkdir()
    _private_file(aside / "site" / "shared" / "b.py", b"b", 0o4755)
    move_added(aside, env, before)
    assert sorted(p.name for p in (env / "site" / "shared").iterdir()) == ["a.py", "b.py"]
    assert not stat.S_IMODE((env / "site" / "shared" / "b.py").stat().st_mode) & stat.S_ISUID
    landed = env / "site" / "pkg"
    assert (landed / "module.py").read_text() == "VALUE = 1\n" and (landed / "data" / "table.txt").read_text() == "t"
    assert os.readlink(landed / "secret-link") == str(secret) and (landed / "secret-link").is_symlink()
    for path in (landed, *landed.rglob("*")):
        info = os.lstat(path)
        assert (info.st_uid, info.st_gid) == (0, 0), path
        assert not info.st_mode & (stat.S_ISUID | stat.S_ISGID), f"{path} is set-uid root: {oct(info.st_mode)}"
    assert not package.exists() and [p.name for p in (aside / "site").rglob("*")] == ["shared"]


def _private_tree(package: Path, secret: Path) -> Path:
    """A package folder as a private-uid build installs it: a module, a folder, a link to a root-only file,
    a set-uid program."""
    (package / "data").mkdir(parents=True)
    (package / "module.py").write_text("VALUE = 1\n")
    (package / "data" / "table.txt").write_text("t")
    (package / "secret-link").symlink_to(secret)
    (package / "tool").write_text("#!/bin/sh\n")
    for path in (package, *package.rglob("*")):
        _private(path, 0o755 if path.is_dir() else 0o644)
    (package / "tool").chmod(0o4755)  # as the private uid could, on its own file
    return package


@pytest.mark.parametrize("where", ["same filesystem", "another filesystem"])
def test_a_fifo_a_source_build_installed_is_refused_on_either_path(tmp_path, request, where):
    env = (request.getfixturevalue("other_fs") if where == "another filesystem" else tmp_path) / "env"
    aside = tmp_path / "aside"
    for root in (aside, env):
        (root / "site").mkdir(parents=True)
    before = snapshot(aside)
    (aside / "site" / "pkg").mkdir()
    os.mkfifo(aside / "site" / "pkg" / "pipe")
    with pytest.raises(EnvBuildError, match=r"site/pkg/pipe.*not a regular file, folder or symlink"):
        move_added(aside, env, before)
    assert not (env / "site" / "pkg" / "pipe").exists()


@pytest.mark.slow
def test_the_docker_wheelhouse_build_copies_its_wheel_into_a_folder_on_another_filesystem(tmp_path, monkeypatch,
                                                                                         other_fs):
    """The real sealed ``pip wheel`` of an sdist, as root a private uid building into its scratch folder under
    /tmp, the wheel folder on a tmpfs: the wheel lands, root's, and the scratch folder is gone."""
    _seal.bwrap.cache_clear()
    if _seal.bwrap()[0] is None:
        pytest.skip(f"no bubblewrap sandbox here: {_seal.bwrap()[1]}")
    scratch, sdists, wheels = tmp_path / "scratch", tmp_path / "sdists", other_fs / "wheels"
    scratch.mkdir()
    sdists.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))  # where the build's scratch folder is made
    archive = _sdist(sdists, sdists / "no-secret", {})
    python = host_python(f"{sys.version_info.major}.{sys.version_info.minor}")
    log = tmp_path / "wheel.log"
    proc = pip_wheel(python, [f"rootprobe @ {archive.as_uri()}"], wheels, log, root=sdists, extra=["--no-index"])
    assert proc.returncode == 0 and proc.containment == "bwrap", log.read_text()
    (wheel,) = wheels.iterdir()
    info = wheel.stat()
    assert wheel.name.startswith("rootprobe-1.0-") and info.st_dev == os.stat(other_fs).st_dev
    assert (info.st_uid, stat.S_IMODE(info.st_mode), info.st_nlink) == (0, 0o644, 1)
    assert "left behind" not in log.read_text() and "could not be moved" not in log.read_text()
    assert list(scratch.iterdir()) == []


@pytest.mark.slow
@pytest.mark.parametrize("layout", ["cache on another filesystem", "scratch on another filesystem"])
def test_an_environment_builds_whichever_side_of_a_filesystem_boundary_uv_cache_is(tmp_path, monkeypatch,
                                                                                    other_fs, layout):
    """``cache on another filesystem``: uv's cache on the tmpfs, the environments on /tmp's: built in place
    (no hardlinks across). ``scratch on another filesystem``: both on the tmpfs, the build's scratch folder
    on /tmp's: built in uv's cache, and what the source build installed is copied across by the harness."""
    if layout == "cache on another filesystem":
        cache, envs = other_fs / "uv-cache", tmp_path / "envs"
    else:
        cache, envs = other_fs / "uv-cache", other_fs / "envs"
    for folder in (cache, envs):
        folder.mkdir()
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    monkeypatch.setenv("UV_CACHE_DIR", str(cache))
    place = build_place(cache, envs / ".building-x-1-2")
    assert (place.parent == envs) is (layout == "cache on another filesystem"), place  # else in uv's cache
    wheel = _wheel(tmp_path / "wheels", "plain", {"plain/__init__.py": b"VALUE = 'wheel'\n"})
    source = source_package(tmp_path)
    prepared = VenvBackend(root=envs).prepare(
        EnvSpec(requires=(f"plain @ {wheel.as_uri()}", f"frombuild @ {source.as_uri()}")), lambda message: None)
    python = prepared.python_path
    out = subprocess.run([python, "-c", "import plain, frombuild; print(plain.VALUE, frombuild.VALUE)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["wheel", "source"]
    log = Path(python).parent.parent.with_suffix(".build.log").read_text()
    assert "built from source with the build's own uv cache" in log, log
    site = next(Path(python).parent.parent.glob("lib/python3*/site-packages"))
    assert {os.lstat(p).st_uid for p in (site / "frombuild", *(site / "frombuild").iterdir())} == {0}
    assert list(scratch.iterdir()) == []  # the build's scratch folder, copies and own cache: removed
    assert [p.name for p in envs.iterdir() if p.name.startswith(".building-")] == []
    assert not any((cache / ".repro-matrix-builds").glob("*")), "a build left its folder in uv's cache"



def test_a_cache_bind_mounted_from_the_same_filesystem_is_not_built_in(tmp_path):
    """Same device, another mount (a bind mount, a container's volume): a rename still fails (EXDEV), so the
    environment is built in place, and the rename probe leaves nothing in uv's cache."""
    if os.geteuid() != 0:
        pytest.skip("a bind mount needs root (CI runs as root)")
    source, cache, envs = tmp_path / "cache-source", tmp_path / "uv-cache", tmp_path / "envs"
    for folder in (source, cache, envs):
        folder.mkdir()
    mounted = subprocess.run(["mount", "--bind", str(source), str(cache)], capture_output=True, text=True,
                             check=False)
    if mounted.returncode != 0:
        pytest.skip(f"a bind mount was refused here: {mounted.stderr.strip()}")
    try:
        assert os.stat(cache).st_dev == os.stat(envs).st_dev
        folder = envs / ".building-x-1-2"
        assert build_place(cache, folder) == folder
        assert [p.name for p in (cache / ".repro-matrix-builds").iterdir()] == []
    finally:
        subprocess.run(["umount", "-l", str(cache)], check=False)
