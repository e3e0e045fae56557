"""A traceback as pytest prints it (``pypots/base.py:380: in load``, the failing test's source with ``>`` at the line
that raised, ``E       TypeError: ...`` and ``pypots/base.py:408: TypeError``), rewritten line for line as Python
prints one, so the traceback reader reads its frames and exception like any other. Line numbers hold: every line is
rewritten in place or blanked."""

from __future__ import annotations

import re

# A frame pytest prints in its long and short styles: "pypots/base.py:380: in load".
_FRAME = re.compile(r"^(?P<path>\S{1,300}?\.pyw?):(?P<line>\d{1,7}): in (?P<func>[\w<>.]{1,200})\s*$")
# The exception pytest prints under the failing line: "E       TypeError: 'list' object is not callable".
_ERROR = re.compile(r"^E(?: {1,12}(?P<text>\S.*)|\s*)$")
# Where the innermost frame raised, after its "E" lines: "pypots/base.py:408: TypeError".
_WHERE = re.compile(r"^(?P<path>\S{1,300}?\.pyw?):(?P<line>\d{1,7}): (?P<type>[A-Za-z_][\w.]{0,200})\s*$")
# The innermost frame's function as pytest shows its source: "    def restore_location(storage, location):".
_DEF = re.compile(r"^\s*(?:async\s+)?def (?P<func>\w{1,200})\s*\(")
# The line that raised, marked: ">       result = map_location(storage, location)".
_MARKED = re.compile(r"^>(?P<source>\s+\S.*)$")


def unpytest(lines: list[str]) -> list[str]:
    """``lines`` with a pytest traceback (its frames, then its ``E`` lines) rewritten as Python's; other lines
    unchanged, and the same number of them."""
    errors = [i for i, line in enumerate(lines) if (found := _ERROR.match(line)) and found["text"]]
    if not errors:
        return lines
    first_error = errors[0]
    entries = [i for i in range(first_error) if _FRAME.match(lines[i]) or _long_entry(lines, i, first_error)]
    if not entries:
        return lines
    out = list(lines)
    index = entries[0]
    while index < first_error:
        index = _rewrite(lines, out, index, first_error, errors[-1])
    for index in errors:
        out[index] = _ERROR.match(lines[index])["text"]  # type: ignore[index]
    return out


# Where a long entry other than the last stopped: "tests/test_widget.py:12: " (its function is its "def" line's).
_LOCATION = re.compile(r"^(?P<path>\S{1,300}?\.pyw?):(?P<line>\d{1,7}):\s*$")


def _long_entry(lines: list[str], index: int, first_error: int) -> tuple[int, int] | None:
    """A long entry starting at ``index``: its ``def`` line, then its marked line (the indexes of both)."""
    if not _DEF.match(lines[index]):
        return None
    for later in range(index + 1, min(first_error, index + 200)):
        if _MARKED.match(lines[later]):
            return index, later
        if _FRAME.match(lines[later]) or _LOCATION.match(lines[later]) or _DEF.match(lines[later]):
            return None
    return None


def _rewrite(lines: list[str], out: list[str], index: int, first_error: int, last_error: int) -> int:
    """Rewrite the pytest line at ``index`` (a frame, a long entry, or what pytest prints between them: separators,
    arguments, locations, blank lines) and return the index after what was rewritten."""
    if found := _FRAME.match(lines[index]):
        out[index] = f'  File "{found["path"]}", line {found["line"]}, in {found["func"]}'
        return index + (2 if index + 1 < first_error and lines[index + 1][:1].isspace() else 1)  # its source
    if (entry := _long_entry(lines, index, first_error)) is None:
        if not lines[index][:1].isspace() or not lines[index].strip():
            out[index] = ""  # a separator, an argument listing, a location already read
        return index + 1
    defined, marked = entry
    where = _entry_location(lines, marked, first_error, last_error)
    path, number = (where["path"], where["line"]) if where else ("<pytest>", "0")
    out[defined] = f'  File "{path}", line {number}, in {_DEF.match(lines[defined])["func"]}'  # type: ignore[index]
    for between in range(defined + 1, marked):
        out[between] = ""
    out[marked] = "    " + _MARKED.match(lines[marked])["source"].strip()  # type: ignore[index]
    return marked + 1


def _entry_location(lines: list[str], marked: int, first_error: int, last_error: int) -> re.Match[str] | None:
    """The location line of the entry whose marked line is ``marked``: the next ``path:N:`` line before the next
    entry, or for the last entry (no location before the ``E`` lines) the ``path:N: Type`` line after them."""
    for later in range(marked + 1, first_error):
        if found := _LOCATION.match(lines[later]):
            return found
        if _FRAME.match(lines[later]) or _DEF.match(lines[later]):
            return None
    return next((found for line in lines[last_error + 1: last_error + 4] if (found := _WHERE.match(line))), None)
