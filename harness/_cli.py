"""Command line: ``python -m harness {cases,report,clean,validate,images}``.

Output set-up, one handler per subcommand and the single error boundary live here; the arguments are in
``harness._cli_parser``, the work is elsewhere.
Exit codes: 0 every verdict confirmed or skipped, 1 some other verdict, 2 bad input (case file or
arguments), 3 empty selection, 4 results could not be written, 130 interrupted.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from harness._cli_parser import build_parser
from harness._exceptions import (
    CaseFileError,
    EmptySelectionError,
    HarnessError,
    ReportWriteError,
    SelectionError,
    UsageError,
)
from harness._io import for_terminal
from harness._vocabulary import RICH_STYLES, ExitCode
from harness.cases._listing import print_case_list
from harness.cases._load import Case
from harness.cases._roots import case_roots
from harness.environments._spec import floating_days
from harness.run._backend import project_root
from harness.run._execute import usable_cores
from harness.run._plan import Selection
from harness.run._progress import LiveCells
from harness.run._results import CellRecord
from harness.run._workflow import (
    UI,
    RunOptions,
    load_step,
    run_cases,
)


def _cmd_gpu_check(args: argparse.Namespace, console: Console) -> int:
    from harness.gpucheck._check import CHOSEN, CheckOptions, run_check

    roots = case_roots(args)
    loaded = load_step(roots, _ui(console))
    active = [case.id for case in loaded.cases if case.status == "active"]
    options = CheckOptions(host_python=args.host_python, output=args.output, cases=tuple(args.case) or CHOSEN,
                           find_links=args.find_links, offline=args.offline, jobs=args.jobs,
                           cases_dirs=tuple(args.cases_dir), budget_s=float(args.budget_s))
    report = run_check(options, active, _plain_printer(console))
    disagree = [r for r in report["scenarios"] if not r["agree"]] + [r for r in report["cells"] if r["agree"] is False]
    return ExitCode.VERDICTS if disagree or report["scenario_errors"] or report["run"] is None else ExitCode.OK


def _cmd_wheelhouse(args: argparse.Namespace, console: Console) -> int:
    from harness.environments._hosttorch import probe_host_torch
    from harness.environments._wheelhouse import Target, harness_requirements, make_wheelhouse
    from harness.run._plan import select_cases

    loaded = load_step(case_roots(args), _ui(console))
    cases = select_cases(loaded.cases, Selection(cases=tuple(args.case)))
    torch = probe_host_torch(args.torch_from)
    wanted = {case.id: [v.requires for v in case.variants.values()
                        if torch.skip_reason(v.requires, [p.path for p in v.patches]) is None] for case in cases}
    if args.with_harness:
        wanted["(harness)"] = [harness_requirements()]
    target = Target(args.python_version, args.platform)
    target.uv_platform()  # a bad tag is a usage error before anything is fetched
    if importlib.util.find_spec("pip") is None:  # else every download "fails" and each pin looks sdist-only
        raise UsageError(f"the wheelhouse downloads wheels with pip, which {sys.executable} lacks: run it as "
                         "'nox -s wheelhouse -- ...' (its environment has pip), or install pip into this interpreter")
    house = make_wheelhouse(wanted, args.output, target, torch, _plain_printer(console), split_mib=args.split_mib)
    if house.missing:
        raise UsageError(f"{len(house.missing)} requirement(s) have no wheel in {args.output} (listed above and in "
                         "wheelhouse.json 'missing'): run this where they can be downloaded or built")
    return ExitCode.OK


def _cmd_new(args: argparse.Namespace, console: Console) -> int:
    from harness.authoring._new import (
        create_case,
        default_cases_dir,
        index_project_urls,
        index_released,
        index_versions,
    )

    written = create_case(args.id, args.cases_dir or default_cases_dir(), args.report, force=args.force,
                          released=index_released() if args.report else None,
                          project_urls=index_project_urls() if args.report else None,
                          versions=index_versions() if args.report else None)
    say = _plain_printer(console)
    for path in written.files:
        say(f"wrote {_shown(path)}")
    for note in written.notes:
        say(f"note: {note}")
    say(f"left to fill in ({len(written.todo)}; `python -m harness validate` lists what remains in case.yaml):")
    for path, line, what in written.todo:
        say(f"  {_shown(path)}:{line}: {what}")
    say(f"then run it: nox -s cases -- --case {written.folder.name} --lane cpu --lane cuda-sim")
    return ExitCode.OK


def _shown(path: Path) -> Path:
    """A path relative to the working folder when it is under it (clickable in terminals and editors)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def _console() -> Console:
    # FORCE_COLOR=0 means "no colour" to most tools; rich would take any value as "force a terminal".
    if os.environ.get("FORCE_COLOR", "").strip().lower() in ("0", "false", "no"):
        return Console(highlight=False, emoji=False, width=160, soft_wrap=True, force_terminal=False, no_color=True)
    console = Console(highlight=False, emoji=False)
    return console if console.is_terminal else Console(highlight=False, emoji=False, width=160, soft_wrap=True)


