"""The ``docker`` backend: case images (``images/``) and running cells in containers.

Imported only when the docker backend or ``python -m harness images`` is used; needs the Docker SDK
for Python (``pip install 'repro-matrix[docker]'``) at call time, not at import time.
"""

from harness.docker._backend import DockerBackend
from harness.docker._build import BuildResult, build_image
from harness.docker._catalog import CatalogEntry, catalog
from harness.docker._clean import clean_images
from harness.docker._cli import add_images_parser, images_command
from harness.docker._client import (
    DockerDaemonGoneError,
    DockerUnavailableError,
    ImageBuildError,
    ImageMissingError,
    connect,
)
from harness.docker._containers import ContainerSummary, labelled_containers, remove_leftovers
from harness.docker._plan import ImagePlan, ImageSettings, plan_image

__all__ = [
    "BuildResult",
    "CatalogEntry",
    "ContainerSummary",
    "DockerBackend",
    "DockerDaemonGoneError",
    "DockerUnavailableError",
    "ImageBuildError",
    "ImageMissingError",
    "ImagePlan",
    "ImageSettings",
    "add_images_parser",
    "build_image",
    "catalog",
    "clean_images",
    "connect",
    "images_command",
    "labelled_containers",
    "plan_image",
    "remove_leftovers",
]
