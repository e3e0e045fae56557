"""Hostile repros and a harness that dies: cells cannot reach the run's records, nothing they start
survives them or the harness, environments are never half-built, and bad numbers are usage errors."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.server
import importlib.util
import json
import os
import shutil
import signal
import socketserver
import subprocess
import sys
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.faults.conftest import (
    REPO,
    SIGNATURE_SCRIPT,
    cell,
    results_of,
    run_harness,
    start_harness,
    verdict,
    write_case,
)
from tests.faults.processes import new_token, processes_with, wait_until

pytestmark = pytest.mark.slow
PASSES = {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}


def _namespaces_here() -> bool:
    from harness.containment._process import Confinement, RunningProcess

    log = Path(os.environ.get("TMPDIR", "/tmp")) / f"ns-probe-{os.getpid()}.log"
    try:
        result = RunningProcess(["true"], env={"PATH": os.defpath}, cwd=Path("/"), log_path=log, timeout=30,
                                confinement=Confinement()).wait()
    finally:
        log.unlink(missing_ok=True)
    return result.containment == "namespaces"


MODES = [pytest.param("1", id="namespaces"), pytest.param("0", id="subreaper")]


def _mode(monkeypatch: pytest.MonkeyPatch, namespaces: str) -> None:
    if namespaces == "1" and not _namespaces_here():
        pytest.skip("this host allows no namespaces (neither root nor unprivileged user namespaces)")
    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", namespaces)


# -- a repro writes into the run folder ----------------------------------------------------------
ATTACKER = """
    import argparse, json, os, pathlib, sys
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    here = pathlib.Path(__file__).parent
    out, victim = (pathlib.Path(line) for line in (here / "paths.txt").read_text().split())
    seen = {"cwd": os.getcwd(), "argv": sys.argv, "env": [k for k, v in os.environ.items() if str(out) in v],
            "attempts": {}}

    def attempt(name, action):
        try:
            action()
            seen["attempts"][name] = "done"
        except Exception as error:
            seen["attempts"][name] = repr(error)

    if a.variant == "zz-attacker":
        def forge():
            fake = out / "20990101T000000Z-forged"
            fake.mkdir()
            (fake / "results.json").write_text(json.dumps({"version": 1, "run": {"id": "forged"}}))
        attempt("forge", forge)
        for run in [r for r in out.iterdir() if r.is_dir()] if out.is_dir() else []:
            def results_folder(run=run):
                (run / "results.json").unlink()
                (run / "results.json").mkdir()
                (run / "results.json" / "x").write_text("x")
            def plant_log(run=run):
                target = run / "logs" / "hostile" / "cpu" / "zzz-after.log"
                target.symlink_to(victim)
            def plant_cells(run=run):
                (run / "cells.jsonl").unlink()
                (run / "cells.jsonl").symlink_to(victim)
            attempt("results-folder", results_folder)
            attempt("plant-log", plant_log)
            attempt("plant-cells", plant_cells)
        print("SEEN", json.dumps(seen))  # through the cell's log: a sealed cell's files stay in it
