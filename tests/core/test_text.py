"""for_terminal / for_markup: case- and repro-controlled text is shown, never obeyed, by a terminal."""

from __future__ import annotations

import io

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text

from harness._io import for_terminal

HOSTILE = {
    "OSC title change": ("\x1b]0;owned\x07", "\\x1b]0;owned\\x07"),
    "clear screen": ("\x1b[2J\x1b[H", "\\x1b[2J\\x1b[H"),
    "concealed text": ("\x1b[8msecret\x1b[0m", "\\x1b[8msecret\\x1b[0m"),
    "carriage return overwrite": ("all good\rFAILED", "all good\\rFAILED"),
    "C1 CSI": ("\x9b2J", "\\x9b2J"),
    "right-to-left override": ("abc\u202edcba", "abc\\u202edcba"),
    "line separator": ("a\u2028b", "a\\u2028b"),
    "NUL and DEL": ("a\0b\x7f", "a\\x00b\\x7f"),
}


@pytest.mark.parametrize("name", list(HOSTILE))
def test_control_characters_are_made_visible(name):
    text, shown = HOSTILE[name]
    assert for_terminal(text) == shown


def test_ordinary_text_newlines_and_tabs_are_kept():
    text = "Expected all tensors on cuda:0 and cpu!\n\tat line 3 — é 漢字 🚀 [bold] $x"
    assert for_terminal(text) == text
    assert for_terminal("a\nb", one_line=True) == "a\\nb"


@given(st.text())
def test_no_control_character_survives(text):
    shown = for_terminal(text)
    assert not any((ord(c) < 0x20 and c not in "\t\n") or 0x7F <= ord(c) < 0xA0 for c in shown)
    assert "\n" not in for_terminal(text, one_line=True)


@pytest.mark.parametrize("text", ["[/]", "closing [/dim] early", "https://x.invalid/?q=[a]&b=]", "[link=javascript:x]y",
                                  "trailing backslash \\", "\\[bold]", ":warning: emoji code"])
def test_as_rich_text_markup_lookalikes_print_as_written(text):
    """The CLI prints case and repro text as rich Text: never parsed as markup, so printed as written."""
    out = io.StringIO()
    Console(file=out, width=200, color_system=None, emoji=False).print(Text(for_terminal(text)), end="")
    assert out.getvalue() == text
