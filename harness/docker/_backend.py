"""The ``docker`` backend: each cell runs the child runner inside its environment's image.

Container layout (paths the child spec uses)::

    /repro/harness   the repository's harness/ folder, read-only (child runner)
    /repro/cuda-sim/cuda_sim   the simulator package (cuda_sim), read-only
    /repro/case      the case folder, read-only
    /repro/cell      the cell's private scratch folder, the only writable mount (child-spec.json,
                     outcome.json, cwd); it lives outside the run's output folder, which is never mounted

No network, a memory and a pids limit, a read-only root filesystem with a private ``/tmp``, the
invoking user's uid, and on the cuda lane a GPU device request. Images are never built here: a
missing image is an :class:`~harness._exceptions.EnvBuildError` naming the ``nox -s images``
command that builds it.
"""

from __future__ import annotations

import io
import json
import os
import tarfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from harness.cases._load import Case
from harness.containment._process import ProcessResult
from harness.docker._catalog import flavours_for_lanes, image_dir_and_cases
from harness.docker._client import (
    DockerInfraError,
    ImageRef,
    cache_volume,
    connect,
    daemon_call,
    find_image,
    gpu_runtime_reason,
    host_settings,
    missing_image_message,
    require_image,
)
from harness.docker._containers import (
    CACHE_DIR,
    Bind,
    ContainerExit,
    ContainerRunner,
    ContainerSpec,
    GpuUnavailableError,
    remove_leftovers,
)
from harness.docker._plan import DEFAULT_IMAGE_DIR, Flavour, ImagePlan, ImageSettings, plan_image
from harness.environments._compat import RECORD_FILE as COMPAT_RECORD
from harness.environments._compat import read_record
from harness.environments._spec import EnvSpec
from harness.run._backend import REPO_ROOT, SIM_PACKAGE, CellRequest, ChildOutcome, PreparedEnv, Progress
from harness.run._outcome import outcome_from_process

INSIDE = Path("/repro")
_INSTALLED_FILE = "/venv/repro-matrix-installed.json"
_COMPAT_FILE = f"/venv/{COMPAT_RECORD}"  # the host-compatibility step's record (images/torch/Dockerfile)
_PROBE_TIMEOUT_S = 180
_CUDA_PROBE = (
    "import json, torch\n"
    "ok = torch.cuda.is_available()\n"
    "print(json.dumps({'available': ok, 'torch': torch.__version__, 'cuda_build': torch.version.cuda,\n"
    "  'devices': [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if ok else []}))\n"
)
_CHILD_ENV = {"PYTHONUNBUFFERED": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0",
              "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
              # Any uid may run the container: give it a writable home and a name (getpass, caches).
              "HOME": "/tmp", "USER": "repro", "LOGNAME": "repro"}


