"""A release a report's prose states without naming its package (a split of ``_envlist``)."""

from __future__ import annotations

import re

from harness.authoring._envcommit import WORKING as _WORKING
from harness.authoring._envtypes import _RELEASE, Pin

# "I rerun it on version 0.23", "with v1.2.0 of the package": a release named in a sentence without its package.
# "with the latest release (0.8.0)", "on the current version v2.1": the release the run used, in parentheses or not.
_UNNAMED = re.compile(rf"\b(?:on|with|using|in|from)\s+(?:the\s+)?(?:version\s+v?|v|(?:latest|newest|current|last)"
                      rf"\s+(?:release|version)\s+\(?v?)(?P<ver>{_RELEASE})\b")
# A release a sentence proposes rather than ran: "try the latest release (0.9.0)", "upgrade to the newest version 2".
_PROPOSED = re.compile(r"\b(?:try|trying|upgrad\w*|updat\w*|install\w*|recommend\w*|please|should|could)\b",
                       re.IGNORECASE)


# A deprecation warning's releases ("deprecated since v1.5 and will be removed in v1.7"): the library's schedule,
# never a release the run states.
SCHEDULE = re.compile(r"\bdeprecat\w*|\bremoved in\b|\bwill be (?:removed|dropped)\b|Warning:")


# An issue title's tag: "[BUG] v1.1.0版本训练模型时 ..." (a `v` and a dotted release, any text around it).
_TITLE_RELEASE = re.compile(r"(?<![\w.])v(?P<ver>\d+\.\d+(?:\.\d+)?)(?![\d.])")


# "After upgrade from 0.7.5 to 0.7.8 X gets RuntimeError": the release upgraded to is the one that ran (and broke).
_UPGRADED = re.compile(rf"\b(?:upgrad\w*|updat\w*|bump\w*|going)\s+from\s+v?{_RELEASE}\s+to\s+v?(?P<ver>{_RELEASE})"
                       r"(?![\w.])", re.IGNORECASE)


def _unnamed_pin(lines: list[str]) -> Pin | None:
    """The first release a sentence states without naming a package (exactly one distinct version, else none); an
    upgrade "from A to B" the report's title or description states gives B."""
    upgraded = next(((index, match["ver"]) for index, line in enumerate(lines) if "from" in line
                     for match in _UPGRADED.finditer(line)), None)
    if upgraded is not None:
        return Pin(upgraded[1], "a sentence (no package named)", upgraded[0] + 1)
    found = [(index, match["ver"]) for index, line in enumerate(lines)
             if ("version" in line or " v" in line or "release" in line) and not _WORKING.search(line)
             and not SCHEDULE.search(line)
             and not ("release" in line and _PROPOSED.search(line))
             for match in (_TITLE_RELEASE if line.startswith("# ") else _UNNAMED).finditer(line)]
    if len({version for _, version in found}) != 1:
        return None
    return Pin(found[0][1], "a sentence (no package named)", found[0][0] + 1)
