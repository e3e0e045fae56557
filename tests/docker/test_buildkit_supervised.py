"""The BuildKit build runs under the process supervisor: its timeout fires even while a process it started
keeps the output open, and everything it started is killed then. A fake docker CLI, no daemon."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from harness.docker import ImageSettings, _buildkit, plan_image
from harness.docker._client import ImageBuildError
from harness.environments._spec import EnvSpec

FAKE_CLI = """#!{python}
import os, subprocess, sys, time
print("#1 [build 1/2] RUN pip install six", flush=True)
print("Successfully installed six-1.17.0", flush=True)
{body}
"""
HANGS = """# a grandchild that keeps stdout open and records its pid, then a CLI that never ends
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
open(os.environ["PID_FILE"], "w").write(str(child.pid))
time.sleep(600)
"""
FAILS = 'print("ERROR: failed to solve: process did not complete successfully", flush=True)\nsys.exit(1)'


def _cli(tmp_path: Path, body: str) -> str:
    cli = tmp_path / "docker"
    cli.write_text(FAKE_CLI.format(python=sys.executable, body=body))
    cli.chmod(0o755)
    return str(cli)


def _plan():
    return plan_image(EnvSpec(requires=("six==1.17.0",)), "cpu",
                      settings=ImageSettings(cpu_base="localbase/python:3.11", pip_source="index"))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"


def test_a_build_that_holds_its_output_open_is_stopped_at_its_timeout(tmp_path, monkeypatch):
    monkeypatch.setattr(_buildkit, "_BUILD_TIMEOUT_S", 3)
    monkeypatch.setenv("PID_FILE", str(tmp_path / "grandchild.pid"))
    context = tmp_path / "context"
    context.mkdir()
    shown: list[str] = []
    started = time.monotonic()
    with pytest.raises(ImageBuildError, match="did not finish within 3s"):
        _buildkit.buildkit_build(_cli(tmp_path, HANGS), _plan(), context, {}, tmp_path / "build.log", shown.append,
                                 verbose=False)
    assert time.monotonic() - started < 60
    assert shown[:2] == ["[build 1/2] RUN pip install six", "  Successfully installed six-1.17.0"]
    assert "Successfully installed six-1.17.0" in (tmp_path / "build.log").read_text()
    assert not _alive(int((tmp_path / "grandchild.pid").read_text()))


def test_a_failed_build_names_the_error_line(tmp_path):
    context = tmp_path / "context"
    context.mkdir()
    with pytest.raises(ImageBuildError, match="failed to solve"):
        _buildkit.buildkit_build(_cli(tmp_path, FAILS), _plan(), context, {}, tmp_path / "build.log",
                                 lambda line: None, verbose=False)
