"""Command line: ``python -m harness {cases,report,clean,validate,images}``.

Argument parsing, output set-up and the single error boundary live here; the work is elsewhere.
Exit codes: 0 every verdict confirmed or skipped, 1 some other verdict, 2 bad input (case file or
arguments), 3 empty selection, 4 results could not be written, 130 interrupted.
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from harness._backend import floating_days, project_root
from harness._cases import LANES, Case
from harness._exceptions import (
    CaseFileError,
    EmptySelectionError,
    HarnessError,
    ReportWriteError,
    SelectionError,
    UsageError,
)
from harness._execute import usable_cores
from harness._listing import print_case_list
from harness._plan import Selection, parse_shard
from harness._progress import LiveCells
from harness._results import CellRecord
from harness._text import for_terminal
from harness._workflow import (
    EXIT_BAD_INPUT,
    EXIT_EMPTY,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_WRITE,
    UI,
    RunOptions,
    load_step,
    run_cases,
)

_STYLE = {"confirmed": "green", "skipped": "dim", "fix-regressed": "bold red", "stale-repro": "yellow",
          "failed-differently": "magenta", "infra-error": "red"}


def _int_in(low: int, high: int) -> Any:
    """An argparse type: an integer from low to high, else a usage error (exit 2) that gives the range."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = None
        if value is None or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer from {low} to {high}")
        return value

    return parse


