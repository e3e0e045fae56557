"""Text a case or a repro controls, made safe to print on a terminal or into a CI log.

A title, an exception message or a log line can carry escape sequences: an OSC title change, a
clear-screen, text hidden with SGR "conceal", a carriage return that overwrites what came before, or a
right-to-left override that reorders what the reader sees. :func:`for_terminal` makes each such
character visible (``\\x1b`` for ESC) and leaves every other character alone.

Rich markup is the other half: print such text as a ``rich.text.Text`` (never parsed as markup), not
inside a markup string, where a title containing ``[/]`` raises MarkupError.
"""

from __future__ import annotations

# C0 controls but tab and newline, DEL, C1 controls (U+009B is a one-character CSI on some terminals),
# the Unicode characters that reorder or break lines (bidi embeddings, overrides, isolates, marks), and
# lone surrogates (no UTF-8 stream can write one: printing it raised UnicodeEncodeError mid-run).
_UNSAFE = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
           *range(0x2028, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000)]
_VISIBLE = {code: (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}") for code in _UNSAFE} | {ord("\r"): "\\r"}
_VISIBLE_ONE_LINE = {**_VISIBLE, ord("\n"): "\\n"}


def for_terminal(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``); newlines kept unless ``one_line``."""
    return text.translate(_VISIBLE_ONE_LINE if one_line else _VISIBLE)


# A web page: the same, but a carriage return stays (browsers show it as a line break, never overwrite).
_VISIBLE_PAGE = {code: shown for code, shown in _VISIBLE.items() if code != ord("\r")}


def for_page(text: str) -> str:
    """``text`` for an HTML page: control and bidi characters shown as escapes, line breaks kept."""
    return text.translate(_VISIBLE_PAGE)
