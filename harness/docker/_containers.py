"""Run one container to completion with a timeout, and make sure no container outlives the run.

Every container this process creates is labelled (``repro-matrix.run``, ``.pid``, ``.host``) and
tracked until it is removed: on a normal exit, on a timeout (killed, then removed), on Ctrl-C
(:meth:`ContainerRunner.cancel` kills and removes every tracked one) and at interpreter exit. A run
that was killed outright (SIGKILL) leaves its containers behind; :func:`remove_leftovers` sweeps them
at the start of the next run, using the labels.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import secrets
import signal
import socket
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.containment._log import BoundedLog
from harness.docker._client import (
    ContainerStoppedError,
    DockerDaemonGoneError,
    cache_volume,
    daemon_call,
    gpu_device_requests,
    is_gpu_runtime_error,
)

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

RUN_LABEL = "repro-matrix.run"
CACHE_DIR = "/cache"
_REMOVE_GRACE_S = 30


@dataclass(frozen=True)
class Bind:
    source: Path
    target: str
    read_only: bool = True


@dataclass(frozen=True)
class ContainerSpec:
    image: str
    command: Sequence[str]
    binds: Sequence[Bind] = ()
    working_dir: str = "/"
    environment: Mapping[str, str] = field(default_factory=dict)
    memory_bytes: int = 4 * 1024**3
    pids_limit: int = 2048
    gpu: bool = False
    name_hint: str = ""
    cache_volume: str | None = None  # a named volume mounted at /cache, shared by one case's cells of the image


@dataclass(frozen=True)
class ContainerExit:
    exit_code: int | None
    oom_killed: bool
    timed_out: bool
    interrupted: bool
    duration_s: float
    dropped_bytes: int


class GpuUnavailableError(Exception):
    """The daemon refused the GPU device request (no NVIDIA runtime); the container was removed."""


def new_run_id() -> str:
    return f"{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())}-{secrets.token_hex(3)}"


class ContainerRunner:
    """Creates, waits for and removes containers; tracks the live ones for :meth:`cancel`."""

    def __init__(self, client: docker.DockerClient, run_id: str | None = None) -> None:
        self.client = client
        self.run_id = run_id or new_run_id()
        self._live: dict[str, Container] = {}
        self._lock = threading.Lock()
        self._cancelled = threading.Event()
        self._counter = 0
        atexit.register(self.remove_all)

    def run(self, spec: ContainerSpec, *, timeout: float, log_path: Path) -> ContainerExit:
        """Create, start and follow one container; :class:`DockerDaemonGoneError` if the daemon goes away."""
        from docker.errors import APIError

        with daemon_call("creating a container"):
            container = self._create(spec)
        try:
            with daemon_call("starting a container"):
                try:
                    container.start()
                except APIError as error:
                    if spec.gpu and is_gpu_runtime_error(error):
                        raise GpuUnavailableError(str(error)) from None
                    raise
            with daemon_call("the cell ran"):
                return self._follow(container, timeout, log_path)
        finally:
            self._remove(container)

    def cancel(self) -> None:
        """Stop everything now (Ctrl-C): running cells end as ``interrupted``."""
        self._cancelled.set()
        self.remove_all()

    def remove_all(self) -> None:
        with self._lock:
            live = list(self._live.values())
        for container in live:
            self._remove(container)

    # -- internals --------------------------------------------------------------------------------
    def _create(self, spec: ContainerSpec) -> Container:
        from docker.types import Mount

        with self._lock:
            self._counter += 1
            name = f"repro-matrix-{self.run_id}-{self._counter}"
        mounts = [Mount(target=b.target, source=str(b.source), type="bind", read_only=b.read_only)
                  for b in spec.binds]
        if spec.cache_volume:
            mounts.append(Mount(target=CACHE_DIR, source=spec.cache_volume, type="volume",
                                labels={"repro-matrix.cache": "1"}))
        container = self.client.containers.create(
            spec.image, list(spec.command), name=name, labels=self.labels(spec.name_hint), mounts=mounts,
            working_dir=spec.working_dir, environment=dict(spec.environment), network_mode="none",
            mem_limit=spec.memory_bytes, memswap_limit=spec.memory_bytes, pids_limit=spec.pids_limit,
            shm_size="1g", read_only=True, tmpfs={"/tmp": f"rw,exec,size={spec.memory_bytes}"},
            user=f"{os.getuid()}:{os.getgid()}", init=True, stdin_open=False, tty=False,
            device_requests=gpu_device_requests() if spec.gpu else None,
        )
        with self._lock:
            self._live[container.id] = container
        return container

    def labels(self, cell: str = "") -> dict[str, str]:
        """What lets :func:`remove_leftovers` find this container if the run is killed outright."""
        return {RUN_LABEL: self.run_id, "repro-matrix.pid": str(os.getpid()),
                "repro-matrix.host": socket.gethostname(), "repro-matrix.cell": cell}

    def _follow(self, container: Container, timeout: float, log_path: Path) -> ContainerExit:
        started, started_epoch = time.perf_counter(), time.time()
        log = BoundedLog(log_path)
        pump = threading.Thread(target=_pump_logs, args=(container, log), daemon=True)
        pump.start()
        try:
            status, timed_out = self._wait(container, max(1.0, timeout), started)
        finally:  # the log is complete whatever ended the wait
            duration = time.perf_counter() - started
            pump.join(timeout=10)
            log.close()
        state = _state(container)
        code = status.get("StatusCode") if status else state.get("ExitCode")
        if not timed_out and not self._cancelled.is_set() and code is not None and code > 128:
            sent = _signal_sent_by_daemon(self.client, container, started_epoch)
            if sent:
                raise ContainerStoppedError(sent)
        return ContainerExit(exit_code=code, oom_killed=bool(state.get("OOMKilled")), timed_out=timed_out,
                             interrupted=self._cancelled.is_set(), duration_s=duration, dropped_bytes=log.dropped)

    def _wait(self, container: Container, wait_s: float, started: float) -> tuple[dict[str, Any] | None, bool]:
        """The container's exit status and whether the timeout ended it (then it was killed)."""
        from docker.errors import APIError
        from requests.exceptions import RequestException

        try:
            return dict(container.wait(timeout=wait_s)), False
        except (RequestException, APIError) as error:  # timed out, cancel() removed it, or the daemon went away
            waited = time.perf_counter() - started
            if isinstance(error, RequestException) and not self._cancelled.is_set() and waited < wait_s - 1:
                raise DockerDaemonGoneError("the cell ran", error) from None
            _kill(container)
            return _wait_quietly(container), not self._cancelled.is_set()

    def _remove(self, container: Container) -> None:
        from docker.errors import APIError, NotFound
        from requests.exceptions import ConnectionError as RequestsConnectionError

        # A daemon that is gone cannot remove anything: the next run's remove_leftovers() sweeps it.
        with contextlib.suppress(NotFound, RequestsConnectionError):
            try:
                container.remove(force=True)
            except APIError as error:
                # "removal already in progress" from a concurrent cancel(): wait for it to finish.
                if "in progress" not in str(error):
                    raise
                _wait_gone(container)
        with self._lock:
            self._live.pop(container.id, None)


