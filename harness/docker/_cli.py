"""``python -m harness images`` (``nox -s images``): list or build the docker backend's images.

Exit codes: 0 every selected image present or built, 1 a build failed (the others still ran),
2 bad input or no Docker daemon, 3 empty selection, 130 interrupted (the harness CLI's codes).
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from typing import Any

from filelock import FileLock, Timeout
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from harness._exceptions import CaseFileError, EmptySelectionError, EnvBuildError
from harness._vocabulary import LANES, ExitCode
from harness.cases._load import Case, load_cases
from harness.cases._roots import add_cases_dir, case_roots
from harness.docker._backend import image_log_dir
from harness.docker._build import build_image
from harness.docker._catalog import CatalogEntry, catalog, flavours_for_lanes
from harness.docker._client import connect, find_image, host_settings
from harness.docker._plan import ImageSettings
from harness.run._plan import Selection, select_cases


def add_images_parser(commands: Any) -> argparse.ArgumentParser:
    """Register ``images`` on the harness's subcommand parser; the handler is ``args.handler``."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "images", help="build the docker backend's images (nox -s images)",
        description="Build one image per distinct environment of the selected cases (missing ones only, "
                    "unless --rebuild). Tags are content hashes, so unchanged environments are never rebuilt.")
    parser.add_argument("--case", action="append", default=[], metavar="ID", help="only this case (repeatable)")
    parser.add_argument("--lane", action="append", default=[], choices=LANES,
                        help="cpu / cuda-sim: the CPU image (default); cuda: the CUDA image (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the images and whether they are built")
    parser.add_argument("--base", metavar="IMAGE",
                        help="base image (default: $REPRO_DOCKER_BASE / $REPRO_DOCKER_CUDA_BASE, else the "
                             "Dockerfile's public default)")
    parser.add_argument("--pip-source", choices=("wheelhouse", "index"),
                        help="wheelhouse (default): the host's pip resolves wheels, the build installs offline; "
                             "index: pip inside the build uses the Dockerfile's indexes (needs network)")
    parser.add_argument("--layout", choices=("slim", "flat"),
                        help="slim (default): only /venv on the runtime stage; flat: stop at the build stage "
                             "(keeps the ~0.2 GB wheelhouse layer, about half the build time)")
    parser.add_argument("--builder", choices=("auto", "sdk", "buildkit"),
                        help="buildkit: a docker CLI with BuildKit (buildx, or Debian's 20.10 /usr/bin/docker; "
                             "3-4x faster); sdk: the Docker SDK's legacy builder; auto (default): buildkit when "
                             "a CLI has it, else sdk")
    parser.add_argument("--rebuild", action="store_true", help="build even when the tag exists")
    parser.add_argument("--verbose", "-v", action="store_true", help="show every line of build output")
    add_cases_dir(parser)
    parser.set_defaults(handler=images_command)
    return parser


def images_command(args: argparse.Namespace, console: Console) -> int:
    cases = _selected_cases(args, console)
    flavours = flavours_for_lanes(args.lane or ["cpu"])
    if not catalog(cases, flavours, ImageSettings()):
        raise EmptySelectionError("the selection needs no image")
    client = connect()
    # The same bases `cases --backend docker` settles on, so the tags built here are the ones it looks for.
    settings, note = host_settings(client, _settings(args), flavours)
    if note:
        console.print(f"[dim]{escape(note)}[/]")
    entries = catalog(cases, flavours, settings)
    if args.list:
        _print_list(console, client, entries)
        return ExitCode.OK
    failed = [entry for index, entry in enumerate(entries)
              if not _ensure(console, client, entry, f"[{index + 1}/{len(entries)}]", args)]
    if args.base:
        _print_hint(console, args.base)
    if failed:
        console.print(f"[red]{len(failed)} of {len(entries)} image(s) failed to build[/]")
        return ExitCode.VERDICTS
    return ExitCode.OK