"""


def _seen(run_dir: Path, results: dict, case: str, variant: str) -> dict:
    """What a hostile repro printed on its ``SEEN`` line."""
    log = (run_dir / cell(results, case, variant)["log"]).read_text()
    return json.loads(next(line for line in log.splitlines() if line.startswith("SEEN "))[5:])


@pytest.mark.fault("a repro writes into the run folder (forges or destroys records)")
@pytest.mark.parametrize("namespaces", MODES)
def test_a_repro_cannot_forge_or_destroy_the_run(tmp_path, monkeypatch, namespaces):
    _mode(monkeypatch, namespaces)
    out, victim = tmp_path / "out", tmp_path / "victim.txt"
    victim.write_text("victim\n")
    folder = write_case(tmp_path / "cases", "hostile", ATTACKER, variants={
        "a-first": {"role": "buggy", "expect": PASSES}, "zz-attacker": {"role": "fix", "expect": PASSES},
        "zzz-after": {"role": "fix", "expect": PASSES}})
    (folder / "paths.txt").write_text(f"{out}\n{victim}\n")
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                       "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    run_dir = next(p for p in out.iterdir() if p.name != "20990101T000000Z-forged")
    results = json.loads((run_dir / "results.json").read_text())
    seen = _seen(run_dir, results, "hostile", "zz-attacker")
    assert not Path(seen["cwd"]).is_relative_to(out), "the cell ran inside the output folder"
    assert seen["env"] == [] and not any(str(out) in arg for arg in seen["argv"])
    assert results["run"]["status"] == "completed" and len(results["cells"]) == 3
    assert {c["judgement"] for c in results["cells"]} == {"confirmed"}
    assert victim.read_text() == "victim\n", "the harness wrote through a symlink a cell planted"
    after = run_dir / cell(results, "hostile", "zzz-after")["log"]
    assert not after.is_symlink() and after.read_text().startswith("# repro-matrix cell hostile/cpu/zzz-after")
    assert not (run_dir / "cells.jsonl").is_symlink()
    if namespaces == "1":  # the output folder is out of the cell's reach altogether
        assert sorted(p.name for p in out.iterdir()) == [run_dir.name], "a forged run landed in --output"
        assert seen["attempts"]["forge"] != "done"
        for record in results["cells"]:
            log = run_dir / record["log"]
            assert not log.is_symlink() and log.read_text().startswith("# repro-matrix cell")


MOVER = """
    import argparse, json, os, pathlib
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    here = pathlib.Path(__file__).parent
    parent = pathlib.Path((here / "paths.txt").read_text().strip())
    seen = {}
    try:  # move the output folder's parent away, put a folder with a forged run at its path
        os.rename(parent, parent.with_name(parent.name + "-moved"))
        forged = parent / "out" / "20990101T000000Z-forged"
        forged.mkdir(parents=True)
        (forged / "results.json").write_text(json.dumps({"version": 1, "run": {"id": "forged"}}))
        seen["moved"] = "done"
    except OSError as error:
        seen["moved"] = repr(error)
    print("SEEN", json.dumps(seen))
"""


@pytest.mark.fault("a repro writes into the run folder (forges or destroys records)")
def test_a_repro_cannot_move_the_output_folder_away(tmp_path, monkeypatch):
    """A parent of --output is writable to the cell: renamed, the harness would write the run where the cell
    put it, and a folder of the cell's own (a forged run) would stand at the output's path."""
    _mode(monkeypatch, "1")
    parent = tmp_path / "parent"
    folder = write_case(tmp_path / "cases", "mover", MOVER, variants={
        "a-buggy": {"role": "buggy", "expect": PASSES}, "fixed": {"role": "fix", "expect": PASSES}})
    (folder / "paths.txt").write_text(f"{parent}\n")
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                       str(parent / "out"), env={"REPRO_MATRIX_ENVS": str(REPO / ".repro-envs")})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (tmp_path / "parent-moved").exists(), "the cell moved the output folder's parent away"
    runs = sorted(p.name for p in (parent / "out").iterdir())
    assert len(runs) == 1 and runs[0] != "20990101T000000Z-forged", runs
    results = results_of(parent / "out")[0]
    assert results["run"]["status"] == "completed" and len(results["cells"]) == 2
    assert _seen(parent / "out" / runs[0], results, "mover", "a-buggy")["moved"] != "done"


FORGER = """
    import argparse, json, os, signal
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    outcome = json.load(open("child-spec.json"))["outcome"]
    if a.variant == "buggy":  # claims the bug's signature, then dies from a signal
        json.dump({"status": "raised", "exit_code": 1, "imported": {"torch": "0.0.1"}, "exception": {
            "type": "RuntimeError", "module": "builtins", "traceback": [],
            "message": "Expected all tensors to be on the same device (forged)"}}, open(outcome, "w"))
        os.kill(os.getpid(), signal.SIGSEGV)
    json.dump({"status": "passed", "exit_code": 0, "imported": {}}, open(outcome, "w"))
    os._exit(3)  # claims a clean run, exits 3
