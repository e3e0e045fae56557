"""What ``cuda_sim.pth`` (cuda_sim/_startup.py) costs every Python interpreter start, side by side.

    python3 benchmarks/sim_child_startup.py [--n 40]

Starts ``python -c <code>`` N times each way, where the code processes one site folder the way start-up
processes site-packages (``site.addsitedir``): a folder without the .pth, the same folder with the
repo's ``cuda_sim.pth``, and with it plus ``CUDA_SIM_SUBPROCESS=1`` (the child of a simulated process
that never imports torch: it pays for importing the cuda_sim package and the import hook only; the
simulation itself starts when torch is imported). Prints the medians and the ratios to the bare start.
It is a benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PTH = REPO / "cuda-sim" / "cuda_sim.pth"


def _median_ms(site_dir: Path, env: dict[str, str], n: int) -> float:
    code = f"import site; site.addsitedir({str(site_dir)!r})"
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40, help="interpreter starts per way (default 40)")
    n = parser.parse_args().n
    env = {k: v for k, v in os.environ.items() if k != "CUDA_SIM_SUBPROCESS"}
    env["PYTHONPATH"] = str(REPO / "cuda-sim")
    print(f"python {sys.version.split()[0]} ({sys.executable}), load average {os.getloadavg()[0]:.2f}, n={n}")
    with tempfile.TemporaryDirectory() as tmp:
        bare_dir, pth_dir = Path(tmp, "bare"), Path(tmp, "pth")
        bare_dir.mkdir()
        pth_dir.mkdir()
        shutil.copy(PTH, pth_dir / PTH.name)
        bare = _median_ms(bare_dir, env, n)
        with_pth = _median_ms(pth_dir, env, n)
        with_var = _median_ms(pth_dir, {**env, "CUDA_SIM_SUBPROCESS": "1"}, n)
    print(f"no .pth:                           {bare:7.1f} ms")
    print(f"cuda_sim.pth, variable unset:      {with_pth:7.1f} ms  ({with_pth / bare:.2f}x)")
    print(f"cuda_sim.pth, CUDA_SIM_SUBPROCESS=1: {with_var:5.1f} ms  ({with_var / bare:.2f}x; torch not imported)")


if __name__ == "__main__":
    main()
