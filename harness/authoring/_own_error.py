"""Which error a thread's report is about: the reporter's own (the title's and description's), not a later reply's
different one; and an exception line the store cut, completed from the title's copy of the same message."""

from __future__ import annotations

from harness.authoring._traceback import _strong_exception, _unmark


def _lone_exception(line: str) -> bool:
    """An exception line as Python prints it, not prose or a warning: 'ValueError: ...' flush with its text."""
    text = _unmark(line.strip())
    if not _strong_exception(text) or text.startswith(("#", "File ")):
        return False
    name = text.partition(":")[0].rpartition(".")[2]
    return name not in ("Error", "Exception", "Warning") and not name.endswith("Warning")
