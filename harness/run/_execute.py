"""Run planned cells: environments once each, cells in parallel, every failure kept as a record.

Nothing a repro or an environment does stops the matrix: an install failure becomes ``infra-error``
for the cells that needed it, a missing lane becomes ``skipped``, and Ctrl-C stops the running cells
and marks the rest ``interrupted`` so the finished ones are still written.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._exceptions import EnvBuildError, HarnessError
from harness._vocabulary import Verdict
from harness.environments._hosttorch import HostTorch, pinned_torch
from harness.environments._spec import EnvSpec
from harness.run._backend import Backend, CellRequest, ChildOutcome, PreparedEnv
from harness.run._judge import judge_record
from harness.run._lanes import host_lane_status
from harness.run._plan import Cell
from harness.run._results import CellRecord, RunFolder, utc_now

CellDone = Callable[[int, Cell, CellRecord], None]
Started = Callable[[str, Path | None], None]  # (what: a cell key or an environment build, the log it writes)


@dataclass(frozen=True)
class Hooks:
    """What the executor tells its caller as it goes (called from the cells' threads)."""

    progress: Callable[[str], None] = lambda text: None
    on_start: Started = lambda key, log: None  # a cell or an environment build started, writing that log
    on_finish: Callable[[str], None] = lambda key: None
    on_record: Callable[[CellRecord], None] = lambda record: None  # a cell is over: its record, at once


@dataclass
class _EnvSlot:
    """One environment's preparation, shared by every cell that needs it (built once per run)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    prepared: PreparedEnv | None = None
    error: EnvBuildError | None = None
    cuda: tuple[bool, str] | None = None


class Executor:
    """Runs cells; ``on_record`` sees each record the moment its cell is over (from the cell's thread).

    Cells never run inside the run folder: each gets a private scratch folder (its cwd, removed after),
    and the output folder is hidden from it where the host allows (``private``, see _launch.Confinement).
    """

    def __init__(self, backend: Backend, run_dir: Path, *, jobs: int, gpus: int, hooks: Hooks,
                 folder: RunFolder | None = None, host: HostTorch | None = None) -> None:
        self.backend = backend
        self.host = host  # ``--python``: every environment takes its torch family from this interpreter
        self.run_dir = run_dir
        self.folder = folder or RunFolder(run_dir)
        self.on_record = hooks.on_record
        _sweep_scratch()
        # Every cell's scratch folder lives in one folder per executor: hidden from each cell but for its own,
        # so cells running side by side cannot touch each other's outcome.
        self._scratch = Path(tempfile.mkdtemp(prefix=f"{_SCRATCH}{os.getpid()}-"))
        # The whole output folder: no cell may forge or read a run. Unless it holds the temporary folder or
        # the home folder (``--output /tmp``): cells need those, and then only the run's own folder is hidden.
        output = run_dir.parent
        common = [Path(tempfile.gettempdir()).resolve(), Path.home().resolve()]
        hidden = (output,) if not any(c == output or output in c.parents for c in common) else ()
        self.private = (*hidden, run_dir, self._scratch)
        self.jobs = max(1, jobs)
        self.progress = hooks.progress
        self.on_start = hooks.on_start
        self.on_finish = hooks.on_finish
        self.environments: dict[str, dict[str, Any]] = {}
        self._slots: dict[str, _EnvSlot] = {}  # by content key: variants with the same pins share one
        self._slots_lock = threading.Lock()
        self._gpu_slots = threading.BoundedSemaphore(max(1, gpus))
        self._stopping = threading.Event()
        self._lane_status: dict[str, tuple[bool, str]] = {}
        self._side_by_side = self.jobs
        self._to_build: dict[str, EnvSpec] = {}  # by key: what this run builds, in the order it needs them
        self._builds_started = 0
        self._env_keys: dict[str, str] = {}  # cell key -> its environment's key
        self._queue = _CellQueue((), self._needs_build)

    def _scratch_base(self) -> Path:
        self._scratch.mkdir(mode=0o700, exist_ok=True)
        return self._scratch

    def plan_environments(self, cells: Sequence[Cell]) -> tuple[list[Cell], list[EnvSpec]]:
        """The cells that will run (their lane is here, they are not ``unsupported``) and the environments
        of theirs the backend does not have yet: what the run has to build, in the order it needs them."""
        runnable = [c for c in cells if self._host_lane(c)[0] and c.variant.expect[c.lane.name].kind != "unsupported"
                    and self._host_skip(c) is None]
        # By content key, not by the spec's fields: the same pins listed in another order (or the same
        # patch files) are one environment, built once and counted once.
        specs: dict[str, EnvSpec] = {}
        for cell in runnable:
            spec = cell.env_spec(self.host)
            specs.setdefault(spec.key(), spec)
        self._to_build = {key: spec for key, spec in specs.items() if not self.backend.is_ready(spec)}
        return runnable, list(self._to_build.values())

    def run(self, cells: Sequence[Cell], on_done: CellDone) -> list[CellRecord]:
        """Run every cell; ``on_done(n, cell, record)`` as each one finishes (n: how many have), the records
        come back in plan order."""
        try:
            return self._run_all(cells, on_done)
        finally:
            # Every cell removed its own folder; what is left is the run's (a case's JIT-built extensions).
            shutil.rmtree(self._scratch, ignore_errors=True)  # made again if run() is called again

    def _run_all(self, cells: Sequence[Cell], on_done: CellDone) -> list[CellRecord]:
        records: list[CellRecord | None] = [None] * len(cells)
        self._side_by_side = max(1, min(self.jobs, len(cells)))
        self._queue = _CellQueue(cells, self._needs_build)
        pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix="cell")
        # One task per cell, each running the cell the queue gives it when a worker is free (not a fixed one).
        futures: list[Future[tuple[int, CellRecord]]] = [pool.submit(self._run_next) for _ in cells]
        try:
            pending = set(futures)
            while pending:
                finished, pending = wait(pending, return_when=FIRST_COMPLETED)
                for index, record in sorted(future.result() for future in finished):
                    records[index] = record
                    on_done(sum(r is not None for r in records), cells[index], record)
        except KeyboardInterrupt:
            self._stopping.set()
            self.backend.cancel()
            for future in futures:
                future.cancel()
            pool.shutdown(wait=True, cancel_futures=True)
            for future in futures:
                if future.done() and not future.cancelled() and future.exception() is None:
                    index, record = future.result()
                    records[index] = records[index] or record
            for index, cell in enumerate(cells):
                if records[index] is None:
                    records[index] = _interrupted(cell)
            raise _Interrupted([r for r in records if r is not None]) from None
        pool.shutdown(wait=True)
        return [r for r in records if r is not None]

    def _run_next(self) -> tuple[int, CellRecord]:
        index, cell, key = self._queue.take()
        try:
            return index, self._run_one(cell)
        finally:
            self._queue.done(key)

    def _needs_build(self, cell: Cell) -> str | None:
        """The key of the environment ``cell`` waits for if it ran now: one this run has not prepared yet."""
        if not self._host_lane(cell)[0] or cell.variant.expect[cell.lane.name].kind == "unsupported" \
                or self._host_skip(cell) is not None:
            return None
        key = self._env_keys.get(cell.key)
        if key is None:  # (a key hashes local requirements' files: once per cell, not once per look)
            key = self._env_keys[cell.key] = cell.env_spec(self.host).key()
        slot = self._slots.get(key)
        return None if slot is not None and (slot.prepared is not None or slot.error is not None) else key

    # -- one cell --------------------------------------------------------------------------------
    def _run_one(self, cell: Cell) -> CellRecord:
        """Run one cell; anything unexpected becomes an infra-error record, never a crashed run."""
        try:
            record = self._run_checked(cell)
        except Exception as error:  # the single place a harness fault is turned into a result
            record = _blank(cell)
            record.status, record.judgement = "infra-error", Verdict.INFRA_ERROR
            record.reason = (str(error) if isinstance(error, HarnessError)  # already says what to do
                             else f"harness error while running the cell: {type(error).__name__}: {error}")
            self.progress(f"{cell.key}: {record.reason}")
        if record.status != "interrupted":
            try:
                self.on_record(record)
            except HarnessError as error:  # e.g. disk full: the record still reaches results.json
                self.progress(f"{cell.key}: {error}")
        return record

    def _run_checked(self, cell: Cell) -> CellRecord:
        record = _blank(cell)
        if self._stopping.is_set():
            record.status, record.judgement, record.reason = "interrupted", Verdict.INFRA_ERROR, "run interrupted"
            return record
        expected = cell.variant.expect[cell.lane.name]
        available, why = self._host_lane(cell)
        if not available:
            return self._skip(record, f"lane {cell.lane.name} unavailable: {why}")
        if expected.kind == "unsupported":
            return self._skip(record, f"unsupported on {cell.lane.name}: {expected.reason}")
        host_skip = self._host_skip(cell)
        if host_skip is not None:
            return self._skip(record, f"not run with the host torch: {host_skip}")
        spec = cell.env_spec(self.host)
        slot = self._environment(spec)
        if slot.error is not None or slot.prepared is None:
            return self._env_failed(cell, record, spec, slot.error)
        record.environment = slot.prepared.id
        record.torch = _torch_used(slot.prepared, self.host)
        if cell.lane.gpu:
            ok, why = self._cuda(slot)
            if not ok:
                return self._skip(record, f"lane cuda unavailable in {slot.prepared.id}: {why}")
            with self._gpu_slots:
                outcome = self._execute(cell, slot.prepared, record)
        else:
            outcome = self._execute(cell, slot.prepared, record)
        return judge_record(cell, record, outcome)

    def _host_skip(self, cell: Cell) -> str | None:
        if self.host is None:
            return None
        return self.host.skip_reason(cell.variant.requires, [p.path for p in cell.variant.patches])

    def _env_failed(self, cell: Cell, record: CellRecord, spec: EnvSpec, error: EnvBuildError | None) -> CellRecord:
        record.environment = f"{self.backend.name}-{spec.key()}"
        if self._stopping.is_set():  # Ctrl-C stopped the build: the run was interrupted, the build did not fail
            record.status, record.judgement = "interrupted", Verdict.INFRA_ERROR
            record.reason = "not finished: the run was interrupted while its environment was being built"
            return record
        record.status, record.judgement = "infra-error", Verdict.INFRA_ERROR
        record.reason = f"environment could not be built: {error}"
        log_path, fd = self.folder.new_file(_log_parts(cell), f"# repro-matrix cell {cell.key}\n# environment "
                                                              f"{record.environment} failed to build\n{error}\n")
        os.close(fd)
        record.log = str(log_path.relative_to(self.run_dir))
        return record

    def _host_lane(self, cell: Cell) -> tuple[bool, str]:
        name = cell.lane.name
        if name not in self._lane_status:
            self._lane_status[name] = host_lane_status(cell.lane)
        return self._lane_status[name]

    def _environment(self, spec: EnvSpec) -> _EnvSlot:
        with self._slots_lock:
            slot = self._slots.setdefault(spec.key(), _EnvSlot())
        with slot.lock:
            if slot.prepared is None and slot.error is None:
                try:
                    slot.prepared = self._prepare(spec)
                    self.environments[slot.prepared.id] = _describe_env(slot.prepared)
                except EnvBuildError as error:
                    slot.error = error
                    env_id = f"{self.backend.name}-{spec.key()}"
                    self.environments[env_id] = {"id": env_id, "backend": self.backend.name, **spec.describe(),
                                                 "installed": {}, "reused": False, "build_s": 0.0, "image": None,
                                                 "error": str(error)}
                    self.progress(f"environment {env_id} failed: {error}")
        return slot

    def _prepare(self, spec: EnvSpec) -> PreparedEnv:
        """``backend.prepare``; a build this run counts ("environment 3/12") and shows while it runs."""
        if spec.key() not in self._to_build or self.backend.is_ready(spec):  # (another process may have built it)
            return self.backend.prepare(spec, self.progress, private=self.private)
        with self._slots_lock:
            self._builds_started += 1
            label = f"environment {self._builds_started}/{len(self._to_build)}"
        what = f"{label}: building {self.backend.name}-{spec.key()}"
        self.on_start(what, self.backend.build_log(spec))
        try:
            return self.backend.prepare(spec, lambda text: self.progress(f"{label} {text}"), private=self.private)
        finally:
            self.on_finish(what)

    def _cuda(self, slot: _EnvSlot) -> tuple[bool, str]:
        with slot.lock:
            if slot.cuda is None:
                assert slot.prepared is not None
                slot.cuda = self.backend.cuda_status(slot.prepared, private=self.private)
            return slot.cuda

    def _execute(self, cell: Cell, env: PreparedEnv, record: CellRecord) -> ChildOutcome:
        log_path, log_fd = self.folder.new_file(_log_parts(cell), _log_header(cell, env))
        scratch = Path(tempfile.mkdtemp(dir=self._scratch_base()))
        try:
            request = CellRequest(
                case_dir=cell.case.folder, script=cell.case.script, shims=cell.variant.shims,
                argv=("--variant", cell.variant.name, "--device", cell.lane.device, *cell.variant.args),
                sim=cell.lane.sim, gpu=cell.lane.gpu, env=_lane_environment(cell, self._side_by_side),
                timeout=cell.variant.timeout,
                cell_dir=scratch, log_path=log_path, label=cell.key, private=self.private, log_fd=log_fd,
            )
            record.started = utc_now()
            record.log = str(log_path.relative_to(self.run_dir))
            self.on_start(cell.key, log_path)
            try:
                return self.backend.run_cell(env, request)
            finally:
                self.on_finish(cell.key)
        finally:
            os.close(log_fd)
            shutil.rmtree(scratch, ignore_errors=True)  # never follows a symlink the cell left there

    @staticmethod
    def _skip(record: CellRecord, reason: str) -> CellRecord:
        record.status, record.judgement, record.reason = "skipped", Verdict.SKIPPED, reason
        return record


class _CellQueue:
    """The cells not started yet, handed to free workers: the first, in plan order, whose environment no other
    worker is preparing. In plan order alone a free worker often took a cell of the environment the other one
    was building and sat idle until it was ready (issue 21: a cold run went at about one worker's pace); now it
    builds the next environment, or runs a cell whose environment is ready, meanwhile."""

    def __init__(self, cells: Sequence[Cell], needs_build: Callable[[Cell], str | None]) -> None:
        self._waiting = list(enumerate(cells))
        self._needs_build = needs_build
        self._preparing: dict[str, int] = {}  # environment key -> workers whose cell needs it (one builds it)
        self._lock = threading.Lock()

    def take(self) -> tuple[int, Cell, str | None]:
        """The next cell (its index in the plan) and the environment it waits for, if any (give it back to
        :meth:`done`)."""
        with self._lock:
            keys = [(item, self._needs_build(item[1])) for item in self._waiting]
            item, key = next(((item, key) for item, key in keys if key is None or key not in self._preparing),
                             keys[0])  # every cell left waits for an environment being built: the first one's
            self._waiting.remove(item)
            if key is not None:
                self._preparing[key] = self._preparing.get(key, 0) + 1
            return (*item, key)

    def done(self, key: str | None) -> None:
        """A cell taken with ``key`` is over (its environment is ready by then, or failed)."""
        if key is None:
            return
        with self._lock:
            self._preparing[key] -= 1
            if not self._preparing[key]:
                del self._preparing[key]


class _Interrupted(KeyboardInterrupt):
    def __init__(self, records: list[CellRecord]) -> None:
        super().__init__("interrupted")
        self.records = records


Interrupted = _Interrupted


def _interrupted(cell: Cell) -> CellRecord:
    record = _blank(cell)
    record.status, record.judgement = "interrupted", Verdict.INFRA_ERROR
    record.reason = "not finished: the run was interrupted"
    return record


def _blank(cell: Cell) -> CellRecord:
    return CellRecord(
        case=cell.case.id, variant=cell.variant.name, role=cell.variant.role, lane=cell.lane.name,
        expected=str(cell.variant.expect[cell.lane.name]),
        shims=[_relative(p, cell.case.folder.parent.parent) for p in cell.variant.shims],
        patches=[_relative(p.path, cell.case.folder.parent.parent) for p in cell.variant.patches],
    )


_THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")


def _lane_environment(cell: Cell, side_by_side: int) -> dict[str, str]:
    """The cell's env; a cuda-sim cell on a host with a GPU (a GPU check) sees none: it simulates one there
    exactly as on a CPU-only host, whatever torch build the environment has."""
    env = cell_environment(cell.variant.env, side_by_side)
    return {"CUDA_VISIBLE_DEVICES": "", **env} if cell.lane.sim else env


def cell_environment(env: Mapping[str, str], side_by_side: int) -> dict[str, str]:
    """A cell's env (case + variant); with cells running side by side, each gets its share of the cores
    for intra-op threads, unless the user (this process's environment) or the case set a thread count.

    torch starts a thread per core in every process: two cells side by side on a shared 2-core host ran
    a small training loop 2.4x slower with those than with one thread each.
    """
    if side_by_side <= 1 or any(name in os.environ or name in env for name in _THREAD_VARIABLES):
        return dict(env)
    share = str(max(1, usable_cores() // side_by_side))
    return {**dict.fromkeys(_THREAD_VARIABLES, share), **env}


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 1


def _torch_used(env: PreparedEnv, host: HostTorch | None) -> dict[str, Any] | None:
    """With a host torch: which torch the cell's environment really has, beside the one its variant pins."""
    if host is None:
        return None
    return {**host.describe(pinned_torch(env.spec.requires)), "version": env.installed.get("torch", host.torch)}


def _relative(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def _describe_env(env: PreparedEnv) -> dict[str, Any]:
    return {"id": env.id, "backend": env.backend, **env.spec.describe(), "installed": dict(env.installed),
            "reused": env.reused, "build_s": env.build_s, "image": dict(env.image) if env.image else None,
            "compat": list(env.compat), "error": None}


_SCRATCH = "repro-cell-"


def _sweep_scratch() -> None:
    """Scratch folders of harness processes that died without removing them (killed outright)."""
    for folder in Path(tempfile.gettempdir()).glob(f"{_SCRATCH}*-*"):
        pid = folder.name.removeprefix(_SCRATCH).partition("-")[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def _log_parts(cell: Cell) -> tuple[str, ...]:
    return ("logs", cell.case.id, cell.lane.name, f"{cell.variant.name}.log")


def _log_header(cell: Cell, env: PreparedEnv) -> str:
    return (f"# repro-matrix cell {cell.key}\n# environment {env.id} ({env.backend}): "
            f"{' '.join(env.spec.requires)}\n# started {time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n")