def build_parser() -> argparse.ArgumentParser:
    root = project_root()
    parser = argparse.ArgumentParser(prog="python -m harness", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    cases = commands.add_parser("cases", help="run cases across lanes (nox -s cases)")
    cases.add_argument("--case", action="append", default=[], metavar="ID", help="run this case (repeatable)")
    cases.add_argument("--lane", action="append", default=[], choices=LANES, help="run this lane (repeatable)")
    cases.add_argument("--variant", action="append", default=[], metavar="NAME", help="run this variant (repeatable)")
    cases.add_argument("--output", type=_output_folder, default=root / "reports",
                       help="run output folder (reports/)")
    cases.add_argument("--list", action="store_true", help="list cases without running anything")
    cases.add_argument("--backend", choices=("venv", "docker"), default="venv",
                       help="where cells run: 'venv' (default: one uv environment per requirement set) or "
                            "'docker' (each case's image; see docs/docker.md)")
    cases.add_argument("--jobs", "-j", type=_jobs, default=usable_cores(),
                       help="cells run in parallel (default: usable cores); with more than one, each cell gets "
                            "OMP_NUM_THREADS/MKL_NUM_THREADS = cores // jobs unless you or the case set them")
    cases.add_argument("--shard", metavar="K/N", type=_shard, help="run the K-th of N deterministic, balanced shards")
    cases.add_argument("--memory-limit", type=_memory_gb, metavar="GB",
                       help=f"per-cell address-space limit, at least {MIN_MEMORY_GB:g} (what importing torch needs)")
    cases.add_argument("--refresh", action="store_true",
                       help="rebuild environments with unpinned requirements (e.g. 'latest') for this run")
    cases.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR",
                       help="folder of case folders (default: cases/; repeatable)")
    cases.add_argument("--python", dest="host_python", type=Path, metavar="PATH",
                       help="take torch (and only its family: torchvision, torchaudio, triton, nvidia-*) from this "
                            "interpreter instead of the pinned torch, e.g. a GPU node's CUDA build (docs/gpu.md)")
    cases.add_argument("--find-links", type=Path, metavar="DIR",
                       help="a folder of wheels to install from first (e.g. made by 'nox -s wheelhouse')")
    cases.add_argument("--offline", action="store_true",
                       help="no network: install only from --find-links (a missing wheel is named)")
    validate = commands.add_parser("validate", help="validate case files against the schema")
    validate.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR",
                          help="folder of case folders (default: cases/; repeatable)")
    validate.add_argument("--check-index", action="store_true",
                          help="also ask the package index whether a fix variant pins its package's newest release "
                               "(the fix may be unreleased); bounded to 20 s")
    report = commands.add_parser("report", help="(re)build the static site from stored runs (nox -s report)")
    report.add_argument("--input", action="append", type=Path, default=[], metavar="DIR",
                        help="a run folder, a folder of runs or a published site (repeatable; default: reports/)")
    report.add_argument("--output", type=Path, default=root / "reports" / "site", metavar="DIR",
                        help="the site's folder, outside every run folder (default: reports/site)")
    report.add_argument("--stale-days", type=_int_in(1, 3650), default=7, metavar="N",
                        help="flag case/lanes with no real run for N days (1-3650; default 7)")
    report.add_argument("--keep-reports", type=_int_in(0, 100_000), default=50, metavar="N",
                        help="newest per-run reports carried in the site (0-100000; default 50)")
    bisect = commands.add_parser("bisect", help="run a case over the releases of one package (nox -s bisect)")
    bisect.add_argument("--case", required=True, metavar="ID", help="the case to bisect")
    bisect.add_argument("--variant", metavar="NAME", help="variant to vary (default: the first buggy one)")
    bisect.add_argument("--package", required=True, metavar="NAME", help="the package whose releases to try")
    bisect.add_argument("--from", dest="low", metavar="VERSION", help="oldest release to try (default: the first)")
    bisect.add_argument("--to", dest="high", metavar="VERSION", help="newest release to try (default: the last)")
    bisect.add_argument("--versions", metavar="A,B,C", help="exact versions instead of asking the index")
    bisect.add_argument("--pre", action="store_true", help="include pre-releases")
    bisect.add_argument("--lane", choices=LANES, help="default: cuda if a GPU is present, else cuda-sim")
    bisect.add_argument("--mode", choices=("linear", "binary"), default="linear",
                        help="linear: every release in the range; binary: the first change in log2(n) runs, "
                             "assuming the outcome changes once")
    bisect.add_argument("--jobs", "-j", type=_jobs, default=usable_cores(), help="releases tried in parallel")
    bisect.add_argument("--output", type=_output_folder, default=root / "reports",
                        help="where the run folder with bisect.json goes (reports/)")
    bisect.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR",
                        help="folder of case folders (default: cases/; repeatable)")
    clean = commands.add_parser("clean", help="prune environments, images and leftover containers no case uses")
    clean.add_argument("--dry-run", action="store_true")
    clean.add_argument("--no-images", action="store_true",
                       help="leave Docker alone (by default images are pruned when a daemon answers)")
    clean.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR")
    _add_images(commands)
    _add_new(commands)
    _add_wheelhouse(commands)
    _add_gpu_check(commands)
    return parser


def _add_gpu_check(commands: Any) -> None:
    from harness._gpucheck import CHOSEN

    check = commands.add_parser(
        "gpu-check", help="compare real cuda with cuda-sim on a GPU node (scripts/gpu-check.sh; docs/gpu.md)",
        description="Node info, the conformance scenarios on real CUDA and cuda-sim, the chosen cases on cuda and "
                    "cuda-sim with the node's torch; writes gpu-check.json and gpu-check.md. No GPU: a dry run.")
    check.add_argument("--python", dest="host_python", type=Path, default=Path(sys.executable), metavar="PATH",
                       help="the node's interpreter with its own torch (default: this one)")
    check.add_argument("--output", type=Path, default=project_root() / "reports" / "gpu-check", metavar="DIR")
    check.add_argument("--case", action="append", default=[], metavar="ID",
                       help=f"a case to compare (default: {', '.join(CHOSEN)})")
    check.add_argument("--find-links", type=Path, metavar="DIR", help="the wheelhouse (--prepare made it)")
    check.add_argument("--offline", action="store_true", help="install only from --find-links")
    check.add_argument("--jobs", "-j", type=_jobs, default=usable_cores())
    check.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR")
    check.add_argument("--budget-s", type=_int_in(30, 86_400), default=480, metavar="S",
                       help="stop cells still running after S seconds in all, keeping what finished (default 480)")
    check.set_defaults(handler=_cmd_gpu_check)


