"""cuda-sim type-checks clean under its own mypy settings (cuda-sim/pyproject.toml: strict, each exception
there or inline with its reason), so the package a maintainer installs ships a py.typed that holds."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.checkout import REPO

pytestmark = pytest.mark.slow  # a cold mypy run over torch's stubs: ~10 s of CPU


def test_the_simulator_passes_mypy_strict(tmp_path):
    pytest.importorskip("mypy", reason="mypy is not installed here (nox -s tests installs it)")
    done = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")], cwd=REPO / "cuda-sim",
                          capture_output=True, text=True, timeout=900, check=False)
    assert done.returncode == 0, done.stdout[-5000:] + done.stderr[-2000:]
    assert "Success: no issues found in" in done.stdout
