"""What sealing environment builds costs, per environment build, cold and warm, measured side by side.

    python3 benchmarks/build_sandbox.py [--reps 3] [--no-local] [--no-overlay] [REQUIREMENT ...]

Every measurement builds one environment with the venv backend (``VenvBackend.prepare``: uv venv, uv pip
install, freeze, module-owner map) into a fresh environment root, in a fresh interpreter, with the run's
output folder passed as private (hidden from every step), the way a run builds it:

* ``unsealed``: ``REPRO_MATRIX_NAMESPACES=0``, the subreaper fallback (the steps as they ran before
  they were sealed; the local folder is copied either way);
* ``sealed``: namespaces, each step sealed (harness/containment/_sandbox.py);
* ``overlay``: sealed, with uv's cache an overlay: the warm cache as its read-only lower layer and a fresh
  upper layer per build, thrown away after it (what a per-run ``UV_CACHE_DIR`` overlay would cost: nothing
  a build writes reaches the cache). Needs root (``unshare -m``, ``mount -t overlay``); skipped otherwise.

``cold`` is an empty uv cache (a fresh ``UV_CACHE_DIR``: uv unpacks every wheel and builds every sdist);
``warm`` is the cache a cold build of the same mode just filled. The default requirements are the
suite's usual environment (``torch==2.13.0``) plus a local setuptools package folder (an in-tree sdist
build: the step that runs a case's code). Prints medians of wall time and CPU (this process's children)
per build, the sealed/unsealed ratios, and the disk an environment holds of its own (files not shared
with uv's cache through hardlinks). A benchmark, not a test: it prints figures and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

BUILD = textwrap.dedent("""
    import json, os, resource, sys, time
    from pathlib import Path
    from harness.environments._spec import EnvSpec
    from harness.environments._venv import VenvBackend
    root, out = Path(sys.argv[1]), Path(sys.argv[2])
    started = time.perf_counter()
    env = VenvBackend(root=root).prepare(EnvSpec(requires=tuple(sys.argv[3:])), lambda message: None, private=(out,))
    wall = time.perf_counter() - started
    usage = [resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)]
    folder = Path(env.python_path).parent.parent
    own = 0
    for base, _, files in os.walk(folder):
        for name in files:
            info = os.lstat(os.path.join(base, name))
            if info.st_nlink == 1:
                own += info.st_blocks * 512
    log = folder.with_suffix(".build.log").read_text()
    print(json.dumps({"wall": wall, "cpu": sum(u.ru_utime + u.ru_stime for u in usage), "own_mb": own / 2**20,
                      "copied": "Failed to hardlink" in log}))
""")
SETUP_PY = 'from setuptools import setup\nsetup(name="benchpkg", version="1.0", packages=["benchpkg"])\n'


def _build(work: Path, requires: list[str], *, namespaces: bool, cache: Path,
           overlay: Path | None = None) -> dict[str, float]:
    root, out = Path(tempfile.mkdtemp(dir=work, prefix="envs-")), work / "out"
    out.mkdir(exist_ok=True)
    env = {**os.environ, "REPRO_MATRIX_NAMESPACES": "1" if namespaces else "0", "UV_CACHE_DIR": str(cache)}
    env.pop("UV_NO_CACHE", None)
    argv = [sys.executable, "-c", BUILD, str(root), str(out), *requires]
    if overlay is not None:  # a private mount namespace: the overlay never shows on the host
        layers = {name: overlay / name for name in ("upper", "work", "merged")}
        for folder in layers.values():
            folder.mkdir(parents=True)
        options = f"lowerdir={cache},upperdir={layers['upper']},workdir={layers['work']}"
        env["UV_CACHE_DIR"] = str(layers["merged"])
        argv = ["unshare", "-m", "--propagation", "private", "sh", "-c",
                f'mount -t overlay overlay -o {options} {layers["merged"]} && exec "$@"', "sh", *argv]
    proc = subprocess.run(argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=3600)
    shutil.rmtree(root, ignore_errors=True)
    if overlay is not None:
        shutil.rmtree(overlay, ignore_errors=True)
    if proc.returncode != 0:
        raise SystemExit(f"a build failed (exit {proc.returncode}):\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _local_package(work: Path) -> str:
    package = work / "benchpkg"
    (package / "benchpkg").mkdir(parents=True)
    (package / "benchpkg" / "__init__.py").write_text("VALUE = 1\n")
    (package / "setup.py").write_text(SETUP_PY)
    return f"benchpkg @ {package.as_uri()}"


def _overlay_possible() -> str:
    if os.geteuid() != 0:
        return "needs root (unshare -m, mount -t overlay)"
    if not shutil.which("unshare"):
        return "unshare is not installed"
    return ""


def _row(name: str, runs: list[dict[str, float]], base: list[dict[str, float]] | None) -> str:
    wall, cpu = (statistics.median(r[key] for r in runs) for key in ("wall", "cpu"))
    ratio = ""
    if base:
        ratio = (f"{wall / statistics.median(r['wall'] for r in base):5.2f}x  "
                 f"{cpu / statistics.median(r['cpu'] for r in base):5.2f}x")
    copied = " (uv copied: no hardlinks)" if any(r["copied"] for r in runs) else ""
    own = statistics.median(r["own_mb"] for r in runs)
    return f"  {name:<16} wall {wall:6.1f} s   cpu {cpu:6.1f} s   own disk {own:6.0f} MB   {ratio}{copied}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("requires", nargs="*", default=["torch==2.13.0"])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--no-local", action="store_true", help="without the local setuptools package")
    parser.add_argument("--no-overlay", action="store_true")
    args = parser.parse_args()
    uv = subprocess.run([shutil.which("uv") or str(Path(sys.executable).with_name("uv")), "--version"],
                        capture_output=True, text=True).stdout.strip()
    print(f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"{uv}, Linux {platform.release()}")
    skip_overlay = "--no-overlay" if args.no_overlay else _overlay_possible()
    results: dict[str, list[dict[str, float]]] = {}
    with tempfile.TemporaryDirectory(prefix="build-sandbox-bench-") as tmp:
        work = Path(tmp)
        requires = [*args.requires, *([] if args.no_local else [_local_package(work)])]
        print(f"requirements: {', '.join(requires)}; {args.reps} rep(s), modes interleaved")
        for rep in range(args.reps):
            for mode, namespaces in (("unsealed", False), ("sealed", True)):
                cache = Path(tempfile.mkdtemp(dir=work, prefix=f"uv-cache-{mode}-"))
                for state in ("cold", "warm"):  # the cold build fills the cache the warm one uses
                    results.setdefault(f"{mode} {state}", []).append(
                        _build(work, requires, namespaces=namespaces, cache=cache))
                if namespaces and not skip_overlay:
                    overlay = Path(tempfile.mkdtemp(dir=work, prefix="overlay-"))
                    results.setdefault("overlay warm", []).append(
                        _build(work, requires, namespaces=True, cache=cache, overlay=overlay))
                shutil.rmtree(cache, ignore_errors=True)
            print(f"  rep {rep + 1}: load average {os.getloadavg()[0]:.1f}", flush=True)
    print("per environment build (median)                                    sealed/unsealed: wall  cpu")
    for name, runs in results.items():
        base = results.get(name.replace("sealed", "unsealed").replace("overlay", "unsealed")) \
            if not name.startswith("unsealed") else None
        print(_row(name, runs, base))
    if skip_overlay:
        print(f"  overlay          skipped: {skip_overlay}")


if __name__ == "__main__":
    main()