def _cmd_gpu_check(args: argparse.Namespace, console: Console) -> int:
    from harness._gpucheck import CHOSEN, CheckOptions, run_check

    roots = _case_roots(args)
    loaded = load_step(roots, _ui(console))
    active = [case.id for case in loaded.cases if case.status == "active"]
    options = CheckOptions(host_python=args.host_python, output=args.output, cases=tuple(args.case) or CHOSEN,
                           find_links=args.find_links, offline=args.offline, jobs=args.jobs,
                           cases_dirs=tuple(args.cases_dir), budget_s=float(args.budget_s))
    report = run_check(options, active, _plain_printer(console))
    disagree = [r for r in report["scenarios"] if not r["agree"]] + [r for r in report["cells"] if r["agree"] is False]
    return 1 if disagree or report["scenario_errors"] or report["run"] is None else EXIT_OK


def _add_wheelhouse(commands: Any) -> None:
    wheelhouse = commands.add_parser(
        "wheelhouse", help="collect the wheels cases need for an offline host (nox -s wheelhouse)",
        description="Every wheel the selected cases need on a host that brings its own torch (cases --python), "
                    "the torch family left out, sdist-only packages built into wheels; then on that host: "
                    "cases --python PATH --find-links DIR --offline (docs/gpu.md).")
    wheelhouse.add_argument("--case", action="append", default=[], metavar="ID", help="a case (default: all active)")
    wheelhouse.add_argument("--python-version", default=f"{sys.version_info.major}.{sys.version_info.minor}",
                            metavar="X.Y", help="the offline host's Python (default: this one's)")
    wheelhouse.add_argument("--platform", default="manylinux_2_28_x86_64", metavar="TAG",
                            help="the offline host's platform tag (default manylinux_2_28_x86_64)")
    wheelhouse.add_argument("--output", type=Path, required=True, metavar="DIR", help="the wheel folder to fill")
    wheelhouse.add_argument("--split-mib", type=_int_in(1, 1_000_000), metavar="N",
                            help="move the wheels into part-NN/ folders of at most N MiB each")
    wheelhouse.add_argument("--torch-from", type=Path, default=Path(sys.executable), metavar="PATH",
                            help="an interpreter whose torch declares the dependencies to include (default: this one)")
    wheelhouse.add_argument("--with-harness", action="store_true",
                            help="add the harness's own dependencies, uv and pytest (for a node that has none)")
    wheelhouse.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR")
    wheelhouse.set_defaults(handler=_cmd_wheelhouse)


def _cmd_wheelhouse(args: argparse.Namespace, console: Console) -> int:
    from harness._hosttorch import probe_host_torch
    from harness._plan import select_cases
    from harness._wheelhouse import Target, harness_requirements, make_wheelhouse

    loaded = load_step(_case_roots(args), _ui(console))
    cases = select_cases(loaded.cases, Selection(cases=tuple(args.case)))
    torch = probe_host_torch(args.torch_from)
    wanted = {case.id: [v.requires for v in case.variants.values()
                        if torch.skip_reason(v.requires, [p.path for p in v.patches]) is None] for case in cases}
    if args.with_harness:
        wanted["(harness)"] = [harness_requirements()]
    target = Target(args.python_version, args.platform)
    target.uv_platform()  # a bad tag is a usage error before anything is fetched
    house = make_wheelhouse(wanted, args.output, target, torch, _plain_printer(console), split_mib=args.split_mib)
    if house.missing:
        raise UsageError(f"{len(house.missing)} requirement(s) have no wheel in {args.output} (listed above and in "
                         "wheelhouse.json 'missing'): run this where they can be downloaded or built")
    return EXIT_OK


