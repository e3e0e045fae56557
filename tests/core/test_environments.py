"""Environment keying and uv index settings."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness._exceptions import EnvBuildError
from harness.cases._load import PatchFile
from harness.environments._index import uv_index_environment
from harness.environments._spec import EnvSpec
from harness.environments._split import by_name, move_added, pins, read_lock, read_pins, requirement_lines, snapshot


def test_key_is_stable_and_order_independent():
    a = EnvSpec(requires=("torch==2.13.0", "numpy<2"), python="3.11")
    b = EnvSpec(requires=("numpy<2", "torch==2.13.0"), python="3.11")
    assert a.key() == b.key()
    assert len(a.key()) == 12


def test_key_changes_with_pins_python_and_patches(tmp_path: Path):
    base = EnvSpec(requires=("torch==2.13.0",), python="3.11")
    assert base.key() != EnvSpec(requires=("torch==2.1.2",), python="3.11").key()
    assert base.key() != EnvSpec(requires=("torch==2.13.0",), python="3.12").key()
    diff = tmp_path / "x.diff"
    diff.write_text("--- a/x\n+++ b/x\n")
    patched = EnvSpec(requires=("torch==2.13.0",), patches=(PatchFile.from_path(diff),), python="3.11")
    assert patched.key() != base.key()
    diff.write_text("--- a/x\n+++ b/y\n")
    assert EnvSpec(requires=("torch==2.13.0",), patches=(PatchFile.from_path(diff),), python="3.11").key() \
        != patched.key()


def test_uv_settings_come_from_pip_variables():
    env = uv_index_environment({"PIP_FIND_LINKS": "/a /b", "PIP_INDEX_URL": "https://idx.example/simple"})
    assert env["UV_FIND_LINKS"] == "/a,/b"
    assert env["UV_INDEX_URL"] == "https://idx.example/simple"


def test_user_uv_settings_win():
    env = uv_index_environment({"PIP_FIND_LINKS": "/a", "UV_FIND_LINKS": "/mine"})
    assert env["UV_FIND_LINKS"] == "/mine"


def test_pip_config_find_links_is_read_when_no_variable(monkeypatch):
    import harness.environments._index as index

    monkeypatch.setattr(index, "_pip_config_value", lambda key: "/from/pip/config" if "find-links" in key else None)
    assert uv_index_environment({})["UV_FIND_LINKS"] == "/from/pip/config"


def test_floating_sets_are_keyed_by_refresh_period(monkeypatch):
    pinned = EnvSpec(requires=("torch==2.13.0", "six==1.16.0"), python="3.11")
    floating = EnvSpec(requires=("torch==2.13.0", "six"), python="3.11")
    assert not pinned.floating() and floating.floating()
    monkeypatch.setenv("REPRO_MATRIX_REFRESH", "a")
    first, pinned_first = floating.key(), pinned.key()
    monkeypatch.setenv("REPRO_MATRIX_REFRESH", "b")
    assert floating.key() != first
    assert pinned.key() == pinned_first
    monkeypatch.delenv("REPRO_MATRIX_REFRESH")
    monkeypatch.setenv("REPRO_MATRIX_FLOATING_DAYS", "7")
    assert floating.key() == floating.key()


def test_pip_config_is_asked_once_per_process(monkeypatch):
    import subprocess

    import harness.environments._index as index

    calls = []
    real_run = subprocess.run

    def counting_run(*args, **kwargs):
        calls.append(args[0])
        return real_run(*args, **kwargs)

    monkeypatch.setattr(index.subprocess, "run", counting_run)
    index._pip_config_value.cache_clear()
    first = uv_index_environment({})
    assert uv_index_environment({}) == first and uv_index_environment({"PIP_INDEX_URL": "x"})["UV_INDEX_URL"] == "x"
    assert len(calls) == 1 and calls[0][-2:] == ["get", "global.find-links"]


def test_installed_lists_only_the_environment(tmp_path, monkeypatch):
    """The freeze step must not see the harness's working directory: a stray *.dist-info there is not installed."""
    from harness.environments._spec import EnvSpec
    from harness.environments._venv import VenvBackend

    stray = tmp_path / "cwd" / "stray_pkg-9.9.dist-info"
    stray.mkdir(parents=True)
    (stray / "METADATA").write_text("Metadata-Version: 2.1\nName: stray-pkg\nVersion: 9.9\n")
    monkeypatch.chdir(tmp_path / "cwd")
    env = VenvBackend(root=tmp_path / "envs").prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None)
    assert env.installed.get("six") == "1.16.0"
    assert "stray-pkg" not in env.installed


def test_a_local_requirement_is_keyed_by_its_content(tmp_path, monkeypatch):
    from harness.environments import _spec
    from harness.environments._spec import EnvSpec

    package = tmp_path / "pkg"
    (package / "src").mkdir(parents=True)
    (package / "src" / "code.py").write_text("VALUE = 1\n")
    spec = EnvSpec(requires=("torch==2.13.0", f"pkg @ {package.as_uri()}"))
    assert spec.local_requirements() == ["pkg"]
    first = spec.key()
    (package / "src" / "code.py").write_text("VALUE = 2\n")
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "code.pyc").write_bytes(b"ignored")
    monkeypatch.setattr(_spec, "_hashes", {})  # a new run hashes afresh
    assert spec.key() != first
    assert EnvSpec(requires=("torch==2.13.0",)).local_requirements() == []


