"""A traceback cut at the frame whose source line raises the error (``raise RuntimeError('DataLoader worker (pid(s)
{}) exited unexpectedly'.format(``): the class and the message are on that line, the message a template when the
line formats it (its fields written "{}", which the signature generalises)."""

from __future__ import annotations

import re

from harness.authoring._traceback import _Part

_RAISE = re.compile(r"\braise\s+(?P<cls>(?:[A-Za-z_]\w{0,80}\.){0,4}[A-Z]\w{0,80}(?:Error|Exception))\(\s*"
                    r"(?P<prefix>[fFrRbBuU]{0,2})(?P<q>['\"])(?P<msg>[^'\"\n]{3,500})(?P=q)")
_FIELD = re.compile(r"\{[^{}]{0,80}\}|%[-#0 +]?\d*(?:\.\d+)?[sdrifxg]")
_FORMATS = re.compile(r"\s*(?:\.format\(|%)")


def raised_template(lines: list[str], chains: list[list[_Part]]) -> tuple[int, str, str, str] | None:
    """The last ``raise Class('message'`` line of the report's last traceback, with no frame after it (the frame it
    raised in is the innermost): (line, class, message, how it was read); None when the traceback ends elsewhere."""
    if not chains:
        return None
    for index in range(len(lines) - 1, chains[-1][0].start - 1, -1):
        if (match := _RAISE.search(lines[index])) is None:
            if 'File "' in lines[index]:
                return None  # a frame below the last raise line: that raise is not where the run stopped
            continue
        message, where = match["msg"], "the raise statement the cut traceback stops at"
        if "f" in match["prefix"].lower() or _FORMATS.match(lines[index], match.end()):
            message = _FIELD.sub("{}", message)
            where += " (its message a template: each field written {}, which the signature matches as any text)"
        return index, match["cls"], message, where
    return None
