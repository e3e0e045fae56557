"""Hostile package builds: code that runs while an environment installs (a local requirement's setup.py
or PEP 517 backend; any sdist a case pins) is sealed like a cell. It cannot forge a run in --output,
plant code in another case's caches, or write HOME, the checkout or the Python installation; a benign
build (in-tree, with a patch) still builds, without writing into its case folder."""

from __future__ import annotations

import json
import os
import sysconfig
import textwrap
from pathlib import Path

import pytest

from harness.containment._seal import bwrap
from tests.checkout import in_private_tmp
from tests.faults.conftest import REPO, SIGNATURE_SCRIPT, cell, results_of, run_harness, verdict, write_case
from tests.faults.processes import new_token
from tests.faults.test_run_hostile import _mode

pytestmark = pytest.mark.slow

# Runs inside the build (setup.py, or the backend's build_wheel): tries every target, records each outcome
# in the package it builds (the only place a sealed build's writes survive), then builds normally.
ATTACK = '''
import json, os, pathlib
TARGETS = json.loads({targets!r})
here = pathlib.Path(__file__).resolve().parent
results = {{}}
for name, target in TARGETS.items():
    path = pathlib.Path(target)
    if name == "secret":  # a variable of the harness's environment (GITHUB_TOKEN)
        results[name] = f"done: {{os.environ[target]}}" if target in os.environ else "absent"
        continue
    if name == "setuid":  # a setuid file where the build may write (uv's cache): root for whoever runs it
        path = pathlib.Path(os.environ.get(target) or "/tmp") / "planted-setuid"
        try:
            path.write_text("#!/bin/sh\\nid\\n")
            os.chmod(path, 0o4755)
            results[name] = "done" if path.stat().st_mode & 0o4000 else "the bit was dropped"
        except OSError as error:
            results[name] = repr(error)
        finally:
            try:  # (read-only where the cache is bound read-only: the step's own cache is elsewhere)
                path.unlink(missing_ok=True)
            except OSError:
                pass
        continue
    if name == "read-host":  # a file of the user's (a key in HOME)
        try:
            results[name] = f"done: {{path.read_text()}}"
        except OSError as error:
            results[name] = repr(error)
        continue
    if name == "victim-cache":  # another case's bytecode, in the environment its cells used
        found = sorted(path.glob("venv-*/lib/python3*/site-packages/__pycache__"))
        if not found:
            results[name] = "no victim cache found"
            continue
        path = found[0] / "planted.pyc"
    try:
        if name == "forge":
            path.mkdir()
            (path / "results.json").write_text(json.dumps({{"version": 1, "run": {{"id": "forged"}}}}))
        else:
            path.write_text("planted by a package build")
        results[name] = "done"
    except OSError as error:
        results[name] = repr(error)
(here / "hostilepkg" / "attempts.py").write_text("ATTEMPTS = " + repr(results) + "\\n")
'''

SETUP_PY = '''
{attack}
from setuptools import setup
setup(name="hostilepkg", version="1.0", packages=["hostilepkg"])
'''

# A PEP 517 backend of its own (pyproject's backend-path): no setuptools needed; writes the wheel by hand.
BACKEND = '''
import base64, hashlib, os, pathlib, zipfile

def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
{attack}
    name = "hostilepkg-1.0-py3-none-any.whl"
    files = {{f"hostilepkg/{{p.name}}": p.read_bytes() for p in (here / "hostilepkg").glob("*.py")}}
    files["hostilepkg-1.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\\nName: hostilepkg\\nVersion: 1.0\\n"
    files["hostilepkg-1.0.dist-info/WHEEL"] = b"Wheel-Version: 1.0\\nGenerator: hostile\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"
    record = []
    for path, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{{path}},sha256={{digest}},{{len(data)}}")
    record.append("hostilepkg-1.0.dist-info/RECORD,,")
    files["hostilepkg-1.0.dist-info/RECORD"] = ("\\n".join(record) + "\\n").encode()
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as archive:
        for path, data in files.items():
            archive.writestr(path, data)
    return name
'''

PYPROJECT = """
[build-system]
requires = []
build-backend = "backend"
backend-path = ["."]
"""

HOSTILE_REPRO = SIGNATURE_SCRIPT + """
    import json
    from hostilepkg.attempts import ATTEMPTS
    print("ATTEMPTS", json.dumps(ATTEMPTS))
"""


