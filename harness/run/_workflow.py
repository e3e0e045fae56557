"""The run as a visible pipeline: load -> select -> plan -> run -> judge -> report.

Each step is a small function; :func:`run_cases` strings them together and returns the exit code.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from harness import __version__
from harness._exceptions import CaseFileError, EmptySelectionError, UsageError
from harness._io import for_terminal
from harness._vocabulary import LANES, ExitCode, Verdict
from harness.cases._load import Case, CaseLoad, load_cases
from harness.containment._gpu import gpu_count
from harness.containment._process import namespaces_wanted
from harness.containment._seal import mode_line, sandbox_mode
from harness.environments._hosttorch import HostTorch, probe_host_torch
from harness.run._backend import Backend
from harness.run._estimate import History, estimate, read_history
from harness.run._execute import Executor, Hooks, Interrupted
from harness.run._host import describe_host
from harness.run._judge import VerdictRecord, judge_lanes
from harness.run._plan import Cell, Selection, plan_cells, select_cases, select_lanes
from harness.run._recover import looks_running, recover_dead_run
from harness.run._results import (
    CellRecord,
    RunFolder,
    RunRecord,
    new_run_dir,
    utc_now,
)


@dataclass(frozen=True)
class RunOptions:
    case_roots: tuple[Path, ...]
    output: Path
    selection: Selection = field(default_factory=Selection)
    backend: str = "venv"
    jobs: int = 1
    argv: tuple[str, ...] = ()
    memory_limit_gb: float | None = None
    host_python: Path | None = None  # ``--python``: take the torch family from this interpreter
    find_links: Path | None = None  # ``--find-links``: a wheel folder (a wheelhouse) uv reads first
    offline: bool = False  # ``--offline``: that folder is the only source, no network


@dataclass
class UI:
    """How the pipeline talks to the user (the CLI passes rich-backed callables; tests pass lists)."""

    info: Callable[[str], None]
    error: Callable[[str], None]
    # Something long started (a cell, an environment build) and the log it writes; and when it ended.
    cell_started: Callable[[str, Path | None], None] = lambda key, log: None
    cell_finished: Callable[[str], None] = lambda key: None
    cell_done: Callable[[int, int, CellRecord], None] = lambda done, total, record: None  # as each cell ends
    summary: Callable[[dict[str, Any]], None] = lambda results: None
    messages: list[str] = field(default_factory=list)


def load_step(roots: Sequence[Path], ui: UI) -> CaseLoad:
    loaded = load_cases(roots)
    for error in loaded.errors:
        ui.error(f"case file error (this case is not run; the others are): {error}")
    return loaded


def select_step(loaded: CaseLoad, selection: Selection) -> tuple[list[Case], list[Cell]]:
    broken = [e.path.parent.name for e in loaded.errors]
    only_broken = selection.cases and all(name in broken for name in selection.cases)
    if only_broken:
        raise CaseFileError(loaded.errors[0].path, "the selected case file is invalid (see above)",
                            fix="fix the case file, then run again")
    cases = select_cases(loaded.cases, selection, broken)
    cells = plan_cells(cases, select_lanes(selection), selection.variants)
    if not cells:
        raise EmptySelectionError("the selection matched no cell (no active case, or the --variant names none of "
                             "the selected cases' variants)")
    return cases, cells


def judge_step(cases: Sequence[Case], records: Sequence[CellRecord]) -> list[VerdictRecord]:
    return judge_lanes([case.id for case in cases], records)


def exit_code_for(verdicts: Sequence[VerdictRecord], load_errors: int) -> int:
    if load_errors:
        return ExitCode.BAD_INPUT
    return ExitCode.OK if all(Verdict(v["verdict"]).ok for v in verdicts) else ExitCode.VERDICTS


def report_step(folder: RunFolder, record: RunRecord, ui: UI) -> dict[str, Any]:
    results = cast("dict[str, Any]", record.serialize())  # the report reads plain JSON data, as from a file
    folder.write_json("results.json", results)
    from harness.report import write_run_reports

    write_run_reports(folder.path, results)
    return results


def recover_step(output: Path, ui: UI) -> None:
    """Finalise earlier runs in ``output`` whose harness died mid-run (see run/_recover.py)."""
    if not output.is_dir():
        return
    for run_dir in sorted(output.iterdir()):
        if run_dir.is_symlink() or not run_dir.is_dir() or not looks_running(run_dir):
            continue
        if recover_dead_run(run_dir):
            ui.info(f"run {for_terminal(run_dir.name, one_line=True)}: its harness died mid-run; marked interrupted, "
                    "with the cells it finished")
            _rewrite_reports(run_dir, ui)


def _rewrite_reports(run_dir: Path, ui: UI) -> None:
    import json

    from harness.report import write_run_reports

    try:
        write_run_reports(run_dir, json.loads((run_dir / "results.json").read_text(encoding="utf-8")))
    except Exception as error:  # the recovered results.json is what matters; the pages can be rebuilt
        ui.error(for_terminal(f"run {run_dir.name}: its reports could not be rebuilt: {type(error).__name__}: {error}",
                              one_line=True))


def make_backend(options: RunOptions, cells: Sequence[Cell] = (), run_id: str | None = None) -> Backend:
    limit = int(options.memory_limit_gb * 1024**3) if options.memory_limit_gb else None
    if options.backend == "docker":
        from harness.docker import DockerBackend

        # The cases tell it each environment's image folder; the lanes which image flavours to look for;
        # the run id labels its containers, so `docker ps` points back at this run.
        cases = list({cell.case.id: cell.case for cell in cells}.values())
        lanes = sorted({cell.lane.name for cell in cells}) or LANES
        return DockerBackend(memory_limit_bytes=limit, cases=cases, lanes=lanes, run_id=run_id)
    from harness.environments._venv import VenvBackend

    return VenvBackend(memory_limit_bytes=limit, find_links=options.find_links, offline=options.offline)


def host_step(options: RunOptions, ui: UI) -> HostTorch | None:
    """``--python``: what that interpreter's torch family is (said before anything is built)."""
    if options.host_python is None:
        return None
    if options.backend != "venv":
        raise UsageError("--python works with the venv backend (each image installs its own torch); "
                         "leave out --backend docker")
    host = probe_host_torch(options.host_python)
    ui.info(f"host torch: {host.executable} (Python {host.python}) has torch {host.torch}; cells run with it "
            "instead of their pinned torch, and say so in the results")
    return host


