"""A report's text as lines the readers can use: colours, launcher prefixes, HTML and console wraps undone."""

from __future__ import annotations

import html
import re
from collections import Counter

from harness.authoring._traceback import Traceback

MAX_LINE = 5000  # longer lines are cut for parsing (a minified blob is never a frame)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_BARE_SGR = re.compile(r"\[(?:\d{1,3};)*\d{1,3}m")  # a colour code whose ESC the paste lost ("[1m")
# Prefixes put before every line: torchrun's "[rank0]: ", Ray's "(Actor pid=1) ", a quote's "> ".
# A stored thread's turn marker ("[turn 0 by someone, continued]"): where an issue store joined a thread's pieces; the
# name in it is a person's, never code.
TURN_MARKER = re.compile(r"^\s*\[turn \d+ by [^\]]{0,100}\]\s*$")
_LINE_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|\([\w.-]+ pid=\d+(?:, ip=[\d.]+)?\)\s|(?:>\s?)+(?!>))")


def clean_lines(text: str) -> list[str]:
    """The report's lines without colours, launcher prefixes, line-end variants or the HTML of a raw markdown
    paste (``<pre>AttributeError: &apos;x&apos; ...</pre>``), one per report line."""
    return clean_lines_tagged(text)[0]


def clean_lines_tagged(text: str) -> tuple[list[str], tuple[str, ...]]:
    """``clean_lines`` and the launcher tags stripped from runs of lines (``[1,2]<stderr>:``), each once."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    lines = [_LINE_PREFIX.sub("", _unhtml(_straight_quotes(line[:MAX_LINE]))).rstrip() for line in text.split("\n")]
    return _stripped(lines)


# A launcher's or logger's tag before a line: bracket groups ("[1,2]<stderr>:", "[2024-01-02 10:11:12,345] [ERROR]"),
# a parenthesised worker ("(RayTrainWorker pid=1)"), a rank, host or stream word ("0:", "rank3:", "node-01:",
# "stderr:"), a compose service ("trainer-1  | ").
_TAG_PREFIX = re.compile(r"(?:\[[^\[\]]{1,60}\](?:<\w{1,10}>)?:?\s?){1,4}|\([\w .=,:-]{1,80}\)\s"
                         r"|(?:\d{1,5}|[A-Za-z_][\w.-]{0,40})(?:<\w{1,10}>)?:(?!//)|[\w.-]{1,40} +\|")
_TRACEBACK_LINE = re.compile(r'\s*(?:Traceback \(most recent call last\)|File "[^"]+", line \d+)')
_MIN_RUN = 3


def strip_run_prefixes(lines: list[str]) -> list[str]:
    """Lines whose every neighbour carries the same tag shape (its digits aside: ranks and times change) lose it
    where the run holds a traceback line once stripped: a tag on one line is the line's own text. The space after
    the tag goes with it only where every tagged line has one (mpirun writes "[1,2]<stderr>:  File ...")."""
    return _stripped(lines)[0]


def _stripped(lines: list[str]) -> tuple[list[str], tuple[str, ...]]:
    shapes = [_shape(line) for line in lines]
    out = list(lines)
    tags: dict[str, None] = {}
    start = 0
    while start < len(lines):
        end = start + 1
        while shapes[start] and end < len(lines) and shapes[end] == shapes[start]:
            end += 1
        if shapes[start] and end - start >= _MIN_RUN and (tag := _strip_run(out, start, end)):
            tags[tag] = None
        start = end
    return out, tuple(tags)


def _shape(line: str) -> str:
    match = _TAG_PREFIX.match(line)
    return re.sub(r"\d+", "0", match.group().rstrip()) if match else ""


def _strip_run(out: list[str], start: int, end: int) -> str:
    """Strips the run's tags when it holds a traceback line; the first line's tag, or "" when kept."""
    cuts = [len(_TAG_PREFIX.match(out[index]).group().rstrip()) for index in range(start, end)]  # type: ignore[union-attr]
    rests = [out[index][cut:] for index, cut in zip(range(start, end), cuts, strict=True)]
    if not any(_TRACEBACK_LINE.match(rest) for rest in rests):
        return ""
    tag = out[start][:cuts[0]]
    spaced = all(rest.startswith(" ") for rest in rests if rest)
    for index, rest in zip(range(start, end), rests, strict=True):
        out[index] = rest[1:] if spaced and rest else rest
    return tag


def _straight_quotes(line: str) -> str:
    """A frame line an editor or chat gave typographic quotes (File “/x/y.py”, line 3): Python's own quotes."""
    return line.replace("“", '"').replace("”", '"') if "File “" in line else line


