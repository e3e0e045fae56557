"""harness/containment/_seal.py: what a bwrap-sealed cell is given (fast: no cell runs; tests/faults/test_sealed_cells.py
runs the attacks for real)."""

from __future__ import annotations

import os
import struct
from pathlib import Path

from harness.containment import _seal


def test_a_cell_gets_the_allow_list_and_what_the_user_names():
    harness_env = {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C", "OMP_NUM_THREADS": "1",
                   "GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "a", "PYPI_API_TOKEN": "p", "HOME": "/root",
                   "PYTHONPATH": "/x", "MY_SETTING": "kept", _seal.PASS_VARIABLE: "MY_SETTING, UNSET"}
    assert _seal.cell_environment(harness_env) == {"PATH": "/usr/bin", "LANG": "C.UTF-8", "LC_ALL": "C",
                                                   "OMP_NUM_THREADS": "1", "MY_SETTING": "kept"}


def test_the_plan_binds_tmp_first_and_never_mounts_the_output(tmp_path):
    cases, env, cell, out, tmp = (tmp_path / n for n in ("cases", "env", "scratch/cell", "out", "scratch/tmp"))
    for folder in (cases, env, cell, out, tmp):
        folder.mkdir(parents=True)
    plan = _seal.plan(readonly=[cases, env], writable=[cell], hide=[out], tmp=tmp, cwd=cell, gpu=False,
                      shm_bytes=1 << 20)
    steps = plan["steps"]
    where = {tuple(step): index for index, step in enumerate(steps)}
    assert where[("--bind", str(tmp), "/tmp")] < where[("--ro-bind", str(cases), str(cases))]
    assert where[("--ro-bind", str(cases), str(cases))] < where[("--bind", str(cell), str(cell))]
    assert ["--ro-bind", "/proc/sys", "/proc/sys"] in steps and ["--dev", "/dev"] in steps
    assert ["--size", str(1 << 20), "--tmpfs", "/dev/shm"] in steps
    assert not [step for step in steps if str(out) in step], "the output folder is named to the cell"
    assert {"--unshare-all", "--new-session", "--die-with-parent"} <= set(plan["options"])
    assert plan["options"][plan["options"].index("--cap-drop") + 1] == "ALL"


def test_an_output_inside_a_read_only_folder_is_covered(tmp_path):
    (tmp_path / "cases" / "out").mkdir(parents=True)
    plan = _seal.plan(readonly=[tmp_path / "cases"], writable=[], hide=[tmp_path / "cases" / "out"],
                      tmp=tmp_path, cwd=tmp_path, gpu=False, shm_bytes=1)
    assert ["--tmpfs", str(tmp_path / "cases" / "out")] in plan["steps"]


def test_the_seccomp_program_ends_in_allow_and_refuse():
    program = _seal.seccomp_program()
    if program is None:
        return  # an architecture without a filter: docs/security.md says so
    instructions = [struct.unpack("<HBBI", program[i:i + 8]) for i in range(0, len(program), 8)]
    assert instructions[-2] == (0x06, 0, 0, 0x7FFF0000) and instructions[-1] == (0x06, 0, 0, 0x00050001)
    for index, (code, true, false, _) in enumerate(instructions):  # every jump lands inside the program
        if code & 0x07 == 0x05:
            assert index + 1 + max(true, false) < len(instructions)
    assert any(k == 101 for *_, k in instructions) or os.uname().machine != "x86_64"  # ptrace


def test_unreachable_names_folders_others_cannot_read(tmp_path):
    private, public = tmp_path / "private", tmp_path / "public"
    private.mkdir(mode=0o700)
    public.mkdir(mode=0o755)
    private.chmod(0o700)
    public.chmod(0o755)
    expected = [private] if os.geteuid() == 0 else []
    assert _seal.unreachable([private, public, Path("/nonexistent")]) == expected


def test_the_pids_bound_can_be_changed(monkeypatch):
    monkeypatch.setenv(_seal.PIDS_VARIABLE, "64")
    assert _seal.cell_pids() == 64
    monkeypatch.setenv(_seal.PIDS_VARIABLE, "nonsense")
    assert _seal.cell_pids() == _seal.CELL_PIDS == 2048


def test_a_build_gets_what_uv_needs_and_no_secret():
    harness_env = {"PATH": "/usr/bin", "HOME": "/root", "UV_INDEX_URL": "https://index", "PIP_CERT": "/c.pem",
                   "SSL_CERT_FILE": "/c.pem", "https_proxy": "http://proxy", "CFLAGS": "-O2", "TMPDIR": "/scratch",
                   "GITHUB_TOKEN": "t", "AWS_SECRET_ACCESS_KEY": "a", "PYPI_API_TOKEN": "p",
                   "UV_PUBLISH_TOKEN": "u", "MY_SETTING": "kept", _seal.PASS_VARIABLE: "MY_SETTING"}
    assert _seal.build_environment(harness_env) == {
        "PATH": "/usr/bin", "HOME": "/root", "UV_INDEX_URL": "https://index", "PIP_CERT": "/c.pem",
        "SSL_CERT_FILE": "/c.pem", "https_proxy": "http://proxy", "CFLAGS": "-O2", "TMPDIR": "/scratch",
        "MY_SETTING": "kept"}


def test_a_build_plan_keeps_the_network_and_a_read_only_root(tmp_path):
    env, tmp = tmp_path / "env", tmp_path / "tmp"
    env.mkdir()
    tmp.mkdir()
    settings = tmp_path / "home" / ".config" / "uv"
    settings.mkdir(parents=True)
    plan = _seal.plan(readonly=[], writable=[env], hide=[], tmp=tmp, cwd=Path("/"), gpu=False, shm_bytes=1 << 20,
                      network=True, files=[settings])
    assert "--share-net" in plan["options"] and "--unshare-all" in plan["options"]
    assert ["--ro-bind", str(settings), str(settings)] in plan["steps"]
    assert ["--remount-ro", "/"] in plan["steps"]
    assert plan["steps"][-1] == ["--chdir", "/"]
    cell = _seal.plan(readonly=[], writable=[env], hide=[], tmp=tmp, cwd=env, gpu=False, shm_bytes=1 << 20)
    assert "--share-net" not in cell["options"] and ["--remount-ro", "/"] in cell["steps"]
    assert _seal.build_settings({"HOME": str(tmp_path / "home")}) == [settings]
