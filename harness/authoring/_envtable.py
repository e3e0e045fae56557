"""An environment pasted as a Markdown table (a split of ``_envlist``): ``| Key | Value |`` rows such as PyKEEN's
``pykeen version -v`` (``| Python | 3.8.10 |``, ``| PyKEEN | 1.6.0 |``), or a ``| Package | Version |`` listing."""

from __future__ import annotations

import re
from collections.abc import Iterator

from harness.authoring._envtypes import _RELEASE, Pin

# "| PyKEEN          | 1.6.0   |": a name cell, then a cell that is a release and nothing else (not "| Release |
# 5.10.60.1-microsoft-standard-WSL2 |", an OS's), any further cells ignored.
_ROW = re.compile(rf"^\s*\|\s*`?(?P<name>[A-Za-z][\w.-]{{0,40}}(?: [A-Za-z][\w.-]{{0,40}}){{0,2}})`?\s*\|\s*`?v?"
                  rf"(?P<ver>{_RELEASE})`?\s*(?:\|[^\n]*)?$")
_HEADER = re.compile(r"^\s*\|[^|\n]{0,40}\|\s*(?:value|version)s?\s*\|", re.IGNORECASE)
_ENVIRONMENT_KEYS = ("python", "pytorch", "torch")


def table_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """(name as written, pin) for each release row of a table that is an environment: its header says Value or
    Version, or a row names Python or torch (a table of metrics, "| loss | 0.53 |", is none)."""
    start = 0
    while start < len(lines):
        if not lines[start].lstrip().startswith("|"):
            start += 1
            continue
        end = start
        while end < len(lines) and lines[end].lstrip().startswith("|"):
            end += 1
        rows = [(index, row) for index in range(start, end) if (row := _ROW.match(lines[index]))]
        if _HEADER.match(lines[start]) or any(row["name"].lower() in _ENVIRONMENT_KEYS for _, row in rows):
            yield from ((row["name"], Pin(row["ver"], "env listing", index + 1)) for index, row in rows)
        start = end
