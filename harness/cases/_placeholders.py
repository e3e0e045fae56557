"""Placeholders: the parts of a case file its author has still to write.

``python -m harness new`` writes a case with every value it cannot know (the fixed release, the upstream
links, the summary) as a text starting with :data:`MARK`, followed by what to write there::

    requires: ["FILL-IN: pin the first fixed release, e.g. diffusers==X.Y.Z"]

The loader refuses such a case and names each placeholder with its line and what to write, so
``python -m harness validate`` is the author's list of what is left.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from harness._exceptions import CaseFileError

MARK = "FILL-IN"


@dataclass(frozen=True)
class Placeholder:
    trail: tuple[Any, ...]  # the YAML path: ("variants", "fix", "requires", 0)
    value: str

    @property
    def where(self) -> str:
        return "/".join(map(str, self.trail))

    def describe(self) -> str:
        match self.trail:
            case ("variants", name, "requires", _):
                return f"variant {name!r} still has the placeholder requirement {_short(self.value)}"
            case ("requires", _):
                return f"requires still has the placeholder requirement {_short(self.value)}"
            case _:
                return f"{self.where} is still the placeholder {_short(self.value)}"

    def fix(self) -> str:
        """What the placeholder itself asks for (the text after ``FILL-IN:``), or a default for its field."""
        instruction = self.value.partition(MARK)[2].lstrip(":").strip()
        return instruction or _DEFAULT_FIX.get(self.trail[0], "replace it with the real value")


_DEFAULT_FIX = {
    "title": "one line a maintainer recognises",
    "upstream": "link the issue, pull request or commit (an https:// URL)",
    "signature": "a regular expression the buggy failure's exception message matches",
    "summary": "one paragraph: what breaks, why, what fixed it",
    "requires": "a pinned requirement, e.g. 'somelib==1.0.0'",
    "variants": "the variant's value (see harness/case.schema.json)",
}


def _short(value: str, limit: int = 48) -> str:
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}..."


def find_placeholders(node: Any, trail: tuple[Any, ...] = ()) -> Iterator[Placeholder]:
    """Every text value (not key) in the parsed case file that contains :data:`MARK`, in document order."""
    if isinstance(node, str):
        if MARK in node:
            yield Placeholder(trail, node)
    elif isinstance(node, dict):
        for key, value in node.items():
            yield from find_placeholders(value, (*trail, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from find_placeholders(value, (*trail, index))


# How `new`'s skeleton marks the imports it took from the traceback (the comment after "import timm": this text,
# then " (distribution timm); the call uses it"). validate checks each such import's distribution is pinned.
SKELETON_IMPORT = "# noqa: F401 - in the traceback"
# The line `new` opens a repro skeleton with: a repro still carrying it is a filled-in draft.
SKELETON_HEADER = "Written by `python -m harness new` from"
IMPORT_DISTRIBUTION = "distribution"


def script_placeholders(text: str, name: str) -> list[tuple[int, str]]:
    """(line, what to write) for each line of a repro script still holding :data:`MARK` (the skeleton's
    ``raise NotImplementedError("FILL-IN: ...")``), or raising NotImplementedError unconditionally in a function
    (the skeleton's raise with its mark edited away): a script that raises it can never reproduce the bug."""
    lines = {number for number, line in enumerate(text.splitlines(), 1)
             if MARK in line and "NotImplementedError" in line} | _unconditional_not_implemented(text)
    raised = [(number, f"{name}: the call that reproduces the bug (replace the skeleton's NotImplementedError)")
              for number in sorted(lines)]
    return sorted([*raised, *_comment_placeholders(text, name)])


def _comment_placeholders(text: str, name: str) -> list[tuple[int, str]]:
    """(line, what to write) for each ``# FILL-IN: <what>`` comment line of a repro script (the skeleton's import
    it could not name): a script still holding one was not finished."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        comment = line.strip()
        if comment.startswith(f"# {MARK}"):
            found.append((number, f"{name}: {comment[len(MARK) + 2:].lstrip(':').strip() or 'fill it in'}"))
    return found


def _unconditional_not_implemented(text: str) -> set[int]:
    """Lines of ``raise NotImplementedError...`` statements straight in a function's body (no if/try around)."""
    if "NotImplementedError" not in text:
        return set()
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return set()
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for statement in node.body:
                raised = statement.exc if isinstance(statement, ast.Raise) else None
                raised = raised.func if isinstance(raised, ast.Call) else raised
                if isinstance(raised, ast.Name) and raised.id == "NotImplementedError":
                    found.add(statement.lineno)
    return found


def placeholder_error(path: Any, data: Any, line_of: Callable[[list[Any]], int | None],
                      script: list[tuple[int, str]] | None = None) -> CaseFileError | None:
    """A :class:`CaseFileError` naming the first placeholder (file:line, what, fix) and listing the others,
    those of the repro script (``script``: its lines and what to write there) last."""
    found = sorted(((line_of(list(p.trail)) or 0, p) for p in find_placeholders(data)), key=lambda item: item[0])
    script = script or []
    if not found and not script:
        return None
    if found:
        (line, first), rest = found[0], found[1:]
        what, fix, others = first.describe(), first.fix(), [f"line {n}: {p.where}: {p.fix()}" for n, p in rest]
    else:
        (number, fix), others = script[0], []
        what = f"{fix.partition(':')[0]} line {number} still raises the skeleton's NotImplementedError"
        line, script = 0, script[1:]
    others += [f"{fix_.partition(':')[0]} line {n}: {fix_.partition(':')[2].strip()}" for n, fix_ in script]
    if others:
        fix += "\n  also to fill in:" + "".join(f"\n    {other}" for other in others)
    count = f" ({len(others) + 1} placeholders still to fill in)" if others else ""
    return CaseFileError(path, what + count, fix=fix, line=line or None)
