"""Fault-test helpers: fixture-case builder and harness runner (the catalogue count is in tests/conftest.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]


def tmpfs_folder(folder: Path, options: str, why: str):
    """``folder`` as a fresh tmpfs mounted with ``options`` for the test's duration (root only: skipped
    otherwise, or where mounting is refused, saying ``why`` a mount is needed)."""
    if os.geteuid() != 0:
        pytest.skip(f"{why} needs root (CI runs as root)")
    folder.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:  # root without CAP_SYS_ADMIN (an unprivileged container)
        pytest.skip(f"{why}: mount was refused here: {mounted.stderr.strip()}")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)


@pytest.fixture
def read_only_folder(tmp_path: Path):
    """A folder nothing can be written into, for this uid: root ignores permission bits, so a read-only mount."""
    folder = tmp_path / "read-only"
    if os.geteuid() == 0:
        yield from tmpfs_folder(folder, "ro,size=64k", "a read-only mount")
    else:
        folder.mkdir()
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)


def write_case(root: Path, case_id: str, script: str, variants: dict | None = None, **extra) -> Path:
    """A fixture case whose single repro script is ``script``; variants default to buggy + fix."""
    folder = root / case_id
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "repro.py").write_text(textwrap.dedent(script))
    data = {
        "id": case_id, "title": f"fault fixture {case_id}",
        "upstream": {"issue": "https://example.invalid/issue/1"},
        "signature": "Expected all tensors to be on the same device", "summary": "fault-injection fixture",
        "requires": ["torch==2.13.0"], "timeout": 60,
        "variants": variants or {
            "buggy": {"role": "buggy", "expect": {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}},
            "fixed": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}},
        },
        **extra,
    }
    # validate refuses a fix variant that runs exactly what a buggy one runs (the scripts here tell variants apart
    # by name only where they must): each fix variant without an env of its own differs by one that names it.
    for name, variant in data["variants"].items():
        if variant.get("role") == "fix" and "env" not in variant:
            variant["env"] = {"FAULT_FIXTURE_VARIANT": name}
    (folder / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


SIGNATURE_SCRIPT = """
    import argparse
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device")
    a, _ = p.parse_known_args()
    if a.variant == "buggy":
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
    print("clean")
"""


# Cells get an allow-listed environment (harness/containment/_seal.py): the token fault tests hand their repros is
# passed on purpose, the documented way.
PASS_TOKEN = {"REPRO_MATRIX_PASS_ENV": "FAULT_TOKEN"}


def run_harness(*args: str, timeout: float = 600, **popen) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": "200", **PASS_TOKEN, **popen.pop("env", {})}
    return subprocess.run([sys.executable, "-m", "harness", *args], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env=env, **popen)


def start_harness(*args: str, **popen) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "harness", *args], cwd=REPO, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env={**os.environ, "COLUMNS": "200", **PASS_TOKEN},
                            **popen)


def results_of(output: Path) -> list[dict]:
    return [json.loads((p / "results.json").read_text()) for p in sorted(output.iterdir())
            if (p / "results.json").exists()]


def cell(results: dict, case: str, variant: str, lane: str = "cpu") -> dict:
    return next(c for c in results["cells"] if (c["case"], c["variant"], c["lane"]) == (case, variant, lane))


def verdict(results: dict, case: str, lane: str = "cpu") -> dict:
    return next(v for v in results["verdicts"] if (v["case"], v["lane"]) == (case, lane))