def _ui(console: Console, live: LiveCells | None = None) -> UI:
    def cell_done(done: int, total: int, record: CellRecord) -> None:
        style = RICH_STYLES.get(record.judgement, "")
        width = len(str(total))
        cell = for_terminal(f"{record.case} · {record.lane} · {record.variant}", one_line=True)
        console.print(Text.assemble(
            f"[{done:>{width}}/{total}] ", (f"{record.judgement:<18}", style), f" {cell}  ",
            (f"{record.status} {record.duration_s:.1f}s — {for_terminal(record.reason, one_line=True)}", "dim")))

    def summary(results: dict[str, Any]) -> None:
        from harness.report import terminal_summary

        console.print(terminal_summary(results))

    live = live or LiveCells(console)
    return UI(info=lambda text: console.print(Text(for_terminal(text), style="dim")),
              error=lambda text: _print_error(console, text), cell_done=cell_done,
              cell_started=live.started, cell_finished=live.finished, summary=summary)


def _print_error(console: Console, text: str) -> None:
    console.print(Text.assemble(("error:", "red"), " ", for_terminal(text)))


def _plain_printer(console: Console) -> Callable[[str], None]:
    """A ``say`` callable: text from tools, cases and repros is shown as text, never obeyed as escapes or markup."""
    return lambda text: console.print(Text(for_terminal(text)))


def _cmd_cases(args: argparse.Namespace, console: Console) -> int:
    roots = case_roots(args)
    if args.list:
        loaded = load_step(roots, _ui(console))
        print_case_list(console, loaded.cases)
        return ExitCode.BAD_INPUT if loaded.errors else ExitCode.OK
    floating_days()  # a bad REPRO_MATRIX_FLOATING_DAYS is a usage error now, not a crash per cell
    if args.refresh:
        os.environ["REPRO_MATRIX_REFRESH"] = f"refresh-{time.time_ns()}"
    selection = Selection(cases=tuple(args.case), lanes=tuple(args.lane), variants=tuple(args.variant),
                          shard=args.shard)
    if args.offline and args.find_links is None:
        raise UsageError("--offline needs --find-links DIR: the folder of wheels to install from")
    if args.find_links is not None and not args.find_links.is_dir():
        raise UsageError(f"--find-links {args.find_links}: no such folder")
    options = RunOptions(case_roots=roots, output=args.output, selection=selection, backend=args.backend,
                         jobs=args.jobs, argv=tuple(sys.argv[2:]), memory_limit_gb=args.memory_limit,
                         host_python=args.host_python, find_links=args.find_links, offline=args.offline)
    with LiveCells(console) as live:
        return run_cases(options, _ui(console, live))


