"""Select cases, lanes and variants, and expand them into cells (case x lane x variant)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness._exceptions import SelectionError
from harness._vocabulary import LANES
from harness.cases._load import Case, Variant
from harness.environments._hosttorch import HostTorch
from harness.environments._spec import EnvSpec
from harness.run._lanes import LANE_TABLE, Lane


@dataclass(frozen=True)
class Selection:
    cases: tuple[str, ...] = ()
    lanes: tuple[str, ...] = ()
    variants: tuple[str, ...] = ()
    shard: tuple[int, int] | None = None


@dataclass(frozen=True)
class Cell:
    case: Case
    variant: Variant
    lane: Lane

    @property
    def key(self) -> str:
        return f"{self.case.id}/{self.lane.name}/{self.variant.name}"

    def env_spec(self, host: HostTorch | None = None) -> EnvSpec:
        """The environment this cell needs; with ``host``, one made from that interpreter (its torch)."""
        if host is None:
            return EnvSpec(requires=self.variant.requires, patches=self.variant.patches)
        return EnvSpec(requires=self.variant.requires, patches=self.variant.patches, python=host.python, host=host)


def select_cases(cases: Sequence[Case], selection: Selection, broken: Sequence[str] = ()) -> list[Case]:
    """The cases to run: the named ones (retired ones too, when named), else every active case."""
    by_id = {case.id: case for case in cases}
    if not selection.cases:
        chosen = [case for case in cases if case.status == "active"]
    else:
        unknown = [name for name in selection.cases if name not in by_id and name not in broken]
        if unknown:
            raise SelectionError(_unknown("case", unknown, list(by_id)))
        chosen = [by_id[name] for name in dict.fromkeys(selection.cases) if name in by_id]
    if selection.variants:
        known = {v for case in chosen for v in case.variants}
        unknown = [name for name in selection.variants if name not in known]
        if unknown:
            raise SelectionError(_unknown("variant", unknown, sorted(known)))
    if selection.shard:
        chosen = shard_cases(chosen, *selection.shard)
    return chosen


def select_lanes(selection: Selection) -> list[Lane]:
    unknown = [name for name in selection.lanes if name not in LANE_TABLE]
    if unknown:
        raise SelectionError(_unknown("lane", unknown, list(LANES)))
    return [LANE_TABLE[name] for name in (dict.fromkeys(selection.lanes) or LANES)]


def plan_cells(cases: Sequence[Case], lanes: Sequence[Lane], variants: Sequence[str] = ()) -> list[Cell]:
    return [
        Cell(case, variant, lane)
        for case in cases
        for lane in lanes
        for variant in case.variants.values()
        if not variants or variant.name in variants
    ]


def shard_cases(cases: Sequence[Case], index: int, total: int) -> list[Case]:
    """Deterministic, balanced shard ``index`` of ``total`` (1-based): heaviest cases first onto the
    lightest shard, weight = number of variants, ties broken by case id."""
    loads = [0] * total
    owner: dict[str, int] = {}
    for case in sorted(cases, key=lambda c: (-len(c.variants), c.id)):
        target = min(range(total), key=lambda i: (loads[i], i))
        loads[target] += len(case.variants)
        owner[case.id] = target
    return [case for case in cases if owner[case.id] == index - 1]


def parse_shard(text: str) -> tuple[int, int]:
    try:
        index, total = (int(part) for part in text.split("/"))
    except ValueError:
        raise SelectionError(f"--shard {text!r}: expected K/N, e.g. 1/4") from None
    if not 1 <= index <= total:
        raise SelectionError(f"--shard {text!r}: K must be between 1 and N")
    return index, total


def case_roots(paths: Sequence[Path]) -> list[Path]:
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise SelectionError(f"cases folder not found: {', '.join(map(str, missing))}")
    return list(paths)


def _unknown(kind: str, names: Sequence[str], known: Sequence[str]) -> str:
    parts = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1)
        parts.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
    return f"unknown {kind} {', '.join(parts)}; known: {', '.join(known) or 'none'}"
