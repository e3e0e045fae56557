"""Lanes: where a cell runs. Three, in a dict (no plugin system needed).

A lane says which ``--device`` the repro gets, whether the child turns on the CUDA simulation, and
whether it needs a real GPU. Whether the host has the lane is detected, never assumed; the cuda lane
is checked again per environment (a CPU build of torch sees no GPU even on a GPU host).
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harness._cases import LANES


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

_SIM_PACKAGE = Path(__file__).with_name("sim") / "__init__.py"


def host_lane_status(lane: Lane) -> tuple[bool, str]:
    """Can this host run the lane at all? ``(False, reason)`` turns its cells into ``skipped``."""
    if lane.sim and not _SIM_PACKAGE.is_file():
        return False, "not implemented: the cuda-sim lane is not part of this harness version"
    if lane.gpu:
        return nvidia_gpu_status()
    return True, ""


def nvidia_gpu_status() -> tuple[bool, str]:
    devices = sorted(Path("/dev").glob("nvidia[0-9]*"))
    smi = shutil.which("nvidia-smi")
    if not smi and not devices:
        return False, "no NVIDIA GPU on this host (no /dev/nvidia* device, no nvidia-smi)"
    if smi:
        try:
            proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            return False, f"nvidia-smi failed: {error}"
        if proc.returncode != 0 or "GPU" not in proc.stdout:
            return False, f"nvidia-smi lists no GPU: {(proc.stderr or proc.stdout).strip()[:200]}"
        return True, proc.stdout.strip()
    return True, f"{len(devices)} NVIDIA device node(s)"


def gpu_count() -> int:
    smi = shutil.which("nvidia-smi")
    if not smi:
        return len(sorted(Path("/dev").glob("nvidia[0-9]*")))
    try:
        proc = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return 0
    return sum(1 for line in proc.stdout.splitlines() if line.startswith("GPU"))
