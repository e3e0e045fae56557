"""The command line's arguments: every subcommand and option, and the checks on their values.

Each subcommand's handler is in ``harness._cli`` (``images``: ``harness.docker``); a bad value is a usage error
(exit 2) that says the allowed range.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path
from typing import Any

from harness._exceptions import SelectionError
from harness._vocabulary import LANES
from harness.cases._roots import add_cases_dir
from harness.run._backend import project_root
from harness.run._execute import usable_cores
from harness.run._plan import parse_shard

DESCRIPTION = "Command line: ``python -m harness {cases,report,clean,validate,images}``."


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
    parser = argparse.ArgumentParser(prog="python -m harness", description=DESCRIPTION)
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
    add_cases_dir(cases)
    cases.add_argument("--python", dest="host_python", type=Path, metavar="PATH",
                       help="take torch (and only its family: torchvision, torchaudio, triton, nvidia-*) from this "
                            "interpreter instead of the pinned torch, e.g. a GPU node's CUDA build (docs/gpu.md)")
    cases.add_argument("--find-links", type=Path, metavar="DIR",
                       help="a folder of wheels to install from first (e.g. made by 'nox -s wheelhouse')")
    cases.add_argument("--offline", action="store_true",
                       help="no network: install only from --find-links (a missing wheel is named)")
    validate = commands.add_parser("validate", help="validate case files against the schema")
    add_cases_dir(validate)
    validate.add_argument("--check-index", action="store_true",
                          help="also ask the package index whether a fix variant pins its package's newest release "
                               "(the fix may be unreleased); bounded to 20 s")
    validate.add_argument("--static", action="store_true",
                          help="check the files only: by default uv (sealed) also reads what each direct reference "
                               "(name @ git+URL@COMMIT) builds, refusing a pin named otherwise or one it cannot read, "
                               "and resolves each variant of a filled-in draft (its repro keeps new's header), "
                               "refusing one that cannot install, then builds its environment as the run does and "
                               "refuses a repro whose module-level imports it does not install, then runs each "
                               "draft left as `cases` does and refuses one that does not confirm; all use the network")
    validate.add_argument("--no-run", action="store_true",
                          help="check installs as above but do not run the filled-in drafts' cells")
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
    add_cases_dir(bisect)
    clean = commands.add_parser("clean", help="prune environments, images and leftover containers no case uses")
    clean.add_argument("--dry-run", action="store_true")
    clean.add_argument("--no-images", action="store_true",
                       help="leave Docker alone (by default images are pruned when a daemon answers)")
    add_cases_dir(clean)
    _add_images(commands)
    _add_new(commands)
    _add_wheelhouse(commands)
    _add_gpu_check(commands)
    _add_shards(commands)
    return parser


def _add_shards(commands: Any) -> None:
    shards = commands.add_parser(
        "shards", help="how many --shard K/N shards fit a target time, from measured durations (nox -s shards)")
    shards.add_argument("--results", action="append", type=Path, default=[], metavar="PATH",
                        help="a results.json, a run folder or a folder of them, e.g. downloaded CI artifacts "
                             "(repeatable; default: reports/)")
    shards.add_argument("--lane", action="append", default=[], choices=LANES,
                        help="the sharded job's lanes (repeatable; default: cpu and cuda-sim)")
    shards.add_argument("--target-minutes", type=_int_in(1, 24 * 60), default=30, metavar="MIN",
                        help="each shard's wall-clock budget (1-1440; default 30)")
    shards.add_argument("--overhead-minutes", type=_int_in(0, 240), default=5, metavar="MIN",
                        help="per shard, besides its cells: checkout, installs, cache restore (0-240; default 5)")
    shards.add_argument("--jobs", "-j", type=_jobs, default=2, help="cells a shard runs in parallel (default 2)")
    shards.add_argument("--cold", action="store_true",
                        help="each shard also builds its environments (an empty cache): add their measured builds")
    shards.add_argument("--default", type=_int_in(1, 32), default=2, metavar="N",
                        help="the count when no cell was ever measured (1-32; default 2)")
    shards.add_argument("--github-output", type=Path, metavar="FILE",
                        help="also append count=N and matrix=[1,...,N] to this file (GitHub's $GITHUB_OUTPUT)")
    add_cases_dir(shards)


def _add_gpu_check(commands: Any) -> None:
    from harness.gpucheck._check import CHOSEN

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
    add_cases_dir(check)
    check.add_argument("--budget-s", type=_int_in(30, 86_400), default=480, metavar="S",
                       help="stop cells still running after S seconds in all, keeping what finished (default 480)")


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
    add_cases_dir(wheelhouse)


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
    add_cases_dir(new, repeatable=False)
    new.add_argument("--force", action="store_true", help="overwrite case.yaml and repro.py of an existing case")