# torch 2.13 (CPU) imports and makes a 1000x1000 tensor in 0.7 GB of address space on a 2-core host, and
# fails (MemoryError, OpenBLAS buffers) at 0.6; OpenBLAS reserves more per core on bigger hosts.
MIN_MEMORY_GB = 1.0
MAX_MEMORY_GB = 1024.0**2
MAX_JOBS = 1024
MAX_SHARDS = 10_000


def _memory_gb(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of GB") from None
    if not math.isfinite(value) or not MIN_MEMORY_GB <= value <= MAX_MEMORY_GB:
        raise argparse.ArgumentTypeError(
            f"{text!r}: give a number of GB from {MIN_MEMORY_GB:g} (importing torch needs about 0.7 GB of address "
            f"space) to {MAX_MEMORY_GB:,.0f}; leave the option out for no limit")
    return value


def _jobs(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if not 1 <= value <= MAX_JOBS:
        raise argparse.ArgumentTypeError(f"{text!r}: give 1 to {MAX_JOBS} cells at once")
    return value


def _shard(text: str) -> tuple[int, int]:
    try:
        index, total = parse_shard(text)
    except SelectionError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix(f"--shard {text!r}: ")) from None
    if total > MAX_SHARDS:
        raise argparse.ArgumentTypeError(f"{text!r}: at most {MAX_SHARDS} shards")
    return index, total


def _output_folder(text: str) -> Path:
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text!r} is a file: name a folder (it is created if missing)")
    return path


def _add_images(commands: Any) -> None:
    try:
        from harness.docker import add_images_parser
    except ImportError:
        return
    add_images_parser(commands)


def _add_new(commands: Any) -> None:
    new = commands.add_parser("new", help="write a case skeleton from a bug report (nox -s new)",
                              description="Write cases/ID/case.yaml and repro.py from a pasted bug report (traceback "
                                          "and environment listing); what the report cannot say is left as FILL-IN "
                                          "placeholders that 'validate' lists.")
    new.add_argument("id", metavar="ID", help="the new case's id: kebab-case, never reused")
    new.add_argument("--from", dest="report", type=Path, metavar="REPORT",
                     help="text file pasted from the bug report (without it: a commented template)")
    new.add_argument("--cases-dir", type=Path, metavar="DIR", help="folder of case folders (default: cases/)")
    new.add_argument("--force", action="store_true", help="overwrite case.yaml and repro.py of an existing case")
    new.set_defaults(handler=_cmd_new)


def _cmd_new(args: argparse.Namespace, console: Console) -> int:
    from harness.authoring._new import create_case, default_cases_dir

    written = create_case(args.id, args.cases_dir or default_cases_dir(), args.report, force=args.force)
    say = _plain_printer(console)
    for path in written.files:
        say(f"wrote {_shown(path)}")
    for note in written.notes:
        say(f"note: {note}")
    say(f"left to fill in ({len(written.todo)}; `python -m harness validate` lists what remains in case.yaml):")
    for path, line, what in written.todo:
        say(f"  {_shown(path)}:{line}: {what}")
    say(f"then run it: nox -s cases -- --case {args.id} --lane cpu --lane cuda-sim")
    return EXIT_OK


