"""What the process supervisor (harness/containment/_supervise.py) costs per process, measured side by side.

    python3 benchmarks/supervisor_overhead.py [--n 30]

Runs the same trivial command (``python -I -S -c pass``) N times each way: a bare ``subprocess.run``,
under the supervisor in subreaper mode (``REPRO_MATRIX_NAMESPACES=0``) and under the supervisor with
namespaces (pid + mount + user namespaces, output hidden, a folder read-only). Prints the median wall
time and the CPU per process (this process and its children), and the ratios to bare. A cell's own
work (importing torch alone) is 1-3 s of CPU, so the supervisor's extra is a few percent of a cell.
It is a benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.containment._process import Confinement, RunningProcess

COMMAND = [sys.executable, "-I", "-S", "-c", "pass"]


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _bare(_: Path) -> None:
    subprocess.run(COMMAND, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True, check=True)


def _supervised(namespaces: str) -> Callable[[Path], None]:
    def run(folder: Path) -> None:
        os.environ["REPRO_MATRIX_NAMESPACES"] = namespaces
        confinement = Confinement(hide=(folder / "output",), readonly=(folder / "repo",), writable=(folder / "cwd",))
        result = RunningProcess(COMMAND, env={"PATH": os.defpath}, cwd=folder / "cwd", log_path=folder / "cell.log",
                                timeout=60, confinement=confinement).wait()
        if result.returncode != 0:
            raise SystemExit(f"the supervised command failed: {result}")

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    n = parser.parse_args().n
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {n} processes each")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in ("output", "repo", "cwd"):
            (folder / name).mkdir()
        figures = {}
        for name, run in (("bare Popen", _bare), ("supervisor, subreaper", _supervised("0")),
                          ("supervisor, namespaces", _supervised("1"))):
            run(folder)  # warm up
            before = _cpu()
            walls = []
            for _ in range(n):
                started = time.perf_counter()
                run(folder)
                walls.append(time.perf_counter() - started)
            figures[name] = (statistics.median(walls) * 1000, (_cpu() - before) / n * 1000)
    bare_wall, bare_cpu = figures["bare Popen"]
    for name, (wall, cpu) in figures.items():
        print(f"{name:24s} wall median {wall:6.1f} ms ({wall / bare_wall:4.1f}x)   "
              f"CPU per process {cpu:5.1f} ms (+{cpu - bare_cpu:5.1f} ms)")


if __name__ == "__main__":
    main()
