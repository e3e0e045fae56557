"""The run folder: writes that never follow what a cell planted, and recovery of runs whose harness died."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from harness.run._recover import recover_dead_run
from harness.run._results import (
    CellRecord,
    RunFolder,
    RunRecord,
    harness_process,
    new_run_dir,
    write_json_atomic,
)


def test_results_json_replaced_by_a_folder_or_a_symlink_is_written_anyway(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("victim")
    (tmp_path / "results.json").mkdir()
    (tmp_path / "results.json" / "inner").write_text("x")
    write_json_atomic(tmp_path / "results.json", {"a": 1})
    assert json.loads((tmp_path / "results.json").read_text()) == {"a": 1}
    (tmp_path / "results.json").unlink()
    (tmp_path / "results.json").symlink_to(victim)
    write_json_atomic(tmp_path / "results.json", {"b": 2})
    assert not (tmp_path / "results.json").is_symlink() and victim.read_text() == "victim"
    old = os.umask(0o022)
    try:
        write_json_atomic(tmp_path / "results.json", {"c": 3})
    finally:
        os.umask(old)
    assert (tmp_path / "results.json").stat().st_mode & 0o777 == 0o644


def test_logs_never_go_through_a_planted_symlink(tmp_path):
    run, elsewhere = tmp_path / "run", tmp_path / "elsewhere"
    run.mkdir()
    elsewhere.mkdir()
    folder = RunFolder(run)
    (run / "logs").symlink_to(elsewhere)  # a folder on the way swapped for a symlink
    path, fd = folder.new_file(("logs", "case", "cpu", "v.log"), "# header\n")
    os.write(fd, b"output\n")
    os.close(fd)
    assert path == run / "logs" / "case" / "cpu" / "v.log" and path.read_text() == "# header\noutput\n"
    assert not (run / "logs").is_symlink() and list(elsewhere.iterdir()) == []
    (run / "logs" / "case" / "cpu" / "w.log").symlink_to(tmp_path / "target")  # the file itself planted
    path, fd = folder.new_file(("logs", "case", "cpu", "w.log"), "# w\n")
    os.close(fd)
    assert not path.is_symlink() and not (tmp_path / "target").exists()
    folder.close()


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _running_run(run_dir: Path, process: dict) -> None:
    run_dir.mkdir()
    record = RunRecord(id=run_dir.name, started="2026-01-01T00:00:00+00:00", host={}, selection={},
                       harness_version="test", cases={"c": {}}, harness_process=process)
    folder = RunFolder(run_dir)
    folder.write_json("results.json", record.serialize())
    for variant in ("a", "b"):
        folder.append_cell(CellRecord(case="c", variant=variant, role="fix", lane="cpu", expected="passes",
                                      status="passed", judgement="confirmed", reason="passes, as expected"))
    folder.close()
    with (run_dir / "cells.jsonl").open("a") as handle:
        handle.write('{"case": "c", "variant": "torn')  # the line being written when it died


def test_a_dead_run_is_finalised_with_the_cells_it_finished(tmp_path):
    run_dir = tmp_path / "run"
    _running_run(run_dir, {**harness_process(), "pid": _dead_pid(), "start_ticks": None})
    assert recover_dead_run(run_dir)
    data = json.loads((run_dir / "results.json").read_text())
    assert data["run"]["status"] == "interrupted" and data["run"]["exit_code"] == 130
    assert [c["variant"] for c in data["cells"]] == ["a", "b"]
    assert data["verdicts"] == [{"case": "c", "lane": "cpu", "verdict": "confirmed",
                                 "reason": "2 of 2 variants behave as documented", "cells": ["a", "b"]}]
    assert not recover_dead_run(run_dir)  # finished now: left alone


def test_live_foreign_and_reused_pids_are_told_apart(tmp_path):
    _running_run(tmp_path / "live", harness_process())
    assert not recover_dead_run(tmp_path / "live")
    _running_run(tmp_path / "foreign", {**harness_process(), "pid": _dead_pid(), "hostname": socket.gethostname() + "x"})
    assert not recover_dead_run(tmp_path / "foreign")
    reused = {**harness_process(), "start_ticks": harness_process()["start_ticks"] - 1}  # our pid, another process
    _running_run(tmp_path / "reused", reused)
    assert recover_dead_run(tmp_path / "reused")


def test_runs_started_within_one_second_sort_in_the_order_they_started(tmp_path, monkeypatch):
    monkeypatch.delenv("REPRO_MATRIX_RUN_ID", raising=False)
    started = [new_run_dir(tmp_path)[0] for _ in range(20)]  # well within a second or two
    assert sorted(started) == started
    assert sorted(p.name for p in tmp_path.iterdir()) == started
