"""Describe the host a run happened on (the report header and the history's environment diff)."""

from __future__ import annotations

import os
import platform
import socket
from pathlib import Path
from typing import Any

from harness.containment._gpu import gpu_table


def describe_host() -> dict[str, Any]:
    gpus, driver = _nvidia_gpus()
    return {
        "hostname": socket.gethostname(),
        "os": platform.platform(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "cpu": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "memory_gb": _memory_gb(),
        "gpus": gpus,
        "cuda_driver": driver,
    }


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except (OSError, ValueError):
        pass
    return None


def _nvidia_gpus() -> tuple[list[dict[str, Any]], str | None]:
    gpus = gpu_table()
    return gpus, str(gpus[0]["driver"]) if gpus else None
