"""Talking to the Docker daemon: connecting, finding images, and the errors a user can act on."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness._exceptions import EnvBuildError, HarnessError

if TYPE_CHECKING:
    import docker

    from harness.docker._plan import Flavour, ImagePlan, ImageSettings

# Long enough for a quiet `pip install` step of a build; waits on containers pass their own timeout.
API_TIMEOUT_S = 3600
START_HINT = ("start one with 'sudo scripts/docker-setup.sh' (installs docker.io, runs "
              "'dockerd --bridge=none --iptables=false'), or point DOCKER_HOST at a running daemon")
_GPU_RUNTIME_ERRORS = ("could not select device driver", "nvidia-container-cli", "unknown or invalid runtime name")


class DockerUnavailableError(HarnessError):
    """No Docker daemon answers (or the Docker SDK is not installed)."""

    def __init__(self, endpoint: str, detail: str) -> None:
        self.endpoint = endpoint
        self.detail = detail
        super().__init__(str(self))

    def __str__(self) -> str:
        return f"no Docker daemon reachable at {self.endpoint} ({self.detail}); {START_HINT}"


class DockerInfraError(EnvBuildError):
    """Docker, not the repro, ended a cell: the cell is an ``infra-error`` with this message."""


class DockerDaemonGoneError(DockerInfraError):
    """The daemon stopped answering during the run: it crashed, was restarted or was stopped."""

    def __init__(self, during: str, error: BaseException) -> None:
        super().__init__(f"the Docker daemon at {endpoint()} is gone: it stopped answering while {during} "
                         f"({_short(error)}); {START_HINT}, then re-run (the next run removes the "
                         "containers this one left behind)")


class ContainerStoppedError(DockerInfraError):
    """Something other than the harness stopped the cell's container (``docker stop``/``kill``, or the
    daemon stopping its containers as it shuts down)."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(f"the cell's container was stopped from outside the harness (the Docker daemon sent "
                         f"{signal_name}: 'docker stop', 'docker kill', or dockerd shutting down or restarting), "
                         "so the repro's result is unknown; re-run the case")


@contextlib.contextmanager
def daemon_call(during: str) -> Iterator[None]:
    """Turn a broken connection to the daemon into :class:`DockerDaemonGoneError`.

    The SDK lets ``requests``' ConnectionError through (refused, reset, aborted); an HTTP error from a
    daemon that answers stays an ``APIError``.
    """
    from requests.exceptions import ConnectionError as RequestsConnectionError

    try:
        yield
    except RequestsConnectionError as error:
        raise DockerDaemonGoneError(during, error) from None


class ImageMissingError(EnvBuildError):
    """The environment's image has not been built (or was built from another base)."""


class ImageBuildError(EnvBuildError):
    """``docker build`` failed; the message names the failing step and ends with the log tail."""


@dataclass(frozen=True)
class ImageRef:
    """What the results record about the image a cell ran in."""

    tag: str
    id: str
    digest: str | None

    def serialize(self) -> dict[str, str]:
        return {"tag": self.tag, "id": self.id, "digest": self.digest or ""}


def endpoint() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


def connect(timeout: int = API_TIMEOUT_S) -> docker.DockerClient:
    """A client whose daemon answered a ping; :class:`DockerUnavailableError` otherwise."""
    try:
        import docker
        from docker.errors import DockerException
    except ImportError:
        raise DockerUnavailableError(endpoint(), "the Docker SDK for Python is not installed: "
                                     "pip install 'repro-matrix[docker]' or pip install docker") from None
    try:
        client = docker.from_env(timeout=timeout)
        client.ping()
    except DockerException as error:
        raise DockerUnavailableError(endpoint(), _short(error)) from None
    return client


def find_image(client: docker.DockerClient, tag: str) -> ImageRef | None:
    from docker.errors import ImageNotFound

    try:
        image = client.images.get(tag)
    except ImageNotFound:
        return None
    digests = image.attrs.get("RepoDigests") or []
    return ImageRef(tag=tag, id=image.id, digest=digests[0] if digests else None)


def host_settings(client: docker.DockerClient, settings: ImageSettings,
                  flavours: Sequence[Flavour]) -> tuple[ImageSettings, str | None]:
    """``settings`` with the bases this daemon can build from (see :func:`~harness.docker._plan.settle_bases`),
    and the line that says when the local base replaced a Dockerfile default."""
    from harness.docker._plan import settle_bases

    return settle_bases(settings, flavours, lambda tag: find_image(client, tag) is not None)


def require_image(client: docker.DockerClient, plan: ImagePlan, cases: Sequence[str] = ()) -> ImageRef:
    found = find_image(client, plan.tag)
    if found is not None:
        return found
    raise ImageMissingError(missing_image_message(client, plan, cases))


def missing_image_message(client: docker.DockerClient, plan: ImagePlan, cases: Sequence[str]) -> str:
    lane = " --lane cuda" if plan.flavour == "cuda" else ""
    selection = "".join(f" --case {c}" for c in cases)
    text = (f"image {plan.tag} ({plan.flavour}: {' '.join(plan.requirements)}) is not built; "
            f"build it with: nox -s images --{selection or ' --case <id>'}{lane}")
    same_recipe = client.api.images(filters={"label": f"repro-matrix.recipe={plan.recipe_hash}"})
    bases = {str((i.get("Labels") or {}).get("repro-matrix.base", "?")): i["Id"] for i in same_recipe}
    if plan.base in bases:  # e.g. loaded with 'docker load' from a save by id, which drops the tag
        text += (f" (an image with these pins built FROM {plan.base} exists without this tag: "
                 f"docker tag {bases[plan.base].removeprefix('sha256:')[:12]} {plan.tag})")
    elif bases:
        variable = "REPRO_DOCKER_BASE" if plan.flavour == "cpu" else "REPRO_DOCKER_CUDA_BASE"
        text += (f" (an image with these pins exists, built FROM {', '.join(sorted(bases))}; "
                 f"this run expects FROM {plan.base}: set {variable} to the base it was built from)")
    return text


def cache_volume(image_id: str, case: str | None = None) -> str:
    """The named volume holding one image's JIT-compiled extensions for one case (``/cache`` in its
    containers): one per case, since code a cell writes must never run in another case's cells. Without a
    case: the prefix of the image's volumes."""
    name = f"repro-matrix-cache-{image_id.removeprefix('sha256:')[:12]}"
    return f"{name}-{case}" if case else name


def is_gpu_runtime_error(error: BaseException) -> bool:
    text = str(error).lower()
    return any(marker in text for marker in _GPU_RUNTIME_ERRORS)


def gpu_runtime_reason(error: BaseException) -> str:
    return (f"the Docker daemon cannot give containers a GPU ({_short(error)}); install the NVIDIA "
            "Container Toolkit on the host and restart dockerd")


def gpu_device_requests() -> list[Any]:
    """``docker run --gpus all``: every GPU, with the capabilities CUDA programs need."""
    from docker.types import DeviceRequest

    return [DeviceRequest(count=-1, capabilities=[["gpu"]])]


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:297] + "..."
