"""validate: a filled-in draft that pins, under the name `new` blamed, another project than the report's. `new` takes a
project's name from a report (an import, a variable, a repository): the index may hold another project of that name
with a module of the same name (graded39: the index's `castle` is castle-python, the report ran gcastle; graded41: its
`outputs` is a console library, the report ran nanoGPT's code). The installed distribution's own metadata says where
it lives (its home page, its project URLs): when they name somewhere, but neither the repository the upstream issue is
filed at nor any source repository, the pin is not the code the report ran; nor is it when the blamed name is the
issue's repository's own and the metadata names only source repositories of other names (graded45: the index's `pet`
lives at drake-jin/pi-email-transmission, the report ran cxliu0/PET). A distribution that names a source repository
for a name that is not the repository's (an issue filed downstream often blames a library the project uses), or no
URL at all, is not refused: validate cannot tell it apart. Another project with a source repository of its
own (castle-python) is told apart by the modules the report ran (_module_probe.py), not here.
"""

from __future__ import annotations

import importlib.metadata
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from harness.cases._soundness import names_project, title_project
from harness.environments._hosttorch import requirement_name

_ISSUE = re.compile(r"https?://github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)", re.IGNORECASE)
_URL_FIELDS = ("Home-page", "Project-URL", "Download-URL")
# A source repository on a code host: the project's own, wherever the report was filed (a downstream project's issue
# often blames a library it uses: ai-toolkit's blames diffusers, whose metadata names huggingface/diffusers).
_SOURCE = re.compile(r"https?://(?:www\.)?(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)/[\w.-]+/[\w.-]+",
                     re.IGNORECASE)


def another_project(case: Any, requires: Iterable[str], environment: Path) -> tuple[str, str, tuple[str, ...]] | None:
    """(distribution, why, its URLs) when a variant pins the blamed name (or a longer name carrying it, as the name rule
    accepts) and the installed distribution is another project: its metadata names neither the upstream issue's
    repository nor any source repository; or, where the blamed name is that repository's own (`new` took it from
    there), it names source repositories none of which is a repository of that name (a fork or a move keeps it)."""
    # the repository the bug is documented at: its issue's, else its pull request's or commit's (a draft from a PR)
    issue = next(filter(None, (_ISSUE.match(str(case.upstream.get(key, ""))) for key in ("issue", "pr", "commit"))),
                 None)
    blamed = title_project(case.title, case.tags)
    if issue is None or not blamed:
        return None
    own_name = str(canonicalize_name(issue["repo"].removesuffix(".git"))) == blamed
    repository = f"github.com/{issue['owner']}/{issue['repo']}".lower()
    for name in (n for n in map(requirement_name, requires) if names_project(n, blamed)):
        urls = project_urls(environment, name)
        if not urls or any(repository in url.lower() for url in urls):
            continue
        sources = [found for url in urls if (found := _SOURCE.match(url))]
        if own_name and sources and not any(_repository_name(found.group()) == blamed for found in sources):
            return name, f"not a repository named {issue['repo']}, as the report's is", urls
        if not own_name and not sources:
            return name, "neither the repository the upstream issue is filed at nor any source repository", urls
    return None


def _repository_name(url: str) -> str:
    return str(canonicalize_name(url.rstrip("/").rpartition("/")[2].removesuffix(".git")))


def project_urls(environment: Path, name: str) -> tuple[str, ...]:
    """The URLs an environment's installed distribution ``name`` gives in its metadata (read, not imported)."""
    sites = [str(p) for p in environment.glob("lib/python3*/site-packages")]
    for dist in importlib.metadata.distributions(path=sites):
        if str(canonicalize_name(dist.metadata["Name"] or "")) == name:
            values = [value for field in _URL_FIELDS for value in dist.metadata.get_all(field) or []]
            return tuple(value.rpartition(",")[2].strip() for value in values if value.strip())
    return ()