"""


@pytest.mark.fault("a repro writes into the run folder (forges or destroys records)")
@pytest.mark.parametrize("namespaces", MODES)
def test_a_repro_cannot_forge_its_own_outcome_record(tmp_path, monkeypatch, namespaces):
    """The outcome record is written by the repro's own process: the verdict follows how it really ended."""
    _mode(monkeypatch, namespaces)
    write_case(tmp_path / "cases", "forger", FORGER)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                       str(tmp_path / "out"))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = results_of(tmp_path / "out")[0]
    buggy, fixed = cell(results, "forger", "buggy"), cell(results, "forger", "fixed")
    assert (buggy["status"], buggy["signal"], buggy["judgement"]) == ("crashed", "SIGSEGV", "failed-differently")
    assert buggy["imported"] == {} and "disagrees with how the process ended" in buggy["reason"]
    assert (fixed["status"], fixed["exit_code"], fixed["judgement"]) == ("exited", 3, "failed-differently")


# -- a repro plants code that other cells run ---------------------------------------------------------
PLANTER = """
    import argparse, importlib.util, marshal, os, pathlib, struct
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    here = pathlib.Path(__file__).parent
    module = importlib.util.find_spec("colorsys").origin  # a module only the victim's repro imports
    source = os.stat(module)
    forged = compile("raise RuntimeError('Expected all tensors to be on the same device (planted)')", module, "exec")
    pyc = importlib.util.cache_from_source(module)  # where this cell's Python reads bytecode for it
    try:
        os.makedirs(os.path.dirname(pyc), exist_ok=True)
        with open(pyc, "wb") as handle:  # a valid header: the source's mtime and size
            handle.write(importlib.util.MAGIC_NUMBER + struct.pack("<III", 0, int(source.st_mtime) & 0xFFFFFFFF,
                         source.st_size & 0xFFFFFFFF) + marshal.dumps(forged))
    except OSError as error:
        print("plant refused:", error)
    for target in (here / "targets.txt").read_text().split():  # beyond the cell: HOME, the output's parent
        try:
            pathlib.Path(target).write_text("planted")
        except OSError:
            pass
"""
VICTIM = SIGNATURE_SCRIPT + """
    import colorsys
"""


@pytest.mark.fault("a repro plants code that other cells or later runs execute")
def test_a_repro_cannot_plant_code_for_other_cases_or_outside_its_cell(tmp_path, monkeypatch):
    """A shared bytecode cache let one case forge another's verdicts, in that run and every later one; a
    writable home, interpreter or uv cache would let it reach the harness itself."""
    _mode(monkeypatch, "1")
    token = new_token()
    home_target = Path.home() / ".cache" / f"{token}.txt"
    outside = [home_target, tmp_path / "planted.txt"]
    folder = write_case(tmp_path / "cases", "aa-planter", PLANTER, variants={
        "buggy": {"role": "buggy", "expect": PASSES}, "fixed": {"role": "fix", "expect": PASSES}})
    (folder / "targets.txt").write_text("\n".join(map(str, outside)))
    write_case(tmp_path / "cases", "zz-victim", VICTIM)
    try:
        for _ in range(2):  # the planted bytecode would persist into the next run too
            proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                               "--output", str(tmp_path / "out"), env={"REPRO_MATRIX_ENVS": str(tmp_path / "envs")})
            assert proc.returncode == 0, proc.stdout + proc.stderr
        for results in results_of(tmp_path / "out"):
            assert verdict(results, "zz-victim")["verdict"] == "confirmed", verdict(results, "zz-victim")
            assert "planted" not in cell(results, "zz-victim", "buggy")["exception"]["message"]
        assert not [p for p in outside if p.exists()], "the cell wrote outside its own folders"
    finally:
        home_target.unlink(missing_ok=True)