def _cmd_validate(args: argparse.Namespace, console: Console) -> int:
    loaded = load_step(case_roots(args), _ui(console))
    if args.check_index:
        from harness.cases._soundness import newest_fix_pins
        from harness.environments._releases import index_environment

        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        for line in newest_fix_pins(loaded.cases, index_environment(), python):
            console.print(Text(for_terminal(f"note: {line}", one_line=True)))
    run_roots = None if args.no_run else case_roots(args)
    refused = [] if args.static else _refused_by_uv(loaded.cases, _ui(console), run_roots)
    bad = {error.path for error in refused}
    valid = sum(case.source not in bad for case in loaded.cases)
    console.print(f"{valid} case file(s) valid, {len(loaded.cases) - valid + len(loaded.errors)} invalid")
    return ExitCode.BAD_INPUT if loaded.errors or refused else ExitCode.OK


def _refused_by_uv(cases: Sequence[Case], ui: UI, run_roots: Sequence[Path] | None) -> list[CaseFileError]:
    """What uv says cannot install: direct references named otherwise than the project their URL builds, or whose URL
    cannot be read; then the variants of filled-in drafts whose requires do not resolve; then those whose environment
    (built as the run builds it) does not build or lacks a module the repro imports; then (``run_roots``: the case
    folders) the drafts left, run on every lane here, that do not confirm."""
    from harness.environments import _direct_pins, _draft_installs

    pins = _direct_pins.direct_pins(cases)
    refused = _direct_pins.refusals(_direct_pins.read_pins(pins, progress=ui.info)) if pins else []
    bad = {error.path for error in refused}
    drafts = [case for case in _draft_installs.drafted(cases) if case.source not in bad]
    if drafts:
        refused += _draft_installs.refusals(_draft_installs.unresolved(drafts, progress=ui.info))
    bad = {error.path for error in refused}
    if resolved := [case for case in drafts if case.source not in bad]:
        from harness.environments._venv import VenvBackend

        found = _draft_installs.unprovided(resolved, VenvBackend(), ui.info)
        refused += _draft_installs.module_refusals(found)
    bad = {error.path for error in refused}
    if run_roots is not None and (installable := [case for case in drafts if case.source not in bad]):
        from harness.run._draft_run import unconfirmed

        refused += unconfirmed(installable, run_roots, ui.info, jobs=usable_cores())
    for error in refused:
        ui.error(f"case file error: {error}")
    return refused


def _cmd_report(args: argparse.Namespace, console: Console) -> int:
    from harness.report import build_site

    inputs = args.input or [project_root() / "reports"]
    missing = [str(p) for p in inputs if not p.exists()]
    if missing:
        raise UsageError(f"--input not found: {', '.join(missing)}")
    summary = build_site(inputs, args.output, stale_days=args.stale_days, keep_reports=args.keep_reports)
    console.print(Text(for_terminal(str(summary), one_line=True)))
    if summary.problems:  # names and text from untrusted inputs: no escape sequence gets through
        console.print(Text("inputs skipped, or published without the part named:", style="yellow"))
    for problem in summary.problems[:50]:
        console.print(Text(f"  {for_terminal(problem, one_line=True)}", style="yellow"))
    if len(summary.problems) > 50:
        console.print(Text(f"  ... and {len(summary.problems) - 50} more (listed on the front page)", style="yellow"))
    return ExitCode.OK


def _cmd_shards(args: argparse.Namespace, console: Console) -> int:
    from harness.run._shards import plan_shards, read_measured

    lanes = list(dict.fromkeys(args.lane)) or ["cpu", "cuda-sim"]
    cases = [case for case in load_step(case_roots(args), _ui(console)).cases if case.status == "active"]
    measured = read_measured(args.results or [project_root() / "reports"], lanes)
    plan = plan_shards(cases, lanes, measured, target_s=args.target_minutes * 60, jobs=args.jobs,
                       overhead_s=args.overhead_minutes * 60, default=args.default, cold=args.cold)
    console.print(Text(plan.describe(args.target_minutes * 60)), soft_wrap=True)
    console.print(f"shards={plan.shards}")
    if args.github_output:
        with args.github_output.open("a", encoding="utf-8") as out:
            out.write(f"count={plan.shards}\nmatrix={json.dumps(plan.matrix())}\n")
    return ExitCode.OK


