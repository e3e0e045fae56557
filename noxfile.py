"""repro-matrix sessions. Start with ``nox -s cases`` (the suite) and ``nox -s tests`` (its tests)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import nox
import nox.command

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from harness import uv_index_environment  # noqa: E402 - stdlib-only; needs the repo on sys.path
from harness._requirements import harness_dependencies  # noqa: E402 - stdlib-only, as harness is
from harness._vocabulary import TORCH_PIN, exit_meaning  # noqa: E402 - the same; docs/architecture.md lists the codes

PYPROJECT = nox.project.load_toml(ROOT / "pyproject.toml")
# cuda-sim (the simulator, its own distribution) is this checkout's cuda-sim/ folder, which the harness puts on
# its path (harness/__init__.py) and pytest on the tests' (pyproject's pythonpath); no index has it.
SIM = "cuda-sim"
DEPENDENCIES = list(harness_dependencies())
DOCKER = PYPROJECT["project"]["optional-dependencies"]["docker"]
TORCH = TORCH_PIN
# Every session installs with the lock as constraints, so a release upstream cannot change a run of the same
# commit; ``nox -s lock`` rewrites it (docs/dependencies.md).
LOCK = ROOT / "requirements" / "lock.txt"
# What sessions install beyond pyproject's dependencies, its docker extra and its test group.
# nox: .ci/run installs it with the lock too; the types-* stubs: mypy checks the harness with them (nox -s tests).
LOCKED_TOOLS = [TORCH, "numpy", "uv", "pip", "mypy", "types-PyYAML", "types-jsonschema", "nox"]

# Other torch releases the simulator's tests run under (``nox -s sim_torch``; docs/cuda-sim.md, "Supported torch
# versions"): PyPI's CUDA build, what a plain ``pip install torch`` gives a GPU-less CI runner. Installed without its
# dependency tree: the pure-Python packages torch imports, and of its CUDA libraries only those libtorch_cuda.so and
# libtorch_python.so link (the loader needs them to import torch; nothing calls them without a GPU). Left out:
# triton, cuda-bindings, cupti, cusolver (loaded only by CUDA linear algebra), nvtx: 4.3 GB instead of 5.5 GB.
SIM_TORCH = {
    "2.14.1": ("nvidia-cuda-runtime==13.0.96", "nvidia-cublas==13.1.1.3", "nvidia-cufft==12.0.0.61",
               "nvidia-cufile==1.15.1.6", "nvidia-curand==10.4.0.35", "nvidia-cusparse==12.6.3.3",
               "nvidia-nvjitlink==13.5.37", "nvidia-cuda-nvrtc==13.0.88", "nvidia-cudnn-cu13==9.24.0.43",
               "nvidia-cusparselt-cu13==0.8.1", "nvidia-nccl-cu13==2.30.7", "nvidia-nvshmem-cu13==3.4.5"),
    # an older release, measured by hand, not in CI (docs/cuda-sim.md: the simulation does not load under it);
    # PyPI's cu128 build, whose libtorch_cuda.so also links cupti: 5.9 GB
    "2.9.1": ("nvidia-cuda-runtime-cu12==12.8.90", "nvidia-cublas-cu12==12.8.4.1", "nvidia-cufft-cu12==11.3.3.83",
              "nvidia-cufile-cu12==1.13.1.3", "nvidia-curand-cu12==10.3.9.90", "nvidia-cusparse-cu12==12.5.8.93",
              "nvidia-nvjitlink-cu12==12.8.93", "nvidia-cuda-nvrtc-cu12==12.8.93", "nvidia-cudnn-cu12==9.10.2.21",
              "nvidia-cusparselt-cu12==0.7.1", "nvidia-nccl-cu12==2.27.5", "nvidia-nvshmem-cu12==3.3.20",
              "nvidia-cuda-cupti-cu12==12.8.90"),
}
TORCH_IMPORTS = ["filelock", "typing-extensions", "setuptools", "sympy", "networkx", "jinja2", "fsspec", "numpy"]
# torch 2.14 deprecates TorchScript with a FutureWarning; tests/sim exercises TorchScript on purpose
JIT_DEPRECATED = [arg for name in ("script", "trace", "trace_method")
                  for arg in ("-W", f"ignore:`torch.jit.{name}` is deprecated:FutureWarning")]

# uv ignores pip's configuration; this makes the pinned CPU torch resolve where pip would find it.
os.environ.update(uv_index_environment())
nox.options.default_venv_backend = "uv|virtualenv"
nox.options.sessions = ["cases"]


def _harness(session: nox.Session, *args: str) -> None:
    """Run the harness; its real exit code ends the session's output: ``repro-matrix exited N: meaning``."""
    try:
        session.run("python", "-m", "harness", *args, external=False)
    except nox.command.CommandFailed as failed:
        code = failed.return_code
        if code is None:
            raise
        session.error(f"repro-matrix exited {code}: {_meaning(args, code)}")
    session.log(f"repro-matrix exited 0: {_meaning(args, 0)}")