# -- a setsid daemon ------------------------------------------------------------------------------
DAEMON = """
    import argparse, os, sys
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    if a.variant == "buggy":
        first = os.fork()
        if first == 0:
            os.setsid()
            if os.fork() == 0:  # the daemon keeps the cell's stdout open
                os.execv(sys.executable, [sys.executable, "-c", "import time; time.sleep(3600)", os.environ["FAULT_TOKEN"]])
            os._exit(0)
        os.waitpid(first, 0)
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
"""


@pytest.mark.fault("a repro leaves a setsid daemon behind")
@pytest.mark.parametrize("namespaces", MODES)
def test_a_setsid_daemon_dies_with_its_cell(tmp_path, monkeypatch, namespaces):
    _mode(monkeypatch, namespaces)
    token = new_token()
    write_case(tmp_path / "cases", "daemon", DAEMON)
    started = time.monotonic()
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "1",
                       "--output", str(tmp_path / "out"), env={"FAULT_TOKEN": token}, timeout=300)
    elapsed = time.monotonic() - started
    try:
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stdout + proc.stderr
        results = results_of(tmp_path / "out")[0]
        assert cell(results, "daemon", "buggy")["judgement"] == "confirmed"
        assert cell(results, "daemon", "buggy")["duration_s"] < 30, "the cell waited for the daemon"
        assert not processes_with(token), "the setsid daemon outlived its cell"
        assert elapsed < 120
    finally:
        for pid in processes_with(token):
            os.kill(pid, signal.SIGKILL)


# -- the harness is SIGKILLed -----------------------------------------------------------------------
HANGS = """
    import argparse, os, subprocess, sys, time
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    if a.variant == "b-hangs":
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)", os.environ["FAULT_TOKEN"]],
                         start_new_session=True)
        time.sleep(3600)
"""


