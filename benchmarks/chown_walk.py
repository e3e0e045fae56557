"""What re-chowning a private-uid build step's writable folders costs when they hold a torch install (issue 19).

    python3 benchmarks/chown_walk.py [--reps 5] [--torch DIR]

As root, every sealed build step that runs as a private uid first gives it its writable folders
(containment/_supervise.py ``_chown_tree``: one chown per entry). A source build whose build requirements
include torch finds torch unpacked in the build's own uv cache after its resolution step, and each later
private step that gets that cache walks it again. The benchmark builds a tree of torch's shape (its folders
and file names, files empty: chown does not read them) from ``--torch`` (default: the torch this
interpreter imports) and times, side by side in one run:

* the walk alone (``_chown_tree``, a new uid each time, as each step has);
* one real sealed step, ``uv venv`` of a venv of the build's own (the step that accompanies the walk in a
  source build), as the harness runs it (``BuildSandbox.seal``), with the build's own cache writable, once
  empty and once holding the torch tree, and as a source build runs it now (no cache given: uv makes a
  throwaway one), interleaved. Everything but the tree is removed from that cache before each (a build's
  resolution step describes the environment's interpreter, not the one ``uv venv`` asks for).

Root and bubblewrap only (elsewhere no step runs as a private uid). Prints the medians and ratios.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
TORCH = "archive-torch"  # the tree's name in the build's own cache
sys.path[:0] = [str(REPO), str(REPO / "cuda-sim")]

from harness.containment import _seal  # noqa: E402
from harness.containment._process import run_helper  # noqa: E402
from harness.containment._sandbox import BuildSandbox  # noqa: E402
from harness.containment._supervise import _chown_tree  # noqa: E402
from harness.environments._venv_build import find_uv, own_venv_environment  # noqa: E402


def torch_folder() -> Path:
    spec = importlib.util.find_spec("torch")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("no torch here: give --torch DIR (an installed torch package folder)")
    return Path(next(iter(spec.submodule_search_locations)))


def shaped_like(source: Path, target: Path) -> int:
    """Folders and empty files named as under ``source``; returns the number of entries."""
    count = 0
    for root, dirs, files in os.walk(source):
        here = target / Path(root).relative_to(source)
        here.mkdir(parents=True, exist_ok=True)
        for name in files:
            os.close(os.open(here / name, os.O_WRONLY | os.O_CREAT, 0o644))
        count += len(dirs) + len(files)
    return count


def venv_step(uv: str, sandbox: BuildSandbox, env: dict[str, str], *, cache: bool) -> float:
    """One sealed ``uv venv`` as a private uid; ``cache``: with the build's own cache writable (as before)."""
    aside = sandbox.scratch / "built"
    shutil.rmtree(aside, ignore_errors=True)
    aside.mkdir()
    for entry in sandbox.own_cache.iterdir():  # as each build has it: no interpreter described yet
        if entry.name == TORCH:
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    writable = (aside, sandbox.own_cache) if cache else (aside,)
    step_env = env if cache else own_venv_environment(env)
    started = time.perf_counter()
    proc = run_helper([uv, "venv", "--quiet", "--relocatable", "--python", sys.executable, str(aside)],
                      env=step_env, timeout=120, confinement=sandbox.seal(*writable))
    seconds = time.perf_counter() - started
    if proc.returncode != 0 or proc.containment != "bwrap":
        raise SystemExit(f"the sealed step failed ({proc.containment}): {proc.stderr or proc.error}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--torch", type=Path, help="an installed torch folder to copy the shape of")
    args = parser.parse_args()
    if os.geteuid() != 0 or _seal.bwrap()[0] is None:
        raise SystemExit("needs root and bubblewrap: only there does a build step run as a private uid")
    uv = find_uv()
    times: dict[str, list[float]] = {}
    with BuildSandbox(env_root=REPO, private=(), env=os.environ) as sandbox:
        env = {**os.environ, "UV_CACHE_DIR": str(sandbox.own_cache), "UV_LINK_MODE": "copy"}
        tree = sandbox.scratch / "torch-shaped"
        entries = shaped_like(args.torch or torch_folder(), tree)
        for rep in range(args.reps):
            started = time.perf_counter()
            _chown_tree(str(tree), _seal.UID_BASE + 1 + rep % 2)
            times.setdefault("walk alone", []).append(time.perf_counter() - started)
            times.setdefault("uv venv, own cache empty", []).append(venv_step(uv, sandbox, env, cache=True))
            os.rename(tree, sandbox.own_cache / TORCH)
            times.setdefault("uv venv, own cache holds torch", []).append(venv_step(uv, sandbox, env, cache=True))
            times.setdefault("uv venv, no cache given (now)", []).append(venv_step(uv, sandbox, env, cache=False))
            os.rename(sandbox.own_cache / TORCH, tree)
    medians = {name: statistics.median(values) for name, values in times.items()}
    print(f"torch-shaped tree: {entries} entries; medians of {args.reps} (load {os.getloadavg()[0]:.1f} at the end):")
    for name, seconds in medians.items():
        print(f"  {name:32} {seconds * 1000:7.0f} ms")
    empty = medians["uv venv, own cache empty"]
    print(f"  the step with torch in its cache / empty: {medians['uv venv, own cache holds torch'] / empty:.2f}x; "
          f"without the cache / with torch in it: "
          f"{medians['uv venv, no cache given (now)'] / medians['uv venv, own cache holds torch']:.2f}x")


if __name__ == "__main__":
    main()
