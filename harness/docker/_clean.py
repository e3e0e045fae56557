"""Prune images no case needs any more, and containers left by runs that died (``nox -s clean``)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from harness.cases._load import Case
from harness.docker._catalog import catalog
from harness.docker._client import connect
from harness.docker._containers import remove_cache_volumes, remove_leftovers
from harness.docker._plan import ImageSettings
from harness.environments._clean import Pruned, human_size

if TYPE_CHECKING:
    import docker


def clean_images(cases: Sequence[Case], *, dry_run: bool, say: Callable[[str], None],
                 settings: ImageSettings | None = None, repository: str | None = None) -> Pruned:
    """Remove ``repro-matrix/*`` images whose recipe (pins, patches, Dockerfile) no case uses.

    An image built for a current recipe is kept whatever base it was built from: the base is a
    per-host choice, and removing the other base's images would force rebuilds on the next switch.
    ``repository`` limits the sweep to one image name (``repro-matrix/torch-cpu``).
    """
    from docker.errors import APIError

    client = connect()
    settings = settings or ImageSettings.from_env()
    used = {entry.plan.recipe_hash for entry in catalog(cases, ("cpu", "cuda"), settings)}
    removed = Pruned()
    # One listing call: the SDK's images.list() inspects every image again, racing with other removals.
    for image in client.api.images(name=repository, filters={"label": "repro-matrix.recipe"}):
        if (image.get("Labels") or {}).get("repro-matrix.recipe") in used:
            continue
        tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
        names = ", ".join(tags) or image["Id"].removeprefix("sha256:")[:12]
        size = int(image.get("Size") or 0)
        say(f"{'would remove' if dry_run else 'removing'} image {names} ({human_size(size)})")
        if not dry_run:
            try:
                for tag in tags or [image["Id"]]:
                    client.images.remove(tag)
            except APIError as error:  # a container still uses it, or it is already gone
                say(f"kept {names}: {error.explanation or error}")
                continue
            remove_cache_volumes(client, image["Id"])
        removed += Pruned(1, size, size)
    if repository is None:
        _clean_daemon(client, dry_run, say)
    return removed


def _clean_daemon(client: docker.DockerClient, dry_run: bool, say: Callable[[str], None]) -> None:
    """Containers of dead runs, and the build cache: BuildKit keeps build stages (each holding a wheelhouse)."""
    if dry_run:
        unused, total = build_cache_usage(client)
        if total:
            say(f"would prune the build cache: {human_size(unused)} of its {human_size(total)} is used by no "
                "image and no running build")
        return
    for name in remove_leftovers(client):
        say(f"removed leftover container {name}")
    reclaimed = int(client.api.prune_builds().get("SpaceReclaimed") or 0)
    if reclaimed:
        say(f"pruned {human_size(reclaimed)} of build cache")


def build_cache_usage(client: docker.DockerClient) -> tuple[int, int]:
    """(bytes a prune frees: records neither in use nor shared with an image, all cache bytes)."""
    records = disk_usage(client).get("BuildCache") or []
    prunable = [r for r in records if not r.get("InUse") and not r.get("Shared")
                and r.get("Type") not in ("internal", "frontend")]
    return sum(int(r.get("Size") or 0) for r in prunable), sum(int(r.get("Size") or 0) for r in records)


def build_cache_ids(client: docker.DockerClient) -> set[str]:
    return {str(record["ID"]) for record in disk_usage(client).get("BuildCache") or []}


def disk_usage(client: docker.DockerClient, attempts: int = 60) -> dict[str, Any]:
    """``docker system df``. The daemon runs one at a time and answers a second "a disk usage operation is
    already running" (another run or `docker system df` meanwhile): wait for it, a second at a time."""
    from docker.errors import APIError

    for _ in range(attempts - 1):
        try:
            return dict(client.df())
        except APIError as error:
            if "already running" not in str(error):
                raise
        time.sleep(1)
    return dict(client.df())


def prune_build_cache_since(client: docker.DockerClient, before: set[str]) -> int:
    """Prune the build cache records that are not in ``before``; the bytes freed.

    The daemon prunes one record id per call, and a record goes only once nothing refers to it any more,
    so passes repeat while they remove something. Records in use (a build running now) are never pruned.
    """
    from docker.errors import APIError

    freed, removed = 0, None
    while removed != 0:
        removed = 0
        for record in build_cache_ids(client) - before:
            try:
                answer = client.api.prune_builds(filters={"id": [record]})
            except APIError:  # a daemon without the id filter: `nox -s clean` prunes everything instead
                return freed
            removed += len(answer.get("CachesDeleted") or [])
            freed += int(answer.get("SpaceReclaimed") or 0)
    return freed
