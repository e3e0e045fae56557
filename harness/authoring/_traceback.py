"""A pasted traceback read into frames and its final exception: plain or chained, with log prefixes, IPython/Colab
or rich-boxed frames, cut or wrapped lines. The rest of a report is read in ``_bugreport``."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from harness._exceptions import UsageError


@dataclass(frozen=True)
class Frame:
    path: str  # as printed
    line: int | None
    function: str
    source: str
    report_line: int  # 1-based line of the report
    cut: bool = False  # the paste starts inside it ('pkg/mod.py", line 170, in f'): its path is relative to a root

    @property
    def posix(self) -> str:
        return self.path.replace("\\", "/")


@dataclass(frozen=True)
class Traceback:
    """One traceback; for a chain ("During handling of the above exception"), all of its parts."""

    frames: tuple[Frame, ...]  # every part of the chain, outermost first
    final_frames: tuple[Frame, ...]  # the part that ends in the final exception
    exception: str  # as printed, e.g. torch.OutOfMemoryError
    message: str
    start_line: int  # 1-based report line of its first "Traceback" header (or first frame)
    exception_line: int
    # Spans of first_message_line where the report had terminal colour codes (empty spans where an escape
    # sequence was cleaned away, the text of a code whose ESC the paste lost): the real message holds them.
    colours: tuple[tuple[int, int], ...] = ()
    # The chain's final exception when the report cuts it and this one is its cause ("NameError: name 'trainer' is
    # not defined", raised while handling this one): the case matches this one; the other is named beside it.
    chained: str = ""

    @property
    def exception_class(self) -> str:
        """What the harness compares with a result's exception type: the class name."""
        return self.exception.rpartition(".")[2]

    @property
    def first_message_line(self) -> str:
        """The message's first line; when that line only announces what follows (it ends with ":" and the next line
        is indented: torch's "Error(s) in loading state_dict for M:" over "\tMissing key(s) in state_dict: ..."),
        the next line too, on a line of its own, its list of quoted names cut to the first."""
        lines = [line for line in self.message.splitlines() if line.strip()]
        if not lines:
            return ""
        first = lines[0].strip()
        if first.endswith(":") and len(lines) > 1 and lines[1][:1].isspace():
            return first + "\n" + _QUOTED_LIST.sub(r"\g<first>", lines[1].strip())
        if len(lines) > 1 and _WRAPPED_AT.search(first) and _GOES_ON.match(lines[1]):  # a paste's wrap mid-sentence
            return f"{first} {lines[1].strip()}"
        return first


# A line a paste wrapped mid-sentence: it ends in a word that never ends a message, the next goes on in lower case.
_WRAPPED_AT = re.compile(r"(?:,|\b(?:and|or|of|to|the|a|an|for|in|with|but|is|are|be|at|on|from|by|than))$")
_GOES_ON = re.compile(r"^[a-z0-9(\['\"]")
# A list of quoted names ('"conv1.weight", "layer0.0.gn1.weight", ...'): its first name says which list it is.
_QUOTED_LIST = re.compile(r"(?P<first>: (?P<q>[\"'])[^\"']{1,300}(?P=q))(?:, (?P=q)[^\"']*(?P=q)?)+\.?$")


