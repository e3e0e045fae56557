"""Lanes: where a cell runs. Three, in a dict (no plugin system needed).

A lane says which ``--device`` the repro gets, whether the child turns on the CUDA simulation, and
whether it needs a real GPU. Whether the host has the lane is detected, never assumed; the cuda lane
is checked again per environment (a CPU build of torch sees no GPU even on a GPU host).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from harness._vocabulary import LANES
from harness.containment._gpu import gpu_status


@dataclass(frozen=True)
class Lane:
    name: str
    device: str
    sim: bool
    gpu: bool


LANE_TABLE: dict[str, Lane] = {
    "cpu": Lane("cpu", "cpu", sim=False, gpu=False),
    "cuda": Lane("cuda", "cuda", sim=False, gpu=True),
    "cuda-sim": Lane("cuda-sim", "cuda", sim=True, gpu=False),
}
assert tuple(LANE_TABLE) == LANES

_SIM_PACKAGE = Path(__file__).parents[1] / "sim" / "__init__.py"


def host_lane_status(lane: Lane) -> tuple[bool, str]:
    """Can this host run the lane at all? ``(False, reason)`` turns its cells into ``skipped``."""
    if lane.sim and not _SIM_PACKAGE.is_file():
        return False, "not implemented: the cuda-sim lane is not part of this harness version"
    if lane.gpu:
        return gpu_status()
    return True, ""
