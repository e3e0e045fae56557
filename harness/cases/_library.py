"""Which library a case belongs to, for grouping a catalogue of cases (``--list``, summaries, the site).

Derived from data every case already has: the ``owner/repo`` of its first code-host link (fix, pr,
commit, then issue: the repository whose code changed), else its first tag. Standard library only; the
report builder calls it on untrusted results.json data, so any value shape is accepted.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

_CODE_HOSTS = ("github.com", "gitlab.com", "codeberg.org", "bitbucket.org")
_LINK_KEYS = ("fix", "pr", "commit", "issue")
OTHER = "other"


def library_of(upstream: Any, tags: Any = ()) -> str:
    links = upstream if isinstance(upstream, Mapping) else {}
    for key in _LINK_KEYS:
        try:
            parts = urlsplit(str(links.get(key) or ""))
            host = parts.hostname
        except ValueError:  # a malformed URL (e.g. a bad port) names no repository
            continue
        segments = [s for s in parts.path.split("/") if s]
        if host in _CODE_HOSTS and len(segments) >= 2:
            return f"{segments[0]}/{segments[1]}"
    first = next(iter(tags), None) if isinstance(tags, list | tuple) else None
    return first if isinstance(first, str) and first else OTHER


def group_by_library(cases: Iterable[tuple[str, Any, Any]]) -> list[tuple[str, list[str]]]:
    """``(id, upstream, tags)`` triples -> ``[(library, [ids...])]``, libraries and ids sorted (case-blind)."""
    groups: dict[str, list[str]] = {}
    for case_id, upstream, tags in cases:
        groups.setdefault(library_of(upstream, tags), []).append(case_id)
    return [(library, sorted(ids)) for library, ids in sorted(groups.items(), key=lambda item: item[0].lower())]
