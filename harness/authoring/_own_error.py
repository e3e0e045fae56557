"""Which error a thread's report is about: the reporter's own (the title's and description's), not a later reply's
different one; and an exception line the store cut, completed from the title's copy of the same message."""

from __future__ import annotations

from dataclasses import replace

from harness.authoring._chain_choice import _pick
from harness.authoring._exception_line import _INLINE
from harness.authoring._prose import first_reply
from harness.authoring._torch_messages import library_words
from harness.authoring._traceback import Traceback, _Part, _read_exception, _strong_exception, _unmark


def _lone_exception(line: str) -> bool:
    """An exception line as Python prints it, not prose or a warning: 'ValueError: ...' flush with its text."""
    text = _unmark(line.strip())
    if not _strong_exception(text) or text.startswith(("#", "File ")):
        return False
    name = text.partition(":")[0].rpartition(".")[2]
    return name not in ("Error", "Exception", "Warning") and not name.endswith("Warning")


def own_error(traceback: Traceback, chains: list[list[_Part]], lines: list[str],
              title: str) -> tuple[Traceback, str] | None:
    """The reporter's own error where the chosen traceback is a later reply's with another message: a thread's replies
    ("name · comment · date") often paste a different error they hit; the bug is the one the title and description
    state. Their own complete traceback when they have one, else their last exception line, else the title's; None
    when the reporter states no error, or the same one (a message one copy shortens)."""
    replies = first_reply(lines)
    if replies is None or traceback.exception_line - 1 < replies:
        return None
    complete = [chain for chain in chains if chain[-1].complete and chain[-1].exception_index < replies]
    mine = _pick(complete)[0] if complete else _own_line(lines, replies, title)
    if mine is None:
        return None
    if mine.exception_class == traceback.exception_class and (mine.message.startswith(traceback.message)
                                                             or traceback.message.startswith(mine.message)):
        return None
    return mine, (f"the error at report line {traceback.exception_line} is a reply's, another than the reporter's: "
                  f"drafted from the reporter's {mine.exception_class} at line {mine.exception_line}"
                  + ("" if mine.frames else " (no frames of it: the call and the repro are yours to find)"))


def _own_line(lines: list[str], replies: int, title: str) -> Traceback | None:
    """The description's last exception line, else the title's "Class: message"."""
    index = next((i for i in range(replies - 1, -1, -1) if _lone_exception(lines[i])), None)
    if index is not None:
        part = _Part(index)
        _read_exception(lines, index, replies, "", part)
        return Traceback((), (), part.exception, part.message, index + 1, index + 1)
    named = next((m for m in _INLINE.finditer(title) if m["type"] not in ("Error", "Exception")), None)
    if named is None:
        return None
    at = next((i for i, line in enumerate(lines) if line.startswith("# ")), 0) + 1
    return Traceback((), (), named["type"], library_words(named["msg"].strip()), at, at)


def completed_from_title(traceback: Traceback, lines: list[str], title: str) -> tuple[Traceback, str] | None:
    """The final exception line the stored text cut (the report's last text, no line after it) where the title
    states the same class with a message that goes on from it ("expected device cuda:1" under a title "RuntimeError:
    expected device cuda:1 but got device cuda:0"): the title's whole message."""
    after = lines[traceback.exception_line:]
    if "\n" in traceback.message or any(line.strip().strip("`") for line in after):
        return None
    for match in _INLINE.finditer(title):
        whole = library_words(match["msg"].strip())
        if match["type"].rpartition(".")[2] == traceback.exception_class and len(whole) > len(traceback.message) \
                and whole.startswith(traceback.message) and traceback.message:
            return replace(traceback, message=whole), (
                f"the exception line at report line {traceback.exception_line} is the report's last text, cut: "
                "its whole message taken from the title's copy")
    return None