def _wait_for_line(process: subprocess.Popen, text: str, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if text in line:
            return
        if not line and process.poll() is not None:
            break
    raise AssertionError(f"{text!r} not seen")


@pytest.mark.fault("the harness is SIGKILLed mid-run")
@pytest.mark.parametrize("namespaces", MODES)
def test_sigkill_of_the_harness_kills_its_cells_and_the_next_run_finalises_it(tmp_path, monkeypatch, namespaces):
    _mode(monkeypatch, namespaces)
    token = new_token()
    monkeypatch.setenv("FAULT_TOKEN", token)
    write_case(tmp_path / "cases", "killed", HANGS, variants={
        "a-quick": {"role": "buggy", "expect": PASSES}, "b-hangs": {"role": "fix", "expect": PASSES},
        "c-never": {"role": "fix", "expect": PASSES}}, timeout=3000)
    write_case(tmp_path / "cases", "next", SIGNATURE_SCRIPT)
    out = tmp_path / "out"
    harness = start_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--case", "killed", "--lane", "cpu",
                            "--jobs", "1", "--output", str(out))
    with _reaped(harness, lambda: processes_with(token)):
        _wait_for_line(harness, "start killed/cpu/b-hangs")
        assert wait_until(lambda: processes_with(token), timeout=60)
        _kill(harness)
        assert wait_until(lambda: not processes_with(token), timeout=10), "the repro outlived the killed harness"
    dead = results_of(out)[0]
    assert dead["run"]["status"] == "running" and dead["run"]["harness_process"]["pid"] == harness.pid
    # `report` before any next run already publishes it as interrupted, and never writes into its input.
    stored = (out / dead["run"]["id"] / "results.json").read_bytes()
    proc = run_harness("report", "--input", str(out), "--output", str(tmp_path / "site"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (out / dead["run"]["id"] / "results.json").read_bytes() == stored
    published = json.loads((tmp_path / "site" / "runs" / dead["run"]["id"] / "results.json").read_text())
    assert published["run"]["status"] == "interrupted"
    assert [(c["variant"], c["judgement"]) for c in published["cells"]] == [("a-quick", "confirmed")]
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--case", "next", "--lane", "cpu",
                       "--output", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "died mid-run" in proc.stdout
    recovered = json.loads((out / dead["run"]["id"] / "results.json").read_text())
    assert recovered["run"]["status"] == "interrupted" and recovered["run"]["exit_code"] == 130
    assert [(c["variant"], c["judgement"]) for c in recovered["cells"]] == [("a-quick", "confirmed")]
    assert verdict(recovered, "killed")["verdict"] == "confirmed"
    assert (out / dead["run"]["id"] / "index.html").is_file()
    import tempfile

    assert not list(Path(tempfile.gettempdir()).glob(f"repro-cell-{harness.pid}-*")), "the dead run's scratch stayed"


# -- an environment build is SIGKILLed --------------------------------------------------------------
class _Stall(http.server.BaseHTTPRequestHandler):
    """A package index that never answers (uv waits for it)."""

    def do_GET(self) -> None:
        time.sleep(120)

    def log_message(self, *args) -> None:
        pass


@pytest.fixture
def stalling_index():
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Stall)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()  # its listening socket: left open, a ResourceWarning


def _kill(harness: subprocess.Popen) -> None:
    """SIGKILL the harness and reap it: nothing of its own clean-up runs."""
    harness.kill()
    harness.communicate(timeout=30)


@contextlib.contextmanager
def _reaped(harness: subprocess.Popen, survivors: Callable[[], list[int]]) -> Iterator[None]:
    """Whatever the test found, the harness and what it left running are gone afterwards."""
    try:
        yield
    finally:
        harness.kill()
        for pid in survivors():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _installers(envs: Path) -> list[int]:
    """uv's resolving and installing steps of a build in ``envs`` (a build resolves first, then installs)."""
    return [pid for pid in processes_with(str(envs)) if {b"install", b"compile"} & set(_arguments(pid))]


def _arguments(pid: int) -> list[bytes]:
    """A process's command line; empty when it ended since it was listed (the kill this test waits for)."""
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except (FileNotFoundError, ProcessLookupError):
        return []


@pytest.mark.fault("an environment build is SIGKILLed mid-install")
def test_sigkill_during_an_install_kills_uv_and_leaves_no_half_built_environment(tmp_path, monkeypatch,
                                                                                 stalling_index):
    envs = tmp_path / "envs"
    write_case(tmp_path / "cases", "build", SIGNATURE_SCRIPT, requires=["torch==2.13.0", "six==1.16.0"])
    args = ("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output", str(tmp_path / "out"))
    monkeypatch.setenv("REPRO_MATRIX_ENVS", str(envs))
    with monkeypatch.context() as patch:
        patch.setenv("UV_INDEX_URL", stalling_index)
        patch.setenv("UV_EXTRA_INDEX_URL", "")
        patch.setenv("UV_NO_CACHE", "1")
        harness = start_harness(*args)
    with _reaped(harness, lambda: _installers(envs)):
        assert wait_until(lambda: _installers(envs), timeout=120), "uv pip compile/install never started"
        _kill(harness)
        assert wait_until(lambda: not _installers(envs), timeout=10), "uv outlived the killed harness"
    unfinished = [p.name for p in envs.iterdir() if p.is_dir() and not (p / ".complete").exists()
                  and not p.name.startswith(".building-")]
    assert unfinished == [], "a half-built environment sits under its final name"
    proc = run_harness(*args)  # the index answers again: the environment is built afresh, the leftovers go
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p.name for p in envs.iterdir() if p.name.startswith(".building-")] == []
    assert verdict(results_of(tmp_path / "out")[-1], "build")["verdict"] == "confirmed"


# -- a catastrophic signature ---------------------------------------------------------------------
@pytest.mark.fault("catastrophic signature regex")
def test_a_catastrophic_signature_is_bounded_and_named(tmp_path):
    write_case(tmp_path / "cases", "regex", """
        import argparse
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        if a.variant == "buggy":
            raise RuntimeError("a" * 40 + "!")
    """, signature="^(a|a)+$")
    started = time.monotonic()
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                       str(tmp_path / "out"), timeout=180)
    assert time.monotonic() - started < 120
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr
    results = results_of(tmp_path / "out")[0]
    buggy = cell(results, "regex", "buggy")
    assert buggy["judgement"] == "infra-error"
    assert "^(a|a)+$" in buggy["reason"] and "fix:" in buggy["reason"]
    assert cell(results, "regex", "fixed")["judgement"] == "confirmed"