def default_memory_bytes() -> int:
    """Half the host's memory (two parallel cells cannot exhaust it), at least 2 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        total = 8 * 1024**3
    return max(2 * 1024**3, total // 2)


class DockerBackend:
    name = "docker"

    def __init__(self, memory_limit_bytes: int | None = None, *, cases: Sequence[Case] = (),
                 lanes: Sequence[str] = ("cpu", "cuda", "cuda-sim"), settings: ImageSettings | None = None,
                 run_id: str | None = None, pids_limit: int = 2048) -> None:
        self.client = connect()  # DockerUnavailableError here, before any cell: one clear message
        self.flavours = flavours_for_lanes(lanes)
        # The bases `nox -s images` settles on too (a local base replaces an absent default): same tags.
        self.settings, self._base_note = host_settings(self.client, settings or ImageSettings.from_env(),
                                                       self.flavours)
        self.memory_bytes = memory_limit_bytes or default_memory_bytes()
        self.pids_limit = pids_limit
        self.cases = tuple(cases)
        self.runner = ContainerRunner(self.client, run_id)
        self._cuda_images: dict[EnvSpec, ImageRef | None] = {}
        self._lock = threading.Lock()
        remove_leftovers(self.client)

    # -- environments -------------------------------------------------------------------------
    def is_ready(self, spec: EnvSpec) -> bool:
        """Images are built by `nox -s images`, never here: a missing one is an error of its cells, not a build."""
        return True

    def build_log(self, spec: EnvSpec) -> Path | None:
        return None

    def prepare(self, spec: EnvSpec, progress: Progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        # Images are built by `nox -s images` (docs/docker.md), never here: nothing a case chose runs on the host.
        with self._lock:
            note, self._base_note = self._base_note, None
        if note:
            progress(note)
        flavour: Flavour = "cpu" if "cpu" in self.flavours else "cuda"
        plan, case_ids = self._plan(spec, flavour)
        with daemon_call(f"looking up image {plan.tag}"):
            image = require_image(self.client, plan, case_ids)
            installed, compat = self._records(image)
        progress(f"docker-{spec.key()}: image {plan.tag} ({image.id[7:19]}): {spec.summary()}")
        return PreparedEnv(id=f"docker-{spec.key()}", spec=spec, backend=self.name, python_path="/venv/bin/python",
                           installed=installed, reused=True, build_s=0.0, image=image.serialize(), compat=compat)

    def _plan(self, spec: EnvSpec, flavour: Flavour) -> tuple[ImagePlan, tuple[str, ...]]:
        image_dir, case_ids = image_dir_and_cases(self.cases, spec)
        return plan_image(spec, flavour, image_dir=image_dir or DEFAULT_IMAGE_DIR, settings=self.settings), case_ids

    def _records(self, image: ImageRef) -> tuple[dict[str, str], tuple[str, ...]]:
        """The image's package list and host-compatibility record, written at build time (read without
        starting the container); an image built before the record existed has none."""
        from docker.errors import APIError

        container = self.client.containers.create(image.id, ["true"], network_mode="none",
                                                  labels=self.runner.labels())
        try:
            packages = json.loads(_read_file(container, _INSTALLED_FILE) or "[]")
            compat_text = _read_file(container, _COMPAT_FILE)
            compat = read_record(compat_text) if compat_text is not None else ()
        except (APIError, ValueError, IndexError):
            return {}, ()
        finally:
            container.remove(force=True)
        return dict(sorted(((p["name"], p["version"]) for p in packages), key=lambda kv: kv[0].lower())), compat

    def _cuda_image(self, spec: EnvSpec) -> tuple[ImageRef | None, str]:
        plan, case_ids = self._plan(spec, "cuda")
        with self._lock:
            if spec not in self._cuda_images:
                self._cuda_images[spec] = find_image(self.client, plan.tag)
            image = self._cuda_images[spec]
        return image, "" if image else missing_image_message(self.client, plan, case_ids)

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        with daemon_call("looking up the CUDA image"):
            image, _ = self._cuda_image(env.spec)
        if image is None:
            return True, "CUDA image missing: its cells report how to build it"
        log = image_log_dir() / f"{env.id}.cuda-probe.log"
        spec = ContainerSpec(image=image.id, command=["python", "-c", _CUDA_PROBE], environment=_CHILD_ENV,
                             memory_bytes=self.memory_bytes, pids_limit=self.pids_limit, gpu=True,
                             name_hint=f"{env.id}/cuda-probe")
        log.write_text("")
        try:
            result = self.runner.run(spec, timeout=_PROBE_TIMEOUT_S, log_path=log)
        except GpuUnavailableError as error:
            return False, gpu_runtime_reason(error)
        return _read_probe(result, log)

    # -- cells -----------------------------------------------------------------------------------
    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        from docker.errors import APIError

        try:
            with daemon_call("looking up the CUDA image"):
                image = self._image_for(env, request)
        except DockerInfraError as error:
            return ChildOutcome("infra-error", reason=str(error))
        if isinstance(image, str):
            return ChildOutcome("infra-error", reason=image)
        request.cell_dir.mkdir(parents=True, exist_ok=True)
        spec_path = request.cell_dir / "child-spec.json"
        spec_path.write_text(json.dumps(request.child_spec(
            sim_root=INSIDE / "cuda-sim", case_dir=INSIDE / "case", cell_dir=INSIDE / "cell")))
        container = self._container_spec(image, request)
        try:
            result = self.runner.run(container, timeout=request.timeout, log_path=request.log_path)
        except GpuUnavailableError as error:
            return ChildOutcome("skipped", reason=gpu_runtime_reason(error), image=image.serialize())
        except DockerInfraError as error:  # the daemon went away, or stopped the container
            return ChildOutcome("infra-error", reason=str(error), image=image.serialize())
        except APIError as error:
            return ChildOutcome("infra-error", reason=f"docker could not run the cell: {error}",
                                image=image.serialize())
        return self._outcome(result, request, image)

    def _image_for(self, env: PreparedEnv, request: CellRequest) -> ImageRef | str:
        if request.gpu:
            image, missing = self._cuda_image(env.spec)
            return image if image is not None else missing
        if env.image is None:
            return f"environment {env.id} has no image"
        return ImageRef(tag=env.image["tag"], id=env.image["id"], digest=env.image.get("digest") or None)

    def _container_spec(self, image: ImageRef, request: CellRequest) -> ContainerSpec:
        binds = (Bind(REPO_ROOT / "harness", str(INSIDE / "harness")),
                 Bind(SIM_PACKAGE, str(INSIDE / "cuda-sim" / "cuda_sim")),
                 Bind(request.case_dir, str(INSIDE / "case")),
                 Bind(request.cell_dir, str(INSIDE / "cell"), read_only=False))
        command = ["python", str(INSIDE / "harness" / "run" / "_child.py"), str(INSIDE / "cell" / "child-spec.json")]
        # JIT-built torch extensions (DeepSpeed ops) persist per image, as the venv backend keeps them per
        # environment: a compile costs minutes, and every cell of the image would repeat it.
        environment = {**_CHILD_ENV, "TORCH_EXTENSIONS_DIR": f"{CACHE_DIR}/torch_extensions", **request.env}
        return ContainerSpec(image=image.id, command=command, binds=binds, working_dir=str(INSIDE / "cell"),
                             environment=environment, memory_bytes=self.memory_bytes, pids_limit=self.pids_limit,
                             gpu=request.gpu, name_hint=request.label,
                             cache_volume=cache_volume(image.id, request.case_dir.name))

    def _outcome(self, result: ContainerExit, request: CellRequest, image: ImageRef) -> ChildOutcome:
        outcome_path = request.cell_dir / "outcome.json"
        if result.oom_killed and not outcome_path.exists() and not result.timed_out:
            outcome = ChildOutcome("oom", round(result.duration_s, 3), result.exit_code, "SIGKILL",
                                   reason=f"killed by the container's memory limit "
                                          f"({self.memory_bytes / 1024**3:.1f} GiB)")
        else:
            process = ProcessResult(_as_returncode(result.exit_code), result.timed_out, result.interrupted,
                                    result.duration_s, result.dropped_bytes)
            outcome = outcome_from_process(process, outcome_path, request.timeout)
            if outcome.status == "timeout":
                outcome.reason = (f"no result after the {request.timeout:g}s timeout; "
                                  "the container was killed and removed")
        outcome.image = image.serialize()
        return outcome

    def cancel(self) -> None:
        self.runner.cancel()


def _as_returncode(exit_code: int | None) -> int | None:
    """A container's 128+N exit (the init process reports a signal death that way) -> -N, like Popen."""
    if exit_code is not None and 128 < exit_code < 160:
        return -(exit_code - 128)
    return exit_code


def _read_file(container: Any, path: str) -> str | None:
    """One file of a (created, not started) container; None when the image has no such file."""
    from docker.errors import NotFound

    try:
        stream, _ = container.get_archive(path)
    except NotFound:
        return None
    with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
        member = archive.extractfile(archive.getmembers()[0])
        return member.read().decode() if member else None


def image_log_dir() -> Path:
    """Build logs and probe logs live beside the venv cache (``.repro-envs/images``)."""
    from harness.environments._venv_build import default_env_root

    folder = default_env_root() / "images"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _read_probe(result: ContainerExit, log: Path) -> tuple[bool, str]:
    text = log.read_text(errors="replace").strip()
    try:
        probe: dict[str, Any] = json.loads(text.splitlines()[-1])
    except (IndexError, ValueError):
        return False, f"torch could not be imported in the CUDA image to look for a GPU: {text[-300:]}"
    if probe["available"]:
        return True, f"CUDA devices: {', '.join(probe['devices'])}"
    build = f"CUDA {probe['cuda_build']} build" if probe["cuda_build"] else "a CPU-only build"
    return False, f"torch {probe['torch']} ({build}) sees no CUDA device in the container"