# A frame line a console cut at its width ('File "C:\\...\\model', no closing quote): the rest is on the next line.
_CUT_FILE = re.compile(r'^\s*File "[^"]{8,}$')
_MIN_WRAP = 60


def unwrap_console(lines: list[str]) -> list[str]:
    """Join the lines a console hard-wrapped at a fixed width (Windows' cmd: 80 columns): the width is read from
    the frame lines cut before their closing quote (the width most of them share: a paste's last line may be cut
    short), and every line exactly that wide continues on the next one. A cut frame line whose path goes on at the
    next line's start (``.../site-packages/p`` + ``ytorch_lightning/x.py", line 3, in f``), and a frame's function
    name whose end stands alone before the frame's source line, are joined whatever their width (a reply's copy
    is ragged). The lines joined away stay as blank lines, so report line numbers hold."""
    widths = Counter(len(line) for line in lines if 'File "' in line and _CUT_FILE.match(line))
    if not widths:
        return lines
    ranked = widths.most_common(2)
    width = ranked[0][0] if len(ranked) == 1 or ranked[0][1] > ranked[1][1] else 0
    out = list(lines)
    index = 0
    while index < len(out) - 1:
        head = index
        while index + 1 < len(out) and lines[index + 1].strip() and _continues(out[head], lines, index, width):
            out[head] += lines[index + 1]
            out[index + 1] = ""
            index += 1
        index += 1
    return out


def _continues(joined: str, lines: list[str], index: int, width: int) -> bool:
    """Whether ``lines[index + 1]`` goes on ``lines[index]`` (the end of ``joined``, the line joined so far)."""
    line, after = lines[index], lines[index + 1]
    if width >= _MIN_WRAP and len(line) == width:
        return True
    if _CUT_FILE.match(line) and _PATH_REST.match(after):
        return True
    return bool(_FRAME_END.match(joined) and _NAME_REST.match(after) and index + 2 < len(lines)
                and lines[index + 2].startswith(" "))


_PATH_REST = re.compile(r'^[^\s"]{1,300}", line \d+')  # the rest of a cut path, then the frame's line number
_FRAME_END = re.compile(r'^\s*File "[^"]+", line \d+, in \w+$')
_NAME_REST = re.compile(r"^\w{1,40}$")


# The tags GitHub's markdown lets through around pasted errors; any other "<...>" is left (it may be Python's).
_TAG = re.compile(r"</?(?:pre|code|br|p|div|span|details|summary|b|i|em|strong|kbd|samp|tt|sub|sup)"
                  r"(?:\s[^<>]{0,200})?/?>", re.IGNORECASE)
_ENTITY = re.compile(r"&(?:[A-Za-z]{2,8}|#\d{1,7}|#x[0-9A-Fa-f]{1,6});")


def _unhtml(line: str) -> str:
    if "<" in line:
        line = _TAG.sub("", line)
    return html.unescape(line) if "&" in line and _ENTITY.search(line) else line


def _colours(text: str, traceback: Traceback) -> tuple[tuple[int, int], ...]:
    """Where the first message line had colour codes (torch bolds part of some messages): cleaning drops them."""
    first = traceback.first_message_line
    if not first:
        return ()
    spans = {(m.start(), m.end()) for m in _BARE_SGR.finditer(first)}
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for line in raw[traceback.exception_line - 1: traceback.exception_line + 40]:
        pieces = _ANSI.split(line[:MAX_LINE * 2])
        at = "".join(pieces).find(first)
        if at < 0:
            continue
        offset = 0
        for piece in pieces[:-1]:
            offset += len(piece)
            if 0 < offset - at < len(first):
                spans.add((offset - at, offset - at))
        break
    return tuple(sorted(spans))

