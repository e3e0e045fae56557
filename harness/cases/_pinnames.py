"""validate: a commit pin (``name @ git+https://...@COMMIT``) whose name is not the project the commit builds. pip
refuses such a direct reference (its metadata names another project), so the variant cannot install.

Checked offline only where the case itself tells: another requirement of the case names the same project under the
index's spelling (``neuralprophet==0.4.0`` beside ``neural-prophet @ git+...``: names equal but for separators, two
canonical names), or the name is one the import-name table says is another project's on the index while the code
installs under another (``whisper @ git+...`` builds openai-whisper). Whether a repository's packaging names its
project as a commit pin says, in general, is known only from its setup.py/pyproject.toml at that commit: not read
here (validate is static and offline); a run's install fails loudly instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness.cases._distributions import DISTRIBUTIONS, OTHER_PROJECTS


def misnamed_commit_pin(case: Mapping[str, Any]) -> tuple[str | None, str, str] | None:
    """(variant, None for the case's own requires; the requirement; the project's name) for the first commit pin
    named otherwise than its project."""
    requirements = list(_requirements(case))
    released = {_squeezed(parsed.name): str(canonicalize_name(parsed.name)) for _, parsed in requirements
                if not parsed.url and parsed.specifier}
    for where, parsed in requirements:
        if not (parsed.url or "").startswith("git+"):
            continue
        name = str(canonicalize_name(parsed.name))
        right = released.get(_squeezed(parsed.name), name)
        if right == name and name in OTHER_PROJECTS:
            right = DISTRIBUTIONS[name][0]
        if right != name:
            return where, str(parsed), right
    return None


def _requirements(case: Mapping[str, Any]) -> list[tuple[str | None, Requirement]]:
    variants = case.get("variants")
    owners = [(None, case), *((str(name), raw) for name, raw in
                              (variants.items() if isinstance(variants, Mapping) else ()) if isinstance(raw, Mapping))]
    found: list[tuple[str | None, Requirement]] = []
    for where, raw in owners:
        requires = raw.get("requires")
        for text in requires if isinstance(requires, list) else ():
            try:
                found.append((where, Requirement(str(text))))
            except InvalidRequirement:
                continue  # a placeholder, or merge_requirements reports it
    return found


def _squeezed(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())
