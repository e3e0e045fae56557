"""``harness clean``: environments no case uses are pruned; used ones, busy ones and build logs stay."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from filelock import FileLock

from harness.cases._load import load_cases
from harness.environments._clean import Pruned, clean_environments, folder_size, human_size, used_environment_ids

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures" / "cases"


def make_root(tmp_path: Path) -> tuple[Path, str]:
    cases = load_cases([FIXTURES]).cases
    (used,) = used_environment_ids(cases)  # every fixture case pins the same torch
    root = tmp_path / "envs"
    for name in (used, "venv-0123456789ab", "venv-busy00000000"):
        (root / name / "bin").mkdir(parents=True)
    (root / "venv-0123456789ab.build.log").write_text("log")
    (root / "venv-0123456789ab" / "bin" / "python").write_bytes(b"x" * 3000)
    cache = tmp_path / "uv-cache"  # uv links package files from its cache into each environment
    cache.mkdir()
    (cache / "torch.so").write_bytes(b"y" * 7000)
    (root / "venv-0123456789ab" / "lib").mkdir()
    (root / "venv-0123456789ab" / "lib" / "torch.so").hardlink_to(cache / "torch.so")
    (root / "venv-0123456789ab" / "lib" / "again.so").hardlink_to(cache / "torch.so")  # the same file twice
    (root / "images").mkdir()
    (root / "images" / "torch-cpu.build.log").write_text("image build log")
    return root, used


def test_clean_prunes_only_unused_idle_environments(tmp_path):
    root, used = make_root(tmp_path)
    cases = load_cases([FIXTURES]).cases
    said: list[str] = []
    with FileLock(str(root / "venv-busy00000000.lock")):  # a build in progress in another process
        assert clean_environments(cases, dry_run=True, say=said.append, root=root) == Pruned(1, 10000, 3000)
        assert (root / "venv-0123456789ab").is_dir()
        assert clean_environments(cases, dry_run=False, say=said.append, root=root).count == 1
    sizes = "10.0 kB, 3.0 kB freed: the rest is shared with uv's cache"
    assert f"would remove venv-0123456789ab ({sizes})" in said and f"removing venv-0123456789ab ({sizes})" in said
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
    assert "removed 2 environment(s) (10.0 kB, 3.0 kB freed: the rest is shared with uv's cache)" in proc.stdout
    assert "image" not in proc.stdout  # --no-images leaves Docker alone


def test_sizes_count_each_file_once_and_never_follow_links(tmp_path):
    (tmp_path / "a").write_bytes(b"a" * 1500)
    (tmp_path / "b").hardlink_to(tmp_path / "a")
    (tmp_path / "c").symlink_to("/usr")  # a link out of the folder: /usr is not counted
    (tmp_path / "d").write_bytes(b"d" * 20)
    assert folder_size(tmp_path) == Pruned(1, 1520, 20)  # "a" has a second link: removing frees only "d"
    assert [human_size(n) for n in (999, 1500, 2_500_000, 7_340_000_000)] == ["999 B", "1.5 kB", "2.5 MB", "7.3 GB"]
    assert Pruned(1, 10, 10).describe() == "10 B"


def test_clean_prunes_the_caches_of_cases_that_no_longer_use_an_environment(tmp_path):
    """``.cell-caches/<case>`` holds a case's compiled bytecode and extensions: a removed or renamed case's
    folder stays in an environment other cases still use until clean prunes it."""
    root, used = make_root(tmp_path)
    cases = load_cases([FIXTURES]).cases
    caches = root / used / ".cell-caches"
    for name in ("confirmed", "removed-case"):
        (caches / name / "pycache").mkdir(parents=True)
        (caches / name / "pycache" / "x.pyc").write_bytes(b"code")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "keep").mkdir(parents=True)
    (caches / "linked-case").symlink_to(elsewhere, target_is_directory=True)  # removed as a link, never followed
    said: list[str] = []
    clean_environments(cases, dry_run=True, say=said.append, root=root)
    assert f"would remove {used}/.cell-caches/removed-case (4 B; no case of that name uses this environment)" in said
    assert (caches / "removed-case").is_dir()
    clean_environments(cases, dry_run=False, say=said.append, root=root)
    assert f"removing {used}/.cell-caches/removed-case (4 B; no case of that name uses this environment)" in said
    assert sorted(p.name for p in caches.iterdir()) == ["confirmed"] and (elsewhere / "keep").is_dir()
    assert (caches / "confirmed" / "pycache" / "x.pyc").is_file()


def test_clean_removes_shared_bytecode_no_environment_links_to(tmp_path):
    root, used = make_root(tmp_path)
    stored = root / ".bytecode-store" / "cpython-311" / "ab"
    stored.mkdir(parents=True)
    (stored / "ab-orphan.pyc").write_bytes(b"o" * 10)
    (stored / "ab-in-use.pyc").write_bytes(b"u" * 10)
    (root / used / "in-use.pyc").hardlink_to(stored / "ab-in-use.pyc")
    said: list[str] = []
    clean_environments(load_cases([FIXTURES]).cases, dry_run=True, say=said.append, root=root)
    assert "would remove 1 file(s) of .bytecode-store that no environment uses (10 B)" in said
    clean_environments(load_cases([FIXTURES]).cases, dry_run=False, say=said.append, root=root)
    assert sorted(p.name for p in stored.iterdir()) == ["ab-in-use.pyc"]