def _cmd_clean(args: argparse.Namespace, console: Console) -> int:
    from harness.environments._clean import clean_environments

    loaded = load_step(case_roots(args), _ui(console))
    removed = clean_environments(loaded.cases, dry_run=args.dry_run, say=_plain_printer(console))
    console.print(f"{'would remove' if args.dry_run else 'removed'} {removed.count} environment(s) "
                  f"({removed.describe()})")
    if not args.no_images:
        _clean_images(loaded.cases, args.dry_run, console)
    return ExitCode.OK


def _clean_images(cases: Sequence[Case], dry_run: bool, console: Console) -> None:
    from harness.docker import DockerUnavailableError, clean_images

    try:
        removed = clean_images(cases, dry_run=dry_run, say=_plain_printer(console))
    except DockerUnavailableError as error:
        console.print(Text(for_terminal(f"images: not pruned ({error})")))
        return
    console.print(f"{'would remove' if dry_run else 'removed'} {removed.count} image(s) ({removed.describe()})")


def _cmd_bisect(args: argparse.Namespace, console: Console) -> int:
    from harness.authoring._bisect import BisectRequest, available_versions, run_bisect, select_range
    from harness.containment._gpu import gpu_status
    from harness.environments._venv import VenvBackend
    from harness.run._lanes import LANE_TABLE
    from harness.run._plan import Selection, select_cases

    loaded = load_step(case_roots(args), _ui(console))
    case = select_cases(loaded.cases, Selection(cases=(args.case,)))[0]
    buggy = [v for v in case.variants.values() if v.role == "buggy"]
    name = args.variant or buggy[0].name
    if name not in case.variants:
        raise UsageError(f"case {case.id} has no variant {name!r}; it has {', '.join(case.variants)}")
    say = _plain_printer(console)
    versions = args.versions.split(",") if args.versions else available_versions(args.package, say=say)
    lane = LANE_TABLE[args.lane or ("cuda" if gpu_status()[0] else "cuda-sim")]
    request = BisectRequest(case, case.variants[name], args.package,
                            tuple(select_range(versions, args.low, args.high, pre=args.pre)), lane,
                            binary=args.mode == "binary")
    say(f"bisect {case.id}/{name} over {len(request.versions)} release(s) of {args.package} "
        f"on {lane.name} ({args.mode})")
    report = run_bisect(request, VenvBackend(), args.output, jobs=args.jobs, say=say)
    for change in report["transitions"]:
        releases = for_terminal(f"{args.package} {change['from']} -> {change['to']}:")
        console.print(Text.assemble((releases, "bold"), for_terminal(f" {change['was']} -> {change['now']}")))
    if not report["transitions"]:
        say(f"no change across the range: {report['rows'][0]['outcome'] if report['rows'] else 'nothing ran'}")
    say(f"bisect report: {report['path']}")
    return ExitCode.OK


_COMMANDS = {"cases": _cmd_cases, "bisect": _cmd_bisect, "validate": _cmd_validate, "report": _cmd_report,
             "clean": _cmd_clean, "new": _cmd_new, "wheelhouse": _cmd_wheelhouse, "gpu-check": _cmd_gpu_check,
             "shards": _cmd_shards}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = _console()
    # SIGTERM (CI cancelling a job) is handled like Ctrl-C: stop cells, keep finished results. SIGINT is set too:
    # a harness started from a background shell (`cmd &`, a CI step) inherits SIGINT ignored, and Python keeps it so.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.default_int_handler)
    handler = _COMMANDS.get(args.command) or args.handler
    try:
        return handler(args, console)
    except EmptySelectionError as error:
        _print_error(console, str(error))
        return ExitCode.EMPTY
    except (SelectionError, CaseFileError, UsageError) as error:
        _print_error(console, str(error))
        return ExitCode.BAD_INPUT
    except ReportWriteError as error:
        _print_error(console, str(error))
        return ExitCode.WRITE
    except HarnessError as error:
        _print_error(console, str(error))
        return ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        console.print("[red]interrupted[/]")
        return ExitCode.INTERRUPTED
