"""Cases -> the images their variants need (one per distinct environment and flavour)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from harness.cases._load import Case
from harness.docker._plan import Flavour, ImagePlan, ImageSettings, plan_image
from harness.environments._spec import EnvSpec
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells


@dataclass(frozen=True)
class CatalogEntry:
    plan: ImagePlan
    users: tuple[tuple[str, str], ...]  # (case id, variant name)

    @property
    def case_ids(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(case for case, _ in self.users))


def flavour_for_lane(lane: str) -> Flavour:
    """cpu and cuda-sim run on the CPU image; only the real-GPU lane needs the CUDA one."""
    return "cuda" if LANE_TABLE[lane].gpu else "cpu"


def flavours_for_lanes(lanes: Iterable[str]) -> tuple[Flavour, ...]:
    return tuple(dict.fromkeys(flavour_for_lane(lane) for lane in lanes))


def catalog(cases: Sequence[Case], flavours: Sequence[Flavour], settings: ImageSettings) -> list[CatalogEntry]:
    """Every image the cases need, in case order; cases that share pins share an entry."""
    users: dict[str, list[tuple[str, str]]] = {}
    plans: dict[str, ImagePlan] = {}
    for cell in plan_cells(cases, [LANE_TABLE["cpu"]]):
        for flavour in flavours:
            plan = plan_image(cell.env_spec(), flavour, image_dir=cell.case.image, settings=settings)
            plans.setdefault(plan.tag, plan)
            users.setdefault(plan.tag, []).append((cell.case.id, cell.variant.name))
    return [CatalogEntry(plans[tag], tuple(users[tag])) for tag in plans]


def image_dir_and_cases(cases: Sequence[Case], spec: EnvSpec) -> tuple[str | None, tuple[str, ...]]:
    """The image folder of the first case whose variant needs ``spec``, and every such case id."""
    matching = [cell.case for cell in plan_cells(cases, [LANE_TABLE["cpu"]]) if cell.env_spec() == spec]
    ids = tuple(dict.fromkeys(case.id for case in matching))
    return (matching[0].image if matching else None), ids
