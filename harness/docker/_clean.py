"""Prune images no case needs any more, and containers left by runs that died (``nox -s clean``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from harness._cases import Case
from harness.docker._catalog import catalog
from harness.docker._client import connect
from harness.docker._containers import remove_cache_volumes, remove_leftovers
from harness.docker._plan import ImageSettings


def clean_images(cases: Sequence[Case], *, dry_run: bool, say: Callable[[str], None],
                 settings: ImageSettings | None = None, repository: str | None = None) -> int:
    """Remove ``repro-matrix/*`` images whose recipe (pins, patches, Dockerfile) no case uses.

    An image built for a current recipe is kept whatever base it was built from: the base is a
    per-host choice, and removing the other base's images would force rebuilds on the next switch.
    ``repository`` limits the sweep to one image name (``repro-matrix/torch-cpu``).
    """
    from docker.errors import APIError

    client = connect()
    settings = settings or ImageSettings.from_env()
    used = {entry.plan.recipe_hash for entry in catalog(cases, ("cpu", "cuda"), settings)}
    removed = 0
    # One listing call: the SDK's images.list() inspects every image again, racing with other removals.
    for image in client.api.images(name=repository, filters={"label": "repro-matrix.recipe"}):
        if (image.get("Labels") or {}).get("repro-matrix.recipe") in used:
            continue
        tags = [t for t in image.get("RepoTags") or [] if t != "<none>:<none>"]
        names = ", ".join(tags) or image["Id"].removeprefix("sha256:")[:12]
        say(f"{'would remove' if dry_run else 'removing'} image {names}")
        if not dry_run:
            try:
                for tag in tags or [image["Id"]]:
                    client.images.remove(tag)
            except APIError as error:  # a container still uses it, or it is already gone
                say(f"kept {names}: {error.explanation or error}")
                continue
            remove_cache_volumes(client, image["Id"])
        removed += 1
    if not dry_run and repository is None:
        for name in remove_leftovers(client):
            say(f"removed leftover container {name}")
        # BuildKit keeps every build stage (each holding a wheelhouse) in its cache.
        reclaimed = int(client.api.prune_builds().get("SpaceReclaimed") or 0)
        if reclaimed:
            say(f"pruned {reclaimed / 1e9:.1f} GB of build cache")
    return removed
