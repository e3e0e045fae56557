"""Bytecode compiled once and hardlinked into every environment built from the same files (issue 21)."""

from __future__ import annotations

import compileall
import os
import subprocess
import sys
from pathlib import Path

from harness.environments._bytecode import STORE, SharedBytecode, cache_tag, prune_store

TAG = f"cpython-{sys.version_info.major}{sys.version_info.minor}"
SOURCE = "def where():\n    raise RuntimeError('from mod')\n"


def _environment(root: Path, name: str, source: Path | None = None) -> Path:
    """An environment folder as uv makes it; ``source``: hardlink mod.py from there (uv's cache does)."""
    folder = root / name
    site = folder / "lib" / "python3" / "site-packages" / "pkg"
    site.mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text(f"implementation = CPython\nversion_info = {sys.version_info.major}."
                                       f"{sys.version_info.minor}.{sys.version_info.micro}\n")
    (site / "__init__.py").write_text("")
    if source is None:
        (site / "mod.py").write_text(SOURCE)
    else:
        os.link(source, site / "mod.py")
    return folder


def _compiled(folder: Path) -> Path:
    return folder / "lib" / "python3" / "site-packages" / "pkg" / "__pycache__" / f"mod.{TAG}.pyc"


def _build(root: Path, folder: Path) -> SharedBytecode:
    shared = SharedBytecode(root, folder)
    shared.lend()
    compileall.compile_dir(folder / "lib", quiet=2)
    shared.keep()
    return shared


def _mod(folder: Path) -> Path:
    return folder / "lib" / "python3" / "site-packages" / "pkg" / "mod.py"


def test_an_environment_built_from_the_same_files_gets_the_compiled_file_not_a_new_compile(tmp_path):
    first = _environment(tmp_path, "venv-a")
    _build(tmp_path, first)
    second = _environment(tmp_path, "venv-b", source=_mod(first))
    shared = _build(tmp_path, second)

    assert shared.lent == 2  # pkg/__init__.py and pkg/mod.py
    assert _compiled(second).stat().st_ino == _compiled(first).stat().st_ino  # one file, not compiled again
    # Python reads it as the second environment's own: the traceback names that environment's source.
    run = subprocess.run([sys.executable, "-B", "-c", "import pkg.mod; pkg.mod.where()"], capture_output=True,
                         text=True, env={**os.environ, "PYTHONPATH": str(_mod(second).parents[1])})
    assert str(_mod(second)) in run.stderr and "from mod" in run.stderr, run.stderr


def test_a_changed_source_is_compiled_for_itself(tmp_path):
    _build(tmp_path, _environment(tmp_path, "venv-a"))
    other = _environment(tmp_path, "venv-b")
    _mod(other).write_text(SOURCE.replace("from mod", "changed"))
    _build(tmp_path, other)
    assert b"changed" in _compiled(other).read_bytes()


def test_a_pyc_that_was_there_before_the_compile_never_reaches_the_store(tmp_path):
    """A wheel or a source build may ship its own .pyc (for any module): the store keeps only what the
    harness's compile step made, so nothing planted is lent to another environment."""
    planted = _environment(tmp_path, "venv-a")
    compileall.compile_file(_mod(planted), quiet=2)
    _compiled(planted).write_bytes(_compiled(planted).read_bytes()[:16] + b"planted")
    _build(tmp_path, planted)
    stored = [p.read_bytes() for p in (tmp_path / STORE).rglob("*.pyc")]
    assert len(stored) == 1 and all(b"planted" not in data for data in stored)  # pkg/__init__.py only
    second = _environment(tmp_path, "venv-b", source=_mod(planted))
    _build(tmp_path, second)
    assert b"planted" not in _compiled(second).read_bytes()


def test_stored_files_no_environment_uses_are_pruned(tmp_path):
    first = _environment(tmp_path, "venv-a")
    _build(tmp_path, first)
    assert prune_store(tmp_path) == (0, 0)
    os.unlink(_compiled(first))
    files, size = prune_store(tmp_path)
    assert files == 1 and size > 0
    assert len(list((tmp_path / STORE).rglob("*.pyc"))) == 1  # pkg/__init__.py's, still linked


def test_no_tag_no_sharing(tmp_path):
    folder = _environment(tmp_path, "venv-a")
    (folder / "pyvenv.cfg").write_text("implementation = PyPy\nversion_info = 3.11.0\n")
    assert cache_tag(folder) is None
    shared = _build(tmp_path, folder)
    assert shared.lent == 0 and not (tmp_path / STORE).exists()
