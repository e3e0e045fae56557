"""Listings of a distribution and its release in shapes the line patterns of ``_envlist`` do not read (a split of
it): a Markdown table (``| Key | Value |`` rows such as PyKEEN's ``pykeen version -v``: ``| Python | 3.8.10 |``,
``| PyKEEN | 1.6.0 |``; or a ``| Package | Version |`` listing), ``pip show``'s ``Name:``/``Version:`` lines, and a
conda environment file's ``- numpy=1.17.4=py37h7e9f1db_0``."""

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


# A Markdown table's separator row, its outer pipes optional: "|---|---|", "--- | :---:".
_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)+\|?\s*$")


def _outer_pipes(lines: list[str]) -> list[str]:
    """The lines with a leading pipe added to the rows of a table written without outer pipes ("Key | Value",
    "--- | ---", "Python | 3.8.10"): a run of lines holding a pipe that has a separator row."""
    rows = list(lines)
    start = 0
    while start < len(rows):
        end = start
        while end < len(rows) and "|" in rows[end]:
            end += 1
        if any(_SEPARATOR.match(rows[index]) for index in range(start, end)):
            rows[start:end] = [row if row.lstrip().startswith("|") else f"| {row}" for row in rows[start:end]]
        start = end + 1
    return rows


def table_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """(name as written, pin) for each release row of a table that is an environment: its header says Value or
    Version, or a row names Python or torch (a table of metrics, "| loss | 0.53 |", is none)."""
    lines = _outer_pipes(lines)
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


# `pip show torch`: "Name: torch" then, within the next lines, "Version: 2.0.1".
_SHOWN_NAME = re.compile(r"^\s*Name:\s*(?P<name>[A-Za-z0-9][\w.-]{0,60})\s*$")
_SHOWN_VERSION = re.compile(rf"^\s*Version:\s*(?P<ver>{_RELEASE})\s*$")
# `conda env export`'s "  - numpy=1.17.4=py37h7e9f1db_0" (a build string) or a spec bullet "- numpy=1.17.4"; not a
# bare "lr=0.001", a config's.
_CONDA_SPEC = re.compile(rf"^\s*(?:-\s+(?P<name>[A-Za-z][\w.-]{{0,60}})=(?P<ver>{_RELEASE})(?:=\S+)?"
                         rf"|(?P<built>[A-Za-z][\w.-]{{0,60}})=(?P<built_ver>{_RELEASE})=[\w.]+)\s*$")


def shown_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """(name as written, pin) for each ``pip show`` block and conda environment-file line."""
    for index, line in enumerate(lines):
        if (shown := _SHOWN_NAME.match(line)) and (version := next(
                (v for n in range(index + 1, min(index + 3, len(lines))) if (v := _SHOWN_VERSION.match(lines[n]))),
                None)):
            yield shown["name"], Pin(version["ver"], "env listing", index + 2)
        elif "=" in line and (spec := _CONDA_SPEC.match(line)):
            yield spec["name"] or spec["built"], Pin(spec["ver"] or spec["built_ver"], "env listing", index + 1)