def _signal_sent_by_daemon(client: docker.DockerClient, container: Container, since: float) -> str | None:
    """The signal of a ``kill`` event for the container: the daemon signalled it (``docker stop``/``kill``,
    or its own shutdown), where a repro that died of a signal by itself leaves no such event."""
    events = client.events(since=int(since) - 1, until=int(time.time()) + 1, decode=True,
                           filters={"container": container.id, "event": "kill"})
    for event in events:
        number = (event.get("Actor", {}).get("Attributes") or {}).get("signal", "")
        with contextlib.suppress(ValueError):
            return signal.Signals(int(number)).name
        return f"signal {number or '?'}"
    return None


def _pump_logs(container: Container, log: BoundedLog) -> None:
    with contextlib.suppress(Exception):  # a removed container ends the stream with an error
        for chunk in container.logs(stream=True, follow=True, stdout=True, stderr=True):
            log.feed(chunk)


def _kill(container: Container) -> None:
    from docker.errors import APIError

    with contextlib.suppress(APIError):
        container.kill()


def _wait_quietly(container: Container) -> dict[str, Any] | None:
    from docker.errors import APIError
    from requests.exceptions import RequestException

    try:
        return dict(container.wait(timeout=_REMOVE_GRACE_S))
    except (APIError, RequestException):
        return None


def _wait_gone(container: Container) -> None:
    from docker.errors import NotFound

    deadline = time.monotonic() + _REMOVE_GRACE_S
    while time.monotonic() < deadline:
        try:
            container.reload()
        except NotFound:
            return
        time.sleep(0.2)


def _state(container: Container) -> dict[str, Any]:
    from docker.errors import APIError

    try:
        container.reload()
    except APIError:
        return {}
    return dict(container.attrs.get("State") or {})


@dataclass(frozen=True)
class ContainerSummary:
    """A container as one listing call saw it."""

    id: str
    name: str
    state: str
    labels: Mapping[str, str]


def labelled_containers(client: docker.DockerClient, label: str = RUN_LABEL) -> list[ContainerSummary]:
    """Containers (any state) carrying ``label`` (``key`` or ``key=value``), from a single API call.

    The SDK's ``containers.list`` inspects each listed container in a second call, which raises
    NotFound when another run removes one in between; the listing itself already has what we need.
    """
    rows = client.api.containers(all=True, filters={"label": label})
    return [ContainerSummary(id=row["Id"], name=(row.get("Names") or ["?"])[0].lstrip("/"),
                             state=row.get("State") or "", labels=row.get("Labels") or {}) for row in rows]


def remove_leftovers(client: docker.DockerClient, *, run_id: str | None = None) -> list[str]:
    """Remove repro-matrix containers of runs that are gone (their process died) or of ``run_id``."""
    from docker.errors import APIError

    host = socket.gethostname()
    removed = []
    for container in labelled_containers(client):
        mine = run_id is not None and container.labels.get(RUN_LABEL) == run_id
        orphan = (container.labels.get("repro-matrix.host") == host
                  and not _alive(container.labels.get("repro-matrix.pid", "")))
        if mine or orphan:
            with contextlib.suppress(APIError):  # already gone, or another run is removing it
                client.api.remove_container(container.id, force=True)
                removed.append(container.name)
    return removed


def remove_cache_volumes(client: docker.DockerClient, image_id: str) -> None:
    """Every case's cache volume of one image (see :func:`cache_volume`); in use or gone: left alone."""
    from docker.errors import APIError

    prefix = cache_volume(image_id)
    with contextlib.suppress(APIError):
        for volume in client.volumes.list(filters={"name": prefix}):
            if volume.name == prefix or volume.name.startswith(f"{prefix}-"):
                with contextlib.suppress(APIError):
                    volume.remove()


def _alive(pid: str) -> bool:
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
