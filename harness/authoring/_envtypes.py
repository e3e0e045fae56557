"""What a report's environment reading gives (a split of ``_envlist``): a listed release and the environment."""

from __future__ import annotations

from dataclasses import dataclass, field

# A release number as listings print it (not "79.35GB" or "8"): what the loose listing formats below must give.
_RELEASE = r"\d+(?:\.\d+)++(?:(?:a|b|rc|\.?post|\.?dev)\d*+)*+(?:\+[\w.]*+)?"


@dataclass(frozen=True)
class Pin:
    version: str  # as listed: 2.0.1+cu118, 0.32.0.dev0, or "" for a source install
    source: str  # "pip freeze", "pip list / conda list", "env listing", "an installed egg's folder"
    report_line: int
    origin: str = ""  # a source install's URL (git+https://...)


@dataclass(frozen=True)
class Environment:
    pins: dict[str, Pin] = field(default_factory=dict)  # canonical distribution name -> listed version
    python: str | None = None
    conflicts: tuple[str, ...] = ()
    # a version the prose states without naming its package ("on version 0.23"): the reported project's, if any
    unnamed: Pin | None = None
    # the commit the report states it ran ("Commit": "5bea443d...", "commit 1a2b3c4", a blob link at a sha) and the
    # repository a link names for it ("owner/name", "/name" from an installed egg, "" when the text names none)
    commit: tuple[str, str] = ("", "")
    # the repository the run installed from source at no stated commit (a clone's `pip install .`): "owner/name"
    installed_from: str = ""
    # the report's version field says it ran the repository's source, not a release (a bug form's "Version: git")
    from_source: bool = False
