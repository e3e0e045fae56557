"""What sealing a cell with bubblewrap costs, side by side with the previous mode (issue 19).

    python3 benchmarks/seal_overhead.py [--n 30] [--builds 5]

Runs the same trivial cell command (``python -I -S -c pass``) N times in each mode, interleaved so load on
a shared host hits both alike, with a cell's confinement (sealed, output hidden, a read-only folder, its own
writable folder): ``bwrap`` (harness/containment/_seal.py: all namespaces, a private uid as root, an allow-listed
filesystem, seccomp, cgroups as root) and ``previous`` (the hand-made namespace layer, ``REPRO_MATRIX_BWRAP=0``).
Prints the median wall time and the CPU per cell (this process and its children) and the ratio bwrap /
previous. A cell's own work (importing torch alone) is 1-3 s of CPU.

``--builds N`` then builds one small environment (``six==1.16.0``, uv's cache warm) N times in each of three
modes, interleaved: ``bwrap`` (every build step sealed by bubblewrap, the network kept), ``previous`` (the
namespace layer) and ``unsealed`` (``REPRO_MATRIX_NAMESPACES=0``: the subreaper only), and prints the ratios.
A benchmark, not a test: it prints figures and exits 0 whatever they are.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.containment import _seal
from harness.containment._process import Confinement, RunningProcess

COMMAND = [sys.executable, "-I", "-S", "-c", "pass"]
FOUND = _seal.bwrap()
MODES = {"previous": lambda: (None, "REPRO_MATRIX_BWRAP=0"), "bwrap": lambda: FOUND}


def _cpu() -> float:
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def _cell(folder: Path, mode: str, index: int) -> tuple[float, float, str]:
    _seal.bwrap = MODES[mode]  # type: ignore[assignment]  # (what REPRO_MATRIX_BWRAP=0 gives, without a re-probe)
    cwd = folder / f"cell-{mode}-{index}"
    cwd.mkdir()
    interpreter = (Path(sys.prefix), Path(sys.executable).resolve().parents[1])  # what a cell reads, as in _venv
    confinement = Confinement(hide=(folder / "output",), readonly=(folder / "repo", *interpreter), writable=(cwd,),
                              sealed=True, scratch=folder)
    wall, cpu = time.perf_counter(), _cpu()
    result = RunningProcess(COMMAND, env={"PATH": os.defpath}, cwd=cwd, log_path=folder / f"{mode}.log",
                            timeout=60, confinement=confinement).wait()
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    if result.returncode != 0:
        raise SystemExit(f"the {mode} cell failed: {result}; log: {(folder / f'{mode}.log').read_text()[-500:]}")
    return wall, cpu, result.containment


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--builds", type=int, default=0, help="also time N small environment builds per mode")
    args = parser.parse_args()
    n = args.n
    os.environ.setdefault("REPRO_MATRIX_NAMESPACES", "1")
    if FOUND[0] is None:
        raise SystemExit(f"no bwrap sandbox here: {FOUND[1]}")
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {n} cells each; uid {os.geteuid()}")
    figures: dict[str, list[tuple[float, float, str]]] = {mode: [] for mode in MODES}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        for name in ("output", "repo"):
            (folder / name).mkdir()
        os.chmod(folder, 0o755)
        for index in range(n + 1):
            for mode in MODES:
                sample = _cell(folder, mode, index)
                if index:  # the first of each warms caches
                    figures[mode].append(sample)
    medians = {}
    for mode, samples in figures.items():
        wall = statistics.median(s[0] for s in samples) * 1000
        cpu = statistics.median(s[1] for s in samples) * 1000
        medians[mode] = (wall, cpu)
        print(f"{mode:9} ({samples[0][2]}): median wall {wall:6.1f} ms, CPU {cpu:6.1f} ms per cell")
    (bw, bc), (pw, pc) = medians["bwrap"], medians["previous"]
    print(f"bwrap / previous: wall {bw / pw:.2f}x (+{bw - pw:.1f} ms), CPU {bc / pc:.2f}x (+{bc - pc:.1f} ms) per cell")
    if args.builds:
        builds(args.builds)


_OFF = (None, "REPRO_MATRIX_BWRAP=0")
BUILD_MODES = {"unsealed": ("0", _OFF), "previous": ("1", _OFF), "bwrap": ("1", FOUND)}


def _build(folder: Path, mode: str, index: int) -> tuple[float, float, str]:
    from harness.environments._spec import EnvSpec
    from harness.environments._venv import VenvBackend

    namespaces, found = BUILD_MODES[mode]
    os.environ["REPRO_MATRIX_NAMESPACES"] = namespaces
    _seal.bwrap = lambda: found  # type: ignore[assignment]
    root = folder / f"envs-{mode}-{index}"
    wall, cpu = time.perf_counter(), _cpu()
    VenvBackend(root=root).prepare(EnvSpec(requires=("six==1.16.0",)), lambda text: None, private=())
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    return wall, cpu, mode


def builds(n: int) -> None:
    """One small environment built N times per mode, interleaved; medians and ratios."""
    figures: dict[str, list[tuple[float, float, str]]] = {mode: [] for mode in BUILD_MODES}
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)
        for index in range(n + 1):
            for mode in BUILD_MODES:
                sample = _build(Path(tmp), mode, index)
                if index:  # the first of each warms uv's cache
                    figures[mode].append(sample)
    medians = {mode: (statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples))
               for mode, samples in figures.items()}
    for mode, (wall, cpu) in medians.items():
        print(f"build {mode:9}: median wall {wall:5.2f} s, CPU {cpu:5.2f} s per environment (six==1.16.0)")
    (uw, uc), (pw, pc), (bw, bc) = medians["unsealed"], medians["previous"], medians["bwrap"]
    print(f"build bwrap / unsealed: wall {bw / uw:.2f}x, CPU {bc / uc:.2f}x; "
          f"bwrap / previous: wall {bw / pw:.2f}x, CPU {bc / pc:.2f}x")


if __name__ == "__main__":
    main()