def _shown(path: Path) -> Path:
    """A path relative to the working folder when it is under it (clickable in terminals and editors)."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def _case_roots(args: argparse.Namespace) -> tuple[Path, ...]:
    roots = tuple(p.resolve() for p in args.cases_dir) or (project_root() / "cases",)
    missing = [str(p) for p in roots if not p.is_dir()]
    if missing:
        raise UsageError(f"cases folder not found: {', '.join(missing)}")
    return roots


def _console() -> Console:
    # FORCE_COLOR=0 means "no colour" to most tools; rich would take any value as "force a terminal".
    if os.environ.get("FORCE_COLOR", "").strip().lower() in ("0", "false", "no"):
        return Console(highlight=False, emoji=False, width=160, soft_wrap=True, force_terminal=False, no_color=True)
    console = Console(highlight=False, emoji=False)
    return console if console.is_terminal else Console(highlight=False, emoji=False, width=160, soft_wrap=True)


def _ui(console: Console, live: LiveCells | None = None) -> UI:
    def cell_done(done: int, total: int, record: CellRecord) -> None:
        style = _STYLE.get(record.judgement, "")
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
    roots = _case_roots(args)
    if args.list:
        loaded = load_step(roots, _ui(console))
        print_case_list(console, loaded.cases)
        return EXIT_BAD_INPUT if loaded.errors else EXIT_OK
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
    loaded = load_step(_case_roots(args), _ui(console))
    if args.check_index:
        from harness._releases import index_environment
        from harness._soundness import newest_fix_pins

        python = f"{sys.version_info.major}.{sys.version_info.minor}"
        for line in newest_fix_pins(loaded.cases, index_environment(), python):
            console.print(Text(for_terminal(f"note: {line}", one_line=True)))
    console.print(f"{len(loaded.cases)} case file(s) valid, {len(loaded.errors)} invalid")
    return EXIT_BAD_INPUT if loaded.errors else EXIT_OK


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
    return EXIT_OK


def _cmd_clean(args: argparse.Namespace, console: Console) -> int:
    from harness._clean import clean_environments

    loaded = load_step(_case_roots(args), _ui(console))
    removed = clean_environments(loaded.cases, dry_run=args.dry_run, say=_plain_printer(console))
    console.print(f"{'would remove' if args.dry_run else 'removed'} {removed.count} environment(s) "
                  f"({removed.describe()})")
    if not args.no_images:
        _clean_images(loaded.cases, args.dry_run, console)
    return EXIT_OK


def _clean_images(cases: Sequence[Case], dry_run: bool, console: Console) -> None:
    from harness.docker import DockerUnavailableError, clean_images

    try:
        removed = clean_images(cases, dry_run=dry_run, say=_plain_printer(console))
    except DockerUnavailableError as error:
        console.print(Text(for_terminal(f"images: not pruned ({error})")))
        return
    console.print(f"{'would remove' if dry_run else 'removed'} {removed.count} image(s) ({removed.describe()})")


def _cmd_bisect(args: argparse.Namespace, console: Console) -> int:
    from harness._lanes import LANE_TABLE, nvidia_gpu_status
    from harness._plan import Selection, select_cases
    from harness._venv import VenvBackend
    from harness.authoring._bisect import BisectRequest, available_versions, run_bisect, select_range

    loaded = load_step(_case_roots(args), _ui(console))
    case = select_cases(loaded.cases, Selection(cases=(args.case,)))[0]
    buggy = [v for v in case.variants.values() if v.role == "buggy"]
    name = args.variant or buggy[0].name
    if name not in case.variants:
        raise UsageError(f"case {case.id} has no variant {name!r}; it has {', '.join(case.variants)}")
    say = _plain_printer(console)
    versions = args.versions.split(",") if args.versions else available_versions(args.package, say=say)
    lane = LANE_TABLE[args.lane or ("cuda" if nvidia_gpu_status()[0] else "cuda-sim")]
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
    return EXIT_OK


_COMMANDS = {"cases": _cmd_cases, "bisect": _cmd_bisect, "validate": _cmd_validate, "report": _cmd_report,
             "clean": _cmd_clean}


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    console = _console()
    # SIGTERM (CI cancelling a job) is handled like Ctrl-C: stop cells, keep finished results.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    handler = _COMMANDS.get(args.command) or args.handler
    try:
        return handler(args, console)
    except EmptySelectionError as error:
        _print_error(console, str(error))
        return EXIT_EMPTY
    except (SelectionError, CaseFileError, UsageError) as error:
        _print_error(console, str(error))
        return EXIT_BAD_INPUT
    except ReportWriteError as error:
        _print_error(console, str(error))
        return EXIT_WRITE
    except HarnessError as error:
        _print_error(console, str(error))
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        console.print("[red]interrupted[/]")
        return EXIT_INTERRUPTED
