"""Which image an environment needs: flavour, build args, labels and a content-hash tag.

One image per distinct environment and flavour: cells whose variants share pins and patches share
the image, whatever case they belong to. The tag is a hash of everything that changes what gets
built (the Dockerfile text, the requirements, the patches, the base image, the Python version, and
for requirements naming torchvision the harness's host-compatibility fix), so an image is rebuilt only
when one of those changed. Nothing here talks to Docker.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness._exceptions import UsageError
from harness.cases._load import PatchFile
from harness.environments._compat import compat_key
from harness.environments._spec import EnvSpec
from harness.run._backend import REPO_ROOT, project_root

Flavour = Literal["cpu", "cuda"]
PipSource = Literal["wheelhouse", "index"]
Layout = Literal["slim", "flat"]
Builder = Literal["auto", "sdk", "buildkit"]
FLAVOUR_FILES: dict[Flavour, str] = {"cpu": "Dockerfile", "cuda": "Dockerfile.cuda"}
DEFAULT_IMAGE_DIR = "images/torch"
LABEL = "repro-matrix"
# Inside the build, the host-made wheelhouse is the only package source.
WHEELHOUSE_PIP_SOURCE = "--no-index --find-links /wheels"
# The base scripts/docker-setup.sh builds on hosts without a registry (its REPRO_BASE_IMAGE renames it).
LOCAL_BASE = "localbase/python:3.11"
BASE_VARIABLES: dict[Flavour, str] = {"cpu": "REPRO_DOCKER_BASE", "cuda": "REPRO_DOCKER_CUDA_BASE"}


@dataclass(frozen=True)
class ImageSettings:
    """Choices that are per host rather than per case (environment variables, or ``images`` options)."""

    cpu_base: str | None = None
    cuda_base: str | None = None
    pip_source: PipSource = "wheelhouse"
    index_args: str | None = None
    build_network: str | None = None
    layout: Layout = "slim"
    builder: Builder = "auto"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ImageSettings:
        env = os.environ if environ is None else environ
        source = _choice(env, "REPRO_DOCKER_PIP_SOURCE", ("wheelhouse", "index"))
        layout = _choice(env, "REPRO_DOCKER_LAYOUT", ("slim", "flat"))
        builder = _choice(env, "REPRO_DOCKER_BUILDER", ("auto", "sdk", "buildkit"))
        return cls(cpu_base=env.get("REPRO_DOCKER_BASE") or None,
                   cuda_base=env.get("REPRO_DOCKER_CUDA_BASE") or None,
                   pip_source=source,  # type: ignore[arg-type]
                   index_args=env.get("REPRO_DOCKER_PIP_ARGS") or None,
                   build_network=env.get("REPRO_DOCKER_BUILD_NETWORK") or None,
                   layout=layout, builder=builder)  # type: ignore[arg-type]

    def base_for(self, flavour: Flavour) -> str | None:
        return self.cpu_base if flavour == "cpu" else self.cuda_base

    def with_base(self, flavour: Flavour, base: str) -> ImageSettings:
        return replace(self, cpu_base=base) if flavour == "cpu" else replace(self, cuda_base=base)

    def network(self) -> str:
        """The build's network: none when the wheelhouse is the only source, else as configured."""
        if self.build_network:
            return self.build_network
        return "none" if self.pip_source == "wheelhouse" else "host"


@dataclass(frozen=True)
class ImagePlan:
    """Everything needed to build (or find) one image."""

    flavour: Flavour
    image_dir: Path
    dockerfile: Path
    python: str
    requirements: tuple[str, ...]
    patches: tuple[PatchFile, ...]
    base: str
    settings: ImageSettings = field(default_factory=ImageSettings)

    @property
    def repository(self) -> str:
        return f"{LABEL}/{self.image_dir.name}-{self.flavour}"

    @property
    def recipe_hash(self) -> str:
        """Hash of what is installed and how, without the base image."""
        payload = {"dockerfile": _sha256(self.dockerfile.read_bytes()), "flavour": self.flavour,
                   "layout": self.settings.layout, "python": self.python,
                   "requirements": sorted(self.requirements, key=str.lower),
                   "patches": [p.sha256 for p in self.patches],
                   "compat": compat_key(self.requirements)}  # the host-compatibility step (environments/_compat.py)
        return _digest(payload)

    @property
    def tag(self) -> str:
        return f"{self.repository}:{_digest({'recipe': self.recipe_hash, 'base': self.base})[:12]}"

    @property
    def target(self) -> str | None:
        """The Dockerfile stage to stop at: ``build`` keeps the wheelhouse layer but skips the copy."""
        return "build" if self.settings.layout == "flat" else None

    def build_args(self) -> dict[str, str]:
        args = {"PYTHON_VERSION": self.python, "REQUIREMENTS": " ".join(self.requirements)}
        if self.base != default_base(self.dockerfile):
            args["BASE_IMAGE"] = self.base
        if self.settings.pip_source == "wheelhouse":
            args["PIP_SOURCE"] = WHEELHOUSE_PIP_SOURCE
        elif self.settings.index_args:
            args["PIP_SOURCE"] = self.settings.index_args
        return args

    def labels(self) -> dict[str, str]:
        return {
            f"{LABEL}.recipe": self.recipe_hash,
            f"{LABEL}.flavour": self.flavour,
            f"{LABEL}.image-dir": _display(self.image_dir),
            f"{LABEL}.base": self.base,
            f"{LABEL}.python": self.python,
            f"{LABEL}.requires": json.dumps(list(self.requirements)),
            f"{LABEL}.patches": json.dumps([{"file": _display(p.path), "sha256": p.sha256} for p in self.patches]),
            f"{LABEL}.pip-source": self.settings.pip_source,
            f"{LABEL}.layout": self.settings.layout,
            f"{LABEL}.dockerfile-sha256": _sha256(self.dockerfile.read_bytes()),
        }