@pytest.mark.parametrize("days", ["nan", "inf", "0", "-1", "x"])
def test_a_bad_floating_period_is_a_usage_error(monkeypatch, days):
    from harness._exceptions import UsageError
    from harness.environments._spec import floating_period

    monkeypatch.setenv("REPRO_MATRIX_FLOATING_DAYS", days)
    with pytest.raises(UsageError, match="REPRO_MATRIX_FLOATING_DAYS"):
        floating_period()


def test_a_resolution_says_what_must_be_built_and_pins_the_rest(tmp_path):
    """uv's pylock.toml: index wheels and a wheel file named directly install without a build; an sdist, a
    folder or a source archive is built (harness/environments/_split.py)."""
    lock = tmp_path / "pylock.toml"
    lock.write_text("""lock-version = "1.0"
[[packages]]
name = "Six"
version = "1.16.0"
wheels = [{ url = "https://example.invalid/six-1.16.0-py2.py3-none-any.whl" }]
[[packages]]
name = "schedulefree"
version = "1.2.5"
sdist = { url = "https://example.invalid/schedulefree-1.2.5.tar.gz" }
[[packages]]
name = "victim"
version = "1.0"
archive = { path = "/wheels/victim-1.0-py3-none-any.whl" }
[[packages]]
name = "local"
version = "0.1"
directory = { path = "/src/local" }
""")
    locked = read_lock(lock)
    assert [(p.name, p.wheel) for p in locked] == [("six", True), ("schedulefree", False), ("victim", True),
                                                   ("local", False)]
    assert pins(locked).splitlines() == ["six==1.16.0", "schedulefree==1.2.5", "victim==1.0", "local==0.1"]
    requires = ["victim @ file:///wheels/victim-1.0-py3-none-any.whl", "local @ file:///src/local", "Schedulefree"]
    assert requirement_lines(requires, locked).splitlines() == ["six==1.16.0", "Schedulefree", requires[0], requires[1]]
    lock.write_text("[[packages]\n")
    with pytest.raises(EnvBuildError, match="could not be read"):
        read_lock(lock)


def test_a_resolution_written_as_requirements_is_read_only_where_each_line_names_a_release(tmp_path):
    plain = tmp_path / "resolved.txt"
    plain.write_text("# This file was autogenerated by uv\nSix==1.16.0\n    # via -r requirements.in\n"
                     "torch==2.13.0+cpu\n")
    assert [(p.name, p.version, p.wheel) for p in read_pins(plain)] == [("six", "1.16.0", True),
                                                                        ("torch", "2.13.0+cpu", True)]
    for line in ("local @ file:///src/local", "six>=1.0", "six==1.16.0 ; python_version < '3'", "not a line!"):
        plain.write_text(f"six==1.16.0\n{line}\n")
        assert read_pins(plain) is None, line
    assert by_name(["six==1.16.0", "Schedulefree"]) and not by_name(["six", "local @ file:///src/local"])
    plain.unlink()
    plain.symlink_to(tmp_path / "elsewhere")
    with pytest.raises(EnvBuildError, match="could not be read"):
        read_pins(plain)


def test_what_a_source_build_installed_moves_in_without_replacing_a_file(tmp_path):
    aside, env = tmp_path / "aside", tmp_path / "env"
    for root in (aside, env):
        (root / "lib" / "site-packages").mkdir(parents=True)
        (root / "bin").mkdir()
    (aside / "pyvenv.cfg").write_text("")
    before = snapshot(aside)
    (aside / "lib" / "site-packages" / "built").mkdir()
    (aside / "lib" / "site-packages" / "built" / "__init__.py").write_text("built")
    (aside / "lib" / "site-packages" / "shared").mkdir()
    (aside / "lib" / "site-packages" / "shared" / "b.py").write_text("b")
    (env / "lib" / "site-packages" / "shared").mkdir()
    (env / "lib" / "site-packages" / "shared" / "a.py").write_text("a")
    (aside / "bin" / "tool").symlink_to("python")
    (aside / ".lock").write_text("")  # uv's lock of the venv: not the install's
    move_added(aside, env, before)
    site = env / "lib" / "site-packages"
    assert (site / "built" / "__init__.py").read_text() == "built"
    assert sorted(p.name for p in (site / "shared").iterdir()) == ["a.py", "b.py"]  # a namespace folder merged
    assert os.readlink(env / "bin" / "tool") == "python" and not (env / ".lock").exists()
    (aside / "lib" / "site-packages" / "shared" / "a.py").write_text("another a")
    with pytest.raises(EnvBuildError, match="another package of the environment installs too"):
        move_added(aside, env, before)