# -- numbers and output folders on the command line -------------------------------------------------
@pytest.mark.fault("out-of-range command-line numbers")
@pytest.mark.parametrize("argv", [
    ["cases", "--memory-limit", "nan"], ["cases", "--memory-limit", "inf"], ["cases", "--memory-limit", "0"],
    ["cases", "--memory-limit", "-2"], ["cases", "--memory-limit", "1e-9"], ["cases", "--jobs", "0"],
    ["cases", "--jobs", "-3"], ["cases", "--jobs", "99999999"], ["cases", "--shard", "0/4"],
    ["cases", "--shard", "5/4"], ["cases", "--shard", "1/999999999"],
    ["bisect", "--case", "x", "--package", "torch", "--jobs", "0"],
])
def test_out_of_range_numbers_are_usage_errors(tmp_path, argv, capsys):
    from harness._cli import main

    with pytest.raises(SystemExit) as stop:
        main([*argv, "--cases-dir", str(tmp_path), "--output", str(tmp_path / "out")])
    assert stop.value.code == 2
    error = capsys.readouterr().err
    assert "error: argument" in error and argv[-2] in error
    assert not (tmp_path / "out").exists()


@pytest.mark.fault("out-of-range command-line numbers")
def test_a_bad_floating_period_is_a_usage_error(tmp_path):
    write_case(tmp_path / "cases", "float", SIGNATURE_SCRIPT)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--output", str(tmp_path / "out"),
                       env={"REPRO_MATRIX_FLOATING_DAYS": "nan"})
    assert proc.returncode == 2 and "REPRO_MATRIX_FLOATING_DAYS" in proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr


@pytest.mark.fault("out-of-range command-line numbers")
@pytest.mark.parametrize("run_id", ["../../escaped", "a/b", "x\ny", ".", "r" * 102])
def test_a_bad_shared_run_id_is_a_usage_error(tmp_path, run_id):
    """REPRO_MATRIX_RUN_ID names the run's folder: a bad one is a bad setting (exit 2), and nothing is made."""
    write_case(tmp_path / "cases", "rid", SIGNATURE_SCRIPT)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--output", str(tmp_path / "out"),
                       env={"REPRO_MATRIX_RUN_ID": run_id})
    assert proc.returncode == 2 and "REPRO_MATRIX_RUN_ID" in proc.stdout and "at most 101" in proc.stdout, proc.stdout
    assert "Traceback" not in proc.stdout + proc.stderr
    assert not (tmp_path / "out").exists() and not (tmp_path / "escaped").exists()


@pytest.mark.fault("output folder read-only or a file")
@pytest.mark.parametrize("command", ["cases", "bisect"])
def test_an_output_that_is_a_file_or_read_only_is_reported(tmp_path, read_only_folder, command):
    write_case(tmp_path / "cases", "out", SIGNATURE_SCRIPT)
    extra = ["--package", "torch", "--versions", "2.13.0", "--lane", "cpu"] if command == "bisect" else ["--lane", "cpu"]
    base = [command, "--cases-dir", str(tmp_path / "cases"), "--case", "out", *extra]
    a_file = tmp_path / "a-file"
    a_file.write_text("not a folder")
    proc = run_harness(*base, "--output", str(a_file))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "is a file" in proc.stdout + proc.stderr and "Traceback" not in proc.stdout + proc.stderr
    assert a_file.read_text() == "not a folder"
    for output in (read_only_folder, read_only_folder / "inside"):
        proc = run_harness(*base, "--output", str(output))
        assert proc.returncode == 4, proc.stdout + proc.stderr
        assert "cannot create a run folder" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr


