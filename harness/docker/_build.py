"""Build one image: wheelhouse on the host, a build context, ``docker build`` through the SDK.

Air-gapped hosts (and hosts whose HTTPS is intercepted, where pip inside a container cannot verify
the index) still build: the host's pip, with its own index configuration, resolves every
requirement into ``wheels/`` (``pip wheel`` also turns sdist-only packages into wheels), and the
build installs from there with ``--no-index`` and no network. The Dockerfile is two-stage, so the
wheelhouse never reaches the final image.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness._exceptions import EnvBuildError, UsageError
from harness.docker._buildkit import buildkit_build, buildkit_cli
from harness.docker._clean import build_cache_ids, prune_build_cache_since
from harness.docker._client import ImageBuildError, ImageRef, find_image
from harness.docker._containers import remove_cache_volumes
from harness.docker._plan import BASE_VARIABLES, LOCAL_BASE, ImagePlan
from harness.environments._compat import RUNTIME as COMPAT_RUNTIME
from harness.environments._wheelhouse import WHEEL_TIMEOUT_S, host_python, pip_wheel

if TYPE_CHECKING:
    import docker

Say = Callable[[str], None]
_STEP = re.compile(r"^Step \d+/\d+ : ")
_LAYER = re.compile(r"^ ---> ([0-9a-f]{12})$")
_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # the legacy builder colours a step's stderr
_TAIL_LINES = 25
# Build output worth showing live; everything goes to the build log.
_NOTEWORTHY = ("Successfully installed", "applying ", "[repro-matrix: compat", "ERROR", "error:")


@dataclass(frozen=True)
class BuildResult:
    image: ImageRef
    seconds: float
    size_bytes: int
    log_path: Path
    dropped_cache_bytes: int = 0  # build cache the build added and removed again (BuildKit)


def build_image(client: docker.DockerClient, plan: ImagePlan, *, log_path: Path, say: Say,
                verbose: bool = False) -> BuildResult:
    """Build ``plan.tag``; :class:`ImageBuildError` (failing step + log tail) when it cannot."""
    started = time.perf_counter()
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_path.write_text(f"# repro-matrix image build {plan.tag}\n# base {plan.base}\n"
                        f"# requires {' '.join(plan.requirements)}\n")
    replaced = find_image(client, plan.tag)
    base = find_image(client, plan.base)
    dropped = 0
    labels = {**extra_labels(), **plan.labels(), "repro-matrix.base-id": base.id if base else ""}
    with tempfile.TemporaryDirectory(prefix="repro-matrix-image-") as scratch:
        context = make_context(plan, Path(scratch), log_path, say)
        cli = _buildkit_cli(plan)
        say(f"docker build {plan.tag} (base {plan.base}, network {plan.settings.network()}, "
            f"layout {plan.settings.layout}, builder {'BuildKit via ' + cli if cli else 'SDK (legacy)'})")
        if cli:
            # BuildKit keeps the build stage (wheelhouse + a second /venv, ~1.3 GB a torch image) in its
            # cache, where only a rebuild of this very recipe would use it: drop what the build added.
            cached = build_cache_ids(client)
            buildkit_build(cli, plan, context, labels, log_path, say, verbose)
            dropped = prune_build_cache_since(client, cached)
            if dropped:
                say(f"dropped {dropped / 1e9:.2f} GB of build cache this build added (its build stage)")
        else:
            _drop_build_stage(client, _stream_build(client, plan, context, labels, log_path, say, verbose))
    image = find_image(client, plan.tag)
    if replaced is not None and image is not None and replaced.id != image.id:
        _drop_untagged(client, replaced.id)
    if image is None:
        raise ImageBuildError(f"docker build reported success but {plan.tag} is not in the image store", log_path)
    size = int(client.images.get(plan.tag).attrs.get("Size", 0))
    return BuildResult(image, round(time.perf_counter() - started, 1), size, log_path, dropped)


LABELS_VARIABLE = "REPRO_DOCKER_LABELS"
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}=[^,]{0,256}$")


def extra_labels() -> dict[str, str]:
    """``REPRO_DOCKER_LABELS=key=value,...``: labels for every image built (a CI job's id, a test session's);
    not part of the tag, so the same recipe finds its image whoever built it."""
    text = os.environ.get(LABELS_VARIABLE, "").strip()
    items = [item.strip() for item in text.split(",") if item.strip()]
    bad = [item for item in items if not _LABEL.match(item)]
    if bad:
        raise UsageError(f"{LABELS_VARIABLE}: {bad[0]!r} is not key=value (keys: letters, digits, '.', '_', '-')")
    return dict(item.split("=", 1) for item in items)


def _buildkit_cli(plan: ImagePlan) -> str | None:
    """BuildKit when asked for (an error if unavailable) or, with ``auto``, when a CLI has it."""
    if plan.settings.builder == "sdk":
        return None
    try:
        return buildkit_cli()
    except EnvBuildError:
        if plan.settings.builder == "buildkit":
            raise
        return None


def make_context(plan: ImagePlan, scratch: Path, log_path: Path, say: Say) -> Path:
    """A copy of the image folder with ``wheels/`` (wheelhouse mode), ``patches/`` and ``compat/`` (the
    host-compatibility step every backend runs: harness/environments/_compat.py) filled in."""
    context = scratch / "context"
    # symlinks=True: a link stays a link (a build resolves it inside the context), never a copy of the host
    # file it names: images/x/secret -> ~/.docker/config.json was baked into the image and its build log.
    shutil.copytree(plan.image_dir, context, symlinks=True, ignore=shutil.ignore_patterns("*.whl", "*.diff"))
    (context / "wheels").mkdir(exist_ok=True)
    patches = context / "patches"
    patches.mkdir(exist_ok=True)
    for index, patch in enumerate(plan.patches):
        shutil.copyfile(patch.path, patches / f"{index:02d}-{patch.path.name}")
    (context / "compat").mkdir(exist_ok=True)
    shutil.copyfile(COMPAT_RUNTIME, context / "compat" / COMPAT_RUNTIME.name)
    if plan.settings.pip_source == "wheelhouse":
        fill_wheelhouse(plan, context / "wheels", log_path, say)
    return context


def fill_wheelhouse(plan: ImagePlan, wheels: Path, log_path: Path, say: Say) -> None:
    """The image's requirements as wheels, made by the host's pip (sealed: harness/environments/_wheelhouse.py)."""
    say(f"resolving {len(plan.requirements)} requirement(s) into a wheelhouse with the host's pip")
    proc = pip_wheel(host_python(plan.python), plan.requirements, wheels, log_path, root=plan.image_dir)
    if proc.timed_out:
        raise ImageBuildError(f"pip wheel did not finish in {WHEEL_TIMEOUT_S}s", log_path)
    if proc.returncode != 0:
        raise ImageBuildError(f"the host's pip could not resolve {' '.join(plan.requirements)} into wheels "
                              f"(exit {proc.returncode}):\n{log_tail(log_path)}", log_path)
    count = sum(1 for _ in wheels.glob("*.whl"))
    size = sum(p.stat().st_size for p in wheels.glob("*.whl"))
    say(f"wheelhouse: {count} wheels, {size / 1e6:.0f} MB")


def _stream_build(client: docker.DockerClient, plan: ImagePlan, context: Path, labels: dict[str, str],
                  log_path: Path, say: Say, verbose: bool) -> list[str]:
    """Run the build, copy its output to the log, say the steps; return the ids of finished stages."""
    from docker.errors import APIError
    from requests.exceptions import RequestException

    stage_ids: list[str] = []
    layers: list[str] = []
    step = ""
    with log_path.open("a", encoding="utf-8") as log:
        try:
            chunks = client.api.build(
                path=str(context), dockerfile=plan.dockerfile.name, tag=plan.tag, target=plan.target,
                buildargs=plan.build_args(),
                labels=labels, network_mode=plan.settings.network(), rm=True, forcerm=True, decode=True)
            for chunk in chunks:
                step = _handle_chunk(chunk, log, step, (stage_ids, layers), say, verbose)
        except _BuildStepFailed as failed:
            _drop_failed_layers(client, layers)
            raise ImageBuildError(failure_message(plan, failed.step, failed.message, log_path), log_path) from None
        except (APIError, RequestException) as error:
            _drop_failed_layers(client, layers)
            message = str(getattr(error, "explanation", None) or error)
            log.write(f"\nERROR {message}\n")
            raise ImageBuildError(failure_message(plan, step or "(before the first step)", message, log_path),
                                  log_path) from None
    return stage_ids


def _handle_chunk(chunk: dict[str, Any], log: Any, step: str, ids: tuple[list[str], list[str]], say: Say,
                  verbose: bool) -> str:
    stage_ids, layers = ids
    if "stream" in chunk:
        text = str(chunk["stream"])
        log.write(text)
        for line in _COLOUR.sub("", text).splitlines():
            layer = _LAYER.match(line)
            if layer:
                layers.append(layer.group(1))
            elif _STEP.match(line):
                step = line
                say(line)
            elif verbose or line.strip().startswith(_NOTEWORTHY):
                say(f"  {line.strip()}")
    elif "aux" in chunk and isinstance(chunk["aux"], dict) and "ID" in chunk["aux"]:
        stage_ids.append(str(chunk["aux"]["ID"]))
    elif "error" in chunk:
        message = str(chunk.get("errorDetail", {}).get("message") or chunk["error"])
        log.write(f"\nERROR {message}\n")
        log.flush()
        raise _BuildStepFailed(step or "(before the first step)", message)
    return step


class _BuildStepFailed(Exception):
    def __init__(self, step: str, message: str) -> None:
        super().__init__(message)
        self.step = step
        self.message = message


def failure_message(plan: ImagePlan, step: str, message: str, log_path: Path) -> str:
    hint = ""
    if "registry-1.docker.io" in message or "pull access denied" in message or "no such host" in message:
        variable = BASE_VARIABLES[plan.flavour]
        hint = (f"\n  the base image {plan.base} is not in the local store and cannot be pulled; "
                f"scripts/docker-setup.sh builds {LOCAL_BASE}, which is then used whenever {variable} is unset "
                f"and the Dockerfile's default is absent (or set {variable} / pass --base)")
    return (f"building {plan.tag} failed at {step.strip()}\n  {message.strip()}{hint}\n"
            f"--- last lines of the build log ---\n{log_tail(log_path)}")


def log_tail(path: Path, lines: int = _TAIL_LINES) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(line for line in text.splitlines()[-lines:])


def _drop_failed_layers(client: docker.DockerClient, layers: list[str]) -> None:
    """A failed legacy build leaves its last committed step as a dangling image: remove it (and its
    untagged parents), unless a tagged image uses it (a cache hit from an earlier build)."""
    from docker.errors import APIError

    for layer in reversed(layers):
        try:
            image = client.images.get(layer)
            if image.tags:
                return
            client.images.remove(layer)
            return
        except APIError:
            continue


def _drop_untagged(client: docker.DockerClient, image_id: str) -> None:
    """A rebuild moves the tag; the image it left behind is removed unless something else uses it."""
    from docker.errors import APIError

    try:
        if not client.images.get(image_id).tags:
            client.images.remove(image_id)
            remove_cache_volumes(client, image_id)
    except APIError:  # in use, or no cache volume
        return


def _drop_build_stage(client: docker.DockerClient, stage_ids: list[str]) -> None:
    """Remove the untagged stage that held the wheelhouse (a legacy-builder leftover of ~1 GB)."""
    from docker.errors import APIError

    for stage in stage_ids[:-1]:
        image = client.images.get(stage)
        if (image.labels or {}).get("repro-matrix.stage") == "build" and not image.tags:
            try:
                client.images.remove(stage)
            except APIError:
                continue

