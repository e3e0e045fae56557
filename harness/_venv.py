"""The ``venv`` backend: one uv-made virtual environment per distinct requirement set.

Environments live under the cache folder (``.repro-envs/`` by default, ``REPRO_MATRIX_ENVS`` to move
it), named by :meth:`EnvSpec.key`. An environment is built under a temporary name, gets its ``.complete``
marker, and only then is renamed into place; a folder without the marker (left by older versions) is
removed and rebuilt, never used. A file lock makes concurrent runs build each environment once, and
every build step runs under the process supervisor, so it dies with the harness.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import shutil
import sys
import threading
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness._backend import (
    CHILD_RUNNER,
    REPO_ROOT,
    CellRequest,
    ChildOutcome,
    EnvSpec,
    PreparedEnv,
    Progress,
    project_root,
)
from harness._exceptions import EnvBuildError
from harness._index import uv_index_environment
from harness._outcome import outcome_from_process
from harness._process import Confinement, HelperProcess, RunningProcess, run_helper

_MARKER = ".complete"
_BUILDING = ".building-"  # prefix of environments under construction (renamed into place when complete)
_OWNERS = ".module-owners.json"  # top-level module -> distributions, for the child's `imported` capture
_CELL_CACHES = ".cell-caches"  # <case id>/pycache and <case id>/torch_extensions: written by that case's cells only
_INSTALL_TIMEOUT_S = 3600
_FREEZE = ("import json, importlib.metadata as m; "
           "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))")
_CUDA_PROBE = (
    "import json, torch\n"
    "ok = torch.cuda.is_available()\n"
    "print(json.dumps({'available': ok, 'torch': torch.__version__, 'cuda_build': torch.version.cuda,\n"
    "  'devices': [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if ok else []}))\n"
)


def default_env_root() -> Path:
    configured = os.environ.get("REPRO_MATRIX_ENVS")
    return Path(configured) if configured else project_root() / ".repro-envs"


def find_uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    if not found:
        raise EnvBuildError("uv is not installed: run the suite through 'nox -s cases', "
                            "or 'python -m pip install uv'")
    return found


class VenvBackend:
    name = "venv"

    def __init__(self, root: Path | None = None, memory_limit_bytes: int | None = None) -> None:
        self.root = root or default_env_root()
        self.memory_limit_bytes = memory_limit_bytes
        self._running: set[RunningProcess | HelperProcess] = set()
        self._lock = threading.Lock()

    # -- environments -------------------------------------------------------------------------
    def is_ready(self, spec: EnvSpec) -> bool:
        return (self.root / f"venv-{spec.key()}" / _MARKER).is_file()

    def build_log(self, spec: EnvSpec) -> Path | None:
        return self.root / f"venv-{spec.key()}.build.log"

    def prepare(self, spec: EnvSpec, progress: Progress) -> PreparedEnv:
        env_id = f"venv-{spec.key()}"
        folder = self.root / env_id
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / f"{env_id}.lock")):
            if (folder / _MARKER).is_file():
                meta = json.loads((folder / _MARKER).read_text())
                if not (folder / _OWNERS).is_file():  # built before the map was stored
                    self._store_owners(folder, folder.with_suffix(".build.log"), dict(os.environ))
                return self._prepared(env_id, spec, folder, meta, reused=True)
            self._remove_unfinished(env_id, folder, progress)
            progress(f"{env_id}: creating ({spec.summary()})")
            started = time.perf_counter()
            # Built under a temporary name and renamed when complete: a build killed half-way (even with
            # the harness, SIGKILL) never leaves a folder under the final name, and a later build never
            # shares a folder with what is left of an earlier one.
            building = self.root / f"{_BUILDING}{env_id}-{os.getpid()}-{secrets.token_hex(3)}"
            try:
                meta = self._build(spec, building, folder.with_suffix(".build.log"))
                meta["build_s"] = round(time.perf_counter() - started, 2)
                (building / _MARKER).write_text(json.dumps(meta, indent=1))
                os.rename(building, folder)
            finally:
                shutil.rmtree(building, ignore_errors=True)
            self._store_owners(folder, folder.with_suffix(".build.log"), {**os.environ, **uv_index_environment()})
            progress(f"{env_id}: ready in {meta['build_s']:.1f}s")
            return self._prepared(env_id, spec, folder, meta, reused=False)

    def _remove_unfinished(self, env_id: str, folder: Path, progress: Progress) -> None:
        """Under the lock: what earlier builds of this environment left (they died, or we would not hold it)."""
        if folder.exists():  # a folder without its marker: built in place by an older harness, interrupted
            progress(f"{env_id}: removing a half-built environment")
            shutil.rmtree(folder)
        for stale in self.root.glob(f"{_BUILDING}{env_id}-*"):
            shutil.rmtree(stale, ignore_errors=True)

    def _prepared(self, env_id: str, spec: EnvSpec, folder: Path, meta: dict[str, Any],
                  *, reused: bool) -> PreparedEnv:
        return PreparedEnv(id=env_id, spec=spec, backend=self.name, python_path=str(folder / "bin" / "python"),
                           installed=meta["installed"], reused=reused,
                           build_s=0.0 if reused else meta["build_s"])

    def _build(self, spec: EnvSpec, folder: Path, log: Path) -> dict[str, Any]:
        log.write_text("")
        uv = find_uv()
        env = {**os.environ, **uv_index_environment()}
        # --relocatable: entry points and activation scripts keep working after the rename into place.
        self._step(log, [uv, "venv", "--quiet", "--relocatable", "--python", sys.executable, str(folder)], env)
        python = str(folder / "bin" / "python")
        # A local file or folder can change without its path changing: uv must build it afresh (its cache
        # key is the path and a few timestamps; the environment key already hashes the content).
        refresh = [a for name in spec.local_requirements() for a in ("--refresh-package", name)]
        self._step(log, [uv, "pip", "install", "--python", python, *refresh, *spec.requires], env)
        for patch in spec.patches:
            site = self._site_packages(python, log, env)
            self._step(log, ["patch", "--forward", "--batch", "-p1", "-d", site, "-i", str(patch.path)], env)
        # -I: without the harness's cwd on sys.path (a stray *.dist-info there would count as installed)
        installed = json.loads(self._step(log, [python, "-I", "-B", "-c", _FREEZE], env))
        return {"installed": dict(sorted(installed.items(), key=lambda kv: kv[0].lower())), **spec.describe()}

    def _store_owners(self, folder: Path, log: Path, env: dict[str, str]) -> None:
        """Store the child runner's module -> distribution map; without it each cell computes its own."""
        # -I: the sys.path a cell starts with (no cwd, no PYTHONPATH); the child checks what differs.
        # -B: no bytecode in site-packages (cells keep theirs under .pycache).
        argv = [str(folder / "bin" / "python"), "-I", "-B", str(CHILD_RUNNER), "--owners"]
        with contextlib.suppress(EnvBuildError, OSError, ValueError, IndexError):
            record = json.loads(self._step(log, argv, env).strip().splitlines()[-1])
            tmp = folder / f"{_OWNERS}.tmp{os.getpid()}"
            tmp.write_text(json.dumps(record))
            os.replace(tmp, folder / _OWNERS)

    def _site_packages(self, python: str, log: Path, env: dict[str, str]) -> str:
        return self._step(log, [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          env).strip()

    def _step(self, log: Path, argv: list[str], env: dict[str, str]) -> str:
        with log.open("a") as handle:
            handle.write(f"$ {' '.join(argv)}\n")
        helper = HelperProcess(argv, env=env, timeout=_INSTALL_TIMEOUT_S)
        with self._lock:
            self._running.add(helper)
        try:
            proc = helper.result()
        finally:
            with self._lock:
                self._running.discard(helper)
        with log.open("a") as handle:
            handle.write(proc.stdout + proc.stderr + (f"{proc.error}\n" if proc.error else ""))
        if proc.timed_out:
            raise EnvBuildError(f"'{argv[0]} {argv[1]}' did not finish in {_INSTALL_TIMEOUT_S}s", log)
        if proc.returncode != 0:
            tail = "\n".join((proc.error or proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise EnvBuildError(f"'{Path(argv[0]).name} {' '.join(argv[1:3])}' failed "
                                f"(exit {proc.returncode}):\n{tail}", log)
        return proc.stdout

    def cuda_status(self, env: PreparedEnv) -> tuple[bool, str]:
        folder = Path(env.python_path).parent.parent
        probe_env = {**os.environ, "PYTHONPYCACHEPREFIX": str(folder / ".pycache")}  # the probe's own bytecode cache
        proc = run_helper([env.python_path, "-c", _CUDA_PROBE], env=probe_env, timeout=120)
        if proc.returncode != 0:
            return False, f"torch could not be imported to look for CUDA: {proc.stderr.strip()[-300:]}"
        probe = json.loads(proc.stdout.strip().splitlines()[-1])
        if probe["available"]:
            return True, f"CUDA devices: {', '.join(probe['devices'])}"
        build = f"CUDA {probe['cuda_build']} build" if probe["cuda_build"] else "a CPU-only build"
        return False, f"torch {probe['torch']} ({build}) sees no CUDA device"

    # -- cells -----------------------------------------------------------------------------------
    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        request.cell_dir.mkdir(parents=True, exist_ok=True)
        spec_path = request.cell_dir / "child-spec.json"
        folder = Path(env.python_path).parent.parent
        spec_path.write_text(json.dumps({**request.child_spec(), "owners": str(folder / _OWNERS)}))
        # JIT-built torch extensions (e.g. DeepSpeed ops) are cached per environment: a shared cache is
        # rebuilt whenever a different library version compiles into it.
        # Bytecode too: uv installs without .pyc files, and recompiling torch/transformers on every cell
        # cost about half the suite's CPU (benchmarks/README.md). The cache stays inside the environment,
        # one per case: code a cell can write must never run in another case's cells (a planted .pyc or
        # extension would forge their verdicts, in this run and every later one).
        own = folder / _CELL_CACHES / request.case_dir.name
        caches = (own / "torch_extensions", own / "pycache")
        for cache in caches:
            cache.mkdir(parents=True, exist_ok=True)
        confinement = self._confinement(request, caches)
        child_env = {**_base_environment(), "TORCH_EXTENSIONS_DIR": str(caches[0]),
                     "PYTHONPYCACHEPREFIX": str(caches[1]), **request.env}
        # Nothing names the run's folder to the cell: not its cwd, argv or environment.
        child_env = {k: v for k, v in child_env.items() if not any(str(p) in v for p in confinement.hide)}
        process = RunningProcess([env.python_path, str(CHILD_RUNNER), str(spec_path)], env=child_env,
                                 cwd=request.cell_dir, log_path=request.log_path, timeout=request.timeout,
                                 memory_limit_bytes=self.memory_limit_bytes, confinement=confinement,
                                 log_fd=request.log_fd)
        with self._lock:
            self._running.add(process)
        try:
            result = process.wait()
        finally:
            with self._lock:
                self._running.discard(process)
        return outcome_from_process(result, request.cell_dir / "outcome.json", request.timeout)

    def _confinement(self, request: CellRequest, caches: tuple[Path, ...]) -> Confinement:
        """The repository, the case folders and the environments read-only (a repro must not change the
        harness, another case or a shared environment), the output hidden; only the caches stay writable."""
        environment = caches[0].parents[2]
        interpreters = (Path(sys.executable).resolve(), (environment / "bin" / "python").resolve())
        readonly = tuple(dict.fromkeys((REPO_ROOT, request.case_dir.parent, self.root.resolve(),
                                        *(python.parents[1] for python in interpreters))))
        needed = (request.cell_dir, request.case_dir, environment, CHILD_RUNNER, *interpreters)
        return Confinement(hide=request.private, readonly=readonly, writable=(*caches, request.cell_dir),
                           sealed=True).usable(needed)

    def cancel(self) -> None:
        with self._lock:
            running = list(self._running)
        for process in running:
            process.interrupt()


def _base_environment() -> dict[str, str]:
    """The parent's environment minus what would leak the harness's own interpreter into the child."""
    drop = {"PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONINSPECT"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.update({"PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1",
                "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONHASHSEED": "0"})
    return env
