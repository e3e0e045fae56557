"""``cuda-sim SCRIPT [ARGS...]`` (or ``python -m cuda_sim``): run a script as ``__main__`` under cuda-sim.

The script sees ``sys.argv == [SCRIPT, *ARGS]`` and its own folder first on ``sys.path``, as
with ``python SCRIPT``; its exit status and any uncaught exception are its own. Exit status 2:
the script cannot be opened, or the simulation cannot start (no torch, an unusable release).
Python processes the script starts inherit ``CUDA_SIM_SUBPROCESS=1`` and join the simulation in
environments where cuda-sim is installed (cuda_sim/_startup.py).
"""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    prog = _prog()
    if not argv or argv[0] in ("-h", "--help"):
        print(f"usage: {prog} SCRIPT [ARGS...]\nRun SCRIPT as __main__ with CUDA simulated on the CPU "
              "(docs/cuda-sim.md).", file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    script = argv[0]
    if not os.path.exists(script):
        print(f"{prog}: can't open file {script!r}: no such file", file=sys.stderr)
        raise SystemExit(2)
    from cuda_sim import UnsupportedTorchError, _startup, install

    try:
        install()
    except UnsupportedTorchError as error:
        print(f"{prog}: {error}", file=sys.stderr)
        raise SystemExit(2) from None
    _startup.propagate()  # Python processes the script starts join the simulation (where installed)
    sys.argv = list(argv)
    # as with ``python SCRIPT``: the script's folder first; the entry ``-m`` (or the console script)
    # added stays reachable (at the end) for lazily imported cuda_sim modules
    moved = sys.path.pop(0) if sys.path else ""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    sys.path.append(moved)
    runpy.run_path(script, run_name="__main__")


def _prog() -> str:
    name = os.path.basename(sys.argv[0]) if sys.argv else ""
    return "python -m cuda_sim" if name in ("", "__main__.py", "-m", "-c") else name


if __name__ == "__main__":
    main()
