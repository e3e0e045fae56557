"""The offline wheelhouse (``harness wheelhouse``) and the GPU check (``scripts/gpu-check.sh``).

The slow tests run the real commands on this CPU host: a wheelhouse for a fixture case used offline with a
host torch, and the GPU check's dry run (what CI runs between GPU windows).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from harness._exceptions import UsageError
from harness._requirements import checkout_distributions, node_requirements
from harness.environments._wheelhouse import Target, Wheelhouse, adopt_wheels, link_folders, split_parts
from harness.gpucheck._check import BUDGET_NOTE, CHOSEN, compare_cells, compare_scenarios, left_out, markdown

REPO = Path(__file__).resolve().parents[2]
TI = {"raises": "RuntimeError", "message": "Expected all tensors to be on the same device"}


def scenario(id: str, table: dict, outcome: dict) -> dict:
    return {"id": id, "source": "[TI]", "table": table, "outcome": outcome}


def test_scenarios_say_who_is_wrong_and_disagreements_come_first():
    sim = {"scenarios": [scenario("a ok", TI, TI), scenario("b sim wrong", TI, {"device": "cuda:0"}),
                         scenario("c table wrong", TI, TI)]}
    real = {"scenarios": [scenario("a ok", TI, TI), scenario("b sim wrong", TI, TI),
                          scenario("c table wrong", TI, {"device": "cuda:0", "dtype": "torch.float32"})]}
    rows = compare_scenarios(real, sim)
    assert [r["id"] for r in rows] == ["b sim wrong", "c table wrong", "a ok"]
    assert [r["finding"] for r in rows] == ["cuda-sim is wrong: real CUDA matches the table",
                                            "the table and cuda-sim are wrong: real CUDA does something else",
                                            "agree"]
    dry = compare_scenarios(None, sim)
    assert dry[0]["finding"] == "dry run: cuda-sim differs from the table" and dry[0]["cuda"] is None


def cell(case: str, variant: str, lane: str, judgement: str, status: str, raised: str | None = None) -> dict:
    return {"case": case, "variant": variant, "lane": lane, "judgement": judgement, "status": status,
            "reason": "why", "exception": {"type": raised, "message": "m"} if raised else None,
            "torch": {"source": "host", "version": "2.11.0+cu130"}}


def test_cells_compare_cuda_with_cuda_sim_and_say_what_was_not_compared():
    results = {"cells": [cell("x", "buggy", "cuda", "confirmed", "raised", "RuntimeError"),
                         cell("x", "buggy", "cuda-sim", "stale-repro", "passed"),
                         cell("x", "fixed", "cuda", "confirmed", "passed"),
                         cell("x", "fixed", "cuda-sim", "confirmed", "passed"),
                         cell("y", "buggy", "cuda-sim", "skipped", "skipped"),
                         cell("z", "buggy", "cuda", "confirmed", "passed"),
                         cell("z", "buggy", "cuda-sim", "infra-error", "interrupted")]}
    rows = compare_cells(results)
    assert [(r["case"], r["variant"], r["agree"]) for r in rows] == [
        ("x", "buggy", False), ("y", "buggy", None), ("z", "buggy", None), ("x", "fixed", True)]
    assert rows[1]["finding"] == "not compared: cuda did not run"
    assert rows[2]["finding"] == "not compared: stopped at the time budget"
    why = left_out(["x", "y", "z", "w"], ["x", "y", "z"], results)
    assert why["w"].startswith("not selected: the check was given its cases") and why["y/buggy"] == "why"
    assert left_out(["w", *CHOSEN], CHOSEN, None) == {"w": BUDGET_NOTE}  # the default set says why it is chosen
    text = markdown({"dry_run": False, "node": {"torch": "2.11.0+cu130", "gpus": ["H100"]}, "host_python": "p",
                     "seconds": 1.0, "budget_s": 480.0, "stopped_at_budget": True, "scenario_errors": [], "scenarios": compare_scenarios(None, {"scenarios": []}),
                     "cells": rows, "left_out": why})
    assert text.index("| x | buggy |") < text.index("| x | fixed |")
    assert "confirmed (raised RuntimeError; torch 2.11.0+cu130)" in text
    assert "(budget 480.0 s; cells still running then were stopped)" in text


def test_parts_stay_under_the_limit_and_a_too_large_wheel_is_named(tmp_path):
    house = Wheelhouse(tmp_path, Target("3.12", "manylinux_2_28_x86_64"))
    for name, mib in (("a-1-py3-none-any.whl", 3), ("b-1-py3-none-any.whl", 2), ("c-1-py3-none-any.whl", 2)):
        (tmp_path / name).write_bytes(b"x" * mib * 2**20)
        house.files[name.split("-")[0] + "==1"] = name
    parts = split_parts(house, 4)
    assert [sorted(p.name for p in part.iterdir()) for part in parts] == [
        ["a-1-py3-none-any.whl"], ["b-1-py3-none-any.whl", "c-1-py3-none-any.whl"]]
    assert house.files["c==1"] == "part-02/c-1-py3-none-any.whl" and link_folders(tmp_path)[1:] == parts
    big = Wheelhouse(tmp_path / "big", house.target)
    big.folder.mkdir()
    (big.folder / "d-1-py3-none-any.whl").write_bytes(b"x" * 2 * 2**20)
    with pytest.raises(UsageError, match=r"d-1-py3-none-any\.whl alone is larger"):
        split_parts(big, 1)
    assert Target("3.12", "manylinux_2_28_x86_64").uv_platform() == "x86_64-manylinux_2_28"
    flags = Target("3.12", "manylinux_2_28_x86_64").pip_platforms()
    assert flags[:2] == ["--platform", "manylinux_2_28_x86_64"] and "manylinux2014_x86_64" in flags
    assert "manylinux_2_29_x86_64" not in flags
    with pytest.raises(UsageError, match="give a manylinux or musllinux tag"):
        Target("3.12", "win_amd64").uv_platform()


def run(*argv: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run(list(argv), cwd=REPO, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "COLUMNS": "200", "PYTHONPATH": str(REPO)})


@pytest.mark.slow  # about 16 s (load 15 on 2 cores): nine wheels fetched in one pip download, one offline build
def test_adopting_wheels_moves_regular_wheel_files_only_and_never_through_a_link(tmp_path):
    """What a private-uid ``pip wheel`` left (harness/environments/_wheelhouse.py ``adopt_wheels``): its own
    regular ``*.whl`` files move into the wheel folder; a link, a FIFO, a hard link, a folder, another file and
    a name the folder has already stay behind, and nothing is written through a link planted at either end."""
    built, wheels, victim = tmp_path / "built", tmp_path / "wheels", tmp_path / "victim"
    built.mkdir()
    wheels.mkdir()
    victim.write_text("kept")
    (built / "good-1.0-py3-none-any.whl").write_bytes(b"wheel")
    (built / "good-1.0-py3-none-any.whl").chmod(0o666)
    (built / "link-1.0-py3-none-any.whl").symlink_to(victim)
    os.mkfifo(built / "fifo-1.0-py3-none-any.whl")
    os.link(victim, built / "hard-1.0-py3-none-any.whl")
    (built / "dir-1.0-py3-none-any.whl").mkdir()
    (built / "notes.txt").write_text("x")
    (built / "there-1.0-py3-none-any.whl").write_bytes(b"new")
    (wheels / "there-1.0-py3-none-any.whl").symlink_to(victim)  # planted in the wheel folder: never written
    left = adopt_wheels(built, wheels)
    assert sorted(p.name for p in wheels.iterdir()) == ["good-1.0-py3-none-any.whl", "there-1.0-py3-none-any.whl"]
    good = wheels / "good-1.0-py3-none-any.whl"
    assert good.read_bytes() == b"wheel" and good.stat().st_mode & 0o777 == 0o644
    assert good.stat().st_uid == os.geteuid() and not (built / good.name).exists()
    assert victim.read_text() == "kept" and (wheels / "there-1.0-py3-none-any.whl").is_symlink()
    assert sorted(line.split()[0] for line in left) == sorted(p.name for p in built.iterdir()), left
    assert len(left) == 6, left


def test_a_wheelhouse_builds_the_environment_offline(tmp_path):
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    wheels = tmp_path / "wheels"
    made = run(sys.executable, "-m", "harness", "wheelhouse", "--cases-dir", "tests/fixtures/cases", "--case",
               "confirmed", "--python-version", version, "--output", str(wheels), "--split-mib", "8")
    assert made.returncode == 0, made.stdout + made.stderr
    manifest = json.loads((wheels / "wheelhouse.json").read_text())
    assert manifest["cases"]["confirmed"]["bytes"] > 0 and "confirmed:" in made.stdout and "MiB" in made.stdout
    assert not [f for f in manifest["files"].values() if f.startswith("torch-")]  # the family stays out
    assert all(part.stat().st_size for part in wheels.glob("part-*/*.whl"))
    assert all(sum(w.stat().st_size for w in part.iterdir()) <= 8 * 2**20 for part in wheels.glob("part-*"))
    used = run(sys.executable, "-m", "harness", "cases", "--cases-dir", "tests/fixtures/cases", "--case",
               "confirmed", "--lane", "cpu", "--python", sys.executable, "--find-links", str(wheels), "--offline",
               "--output", str(tmp_path / "out"))
    assert used.returncode == 0, used.stdout + used.stderr
    assert "ran with host torch" in used.stdout


@pytest.mark.slow  # about 58 s at load 10 on 2 cores: the scenario table under cuda-sim and one case on cuda-sim
def test_the_gpu_check_dry_run(tmp_path):
    proc = run("bash", "scripts/gpu-check.sh", "--python", sys.executable, "--output", str(tmp_path), "--",
               "--cases-dir", "tests/fixtures/cases", "--case", "confirmed")
    report = json.loads((tmp_path / "gpu-check.json").read_text())
    assert proc.returncode == 0, proc.stdout + proc.stderr + json.dumps(report)[-2000:]
    assert report["dry_run"] is True and len(report["scenarios"]) >= 40
    assert all(r["agree"] and r["cuda"] is None for r in report["scenarios"])
    assert {(r["variant"], r["finding"]) for r in report["cells"]} == {
        ("buggy", "not compared: cuda did not run"), ("fixed", "not compared: cuda did not run")}
    assert [v["verdict"] for v in report["verdicts"]] == ["confirmed"]
    assert report["left_out"]["stale-repro"].startswith("not selected")  # the other fixture cases, with reasons
    table = (tmp_path / "gpu-check.md").read_text()
    assert table.startswith("# GPU check (dry run: no GPU, cuda-sim only)") and "## Left out" in table


def test_a_bare_node_is_asked_for_the_harness_s_dependencies_but_not_the_simulator_the_checkout_holds(tmp_path):
    """cuda-sim is its own distribution, in the checkout and on no index: `wheelhouse --with-harness` and
    gpu-check.sh's install asked an index for it and failed (found preparing a GPU window)."""
    assert "cuda-sim" in checkout_distributions()
    assert not [r for r in node_requirements() if r.startswith(("cuda-sim", "cuda_sim"))]
    assert {"uv", "pytest", "numpy"} <= set(node_requirements()) and any(r.startswith("jsonschema") for r in
                                                                            node_requirements())
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["Local_Part>=1", "rich>=13"]\n')
    (tmp_path / "local").mkdir()
    (tmp_path / "local" / "pyproject.toml").write_text('[project]\nname = "local-part"\n')
    assert node_requirements(tmp_path) == ("rich>=13", "uv", "pytest", "numpy")
    script = (REPO / "scripts" / "gpu-check.sh").read_text()
    assert "-m harness._requirements" in script and '["dependencies"]' not in script


def test_a_wheelhouse_without_pip_is_refused_before_anything_is_fetched(tmp_path, monkeypatch, capsys):
    """Without pip every download failed and each pin was reported as sdist-only, the folder empty ("0.0 MiB"):
    found running the command in the tests' environment, which had no pip."""
    import importlib.util

    from harness._cli import main

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pip" else real(name, *a))
    code = main(["wheelhouse", "--cases-dir", "tests/fixtures/cases", "--case", "confirmed", "--output",
                 str(tmp_path / "wheels")])
    said = capsys.readouterr().out
    assert code == 2 and "the wheelhouse downloads wheels with pip, which" in said and "nox -s wheelhouse" in said
    assert not (tmp_path / "wheels").exists()