def plan_image(spec: EnvSpec, flavour: Flavour, *, image_dir: str | Path = DEFAULT_IMAGE_DIR,
               settings: ImageSettings | None = None, repo_root: Path | None = None) -> ImagePlan:
    settings = settings or ImageSettings()
    folder = Path(image_dir) if Path(image_dir).is_absolute() else (repo_root or project_root()) / image_dir
    if folder.is_symlink():  # its build context would be whatever folder of the host it names
        raise UsageError(f"image folder {_display(folder)} is a symlink: make it a folder of its own")
    dockerfile = folder / FLAVOUR_FILES[flavour]
    if not dockerfile.is_file():
        raise UsageError(f"image folder {_display(folder)} has no {FLAVOUR_FILES[flavour]} "
                         f"(needed for the {flavour} image)")
    return ImagePlan(flavour=flavour, image_dir=folder, dockerfile=dockerfile, python=spec.python,
                     requirements=normalise_requirements(spec.requires, spec.python), patches=spec.patches,
                     base=settings.base_for(flavour) or default_base(dockerfile), settings=settings)


def settle_bases(settings: ImageSettings, flavours: Sequence[Flavour], present: Callable[[str], bool], *,
                 environ: Mapping[str, str] | None = None,
                 image_dir: str | Path = DEFAULT_IMAGE_DIR) -> tuple[ImageSettings, str | None]:
    """Fill in a base the environment leaves unset when the Dockerfile's default cannot be used here.

    On a host without a registry the public default (``python:3.11-slim-bookworm``) is never present,
    while ``scripts/docker-setup.sh`` has made the local base: use that one, and return the one line
    that tells the user so. ``images`` and ``cases --backend docker`` both call this, so they compute
    the same tags (the base is part of each tag). ``present(tag)`` asks the daemon.
    """
    env = os.environ if environ is None else environ
    local = env.get("REPRO_BASE_IMAGE") or LOCAL_BASE
    folder = Path(image_dir) if Path(image_dir).is_absolute() else project_root() / image_dir
    replaced: dict[Flavour, str] = {}
    for flavour in flavours:
        dockerfile = folder / FLAVOUR_FILES[flavour]
        if settings.base_for(flavour) or not dockerfile.is_file():
            continue
        default = default_base(dockerfile)
        if default != local and not present(default) and present(local):
            replaced[flavour] = default
            settings = settings.with_base(flavour, local)
    if not replaced:
        return settings, None
    names = " and ".join(f"{flavour} images" for flavour in replaced)
    defaults = ", ".join(replaced.values())
    variables = " / ".join(BASE_VARIABLES[flavour] for flavour in replaced)
    verb = "is" if len(replaced) == 1 else "are"
    return settings, (f"base image: {local} for {names}: {defaults} {verb} not on this host, so the local base "
                      f"scripts/docker-setup.sh made is used ({variables} chooses another)")


def normalise_requirements(requires: Sequence[str], python: str) -> tuple[str, ...]:
    """Whitespace-free requirement strings for the REQUIREMENTS build arg.

    Markers are decided here, for the image's Python, so none reach the shell inside the build.
    """
    environment = {key: str(value) for key, value in default_environment().items()}
    environment.update(python_version=python, python_full_version=f"{python}.0")
    kept: dict[str, str] = {}
    for text in requires:
        requirement = Requirement(text)
        if requirement.marker is not None:
            if not requirement.marker.evaluate(environment):
                continue
            requirement.marker = None
        kept[canonicalize_name(requirement.name)] = str(requirement).replace(" ", "")
    return tuple(sorted(kept.values(), key=str.lower))


def default_base(dockerfile: Path) -> str:
    """The ``ARG BASE_IMAGE=...`` default of a Dockerfile (what an online build starts from)."""
    for line in dockerfile.read_text(encoding="utf-8").splitlines():
        name, _, value = line.strip().removeprefix("ARG ").partition("=")
        if line.strip().startswith("ARG ") and name.strip() == "BASE_IMAGE" and value:
            return value.strip().strip('"')
    raise UsageError(f"{_display(dockerfile)} has no 'ARG BASE_IMAGE=<default>' line")


def _choice(env: Mapping[str, str], name: str, allowed: tuple[str, ...]) -> str:
    value = env.get(name) or allowed[0]
    if value not in allowed:
        raise UsageError(f"{name}={value!r}: expected one of {', '.join(allowed)}")
    return value


def _digest(payload: object) -> str:
    return _sha256(json.dumps(payload, sort_keys=True).encode())


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _display(path: Path) -> str:
    try:
        return str(path.relative_to(REPO_ROOT))
    except ValueError:
        return str(path)