def _package(folder: Path, kind: str, targets: dict[str, str]) -> Path:
    package = folder / "pkg"
    (package / "hostilepkg").mkdir(parents=True)
    (package / "hostilepkg" / "__init__.py").write_text("")
    (package / "hostilepkg" / "attempts.py").write_text("ATTEMPTS = {}\n")
    attack = ATTACK.format(targets=json.dumps(targets))
    if kind == "setup.py":
        (package / "setup.py").write_text(SETUP_PY.format(attack=attack))
    else:
        (package / "pyproject.toml").write_text(PYPROJECT)
        (package / "backend.py").write_text(BACKEND.format(attack=textwrap.indent(attack, "    ")))
    return package


def _attempts(out: Path, results: dict) -> dict[str, str]:
    run_dir = next(p for p in out.iterdir() if (p / "results.json").is_file())
    log = (run_dir / cell(results, "zz-hostile", "fixed")["log"]).read_text()
    return json.loads(next(line for line in log.splitlines() if line.startswith("ATTEMPTS "))[9:])


@pytest.mark.fault("a package build writes outside its environment")
@pytest.mark.parametrize(("kind", "sandbox"), [("setup.py", "bwrap"), ("pep517-backend", "bwrap"),
                                               ("pep517-backend", "fallback")])
def test_a_hostile_build_cannot_write_outside_its_environment(tmp_path, monkeypatch, kind, sandbox):
    """In bwrap mode, and in the fallback layer where bwrap cannot run (``REPRO_MATRIX_BWRAP=0``)."""
    _mode(monkeypatch, "1")
    if sandbox == "fallback":
        monkeypatch.setenv("REPRO_MATRIX_BWRAP", "0")
    elif bwrap()[0] is None:
        pytest.skip(f"no bubblewrap sandbox here: {bwrap()[1]}")
    token = new_token()
    out, envs = tmp_path / "out", tmp_path / "envs"
    targets = {
        "forge": str(out / "20990101T000000Z-forged"),  # (a) a forged run, published by the next `report`
        "victim-cache": str(envs),  # (b) another case's bytecode cache: code its cells would run
        "home": str(Path.home() / f".{token}"),  # (c) HOME: dotfiles, the user's caches and configuration
        "checkout": str(REPO / f"{token}.txt"),
        "python": str(Path(sysconfig.get_paths()["purelib"]) / f"{token}.pth"),  # runs in every later python
        "secret": "GITHUB_TOKEN",
        "setuid": "UV_CACHE_DIR",
        "read-host": str(_host_secret(token)),
    }
    write_case(tmp_path / "cases", "aa-victim", SIGNATURE_SCRIPT, requires=["torch==2.13.0"])
    folder = write_case(tmp_path / "cases", "zz-hostile", HOSTILE_REPRO, requires=["torch==2.13.0", "hostilepkg @ PKG"])
    package = _package(folder, kind, targets)
    case_file = folder / "case.yaml"
    case_file.write_text(case_file.read_text().replace("PKG", package.as_uri()))
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    try:
        proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                           "--output", str(out), env={"REPRO_MATRIX_ENVS": str(envs), "GITHUB_TOKEN": token})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        results = results_of(out)[0]
        assert verdict(results, "zz-hostile")["verdict"] == "confirmed", verdict(results, "zz-hostile")
        attempts = _attempts(out, results)
        assert set(attempts) == set(targets) and attempts["victim-cache"] != "no victim cache found", attempts
        assert [n for n, outcome in attempts.items() if outcome.startswith("done") and n != "read-host"
                and not (n in ("home", "checkout") and in_private_tmp(targets[n]))] == [], attempts
        # the user's files: out of a sealed build's sight; the fallback layer only makes them read-only
        assert results["run"]["host"]["sandbox"] == sandbox, results["run"]["host"]
        # (a HOME under /tmp is out of sight in the fallback too: the step's /tmp is its own)
        assert attempts["read-host"].startswith("done") == (sandbox == "fallback" and not in_private_tmp(
            targets["read-host"])), attempts
        assert token not in json.dumps(results), "a build's secret reached results.json"
        assert not (out / "20990101T000000Z-forged").exists(), "a build forged a run in --output"
        assert len(results_of(out)) == 1
        assert list(envs.glob("venv-*/lib/python3*/site-packages/__pycache__/planted.pyc")) == []
        for name in ("home", "checkout", "python"):
            assert not Path(targets[name]).exists(), f"a build wrote {name}: {targets[name]}"
        # in-tree builds wrote into a copy: the case folder is as the test made it
        assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    finally:
        for name in ("home", "checkout", "python", "read-host"):
            Path(targets[name]).unlink(missing_ok=True)


