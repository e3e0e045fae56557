"""The one GPU probe: ``nvidia-smi`` run once per query and remembered for the life of the harness process."""

from __future__ import annotations

import os
import shutil
from functools import cache
from pathlib import Path

from harness.containment._process import HelperResult, run_helper

_TIMEOUT_S = 30


@cache
def nvidia_smi(*args: str) -> HelperResult | None:
    """``nvidia-smi ARGS`` under the process supervisor; None when the host has no nvidia-smi."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    return run_helper([smi, *args], env=dict(os.environ), timeout=_TIMEOUT_S)


def device_nodes() -> list[Path]:
    return sorted(Path("/dev").glob("nvidia[0-9]*"))


def gpu_status() -> tuple[bool, str]:
    """``(True, what)`` when this host has an NVIDIA GPU; ``(False, why not)`` otherwise."""
    devices = device_nodes()
    listing = nvidia_smi("-L")
    if listing is None:
        if not devices:
            return False, "no NVIDIA GPU on this host (no /dev/nvidia* device, no nvidia-smi)"
        return True, f"{len(devices)} NVIDIA device node(s)"
    if listing.error or listing.timed_out:
        return False, f"nvidia-smi failed: {listing.error or f'no answer within {_TIMEOUT_S}s'}"
    if listing.returncode != 0 or "GPU" not in listing.stdout:
        return False, f"nvidia-smi lists no GPU: {(listing.stderr or listing.stdout).strip()[:200]}"
    return True, listing.stdout.strip()


def gpu_count() -> int:
    listing = nvidia_smi("-L")
    if listing is None:
        return len(device_nodes())
    return sum(1 for line in listing.stdout.splitlines() if line.startswith("GPU"))


def gpu_table() -> list[dict[str, object]]:
    """Name, memory (MB) and driver of each GPU, as nvidia-smi lists them; empty without one."""
    query = nvidia_smi("--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits")
    if query is None or query.returncode != 0:
        return []
    gpus: list[dict[str, object]] = []
    for line in query.stdout.strip().splitlines():
        name, memory, driver = (part.strip() for part in line.split(",")[:3])
        gpus.append({"name": name, "memory_mb": int(float(memory)), "driver": driver})
    return gpus