def run_cases(options: RunOptions, ui: UI) -> int:
    loaded = load_step(options.case_roots, ui)
    cases, cells = select_step(loaded, options.selection)
    host = host_step(options, ui)
    recover_step(options.output.resolve(), ui)
    run_id, run_dir = new_run_dir(options.output)
    try:
        backend = make_backend(options, cells, run_dir.name)
    except BaseException:
        run_dir.rmdir()  # nothing ran: leave no empty run folder behind
        raise
    folder = RunFolder(run_dir)
    try:
        return _run(options, ui, (loaded, cases, cells), backend, run_id, folder, host)
    finally:
        folder.close()


def _run(options: RunOptions, ui: UI, planned: tuple[CaseLoad, list[Case], list[Cell]], backend: Backend,
         run_id: str, folder: RunFolder, host: HostTorch | None = None) -> int:
    loaded, cases, cells = planned
    run_dir = folder.path
    record = RunRecord(
        id=run_id, started=utc_now(), host=describe_host(), harness_version=__version__,
        selection=_selection_record(options, cases),
        cases={case.id: case.describe() for case in cases}, load_errors=[str(e) for e in loaded.errors],
    )
    ui.info(f"run {record.id}: {len(cases)} case(s), {len(cells)} cell(s), backend {backend.name}, "
            f"{options.jobs} job(s) -> {run_dir}")
    if backend.name == "venv":  # the docker backend's containers are its sandbox (docs/docker.md)
        record.host["sandbox"] = sandbox_mode(namespaces_wanted())
        ui.info(mode_line(namespaces_wanted()))
    folder.write_json("results.json", record.serialize())
    hooks = Hooks(progress=ui.info, on_start=ui.cell_started, on_finish=ui.cell_finished,
                  on_record=folder.append_cell)
    executor = Executor(backend, run_dir, jobs=options.jobs, gpus=gpu_count(), hooks=hooks, folder=folder, host=host)
    estimate_step(executor, cells, options, run_id, ui)
    interrupted = False
    try:
        record.cells = executor.run(cells, lambda i, cell, r: ui.cell_done(i, len(cells), r))
    except Interrupted as stop:
        interrupted, record.cells = True, stop.records
    record.environments = executor.environments
    record.verdicts = judge_step(cases, record.cells)
    # A broken case file the user did not select is reported, but does not fail a run of other cases.
    relevant = [e for e in loaded.errors
                if not options.selection.cases or e.path.parent.name in options.selection.cases]
    code = ExitCode.INTERRUPTED if interrupted else exit_code_for(record.verdicts, len(relevant))
    record.finished, record.exit_code = utc_now(), code
    record.status = "interrupted" if interrupted else "completed"
    results = report_step(folder, record, ui)
    ui.summary(results)
    ui.info(f"results: {run_dir / 'results.json'}  report: {run_dir / 'index.html'}")
    return code


def estimate_step(executor: Executor, cells: Sequence[Cell], options: RunOptions, run_id: str, ui: UI) -> None:
    """Before the first cell: what will run, what has to be built first, and how long it should take."""
    runnable, builds = executor.plan_environments(cells)
    keys = [(c.case.id, c.lane.name, c.variant.name) for c in runnable]
    output = options.output.resolve()
    history = read_history(output, set(keys)) if keys else History({}, {})
    build_ids = [f"{executor.backend.name}-{spec.key()}" for spec in builds]
    skipped = len(cells) - len(runnable)
    if not runnable:
        ui.info(f"estimate: nothing to run here: all {skipped} cell(s) are skipped (lane absent here, or unsupported)")
        return
    ui.info(estimate(keys, build_ids, history, options.jobs).describe(options.jobs, output)
            + (f"; {skipped} more cell(s) skipped (lane absent here, or unsupported)" if skipped else ""))


def _selection_record(options: RunOptions, cases: Sequence[Case]) -> dict[str, Any]:
    selection = options.selection
    return {
        "cases": [c.id for c in cases], "lanes": list(selection.lanes) or None,
        "variants": list(selection.variants) or None, "backend": options.backend,
        "shard": f"{selection.shard[0]}/{selection.shard[1]}" if selection.shard else None,
        "jobs": options.jobs, "argv": list(options.argv), "cwd": os.getcwd(),
        "host_python": str(options.host_python) if options.host_python else None,
        "offline": options.offline,
    }