# -- a local file: requirement ----------------------------------------------------------------------
def _wheel(path: Path, value: int) -> None:
    files = {"localpkg/__init__.py": f"VALUE = {value}\n",
             "localpkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: localpkg\nVersion: 1.0\n",
             "localpkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                             "Tag: py3-none-any\n"}
    record = []
    for name, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(text.encode())}")
    record.append("localpkg-1.0.dist-info/RECORD,,")
    files["localpkg-1.0.dist-info/RECORD"] = "\n".join(record) + "\n"
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)


@pytest.mark.fault("a local file: requirement whose code changed")
def test_a_changed_local_requirement_gets_a_fresh_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("REPRO_MATRIX_ENVS", str(tmp_path / "envs"))
    wheel = tmp_path / "wheels" / "localpkg-1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    folder = write_case(tmp_path / "cases", "local", """
        import argparse, pathlib
        import localpkg
        p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
        expected = int((pathlib.Path(__file__).parent / "expected.txt").read_text())
        if localpkg.VALUE != expected:
            raise RuntimeError(f"stale code: localpkg.VALUE is {localpkg.VALUE}, expected {expected}")
    """, requires=["torch==2.13.0", f"localpkg @ {wheel.as_uri()}"])
    args = ("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--variant", "fixed",
            "--output", str(tmp_path / "out"))
    for value in (1, 2):
        _wheel(wheel, value)
        (folder / "expected.txt").write_text(str(value))
        proc = run_harness(*args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    first, second = results_of(tmp_path / "out")
    assert cell(first, "local", "fixed")["environment"] != cell(second, "local", "fixed")["environment"]


@pytest.mark.fault("a local file: requirement whose code changed")
def test_a_local_requirement_naming_a_fifo_or_a_device_folder_never_hangs_the_run(tmp_path, monkeypatch):
    """Its content is hashed for the environment key: a FIFO (or /dev, /proc) must not be read."""
    monkeypatch.setenv("REPRO_MATRIX_ENVS", str(tmp_path / "envs"))
    package = tmp_path / "pkg"
    package.mkdir()
    os.mkfifo(package / "pipe")  # opening it for reading blocks until a writer comes: none will
    write_case(tmp_path / "cases", "fifo-req", SIGNATURE_SCRIPT, requires=["torch==2.13.0", f"pkg @ {package.as_uri()}"])
    started = time.monotonic()
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--output",
                       str(tmp_path / "out"), timeout=120)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    results = results_of(tmp_path / "out")[0]
    for variant in ("buggy", "fixed"):
        record = cell(results, "fifo-req", variant)
        assert record["status"] == "infra-error" and "environment could not be built" in record["reason"], record
    assert time.monotonic() - started < 100


# -- exit codes through nox -------------------------------------------------------------------------
def _nox() -> list[str]:
    if importlib.util.find_spec("nox"):
        return [sys.executable, "-m", "nox"]
    found = shutil.which("nox")
    if not found:
        pytest.skip("nox is not installed here")
    return [found]


@pytest.mark.fault("harness exit codes through nox")
@pytest.mark.parametrize(("args", "code", "meaning"), [
    (["--cases-dir", "/nonexistent/cases"], 2, "bad input"),
    (["--case", "no-such-case-anywhere", "--cases-dir", "{cases}"], 2, "bad input"),
    (["--variant", "fixed", "--case", "broken", "--lane", "cpu", "--cases-dir", "{cases}"], 1, "some verdict"),
])
def test_nox_ends_with_the_harness_exit_code_and_its_meaning(tmp_path, args, code, meaning):
    write_case(tmp_path / "cases", "broken", """
        raise RuntimeError("this fix no longer holds")
    """)
    argv = [a.replace("{cases}", str(tmp_path / "cases")) for a in args]
    proc = subprocess.run([*_nox(), "-f", str(REPO / "noxfile.py"), "-R", "-s", "cases", "--", *argv,
                           "--output", str(tmp_path / "out")], cwd=REPO, capture_output=True, text=True, timeout=900)
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if line.strip()]
    assert proc.returncode == 1
    assert f"repro-matrix exited {code}: {meaning}" in lines[-1], lines[-5:]
