"""An exception line whose class the reporter retyped in another case ("runtimeerror: module must have ...",
"Keyerror: 'iter'"): Python's and torch's classes, matched regardless of case only at a line's start and followed by
": ", so prose that merely mentions an error is not read as one."""

from __future__ import annotations

import builtins
import re

from harness.authoring._torch_messages import library_words
from harness.authoring._traceback import _unmark

# Python's own error classes, and torch's few top-level ones, by their lower-case spelling.
_KNOWN = {name.lower(): name for name, value in vars(builtins).items()
          if isinstance(value, type) and issubclass(value, BaseException) and name.endswith("Error")}
_KNOWN |= {"outofmemoryerror": "torch.OutOfMemoryError", "acceleratorerror": "torch.AcceleratorError",
           "distbackenderror": "torch.distributed.DistBackendError"}

_LINE = re.compile(r"(?P<type>[A-Za-z][\w.]{0,80}): (?P<msg>\S.{0,2000})")


def casefold_exception(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The report's last line that starts with a known class in a case Python never prints, then ": " and a message:
    (its index, the class as Python spells it, the message, where it was read)."""
    for index in range(len(lines) - 1, -1, -1):
        match = _LINE.fullmatch(_unmark(lines[index].strip()))
        if match is None:
            continue
        written = match["type"].rpartition(".")[2]
        proper = _KNOWN.get(written.lower())
        if proper is None or proper.rpartition(".")[2] == written:
            continue
        message = library_words(_unpaired_quote_dropped(match["msg"].strip()))
        return index, proper, message, f"an exception line whose class is written {written!r}, read as {proper}"
    return None


def _unpaired_quote_dropped(message: str) -> str:
    """The message without a closing quote it does not open (the line pasted out of a quoted string)."""
    for quote in ('"', "'", "`"):
        if message.endswith(quote) and message.count(quote) % 2:
            return message[:-1].rstrip()
    return message
