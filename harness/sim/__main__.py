"""``python -m harness.sim SCRIPT [ARGS...]``: run a script as ``__main__`` under cuda-sim.

The script sees ``sys.argv == [SCRIPT, *ARGS]`` and its own folder first on ``sys.path``, as
with ``python SCRIPT``; its exit status and any uncaught exception are its own.
"""

from __future__ import annotations

import os
import runpy
import sys


def main(argv: list[str]) -> None:
    if not argv or argv[0] in ("-h", "--help"):
        print("usage: python -m harness.sim SCRIPT [ARGS...]", file=sys.stderr if not argv else sys.stdout)
        raise SystemExit(2 if not argv else 0)
    script = argv[0]
    if not os.path.exists(script):
        print(f"python -m harness.sim: can't open file {script!r}: no such file", file=sys.stderr)
        raise SystemExit(2)
    from harness.sim import install

    install()
    sys.argv = list(argv)
    # as with ``python SCRIPT``: the script's folder first; the entry ``-m`` added stays reachable
    # (at the end) for lazily imported harness modules
    moved = sys.path.pop(0) if sys.path else ""
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    sys.path.append(moved)
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main(sys.argv[1:])
