"""The ``venv`` backend: cells run in uv-made virtual environments, one per distinct requirement set.

The environments are built and reused by :class:`EnvBuilder` (harness/environments/_venv_build.py), which
this backend composes; here, each cell runs sealed in one (harness/containment), its JIT-built torch
extensions kept for the case's next cell in this run only, and a cell the machinery failed is told apart
from a verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

from harness._exceptions import EnvBuildError
from harness.containment._process import Confinement, HelperProcess, RunningProcess, run_helper
from harness.containment._sandbox import BuildSandbox
from harness.containment._seal import cell_environment as seal_environment
from harness.containment._seal import cell_pids
from harness.environments._hosttorch import HostTorch
from harness.environments._spec import EnvSpec
from harness.environments._venv_build import _MARKER, _OWNERS, EnvBuilder, _host_uses, default_env_root
from harness.run._backend import (
    CHILD_RUNNER,
    SIM_PACKAGE,
    CellRequest,
    ChildOutcome,
    PreparedEnv,
    Progress,
)
from harness.run._outcome import outcome_from_process

_MODULE_PROBE = (Path(__file__).parent / "_module_probe.py").read_text(encoding="utf-8")
_EXTENSIONS = ".torch-extensions"  # in the run's scratch folder: see _CaseExtensions
_MIN_FREE_BYTES = 1 << 20
_CUDA_PROBE = (
    "import json, torch\n"
    "ok = torch.cuda.is_available()\n"
    "print(json.dumps({'available': ok, 'torch': torch.__version__, 'cuda_build': torch.version.cuda,\n"
    "  'devices': [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if ok else []}))\n"
)


class VenvBackend:
    name = "venv"

    def __init__(self, root: Path | None = None, memory_limit_bytes: int | None = None,
                 find_links: Path | None = None, offline: bool = False) -> None:
        self.root = root or default_env_root()
        self.memory_limit_bytes = memory_limit_bytes
        self._running: set[RunningProcess | HelperProcess] = set()
        self._lock = threading.Lock()
        self.builder = EnvBuilder(self.root, self.name, find_links, offline, self._tracked)

    # -- environments (harness/environments/_venv_build.py) ------------------------------------
    def is_ready(self, spec: EnvSpec) -> bool:
        return self.builder.is_ready(spec)

    def build_log(self, spec: EnvSpec) -> Path | None:
        return self.builder.build_log(spec)

    def prepare(self, spec: EnvSpec, progress: Progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        return self.builder.prepare(spec, progress, private=private)

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        folder = Path(env.python_path).parent.parent
        cache = folder / ".pycache"  # the probe's own bytecode cache: no cell reads it
        cache.mkdir(exist_ok=True)
        probe_env = {**os.environ, "PYTHONPYCACHEPREFIX": str(cache)}
        uses = _host_uses(env.spec.host)
        with BuildSandbox(env_root=self.root, private=private, env=probe_env, uses=uses) as sandbox:
            proc = run_helper([env.python_path, "-c", _CUDA_PROBE], env=probe_env, timeout=120,
                              confinement=sandbox.seal(cache, gpu=True))  # bwrap: the NVIDIA devices, as a GPU cell
        if proc.returncode != 0:
            return False, f"torch could not be imported to look for CUDA: {proc.stderr.strip()[-300:]}"
        probe = json.loads(proc.stdout.strip().splitlines()[-1])
        if probe["available"]:
            return True, f"CUDA devices: {', '.join(probe['devices'])}"
        build = f"CUDA {probe['cuda_build']} build" if probe["cuda_build"] else "a CPU-only build"
        return False, f"torch {probe['torch']} ({build}) sees no CUDA device"

    def missing_modules(self, env: PreparedEnv, modules: Sequence[str], paths: Sequence[Path] = (), *,
                        private: Sequence[Path] = ()) -> list[tuple[str, str]]:
        """(module, the part not found) for each of ``modules`` the environment does not install, looked up by its
        interpreter with ``paths`` (the case folder) first, sealed, running none of its packages
        (harness/environments/_module_probe.py)."""
        argv = [env.python_path, "-I", "-B", "-c", _MODULE_PROBE, json.dumps([str(p) for p in paths]), *modules]
        uses = (*_host_uses(env.spec.host), *paths)
        with BuildSandbox(env_root=self.root, private=private, env=dict(os.environ), uses=uses) as sandbox:
            proc = run_helper(argv, env=dict(os.environ), timeout=120, confinement=sandbox.seal())
        if proc.returncode != 0 or proc.timed_out:
            raise EnvBuildError(f"looking up the repro's imports in {env.id} failed (exit {proc.returncode}): "
                                f"{(proc.error or proc.stderr).strip()[-300:]}")
        return [(module, part) for module, part in json.loads(proc.stdout.strip().splitlines()[-1])]

    # -- cells -----------------------------------------------------------------------------------
    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        request.cell_dir.mkdir(parents=True, exist_ok=True)
        spec_path = request.cell_dir / "child-spec.json"
        folder = Path(env.python_path).parent.parent
        # Cells write no cache another case or a later run reads: the environment's bytecode is compiled by
        # the harness (see prepare) and read-only to cells; JIT-built torch extensions are built in the cell's
        # own folder and carried to the next cell of the same case and environment in this run only
        # (_CaseExtensions). A planted .pyc or extension would otherwise forge other verdicts, now and later.
        confinement = self._confinement(request, folder, env.spec.host)
        extensions = _CaseExtensions(request.cell_dir.parent / _EXTENSIONS / f"{env.id}-{request.case_dir.name}",
                                     request.cell_dir / "torch_extensions")
        extensions.lend()
        # Sealed by bwrap, the cell is its own user namespace: a process bound there counts the cell only.
        spec_path.write_text(json.dumps({**request.child_spec(), "owners": str(folder / _OWNERS),
                                         "pids": cell_pids() if confinement.by_bwrap else None}))
        child_env = {**_base_environment(), **request.env}
        # Nothing names the run's folder to the cell: not its cwd, argv or environment (its own folder, in the
        # hidden scratch folder, it knows anyway).
        child_env = {k: v for k, v in child_env.items() if not any(str(p) in v for p in confinement.hide)}
        child_env.setdefault("TORCH_EXTENSIONS_DIR", str(extensions.own))
        process = RunningProcess([env.python_path, str(CHILD_RUNNER), str(spec_path)], env=child_env,
                                 cwd=request.cell_dir, log_path=request.log_path, timeout=request.timeout,
                                 memory_limit_bytes=self.memory_limit_bytes, confinement=confinement,
                                 log_fd=request.log_fd)
        try:
            with self._tracked(process):
                result = process.wait()
        finally:
            extensions.keep()
        outcome = outcome_from_process(result, request.cell_dir / "outcome.json", request.timeout)
        return machinery_check(outcome, folder / _MARKER, request.cell_dir)

    def _confinement(self, request: CellRequest, environment: Path, host: HostTorch | None = None) -> Confinement:
        """What a cell reads (the child runner's folder, the simulator, the case folders, its environment and
        interpreters), all read-only, the output hidden; only its own folder is writable. A host torch is
        read-only too: a cell must not change what every later host-torch cell imports."""
        interpreters = (Path(sys.executable).resolve(), (environment / "bin" / "python").resolve())
        hosted = _host_uses(host)
        readonly = tuple(dict.fromkeys((CHILD_RUNNER.parent, SIM_PACKAGE, request.case_dir.parent, environment,
                                        *(python.parents[1] for python in interpreters), *hosted)))
        needed = (request.cell_dir, request.case_dir, environment, CHILD_RUNNER, SIM_PACKAGE, *interpreters,
                  *hosted)
        return Confinement(hide=request.private, readonly=readonly, writable=(request.cell_dir,),
                           sealed=True, gpu=request.gpu).usable(needed)

    @contextlib.contextmanager
    def _tracked(self, process: RunningProcess | HelperProcess) -> Iterator[None]:
        """``process`` is one :meth:`cancel` stops while the block runs."""
        with self._lock:
            self._running.add(process)
        try:
            yield
        finally:
            with self._lock:
                self._running.discard(process)

    def cancel(self) -> None:
        with self._lock:
            running = list(self._running)
        for process in running:
            process.interrupt()


def _base_environment() -> dict[str, str]:
    """A cell's environment before the case's own: the allow-list of the harness's (containment/_seal.py:
    never a token or a key) and the harness's settings. HOME and TMPDIR are the cell's own where it is sealed."""
    env = seal_environment(os.environ)
    env.update({"PYTHONUNBUFFERED": "1", "HF_HUB_OFFLINE": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "PYTHONHASHSEED": "0",
                "HOME": str(Path.home()), "TMPDIR": tempfile.gettempdir()})
    return env


_EXTENSION_LOCKS: dict[Path, threading.Lock] = {}
_EXTENSION_GUARD = threading.Lock()


class _CaseExtensions:
    """JIT-built torch extensions of one case in one environment, for this run only: copied into a cell's
    folder before it runs and back after it, so the case's next cell need not build them again. They live
    in the run's scratch folder (removed with it): no other case and no later run ever loads them."""

    def __init__(self, shared: Path, own: Path) -> None:
        self.shared, self.own = shared, own
        with _EXTENSION_GUARD:
            self.lock = _EXTENSION_LOCKS.setdefault(shared, threading.Lock())

    def lend(self) -> None:
        with self.lock, contextlib.suppress(OSError):
            if self.shared.is_dir():
                shutil.copytree(self.shared, self.own, symlinks=True)
        self.own.mkdir(exist_ok=True)

    def keep(self) -> None:
        """What the cell built, for the case's next cell (symlinks copied as links, never followed)."""
        with self.lock, contextlib.suppress(OSError):
            if not self.own.is_dir() or self.own.is_symlink() or not any(self.own.iterdir()):
                return
            fresh = self.shared.with_name(f"{self.shared.name}.tmp{os.getpid()}")
            shutil.rmtree(fresh, ignore_errors=True)
            shutil.copytree(self.own, fresh, symlinks=True)
            shutil.rmtree(self.shared, ignore_errors=True)
            os.rename(fresh, self.shared)


def machinery_check(outcome: ChildOutcome, marker: Path, cell_dir: Path) -> ChildOutcome:
    """A cell that left no result because the harness's machinery failed under it (its environment removed
    while it ran, the scratch filesystem full) is an infra-error, never a verdict against the case."""
    if outcome.status in ("passed", "infra-error", "interrupted"):
        return outcome
    if not cell_dir.is_dir():  # the repro's own doing (not a fault of the machinery), said as such
        outcome.reason = (f"the repro deleted its own working folder, so the runner could not record its result "
                          f"({outcome.reason})")
        return outcome
    why = ""
    if not marker.is_file():
        why = f"its environment {marker.parent} was removed while the cell ran"
    else:
        with contextlib.suppress(OSError):
            space = os.statvfs(cell_dir)
            if space.f_bavail * space.f_frsize < _MIN_FREE_BYTES or space.f_favail == 0:
                why = f"the scratch filesystem of {cell_dir.parent} is full"
    if why:
        outcome.status = "infra-error"
        outcome.reason = f"{why}: the cell could not record its result ({outcome.reason})"
    return outcome
