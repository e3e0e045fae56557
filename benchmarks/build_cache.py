"""What keeping case code away from uv's shared cache costs an environment build (issue 19).

    python3 benchmarks/build_cache.py [--rounds 3] [--before DIR]

Two requirement sets, each built cold (an empty uv cache) then warm (the same cache, a fresh environments
folder) in a fresh interpreter per build: ``wheels`` (three small wheels) and ``sdist`` (the same plus
``schedulefree==1.2.5``, an sdist: built from source). ``--before DIR``: a checkout of the harness before
the change (``git worktree add DIR main``), built interleaved with this one. Prints each build's seconds
(VenvBackend's ``build_s``: uv venv, the install steps, the freeze) and the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SETS = {"wheels": ["six==1.16.0", "toml==0.10.2", "einops==0.8.2"],
        "sdist": ["six==1.16.0", "toml==0.10.2", "einops==0.8.2", "schedulefree==1.2.5"]}
BUILD = """
import json, sys
from pathlib import Path
from harness.environments._spec import EnvSpec
from harness.environments._venv import VenvBackend
env = VenvBackend(root=Path(sys.argv[1])).prepare(EnvSpec(requires=tuple(sys.argv[2:])), lambda message: None)
print(json.dumps({"build_s": env.build_s}))
"""


def build(tree: Path, scratch: Path, cache: Path, requires: list[str]) -> float:
    envs = Path(tempfile.mkdtemp(dir=scratch))
    env = {**os.environ, "UV_CACHE_DIR": str(cache), "PYTHONPATH": f"{tree}{os.pathsep}{tree / 'cuda-sim'}",
           "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run([sys.executable, "-B", "-c", BUILD, str(envs), *requires], cwd=tree, env=env,
                          capture_output=True, text=True, check=True)
    shutil.rmtree(envs)
    return float(json.loads(proc.stdout.strip().splitlines()[-1])["build_s"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", type=Path, help="a checkout of the harness before the change")
    args = parser.parse_args()
    trees = {"before": args.before, "after": REPO} if args.before else {"after": REPO}
    times: dict[tuple[str, str, str], list[float]] = {}
    with tempfile.TemporaryDirectory(prefix="build-cache-bench-") as folder:
        scratch = Path(folder)
        for _ in range(args.rounds):
            for name, requires in SETS.items():
                for label, tree in trees.items():
                    cache = Path(tempfile.mkdtemp(dir=scratch))
                    for kind in ("cold", "warm"):
                        seconds = build(tree, scratch, cache, requires)
                        times.setdefault((label, name, kind), []).append(seconds)
                        print(f"{label} {name} {kind} {seconds:.2f} s", flush=True)
                    shutil.rmtree(cache)
    print(f"medians of {args.rounds} (load {os.getloadavg()[0]:.1f} at the end):")
    for (label, name, kind), values in sorted(times.items()):
        print(f"  {label:6} {name:6} {kind}: {statistics.median(values):.2f} s")


if __name__ == "__main__":
    main()