def _host_secret(token: str) -> Path:
    """A file of the user's, readable by the user only (as an SSH key is)."""
    secret = Path.home() / f".{token}-key"
    secret.write_text(f"KEY-{token}")
    secret.chmod(0o600)
    return secret


BENIGN_SETUP = """
from setuptools import setup
setup(name="benignpkg", version="1.0", packages=["benignpkg"])
"""
BENIGN_PATCH = """\
--- a/benignpkg/__init__.py
+++ b/benignpkg/__init__.py
@@ -1 +1 @@
-VALUE = "as built"
+VALUE = "patched"
"""
BENIGN_REPRO = SIGNATURE_SCRIPT + """
    import benignpkg
    if benignpkg.VALUE != "patched":
        raise SystemExit(f"the patch was not applied: {benignpkg.VALUE!r}")
"""


@pytest.mark.fault("a package build writes outside its environment")
def test_a_benign_in_tree_build_with_a_patch_still_builds_sealed(tmp_path, monkeypatch):
    """setuptools writes build/ and *.egg-info beside setup.py, and the patch step writes site-packages:
    both still work sealed, and the case folder stays as it was."""
    _mode(monkeypatch, "1")
    folder = write_case(tmp_path / "cases", "benign", BENIGN_REPRO, requires=["torch==2.13.0", "benignpkg @ PKG"],
                        patches=["value.diff"])
    package = folder / "pkg"
    (package / "benignpkg").mkdir(parents=True)
    (package / "benignpkg" / "__init__.py").write_text('VALUE = "as built"\n')
    (package / "setup.py").write_text(BENIGN_SETUP)
    (folder / "value.diff").write_text(BENIGN_PATCH)
    case_file = folder / "case.yaml"
    case_file.write_text(case_file.read_text().replace("PKG", package.as_uri()))
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                       str(tmp_path / "out"), env={"REPRO_MATRIX_ENVS": str(tmp_path / "envs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert verdict(results_of(tmp_path / "out")[0], "benign")["verdict"] == "confirmed"
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before, "the build wrote into the case folder"
    (log,) = (tmp_path / "envs").glob("venv-*.build.log")
    # every step sealed as asked, nothing skipped; as a user only the pids cgroup (root's, cgroup v1) is missing
    notes = {line for line in log.read_text().splitlines() if "containment" in line}
    missing = "no pids bound for this build step (no pids cgroup: no writable cgroup v1 controller"
    assert all(os.geteuid() != 0 and missing in line for line in notes), log.read_text()
    # Still hardlinked from uv's cache, as unsealed builds were: not a 750 MB copy of torch per environment.
    assert "Failed to hardlink" not in log.read_text()
    (torch,) = (tmp_path / "envs").glob("venv-*/lib/python*/site-packages/torch/__init__.py")
    assert torch.stat().st_nlink > 1


def test_an_environment_built_outside_uv_cache_is_kept(tmp_path, monkeypatch):
    """With uv's cache off (or on another filesystem) the environment is built where it ends up."""
    from harness.environments._spec import EnvSpec
    from harness.environments._venv import VenvBackend

    _mode(monkeypatch, "1")
    monkeypatch.setenv("UV_NO_CACHE", "1")
    env = VenvBackend(root=tmp_path / "envs").prepare(EnvSpec(requires=("six==1.16.0",)), lambda message: None,
                                                      private=(tmp_path / "out",))
    assert env.installed.get("six") == "1.16.0" and Path(env.python_path).exists()
    assert [p.name for p in (tmp_path / "envs").iterdir() if p.name.startswith(".building-")] == []


@pytest.mark.fault("a package build writes outside its environment")
def test_the_docker_wheelhouse_build_on_the_host_is_sealed_too(tmp_path, monkeypatch):
    """docker images install inside a container, but the default wheelhouse is made on the host by the
    host's pip (`pip wheel` builds every local folder and sdist-only pin): sealed like the venv steps."""
    import zipfile

    from harness.docker._build import make_context
    from harness.docker._plan import ImageSettings, plan_image
    from harness.environments._spec import EnvSpec

    _mode(monkeypatch, "1")
    token = new_token()
    targets = {"forge": str(tmp_path / "out" / "forged"), "victim-cache": str(tmp_path / "envs"),
               "home": str(Path.home() / f".{token}"), "checkout": str(REPO / f"{token}.txt"),
               "python": str(Path(sysconfig.get_paths()["purelib"]) / f"{token}.pth"), "secret": "GITHUB_TOKEN",
               "setuid": "UV_CACHE_DIR"}
    monkeypatch.setenv("GITHUB_TOKEN", token)
    (tmp_path / "out").mkdir()
    package = _package(tmp_path / "case", "pep517-backend", targets)
    plan = plan_image(EnvSpec((f"hostilepkg @ {package.as_uri()}",)), "cpu", image_dir=REPO / "images" / "torch",
                      settings=ImageSettings(pip_source="wheelhouse"))
    before = sorted(p.relative_to(package) for p in package.rglob("*"))
    try:
        context = make_context(plan, tmp_path / "scratch", tmp_path / "build.log", lambda line: None)
        (wheel,) = (context / "wheels").glob("hostilepkg-*.whl")  # the benign part of the build still works
        with zipfile.ZipFile(wheel) as archive:
            attempts = archive.read("hostilepkg/attempts.py").decode()
        done = [n for n in targets
                if f"'{n}': 'done" in attempts and not (n in ("home", "checkout") and in_private_tmp(targets[n]))]
        assert done == [] and "'forge'" in attempts and "'secret': 'absent'" in attempts, attempts
        for name in ("forge", "home", "checkout", "python"):
            assert not Path(targets[name]).exists(), f"the wheelhouse build wrote {name}: {targets[name]}"
        assert sorted(p.relative_to(package) for p in package.rglob("*")) == before
    finally:
        for name in ("home", "checkout", "python"):
            Path(targets[name]).unlink(missing_ok=True)


FAILING_SETUP = '''
import os, pathlib
print("SEEN", os.environ.get("GITHUB_TOKEN", "no token"), flush=True)
for target in {targets!r}:
    try:
        pathlib.Path(target).write_text("planted by a failing build")
        print("WROTE", target, flush=True)
    except OSError as error:
        print("REFUSED", target, error, flush=True)
raise SystemExit("this package refuses to build")
'''


@pytest.mark.fault("a package build writes outside its environment")
def test_a_hostile_build_that_fails_is_an_infra_error_not_a_verdict(tmp_path, monkeypatch):
    """A build that gives up (after trying to read a secret and write outside its environment) fails the
    environment: its cells are infra-errors whose message names the failed step and the build log, and
    the build saw no secret and wrote nothing."""
    _mode(monkeypatch, "1")
    token, secret = new_token(), f"build-secret-{new_token()}"
    targets = [str(Path.home() / f".{token}"), str(REPO / f"{token}.txt")]
    folder = write_case(tmp_path / "cases", "hostile-fails", SIGNATURE_SCRIPT, requires=["torch==2.13.0", "failpkg @ PKG"])
    (folder / "pkg").mkdir()
    (folder / "pkg" / "setup.py").write_text(FAILING_SETUP.format(targets=targets))
    case_file = folder / "case.yaml"
    case_file.write_text(case_file.read_text().replace("PKG", (folder / "pkg").as_uri()))
    try:
        proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                           str(tmp_path / "out"), env={"REPRO_MATRIX_ENVS": str(tmp_path / "envs"),
                                                       "GITHUB_TOKEN": secret})
        results = results_of(tmp_path / "out")[0]
        assert verdict(results, "hostile-fails")["verdict"] == "infra-error", proc.stdout + proc.stderr
        message = cell(results, "hostile-fails", "buggy")["reason"]
        assert "'uv pip " in message and "refuses to build" in message, message  # resolving or installing
        (log,) = (tmp_path / "envs").glob("venv-*.build.log")
        wrote = [t for t in targets if f"WROTE {t}" in log.read_text() and not in_private_tmp(t)]
        assert "SEEN no token" in log.read_text() and wrote == [], log.read_text()
        assert secret not in (tmp_path / "out").joinpath(next((tmp_path / "out").iterdir()).name,
                                                         "results.json").read_text()
        for target in targets:
            assert not Path(target).exists(), f"a failing build wrote {target}"
    finally:
        for target in targets:
            Path(target).unlink(missing_ok=True)
