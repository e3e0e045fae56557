"""Bisect a case over the released versions of one package.

``python -m harness bisect --case ID --package deepspeed --from 0.14.0 --to 0.14.5`` runs one variant
of the case (the buggy one by default) with each release of the package in the range, each in its own
environment, and reports where the outcome changes: the first release that shows the bug and the
first that no longer does. ``--mode binary`` finds the first change in a long range in log2(n) runs,
assuming one transition. The versions come from the package sources the harness hands uv (index, extra
indexes, find-links: ``harness._releases``) unless ``--versions`` lists them.
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness._backend import Backend
from harness._cases import Case, Variant
from harness._exceptions import SelectionError, UsageError
from harness._execute import Executor
from harness._lanes import Lane
from harness._plan import Cell
from harness._releases import describe_failure, index_environment, list_releases
from harness._results import CellRecord, new_run_dir, utc_now, write_json_atomic


@dataclass(frozen=True)
class BisectRequest:
    case: Case
    variant: Variant
    package: str
    versions: tuple[str, ...]
    lane: Lane
    binary: bool = False


def available_versions(package: str, say: Callable[[str], None] = lambda text: None) -> list[str]:
    """Releases of ``package`` installable on this Python, oldest first, from the package sources uv gets."""
    listing = list_releases(package, index_environment(), f"{sys.version_info.major}.{sys.version_info.minor}")
    if not listing.versions:
        raise UsageError(describe_failure(package, listing))
    for error in listing.errors:
        say(f"package source skipped: {error}")
    say(f"{len(listing.versions)} release(s) of {package} from {', '.join(listing.sources)}")
    return listing.versions


def select_range(versions: Sequence[str], low: str | None, high: str | None, *, pre: bool = False) -> list[str]:
    try:
        lo, hi = Version(low) if low else None, Version(high) if high else None
    except InvalidVersion as error:
        raise UsageError(f"--from/--to: {error}") from None
    parsed = [_version(v) for v in versions]
    chosen = [str(v) for v in parsed if (pre or not v.is_prerelease)
              and (lo is None or v >= lo) and (hi is None or v <= hi)]
    if not chosen:
        raise SelectionError(f"no release between {low or 'the first'} and {high or 'the last'}")
    return chosen


def _version(text: str) -> Version:
    try:
        return Version(text.strip())
    except InvalidVersion:
        shown = repr(text[:60]) + ("…" if len(text) > 60 else "")
        raise UsageError(f"--versions: {shown} is not a version; give releases as A,B,C (e.g. "
                         "--versions 0.14.0,0.14.1)") from None


def variant_with(variant: Variant, package: str, version: str) -> Variant:
    """The variant with ``package`` pinned to ``version`` (replacing its own pin of that package)."""
    name = canonicalize_name(package)
    requires = [r for r in variant.requires if canonicalize_name(Requirement(r).name) != name]
    return dataclasses.replace(variant, name=f"{package}=={version}",
                               requires=tuple(sorted([*requires, f"{package}=={version}"], key=str.lower)))


def outcome_of(record: CellRecord) -> str:
    if record.status in ("infra-error", "timeout", "oom", "interrupted"):
        return "infra-error"
    if record.signature_matched:
        return "reproduces"
    return "passes" if record.status == "passed" else "fails-differently"


def run_bisect(request: BisectRequest, backend: Backend, output: Path, *, jobs: int,
               say: Callable[[str], None]) -> dict[str, Any]:
    run_id, run_dir = new_run_dir(output)
    executor = Executor(backend, run_dir, jobs=jobs, gpus=1, progress=say)
    outcomes: dict[str, CellRecord] = {}

    def run(versions: Sequence[str]) -> None:
        cells = [Cell(request.case, variant_with(request.variant, request.package, v), request.lane)
                 for v in versions if v not in outcomes]
        for version, record in zip([v for v in versions if v not in outcomes], executor.run(cells, _quiet),
                                   strict=True):
            outcomes[version] = record
            say(f"{request.package}=={version}: {outcome_of(record)} ({record.reason})")

    if request.binary:
        _binary(request.versions, run, outcomes)
    else:
        run(request.versions)
    report = _report(request, run_id, outcomes, executor.environments)
    write_json_atomic(run_dir / "bisect.json", report)
    return {**report, "path": str(run_dir / "bisect.json")}


def _binary(versions: Sequence[str], run: Callable[[Sequence[str]], None], outcomes: dict[str, CellRecord]) -> None:
    """First version whose outcome differs from the oldest one's (one transition assumed)."""
    run([versions[0], versions[-1]])
    low, high = 0, len(versions) - 1
    first = outcome_of(outcomes[versions[0]])
    if outcome_of(outcomes[versions[-1]]) == first:
        return
    while high - low > 1:
        middle = (low + high) // 2
        run([versions[middle]])
        if outcome_of(outcomes[versions[middle]]) == first:
            low = middle
        else:
            high = middle


def _report(request: BisectRequest, run_id: str, outcomes: dict[str, CellRecord],
            environments: dict[str, Any]) -> dict[str, Any]:
    ordered = [v for v in request.versions if v in outcomes]
    rows = [{"version": v, "outcome": outcome_of(outcomes[v]), "reason": outcomes[v].reason,
             "cell": outcomes[v].serialize()} for v in ordered]
    transitions = [{"from": a["version"], "to": b["version"], "was": a["outcome"], "now": b["outcome"]}
                   for a, b in itertools.pairwise(rows) if a["outcome"] != b["outcome"]]
    return {
        "version": 1, "kind": "bisect", "id": run_id, "finished": utc_now(), "case": request.case.id,
        "variant": request.variant.name, "package": request.package, "lane": request.lane.name,
        "mode": "binary" if request.binary else "linear", "rows": rows, "transitions": transitions,
        "environments": environments,
    }


def _quiet(index: int, cell: Cell, record: CellRecord) -> None:
    """Bisect prints one line per version itself."""