_HEADER = re.compile(r"Traceback \(most recent call last\)")
_CHAIN = re.compile(r"During handling of the above exception|The above exception was the direct cause")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*\S))?')
# IPython 8 "File /x.py:431, in f(a)" (JupyterLab links it: "File [~/x.py:431](http://...#line=430), in f(a)"),
# Colab "[/x.py](url) in f(a)", IPython 7 "/x.py in f(a)" (an absolute path may hold spaces: Colab's
# "/content/drive/My Drive/x.py in f(a)")
_FRAME_IPY = re.compile(
    r"^\s*(?:File \[?(?P<path8>[^\s\[][^\n]*?\.pyw?):(?P<line>\d+)(?:\]\([^)\s]*\)?)?(?:, in (?P<func8>[^\s(]+))?"
    r"|\[?(?P<path7><ipython-input-[^>]*+>|[^\s\[\]()]+\.pyw?|/[^\[\]()]{0,300}?\.pyw?)\]?(?:\([^)\s]*+\))?\s++in\s++"
    r"(?P<func7>[^(\s]++(?:\s++[^(\s]++)*+)\s*+\()"  # possessive: a run of spaces is never rescanned
)
# A frame whose start the paste cut: 'flash_attn/flash_attn_interface.py", line 170, in _flash_attn_varlen_forward'
_CUT_FRAME = re.compile(r'^\s*(?P<path>[\w./-][\w./\\-]{0,300}\.pyw?)", line (?P<line>\d+), in (?P<func>\S+)\s*$')
_CELL = re.compile(r"^\s*(?:Cell (?P<cell>In\s?\[\d+\]), line (?P<line>\d+)|Input (?P<input>In \[\d+\]))")
_ARROW = re.compile(r"^\s*-+>\s*(?P<line>\d+)\s(?P<src>.*)$")  # IPython's current line
_RICH_ARROW = re.compile(r"^[❱>]\s*(?P<line>\d+)(?:\s*│|\s)(?P<src>.*)$")  # no "│" after the number: a cell's
_RICH_FRAME = re.compile(r"^(?P<path>\S*?\.pyw?):(?P<line>\d+)(?: in(?: (?P<func>\S+))?)?$")
# rich's frame whose file it could not open (a notebook cell, exec'd code): "in get_prediction:8", no path.
_RICH_PATHLESS = re.compile(r"^in (?P<func>[\w<>.]{1,200}):(?P<line>\d+)$")
RICH_CELL = "In []"  # the path of such a frame: the code the report ran, in no file (as IPython's cells)
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::(?:\s(?P<msg>.*))?)?$")
_STRONG = re.compile(r"(Error|Exception|Warning|Exit|Interrupt|Failure|Failed|Fault|Timeout)$")
_BARE_BUILTINS = frozenset({"StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "GeneratorExit"})
_MAYBE_FRAME = re.compile(r"File |\.pyw?\b|In ?\[")  # a cheap test before the frame patterns
# (and an issue store's "[turn 0 by NAME, continued]" where it joined a paste's pieces)
_NOISE = re.compile(r"^\s*(?:[\^~]+|\.\.\.<\d+ lines>\.\.\.|\[Previous line repeated \d+ more times?\]|\d+ frames"
                    r"|\[turn \d+ by [^\]]{1,100}\])\s*$")
_LAUNCHERS = ("ChildFailedError",)  # torchrun's summary of a failed worker: the worker's own traceback is earlier
_MAX_RICH_PATH = 1024  # characters of a path a rich box wraps over lines; longer is no path
_MAX_GAP = 400  # lines of unrelated text (interleaved logs) tolerated inside one traceback


@dataclass
class _Part:
    start: int  # 0-based index of the header (or first frame)
    frames: list[Frame] = field(default_factory=list)
    exception: str = ""
    message: str = ""
    exception_index: int = -1
    end: int = 0  # index after the part

    @property
    def complete(self) -> bool:
        return self.exception_index >= 0


def _chains(lines: list[str]) -> list[list[_Part]]:
    headers = [i for i, line in enumerate(lines) if _HEADER.search(line)]
    # A paste often starts below the first traceback's header: its frames before the first header count too.
    first = next((i for i, line in enumerate(lines[: headers[0] if headers else len(lines)])
                  if _MAYBE_FRAME.search(line) and _starts_frames(line, i)), None)
    headers = headers if first is None else [first, *headers]
    parts = [_parse_part(lines, start, headers[n + 1] if n + 1 < len(headers) else len(lines))
             for n, start in enumerate(headers)]
    chains: list[list[_Part]] = []
    for part in parts:
        previous = chains[-1][-1] if chains else None
        chained = previous is not None and previous.complete and any(
            _CHAIN.search(line) for line in lines[previous.end:part.start])
        if chained:
            chains[-1].append(part)
        else:
            chains.append([part])
    return chains


def _starts_frames(line: str, index: int) -> bool:
    """A frame line, also a rich box's frame row ("│ D:\\app\\run.py:66 in main │") pasted without the box's top."""
    boxed, text = _unbox(line)
    return _frame_of(text, index, "" if boxed else None) is not None


def _parse_part(lines: list[str], start: int, stop: int) -> _Part:
    part = _Part(start)
    header = lines[start]
    at = header.find("Traceback (")
    if at >= 0:
        prefix, first = _prefix_for(lines, start, stop, header[:at]), start + 1
    else:  # a traceback pasted without its header starts at its first frame
        prefix, first = "", start
    _scan(lines, first, stop, prefix, part)
    return part


def _prefix_for(lines: list[str], start: int, stop: int, before: str) -> str:
    """What precedes 'Traceback' on its line, if the lines after it carry it too (log prefixes, indentation)."""
    following = next((line for line in lines[start + 1:stop] if line.strip()), "")
    return before if before and following.startswith(before) else ""


def _scan(lines: list[str], first: int, stop: int, prefix: str, part: _Part) -> None:
    gap = 0
    frame_indent: int | None = None
    rich_path = ""
    after_frame = False
    fallback = -1  # an exception line indented like the frames: used when no better one follows
    for index in range(first, stop):
        text = _without(prefix, lines[index])
        if not text.strip() or text.strip().startswith("```"):
            continue
        if _CHAIN.search(text):
            break
        boxed, text = _unbox(text)
        frame = _frame_of(text, index, rich_path if boxed else None)
        if boxed and frame is None and _rich_path_piece(text):
            # bounded: each boxed line re-reads the pieces so far, so an unbounded path costs quadratic time
            rich_path = (rich_path if len(rich_path) < _MAX_RICH_PATH else "") + text.strip()
            continue
        rich_path = ""
        if frame is not None:
            part.frames.append(frame)
            frame_indent = _indent(text) if frame_indent is None else min(frame_indent, _indent(text))
            after_frame, gap, fallback = True, 0, -1
            continue
        still_after = _frame_detail(part, lines[index - 1], text, boxed, after_frame)
        if still_after is not None:
            after_frame = still_after
            continue
        exception = not boxed and bool(part.frames) and _strong_exception(text)
        # Python prints frames indented and the exception flush left; a paste that lost all indentation
        # leaves the class-name test alone to decide.
        if exception and (not frame_indent or _indent(text) < frame_indent):
            _read_exception(lines, index, stop, prefix, part)
            return
        fallback = index if exception and fallback < 0 else fallback
        after_frame = False
        gap += 1
        if gap > _MAX_GAP:
            break
    if fallback >= 0:
        _read_exception(lines, fallback, stop, prefix, part)
    else:
        part.end = stop


def _frame_detail(part: _Part, previous: str, text: str, boxed: bool, after_frame: bool) -> bool | None:
    """When ``text`` belongs to the last frame (its wrapped function, its source, context around it): whether the
    next line may still be the frame's source; None when it does not belong to the frame."""
    if after_frame and not boxed and _wrapped_function(part, previous, text):
        return True
    if part.frames and _attach_source(part, text, boxed, after_frame):
        return False
    return None


def _without(prefix: str, line: str) -> str:
    return line[len(prefix):] if prefix and line.startswith(prefix) else line


def _unbox(text: str) -> tuple[bool, str]:
    """Rich's boxed traceback: the content of a ``│ ... │`` line (``╰──╯`` closes the box)."""
    stripped = text.strip()
    if stripped.startswith("│"):
        inner = stripped[1:]
        inner = inner[:inner.rfind("│")] if "│" in inner else inner
        return True, inner.strip()
    if stripped.startswith(("╭", "╰")):
        return True, ""
    return False, text


def _rich_path_piece(text: str) -> bool:
    """A rich box wraps a long path over lines: pieces without spaces that are not yet 'x.py:N'."""
    stripped = text.strip()
    return bool(stripped) and " " not in stripped and ("/" in stripped or "\\" in stripped)


def _frame_of(text: str, index: int, rich_path: str | None = None) -> Frame | None:
    """A frame line in any of the formats; ``rich_path`` (not None) inside a rich box: the wrapped path so far."""
    if match := _FRAME.search(text):
        return Frame(match["path"], int(match["line"]), match["func"] or "", "", index + 1)
    if match := _CUT_FRAME.match(text):
        return Frame(match["path"], int(match["line"]), match["func"], "", index + 1, cut=True)
    if rich_path is not None:
        if match := _RICH_FRAME.match(rich_path + text.strip()):
            return Frame(match["path"], int(match["line"]), match["func"] or "", "", index + 1)
        pathless = _RICH_PATHLESS.match(text.strip())
        return Frame(RICH_CELL, int(pathless["line"]), pathless["func"], "", index + 1) if pathless else None
    if match := _FRAME_IPY.match(text):
        if match["path8"]:
            return Frame(match["path8"], int(match["line"]), match["func8"] or "", "", index + 1)
        return Frame(match["path7"], None, match["func7"].strip(), "", index + 1)
    if match := _CELL.match(text):
        line = match["line"]
        return Frame(match["cell"] or match["input"], int(line) if line else None, "<cell>", "", index + 1)
    return None


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip())


_WRAPPED = re.compile(r"^\s*(?P<func>[A-Za-z_<][\w<>.]{0,200})(?:\s+(?P<src>\S.*))?$")


def _wrapped_function(part: _Part, previous: str, text: str) -> bool:
    """A terminal wrapped 'File "x.py", line 67, in' before its function: the function starts the next line (the
    frame's source may follow it there)."""
    last = part.frames[-1]
    if last.function or not previous.rstrip().endswith(", in") or not (match := _WRAPPED.match(text)):
        return False
    part.frames[-1] = replace(last, function=match["func"], source=(match["src"] or "").strip())
    return True


def _attach_source(part: _Part, text: str, boxed: bool, after_frame: bool) -> bool:
    """Give the last frame its source line (IPython/rich mark it with an arrow); True when ``text`` was one."""
    last = part.frames[-1]
    arrow = (_RICH_ARROW.match(text) if boxed else None) or _ARROW.match(text)
    if arrow:
        source = re.sub(r"\s*│\s*", " ", arrow["src"]).strip()
        part.frames[-1] = replace(last, line=last.line or int(arrow["line"]), source=source)
        return True
    if boxed and not last.function and (wrapped := re.fullmatch(r"(?:(\d+) in |in )?([\w.<>]+)", text.strip())):
        # rich wraps the function onto the next line, or cuts the line number ("x.py:4" then "83 in f")
        line = int(f"{last.line}{wrapped[1]}") if wrapped[1] and last.line is not None else last.line
        part.frames[-1] = replace(last, line=line, function=wrapped[2])
        return True
    if boxed or _NOISE.match(text) or re.match(r"^\s*\d+(?:\s|$)", text):  # rich and IPython context lines
        return True
    if after_frame and not last.source and (text[:1].isspace() or not _strong_exception(text)):
        part.frames[-1] = replace(last, source=text.strip())
        return True
    return False


def _strong_exception(text: str) -> bool:
    match = _EXCEPTION.match(_unmark(text.strip()))
    if not match:
        return False
    name = match["type"]
    if len(name) > 200:
        return False
    last = name.rpartition(".")[2]
    return bool(_STRONG.search(last)) or last in _BARE_BUILTINS or ("." in name and last[:1].isupper())


def _unmark(text: str) -> str:
    """``**_RuntimeError: ..._**`` or ``\\`RuntimeError: ...\\``` -> the line without its markdown, however deep
    (a bullet's "* " and nested marks such as "`*Error: x*`" too): the same text for every caller."""
    while lead := re.match(r"^[*_`]+", text):
        marks = lead.group()
        closed = next((k for k in range(len(marks), 0, -1) if text[k:].endswith(marks[:k][::-1])), 0)
        if closed:
            text = text[closed:len(text) - closed].strip()
            continue
        # unclosed: a bullet or a stray mark, but a leading "_" is the name's own ("_pickle.UnpicklingError")
        opening = marks.rstrip("_")
        if not opening:
            return text
        text = text[len(opening):].strip()
    return text


# A log record printed after the exception (glog's "[W1210 12:30:57.09 ProcessGroupNCCL.cpp:1250] ...", torch
# elastic's "E1126 23:28:11.64 402381 ...", a timestamped "[2024-11-26 23:28:07,821] ..."): not its message.
_LOG_RECORD = re.compile(r"^\s*\[?(?:[IWEF]\d{4} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)")
_GRAPH_NODE = re.compile(r"^\s*\[\[\{*node ")  # TensorFlow's op context after its message: "\t [[{{node x}} = ...]]"


def _closing_backquote(message: str) -> bool:
    """Whether the message's first backquote closes inline code opened before the class ("`KeyError: 'x'` when"),
    not one the message opens itself (transformers' "Using `load_in_8bit=True` requires Accelerate: ...")."""
    at = message.find("`")
    return at >= 0 and not (message[at - 1:at].isspace() and message[at + 1:at + 2].strip() and "`" in message[at + 1:])


def _same_class_again(text: str, exception: str) -> bool:
    """A line that starts the same exception again: another rank's or worker's copy, never the message's next line
    (eight ranks each printing "RuntimeError: ... cuda:N and cpu!" are eight errors of one GPU each, not one naming
    eight GPUs)."""
    again = _EXCEPTION.match(_unmark(text.strip())) if exception in text else None
    return again is not None and again["type"] == exception


def _read_exception(lines: list[str], index: int, stop: int, prefix: str, part: _Part) -> None:
    match = _EXCEPTION.match(_unmark(_without(prefix, lines[index]).strip()))
    if match is None:  # callers check _strong_exception first; a line it passes that this cannot read is a bug
        raise UsageError(f"report line {index + 1} looked like an exception line but could not be read as one "
                         "('Class: message'): paste the exception line as Python printed it")
    part.exception, part.exception_index = match["type"], index
    message = [match["msg"] or ""]
    end = index + 1
    while end < min(stop, index + 40):
        text = _without(prefix, lines[end])
        if not text.strip() or text.strip().startswith(("```", "╭", "│")) or _CHAIN.search(text) \
                or _HEADER.search(text) or _LOG_RECORD.match(text) or _GRAPH_NODE.match(text) \
                or _frame_of(text, end) is not None or _same_class_again(text, match["type"]):
            break
        message.append(text)
        end += 1
    opened = lines[index].count("`") % 2 or lines[index][:max(lines[index].find(match["type"]), 0)].count("`") % 2
    if opened and _closing_backquote(message[0]):  # inline code closes after the message: prose follows
        message = [message[0].partition("`")[0]]
    elif opened and "`" not in message[0]:  # a span over several lines: it closes on the first line with a backquote
        closes = next((at for at, text in enumerate(message[1:], 1) if _closing_backquote(text)), None)
        if closes is not None:
            message = [*message[:closes], message[closes].partition("`")[0]]
    part.message = "\n".join(message).strip()
    part.end = end
