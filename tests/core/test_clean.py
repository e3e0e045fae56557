"""``harness clean``: environments no case uses are pruned; used ones, busy ones and build logs stay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from harness._cases import load_cases
from harness._clean import clean_environments, used_environment_ids

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "cases"


def make_root(tmp_path: Path) -> tuple[Path, str]:
    cases = load_cases([FIXTURES]).cases
    (used,) = used_environment_ids(cases)  # every fixture case pins the same torch
    root = tmp_path / "envs"
    for name in (used, "venv-0123456789ab", "venv-busy00000000"):
        (root / name / "bin").mkdir(parents=True)
    (root / "venv-0123456789ab.build.log").write_text("log")
    (root / "images").mkdir()
    (root / "images" / "torch-cpu.build.log").write_text("image build log")
    return root, used


def test_clean_prunes_only_unused_idle_environments(tmp_path):
    root, used = make_root(tmp_path)
    cases = load_cases([FIXTURES]).cases
    said: list[str] = []
    with FileLock(str(root / "venv-busy00000000.lock")):  # a build in progress in another process
        assert clean_environments(cases, dry_run=True, say=said.append, root=root) == 1
        assert (root / "venv-0123456789ab").is_dir()
        assert clean_environments(cases, dry_run=False, say=said.append, root=root) == 1
    assert "would remove venv-0123456789ab" in said and "removing venv-0123456789ab" in said
    assert any("skipping venv-busy00000000" in line for line in said)
    assert not (root / "venv-0123456789ab").exists() and not (root / "venv-0123456789ab.build.log").exists()
    assert (root / used).is_dir() and (root / "venv-busy00000000").is_dir()
    assert (root / "images" / "torch-cpu.build.log").is_file()  # not an environment


def test_clean_command_reports_counts(tmp_path):
    root, _ = make_root(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "harness", "clean", "--cases-dir", str(FIXTURES), "--no-images"],
                          cwd=REPO, capture_output=True, text=True, timeout=120,
                          env={"PATH": "/usr/bin:/bin", "REPRO_MATRIX_ENVS": str(root), "FORCE_COLOR": "0"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "removed 2 environment(s)" in proc.stdout
    assert "image" not in proc.stdout  # --no-images leaves Docker alone


def test_clean_prunes_the_caches_of_cases_that_no_longer_use_an_environment(tmp_path):
    """``.cell-caches/<case>`` holds a case's compiled bytecode and extensions: a removed or renamed case's
    folder stays in an environment other cases still use until clean prunes it."""
    root, used = make_root(tmp_path)
    cases = load_cases([FIXTURES]).cases
    caches = root / used / ".cell-caches"
    for name in ("confirmed", "removed-case"):
        (caches / name / "pycache").mkdir(parents=True)
        (caches / name / "pycache" / "x.pyc").write_bytes(b"code")
    said: list[str] = []
    clean_environments(cases, dry_run=True, say=said.append, root=root)
    assert f"would remove {used}/.cell-caches/removed-case (no case of that name uses this environment)" in said
    assert (caches / "removed-case").is_dir()
    clean_environments(cases, dry_run=False, say=said.append, root=root)
    assert f"removing {used}/.cell-caches/removed-case (no case of that name uses this environment)" in said
    assert sorted(p.name for p in caches.iterdir()) == ["confirmed"]
    assert (caches / "confirmed" / "pycache" / "x.pyc").is_file()
