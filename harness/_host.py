"""Describe the host a run happened on (the report header and the history's environment diff)."""

from __future__ import annotations

import os
import platform
import shutil
import socket
import subprocess
from pathlib import Path
from typing import Any


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
    smi = shutil.which("nvidia-smi")
    if not smi:
        return [], None
    query = "--query-gpu=name,memory.total,driver_version"
    try:
        proc = subprocess.run([smi, query, "--format=csv,noheader,nounits"], capture_output=True, text=True,
                              timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return [], None
    gpus = []
    for line in proc.stdout.strip().splitlines():
        name, memory, driver = (part.strip() for part in line.split(",")[:3])
        gpus.append({"name": name, "memory_mb": int(float(memory)), "driver": driver})
    return gpus, gpus[0]["driver"] if gpus else None