def _meaning(args: tuple[str, ...], code: int) -> str:
    return exit_meaning(args[0] if args else "", code)


def _install(session: nox.Session, *packages: str) -> None:
    session.install("--constraint", str(LOCK), *packages)


def _system_and_args(session: nox.Session) -> list[str]:
    """Install Chromium and start a Docker engine (``scripts/ensure-system.sh``) unless ``--no-system``."""
    if "--no-system" not in session.posargs:
        session.run("bash", str(ROOT / "scripts" / "ensure-system.sh"), external=True)
    return [a for a in session.posargs if a != "--no-system"]


@nox.session
def cases(session: nox.Session) -> None:
    """Run the cases: ``nox -s cases -- [--case ID] [--lane L] [--variant V] [--backend docker] [--list]``."""
    _install(session, *DEPENDENCIES, "uv", *DOCKER)
    _harness(session, "cases", *session.posargs)


@nox.session
def wheelhouse(session: nox.Session) -> None:
    """Wheels for an offline host with its own torch: ``nox -s wheelhouse -- --case ID --python-version 3.12
    --platform manylinux_2_28_x86_64 --output DIR [--split-mib 60]`` (docs/gpu.md)."""
    _install(session, *DEPENDENCIES, "uv", "pip", TORCH)
    _harness(session, "wheelhouse", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    """Run the test suite (unit, end-to-end, cuda-sim conformance, docker and browser tests)."""
    # mypy: tests/sim/test_typing.py holds cuda-sim to its strict settings
    # pip: the wheelhouse tests download with it (harness wheelhouse refuses to start without it)
    _install(session, *DEPENDENCIES, "uv", "pip", *DOCKER, *nox.project.dependency_groups(PYPROJECT, "test"), TORCH,
             "numpy", "mypy", "types-PyYAML", "types-jsonschema")
    args = _system_and_args(session)
    session.run("python", "-m", "harness", "validate")
    session.run("mypy")  # pyproject [tool.mypy]: strict, its exceptions written down there
    session.run("pytest", *_parallel(args), *args)


@nox.session(venv_backend="venv")  # pip: it installs from the host's configured indexes without a cache copy
@nox.parametrize("torch", list(SIM_TORCH))
def sim_torch(session: nox.Session, torch: str) -> None:
    """The simulator's tests (tests/sim, not the slow ones) under another torch release, PyPI's CUDA build.

    The venv (~4.3 GB) is removed when the session ends; ``-- --keep`` keeps it for a rerun with ``-R``."""
    keep = "--keep" in session.posargs
    args = [a for a in session.posargs if a != "--keep"]
    try:
        session.install("--no-deps", f"torch=={torch}", *SIM_TORCH[torch])
        _install(session, *TORCH_IMPORTS, *DEPENDENCIES, "pytest", "pytest-xdist", "hypothesis")
        session.run("python", "-c", "import torch; print('torch', torch.__version__, 'cuda available:',"
                    " torch.cuda.is_available())")
        session.run("pytest", "tests/sim", "-m", "not slow", *JIT_DEPRECATED, *_parallel(args), *args)
    finally:
        if not keep:
            shutil.rmtree(session.virtualenv.location, ignore_errors=True)


def _parallel(args: list[str]) -> list[str]:
    """One pytest-xdist worker per core, modules kept whole and the docker / fault tests on one worker each
    (tests/conftest.py groups them); the slowest tests are listed at the end. Pass -n or -p no:xdist to choose."""
    chosen = any(a in ("-n", "--numprocesses", "--dist", "no:xdist") or a.startswith(("-n", "--numprocesses="))
                 for a in args)
    return [] if chosen else ["-n", "auto", "--dist", "loadgroup", "--no-loadscope-reorder", "--durations", "25"]


@nox.session
def faults(session: nox.Session) -> None:
    """The fault catalogue: every way a cell, a case file or the host can go wrong (``faults handled: N/M``)."""
    # torch: collecting tests/sim imports it, even though no fault test runs there.
    _install(session, *DEPENDENCIES, "uv", *DOCKER, *nox.project.dependency_groups(PYPROJECT, "test"), TORCH, "numpy")
    session.run("pytest", "-m", "fault", "tests", *_system_and_args(session))


@nox.session
def validate(session: nox.Session) -> None:
    """Check every case file (schema and loader rules); a filled-in draft is also resolved, built and run (uv):
    ``nox -s validate`` (``-- --static``: the files only)."""
    _install(session, *DEPENDENCIES, "uv")
    _harness(session, "validate", *session.posargs)


@nox.session
def new(session: nox.Session) -> None:
    """Write a case skeleton from a pasted bug report: ``nox -s new -- ID [--from REPORT] [--force]``."""
    _install(session, *DEPENDENCIES)
    _harness(session, "new", *session.posargs)


@nox.session
def bisect(session: nox.Session) -> None:
    """Run a case over a package's releases: ``nox -s bisect -- --case ID --package NAME --from A --to B``."""
    _install(session, *DEPENDENCIES, "uv")
    _harness(session, "bisect", *session.posargs)


@nox.session
def report(session: nox.Session) -> None:
    """(Re)build the static site from stored runs: ``nox -s report -- [--input DIR]... [--output DIR]``."""
    _install(session, *DEPENDENCIES)
    _harness(session, "report", *session.posargs)


@nox.session
def shards(session: nox.Session) -> None:
    """How many ``--shard K/N`` shards fit a target time, from measured durations (docs/reports.md):
    ``nox -s shards -- --results DIR [--target-minutes 30] [--github-output FILE]``."""
    _install(session, *DEPENDENCIES)
    _harness(session, "shards", *session.posargs)


@nox.session
def images(session: nox.Session) -> None:
    """Build the case images for the docker backend: ``nox -s images -- [--case ID] [--lane cuda] [--list]``."""
    _install(session, *DEPENDENCIES, *DOCKER)
    _harness(session, "images", *session.posargs)


@nox.session
def clean(session: nox.Session) -> None:
    """Prune environments (and images) no case uses any more: ``nox -s clean -- [--dry-run]``."""
    _install(session, *DEPENDENCIES, *DOCKER)
    _harness(session, "clean", *session.posargs)


@nox.session
def lock(session: nox.Session) -> None:
    """Re-resolve requirements/lock.txt (pyproject.toml and LOCKED_TOOLS): ``nox -s lock -- [--upgrade-package P]``."""
    session.install("uv")
    tools = Path(session.create_tmp()).resolve() / "tools.in"
    # cuda-sim resolves from this checkout and stays out of the lock (it has no dependencies of its own)
    tools.write_text("".join(f"{tool}\n" for tool in [*LOCKED_TOOLS, f"{SIM} @ {(ROOT / SIM).as_uri()}"]))
    # --universal: markers for every platform and Python, so the one file serves any machine the tests run on.
    session.run("uv", "pip", "compile", "pyproject.toml", "--extra", "docker", "--group", "pyproject.toml:test",
                str(tools.relative_to(ROOT)), "--universal", "--python-version", "3.11", "--quiet",
                "--custom-compile-command", "python3 -m nox -s lock", "--no-emit-package", SIM,
                "--output-file", str(LOCK.relative_to(ROOT)),
                *(session.posargs or ["--upgrade"]))


@nox.session
def lint(session: nox.Session) -> None:
    """ruff over the harness, tests and cases."""
    _install(session, "ruff")
    session.run("ruff", "check", ".")


@nox.session
def conformance(session: nox.Session) -> None:
    """cuda-sim on real libraries' own test suites: ``nox -s conformance -- [--library NAME] [--subset] [--list]``."""
    # pip: it downloads the pinned sdists (with pip's own index configuration); uv builds each library's venv.
    _install(session, *DEPENDENCIES, "uv", "pip")
    session.run("python", "-m", "harness.conformance", *session.posargs)
