"""The ``venv`` backend: one uv-made virtual environment per distinct requirement set.

Environments live under the cache folder (``.repro-envs/`` by default, ``REPRO_MATRIX_ENVS`` to move
it), named by :meth:`EnvSpec.key`. A finished environment carries a ``.complete`` marker written last;
a folder without it (an interrupted build) is removed and rebuilt, never used. A file lock makes
concurrent runs build each environment once.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from filelock import FileLock

from harness._backend import (
    CHILD_RUNNER,
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
from harness._process import RunningProcess

_MARKER = ".complete"
_OWNERS = ".module-owners.json"  # top-level module -> distributions, for the child's `imported` capture
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
        self._running: set[RunningProcess] = set()
        self._lock = threading.Lock()

    # -- environments -------------------------------------------------------------------------
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
            if folder.exists():
                progress(f"{env_id}: removing a half-built environment")
                shutil.rmtree(folder)
            progress(f"{env_id}: creating ({', '.join(spec.requires)})")
            started = time.perf_counter()
            try:
                meta = self._build(spec, folder)
            except EnvBuildError:
                raise
            meta["build_s"] = round(time.perf_counter() - started, 2)
            (folder / _MARKER).write_text(json.dumps(meta, indent=1))
            progress(f"{env_id}: ready in {meta['build_s']:.1f}s")
            return self._prepared(env_id, spec, folder, meta, reused=False)

    def _prepared(self, env_id: str, spec: EnvSpec, folder: Path, meta: dict[str, Any],
                  *, reused: bool) -> PreparedEnv:
        return PreparedEnv(id=env_id, spec=spec, backend=self.name, python_path=str(folder / "bin" / "python"),
                           installed=meta["installed"], reused=reused,
                           build_s=0.0 if reused else meta["build_s"])

    def _build(self, spec: EnvSpec, folder: Path) -> dict[str, Any]:
        log = folder.with_suffix(".build.log")
        log.write_text("")
        uv = find_uv()
        env = {**os.environ, **uv_index_environment()}
        self._step(log, [uv, "venv", "--quiet", "--python", sys.executable, str(folder)], env)
        python = str(folder / "bin" / "python")
        self._step(log, [uv, "pip", "install", "--python", python, *spec.requires], env)
        for patch in spec.patches:
            site = self._site_packages(python, log, env)
            self._step(log, ["patch", "--forward", "--batch", "-p1", "-d", site, "-i", str(patch.path)], env)
        # -I: without the harness's cwd on sys.path (a stray *.dist-info there would count as installed)
        installed = json.loads(self._step(log, [python, "-I", "-B", "-c", _FREEZE], env))
        self._store_owners(folder, log, env)
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

    @staticmethod
    def _step(log: Path, argv: list[str], env: dict[str, str]) -> str:
        with log.open("a") as handle:
            handle.write(f"$ {' '.join(argv)}\n")
        try:
            proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=_INSTALL_TIMEOUT_S,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise EnvBuildError(f"'{argv[0]} {argv[1]}' did not finish in {_INSTALL_TIMEOUT_S}s", log) from None
        with log.open("a") as handle:
            handle.write(proc.stdout + proc.stderr)
        if proc.returncode != 0:
            tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise EnvBuildError(f"'{Path(argv[0]).name} {' '.join(argv[1:3])}' failed "
                                f"(exit {proc.returncode}):\n{tail}", log)
        return proc.stdout

    def cuda_status(self, env: PreparedEnv) -> tuple[bool, str]:
        folder = Path(env.python_path).parent.parent
        probe_env = {**os.environ, "PYTHONPYCACHEPREFIX": str(folder / ".pycache")}  # the cells' bytecode cache
        proc = subprocess.run([env.python_path, "-c", _CUDA_PROBE], capture_output=True, text=True,
                              timeout=120, check=False, env=probe_env)
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
        # cost about half the suite's CPU (benchmarks/README.md). The cache stays inside the environment.
        child_env = {**_base_environment(), "TORCH_EXTENSIONS_DIR": str(folder / ".torch_extensions"),
                     "PYTHONPYCACHEPREFIX": str(folder / ".pycache"), **request.env}
        process = RunningProcess([env.python_path, str(CHILD_RUNNER), str(spec_path)], env=child_env,
                                 cwd=request.cell_dir, log_path=request.log_path,
                                 memory_limit_bytes=self.memory_limit_bytes)
        with self._lock:
            self._running.add(process)
        try:
            result = process.wait(request.timeout)
        finally:
            with self._lock:
                self._running.discard(process)
        return outcome_from_process(result, request.cell_dir / "outcome.json", request.timeout)

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