def _ensure(console: Console, client: Any, entry: CatalogEntry, counter: str, args: argparse.Namespace) -> bool:
    lock = FileLock(str(image_log_dir() / f"{_file_name(entry.plan.tag)}.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:  # another `images` on this host builds the same tag: wait, then find it built
        console.print(f"{counter} waiting for another build of {entry.plan.tag} (lock {lock.lock_file})")
        lock.acquire()
    try:
        return _ensure_locked(console, client, entry, counter, args)
    finally:
        lock.release()


def _ensure_locked(console: Console, client: Any, entry: CatalogEntry, counter: str, args: argparse.Namespace) -> bool:
    plan = entry.plan
    users = ", ".join(f"{case}:{variant}" for case, variant in entry.users)
    present = find_image(client, plan.tag)
    if present is not None and not args.rebuild:
        console.print(f"{counter} {plan.tag} present ({present.id[7:19]}) [dim]{escape(users)}[/]")
        return True
    console.print(f"{counter} building {plan.tag} [dim]{escape(users)}[/]")
    log_path = image_log_dir() / f"{_file_name(plan.tag)}.build.log"
    try:
        result = build_image(client, plan, log_path=log_path, verbose=args.verbose,
                             say=lambda text: console.print(f"    [dim]{escape(text)}[/]"))
    except EnvBuildError as error:
        console.print(f"[red]error:[/] {escape(str(error))}")
        return False
    console.print(f"{counter} [green]built[/] {plan.tag} in {result.seconds:.0f}s, "
                  f"{result.size_bytes / 1e9:.2f} GB (log: {result.log_path})")
    return True


def _file_name(tag: str) -> str:
    return tag.replace("/", "_").replace(":", "-")


def _selected_cases(args: argparse.Namespace, console: Console) -> list[Case]:
    loaded = load_cases(case_roots(args))
    broken = [error.path.parent.name for error in loaded.errors]
    for error in loaded.errors:
        console.print(f"[red]error:[/] case file error (its images are skipped): {escape(str(error))}")
    if args.case and all(name in broken for name in args.case):
        raise CaseFileError(loaded.errors[0].path, "the selected case file is invalid (see above)",
                            fix="fix the case file, then run again")
    return select_cases(loaded.cases, Selection(cases=tuple(args.case)), broken)


def _settings(args: argparse.Namespace) -> ImageSettings:
    settings = ImageSettings.from_env()
    changes: dict[str, Any] = {}
    if args.base:
        changes.update(cpu_base=args.base, cuda_base=args.base)
    if args.pip_source:
        changes["pip_source"] = args.pip_source
    if args.layout:
        changes["layout"] = args.layout
    if args.builder:
        changes["builder"] = args.builder
    return ImageSettings(**{**settings.__dict__, **changes}) if changes else settings


def _print_list(console: Console, client: Any, entries: Sequence[CatalogEntry]) -> None:
    table = Table("image", "state", "size", "base", "requires", "used by", show_lines=False)
    for entry in entries:
        plan = entry.plan
        found = find_image(client, plan.tag)
        size = f"{client.images.get(plan.tag).attrs.get('Size', 0) / 1e9:.2f} GB" if found else ""
        table.add_row(plan.tag, "[green]built[/]" if found else "[yellow]missing[/]", size, escape(plan.base),
                      escape(" ".join(plan.requirements)),
                      escape(", ".join(f"{c}:{v}" for c, v in entry.users)))
    console.print(table)


def _print_hint(console: Console, base: str) -> None:
    """The run must compute the same tags: say so when ``--base`` named a base the environment does not."""
    if base not in (os.environ.get("REPRO_DOCKER_BASE"), os.environ.get("REPRO_DOCKER_CUDA_BASE")):
        console.print(f"[dim]these images were built FROM {escape(base)}; run the cases with "
                      f"REPRO_DOCKER_BASE={escape(base)} (REPRO_DOCKER_CUDA_BASE for cuda) so they are found[/]")
