"""Read a pasted bug report: its final exception, the frames that led there, and the versions it lists.

A report is text as users paste it into an issue, in any order: a Python traceback (plain or chained,
with ``[rank0]:`` prefixes, IPython/Colab or rich-boxed, inside markdown fences or quotes, with ANSI
colours), and environment listings (``pip freeze``, ``pip list``, ``conda list``,
``python -m torch.utils.collect_env``, ``transformers-cli env`` and its kin, ``ds_report``).
:func:`parse_report` returns a :class:`BugReport`; text it cannot use raises :class:`UsageError`.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field, replace

from harness._exceptions import UsageError
from harness.authoring._envlist import Environment, Pin, parse_environment
from harness.cases._placeholders import MARK

__all__ = ["BugReport", "Environment", "Frame", "Pin", "Traceback", "clean_lines", "parse_environment",
           "parse_report"]


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

    @property
    def exception_class(self) -> str:
        """What the harness compares with a result's exception type: the class name."""
        return self.exception.rpartition(".")[2]

    @property
    def first_message_line(self) -> str:
        return next((line.strip() for line in self.message.splitlines() if line.strip()), "")


@dataclass(frozen=True)
class BugReport:
    traceback: Traceback
    environment: Environment
    notes: tuple[str, ...]
    url: str = ""  # the upstream issue or pull request the paste links to (its first github.com/.../issues/N)
    missing: tuple[str, ...] = ()  # what the report lacks that a draft needs: "traceback frames"
    modules: tuple[str, ...] = ()  # top-level modules the report's text imports or links, once per mention
    title: str = ""  # the issue's title, when the paste keeps it as its first "# " heading
    paths: tuple[str, ...] = ()  # first folders of source paths the prose names (ffcv/pipeline/graph.py)
    # Issues of other repositories the text links and names in words ("similar to ... https://github.com/o/lib/
    # issues/804 on the lib"): the repository names, in order.
    cited: tuple[str, ...] = ()
    code_names: tuple[str, ...] = ()  # names the prose writes as inline code (`Linear8bitLt`, `f(x)`), in order
    # Names the prose writes as plain words that the text also calls ("I feed UNet2DModel ..." and
    # "UNet2DModel(sample_size=...)"), in order: an API named outside inline code.
    called_names: tuple[str, ...] = ()


MAX_LINE = 5000  # longer lines are cut for parsing (a minified blob is never a frame)
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]")
_BARE_SGR = re.compile(r"\[(?:\d{1,3};)*\d{1,3}m")  # a colour code whose ESC the paste lost ("[1m")
# Prefixes put before every line: torchrun's "[rank0]: ", Ray's "(Actor pid=1) ", a quote's "> ".
_LINE_PREFIX = re.compile(r"^(?:\[(?:rank|default)\d+\]:\s?|\([\w.-]+ pid=\d+(?:, ip=[\d.]+)?\)\s|(?:>\s?)+(?!>))")
_HEADER = re.compile(r"Traceback \(most recent call last\)")
_CHAIN = re.compile(r"During handling of the above exception|The above exception was the direct cause")
_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.*\S))?')
# IPython 8 "File /x.py:431, in f(a)", Colab "[/x.py](url) in f(a)", IPython 7 "/x.py in f(a)" (an absolute path
# may hold spaces: Colab's "/content/drive/My Drive/x.py in f(a)")
_FRAME_IPY = re.compile(
    r"^\s*(?:File (?P<path8>\S[^\n]*?\.pyw?):(?P<line>\d+)(?:, in (?P<func8>[^\s(]+))?"
    r"|\[?(?P<path7><ipython-input-[^>]*+>|[^\s\[\]()]+\.pyw?|/[^\[\]()]{0,300}?\.pyw?)\]?(?:\([^)\s]*+\))?\s++in\s++"
    r"(?P<func7>[^(\s]++(?:\s++[^(\s]++)*+)\s*+\()"  # possessive: a run of spaces is never rescanned
)
# A frame whose start the paste cut: 'flash_attn/flash_attn_interface.py", line 170, in _flash_attn_varlen_forward'
_CUT_FRAME = re.compile(r'^\s*(?P<path>[\w./-][\w./\\-]{0,300}\.pyw?)", line (?P<line>\d+), in (?P<func>\S+)\s*$')
_CELL = re.compile(r"^\s*(?:Cell (?P<cell>In\s?\[\d+\]), line (?P<line>\d+)|Input (?P<input>In \[\d+\]))")
_ARROW = re.compile(r"^\s*-+>\s*(?P<line>\d+)\s(?P<src>.*)$")  # IPython's current line
_RICH_ARROW = re.compile(r"^[❱>]\s*(?P<line>\d+)\s*│(?P<src>.*)$")
_RICH_FRAME = re.compile(r"^(?P<path>\S*?\.pyw?):(?P<line>\d+)(?: in(?: (?P<func>\S+))?)?$")
_EXCEPTION = re.compile(r"^(?P<type>[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)(?::(?:\s(?P<msg>.*))?)?$")
_STRONG = re.compile(r"(Error|Exception|Warning|Exit|Interrupt|Failure|Failed|Fault|Timeout)$")
_BARE_BUILTINS = frozenset({"StopIteration", "StopAsyncIteration", "KeyboardInterrupt", "GeneratorExit"})
_MAYBE_FRAME = re.compile(r"File |\.pyw?\b|In ?\[")  # a cheap test before the frame patterns
_NOISE = re.compile(r"^\s*(?:[\^~]+|\.\.\.<\d+ lines>\.\.\.|\[Previous line repeated \d+ more times?\]|\d+ frames)\s*$")
_LAUNCHERS = ("ChildFailedError",)  # torchrun's summary of a failed worker: the worker's own traceback is earlier
_MAX_RICH_PATH = 1024  # characters of a path a rich box wraps over lines; longer is no path
_MAX_GAP = 400  # lines of unrelated text (interleaved logs) tolerated inside one traceback


def parse_report(text: str) -> BugReport:
    """The report's final exception with its frames; a report with no complete traceback but an exception line
    (``[rank1]: ValueError: ...``, a final line pasted alone) gives that line without frames, said in ``missing``."""
    lines = unwrap_console(clean_lines(text))
    chains = _chains(lines)
    url = _issue_url(lines)
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
    if not any(chain[-1].complete for chain in chains):
        found = _exception_only(lines, chains, url)  # raises before the text is read further when it has none
        return replace(found, modules=_modules(lines), title=title, cited=_cited(lines, url), paths=_path_tops(lines),
                       code_names=_code_names(lines), called_names=_called_names(lines))
    modules, cited = _modules(lines), _cited(lines, url)
    traceback, notes = _pick(chains)
    traceback = replace(traceback, colours=_colours(text, traceback))
    if _innermost_first(lines, traceback):
        traceback = replace(traceback, frames=traceback.frames[::-1], final_frames=traceback.final_frames[::-1])
        notes.append("the frames come from an editor's exception panel (\"Exception has occurred:\"), innermost "
                     "first: read in Python's order")
    return BugReport(traceback, parse_environment(lines), tuple(notes), url, modules=modules, title=title,
                     cited=cited, paths=_path_tops(lines), code_names=_code_names(lines),
                     called_names=_called_names(lines))


_PANEL = re.compile(r"^\s*Exception has occurred: ")  # VS Code's exception panel: frames listed innermost first


def _innermost_first(lines: list[str], traceback: Traceback) -> bool:
    """Whether the traceback's frames follow an editor's exception panel header (a few lines above the first)."""
    if not traceback.frames:
        return False
    first = min(frame.report_line for frame in traceback.frames) - 1
    return any(_PANEL.match(line) for line in lines[max(0, first - 4):first])


# How a report's text names a module: an import statement, a source link into a repository
# (github.com/o/r/blob/<ref>/timm/utils/x.py), or a dotted path of three or more names (timm.layers.patch_embed).
_IMPORT = re.compile(r"^\s*(?:>>>\s*)?(?:from|import)\s+(?P<module>[A-Za-z_]\w{0,60})\b")
_BLOB = re.compile(r"github\.com/[\w.-]{1,100}/[\w.-]{1,100}/blob/[\w.-]{1,100}/(?:(?:src|lib|python)/)?"
                   r"(?P<module>[A-Za-z_]\w{0,60})/")
# A source file named in prose by its path inside the package: "at line 333 of ffcv/pipeline/graph.py".
_PATH = re.compile(r"(?<![\w/.\\-])(?P<module>[A-Za-z_]\w{0,60})/(?:\w{1,60}/){0,8}\w{1,60}\.py\b")
_DOTTED = re.compile(r"(?<![\w./-])(?P<module>[a-z_][a-z0-9_]{1,60})(?:\.[A-Za-z_]\w{0,60}){2,}")


# Folders of a repository that hold scripts, not an importable package (a link into recipes/ names no module).
_NOT_MODULES = frozenset({"self", "cls", "super", "recipes", "scripts", "examples", "example", "tools", "tests",
                          "test", "docs", "configs", "config", "benchmarks", "notebooks", "projects", "demo", "demos",
                          "apps", "tutorials", "experiments", "data", "assets", "models", "utils"})


def _modules(lines: list[str]) -> tuple[str, ...]:
    """Dotted paths count in prose only: in code and frames they are mostly attribute chains (self.opt.step)."""
    found: list[str] = []
    for line in lines:
        patterns = (_IMPORT, _BLOB) if line[:1].isspace() or "File " in line else (_IMPORT, _BLOB, _DOTTED)
        found += [m["module"] for pattern in patterns for m in pattern.finditer(line)]
    return tuple(m for m in found if m not in _NOT_MODULES)


def _path_tops(lines: list[str]) -> tuple[str, ...]:
    """The first folder of each source path named in prose (``ffcv/pipeline/graph.py``): a package only when it is
    also the link's repository (a log's cut path "ta/coding/x.py" is none)."""
    return tuple(m["module"] for line in lines if ".py" in line and not line[:1].isspace() and "File " not in line
                 for m in _PATH.finditer(line))


# Inline code in prose naming an API: `Linear8bitLt`, `flash_attn_func(q, k, v)`, `model.norm1` (no paths, no
# shell commands: a space or slash before the closing backtick is none).
_INLINE_CODE = re.compile(r"`(?P<name>[A-Za-z_][\w.]{2,80})(?:\([^`]{0,200}\))?`")


def _code_names(lines: list[str]) -> tuple[str, ...]:
    """Names the prose writes as inline code, once each, in order (code blocks and frames are not prose)."""
    prose = [line for line in lines if "`" in line and not line[:1].isspace() and "File " not in line]
    found = [m["name"] + ("()" if m.group().endswith(")`") else "") for line in prose
             for m in _INLINE_CODE.finditer(line)]
    return tuple(dict.fromkeys(found))


# A name called in the text (``UNet2DModel(``), and a name written as a word in a sentence (not a call, a path, a
# dotted attribute or inline code). Shaped like code: a class (capitalised), a snake_case or a camelCase name.
_CALLED = re.compile(r"(?<![\w])(?<!class )(?<!def )(?P<name>[A-Za-z_]\w{2,80})\(")  # a definition is no call
_WORD = re.compile(r"(?<![\w./\\-])(?P<name>[A-Za-z_]\w{2,80})(?![\w/\\(-]|\.\w)")
_NOT_PROSE = re.compile(r"`[^`]*`|\S*(?:/|\\|://)\S*")


def _called_names(lines: list[str]) -> tuple[str, ...]:
    """Names a sentence writes as a plain word that the report's code also calls, once each, in order (frames and
    indented code are not prose; a capitalised sentence word is never called, so it is not taken)."""
    called = {m["name"] for line in lines if "(" in line and "File " not in line for m in _CALLED.finditer(line)}
    if not called:
        return ()
    prose = [_NOT_PROSE.sub(" ", line) for line in lines if not line[:1].isspace() and "File " not in line]
    found = [m["name"] for line in prose for m in _WORD.finditer(line) if m["name"] in called
             and (m["name"][:1].isupper() or "_" in m["name"].strip("_") or re.search(r"[a-z][A-Z0-9]", m["name"]))]
    return tuple(dict.fromkeys(found))


_URL = re.compile(r"https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/(?P<kind>issues|pull)/(?P<number>\d{1,9})\b")


def _issue_url(lines: list[str]) -> str:
    for line in lines:
        if "github.com/" in line and (match := _URL.search(line)):
            return match.group()
    return ""


def _cited(lines: list[str], url: str) -> tuple[str, ...]:
    """Repositories (other than the report's own) whose issue or pull request the text links and whose name it
    also writes as a word outside the link."""
    own = _URL.match(url)
    own_repo = own["repo"].rpartition("/")[2].lower() if own else ""
    linked = [m["repo"].rpartition("/")[2] for line in lines if "github.com/" in line for m in _URL.finditer(line)]
    linked = [repo for repo in dict.fromkeys(linked) if repo.lower() != own_repo]
    if not linked:
        return ()
    words = re.sub(r"\S*github\.com/\S*", " ", "\n".join(lines))
    return tuple(repo for repo in linked
                 if re.search(rf"(?<![\w/.-]){re.escape(repo)}(?![\w/-])", words, re.IGNORECASE))


def _exception_only(lines: list[str], chains: list[list[_Part]], url: str) -> BugReport:
    """The report's last exception line outside any traceback: what a report without a full stack gives."""
    index = next((i for i in range(len(lines) - 1, -1, -1) if _lone_exception(lines[i])), None)
    if index is None:
        found = (_header_exception(lines, chains) or _inline_exception(lines) or _class_named(lines)
                 or (None if chains else _bare_message(lines)))
        if found is not None:
            return _exception_named(found, lines, chains, url)
        if chains:
            start = chains[-1][-1].start + 1
            raise UsageError(f"the traceback at report line {start} stops before its final exception line (e.g. "
                             "'RuntimeError: ...'), and the report has no exception line elsewhere: paste the "
                             "traceback down to its last line")
        raise UsageError("the report has no Python traceback and no exception line (e.g. 'RuntimeError: ...' on a line "
                         "of its own): paste the error the bug printed, at least its last line")
    part = _Part(index)
    _read_exception(lines, index, len(lines), "", part)
    cut = [chain for chain in chains if chain[-1].frames]
    frames = tuple(frame for part_ in cut[-1] for frame in part_.frames) if cut else ()
    missing = "traceback frames" if not frames else "the traceback's exception line (its frames are cut)"
    note = (f"the report has no complete traceback: drafted from the exception line at report line {index + 1}"
            + (f" and the frames of the traceback at line {cut[-1][0].start + 1}, cut before its exception line"
               if frames else " alone (no frames: the library, the call and the repro are yours to find)"))
    traceback = Traceback(frames, frames, part.exception, part.message, index + 1, index + 1)
    return BugReport(traceback, parse_environment(lines), (note,), url, (missing,))


# IPython's header names the class before its "Traceback (most recent call last)"; a paste cut before the last
# line still gives the class.
_IPY_HEADER = re.compile(r"^\s*(?P<type>[A-Za-z_][\w.]{0,200}?)\s+Traceback \(most recent call last\)")
# An exception named inside a sentence or a title: "Fix AttributeError: module 'torch.nn' has no attribute ...".
_INLINE = re.compile(r"(?<![\w.])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception)):\s(?P<msg>\S.{0,1000})")


def _header_exception(lines: list[str], chains: list[list[_Part]]) -> tuple[int, str, str, str] | None:
    for chain in reversed(chains):
        match = _IPY_HEADER.match(lines[chain[-1].start])
        if match and _strong_exception(match["type"]):
            return chain[-1].start, match["type"], "", "its IPython header (the message is cut off)"
    return None


# An exception quoted in prose ends at the closing mark.
_CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}


# An exception written as its repr in prose (a logger's or a config tool's `error:TypeError("...")`): class and
# message, the message ending at the quote that closes the call; `raise X("...")` is code, not the error it printed.
_CALL_INLINE = re.compile(r"(?<![\w.])(?<!raise )(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception))"
                          r"\((?P<quote>[\"'])(?P<msg>.{1,1000}?)(?P=quote)\)")


def _inline_exception(lines: list[str]) -> tuple[int, str, str, str] | None:
    for index in range(len(lines) - 1, -1, -1):
        if "rror" not in lines[index] and "xception" not in lines[index]:
            continue
        calls = [m for m in _CALL_INLINE.finditer(lines[index]) if m["type"] not in ("Error", "Exception")]
        if calls:
            return index, calls[-1]["type"], calls[-1]["msg"], "its repr in a sentence (Class(\"message\"))"
        for match in reversed(list(_INLINE.finditer(lines[index]))):
            if match["type"] not in ("Error", "Exception"):
                opener = lines[index][match.start() - 1: match.start()]
                closer = _CLOSERS.get(opener)
                message = match["msg"].partition(closer)[0] if closer else _sentence_message(match["msg"])
                return index, match["type"], message, "a sentence that names it (check where the message ends)"
    return None


# A class named without a message: "NotImplementedError while trying to train YoloV8" (a title over a screenshot).
_CLASS_NAMED = re.compile(r"(?<![\w.`'\"])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception))\b(?![:.(])")


def _class_named(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last exception class the report names in prose without its message (the title's, when the body has
    none): enough for the exception and the title; the signature stays a placeholder."""
    for index in range(len(lines) - 1, -1, -1):
        if "rror" not in lines[index] and "xception" not in lines[index]:
            continue
        for match in reversed(list(_CLASS_NAMED.finditer(lines[index]))):
            if match["type"] not in ("Error", "Exception"):
                return index, match["type"], "", "a sentence that names only its class (no message)"
    return None


# Messages Python words itself, printed without their class ("Trainer.__init__() got an unexpected keyword argument
# 'gpus'" under a bug template's heading): (shape, the class Python raises with it).
_BARE_MESSAGES = (
    (re.compile(r"[\w.]+\(\) (?:got an unexpected keyword argument|got multiple values for argument|takes (?:from )?"
                r"\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given|missing \d+ required "
                r"(?:positional|keyword-only) arguments?)\b.*"), "TypeError"),
    (re.compile(r"'[\w.]+' object (?:is not (?:callable|subscriptable|iterable)|cannot be interpreted as)\b.*"),
     "TypeError"),
    (re.compile(r"(?:'[\w.]+' object|module '[\w.]+') has no attribute '\w+'.*"), "AttributeError"),
    (re.compile(r"No module named '[\w.]+'.*"), "ModuleNotFoundError"),
    (re.compile(r"name '\w+' is not defined.*"), "NameError"))


def _bare_message(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last message the report prints without an exception class: its class is left to fill in (the message's
    shape says which class Python raises with it; the draft's placeholder names it as a guess)."""
    for index in range(len(lines) - 1, -1, -1):
        for shape, guess in _BARE_MESSAGES:
            if (match := shape.search(_unmark(lines[index].strip()))) is not None:
                exception = f"{MARK}: the exception class (the report prints its message alone; Python words it so " \
                            f"for a {guess})"
                return index, exception, match.group().strip(" `*"), "a message printed without its exception class"
    return None


def _sentence_message(text: str) -> str:
    """Where a message named in prose ends: a code span's end, else its last quoted name ("... 'Layernorm' in
    vit_1d." -> "... 'Layernorm'"), else the sentence's end."""
    text = text.split("`")[0]
    quote = max(text.rfind("'"), text.rfind('"'))
    if quote > 0 and text.count(text[quote]) >= 2:
        return text[:quote + 1]
    return re.split(r"\.(?:\s|$)", text, maxsplit=1)[0].rstrip(" .")


def _exception_named(found: tuple[int, str, str, str], lines: list[str], chains: list[list[_Part]],
                     url: str) -> BugReport:
    """A draft from an exception the report names without printing its line."""
    index, exception, message, where = found
    cut = [chain for chain in chains if chain[-1].frames]
    frames = tuple(frame for part in cut[-1] for frame in part.frames) if cut else ()
    missing = ["the exception line as Python printed it"] + ([] if frames else ["traceback frames"])
    note = (f"the report has no exception line of its own: drafted from {where} at report line {index + 1}"
            + ("" if frames else "; no frames: the library, the call and the repro are yours to find"))
    traceback = Traceback(frames, frames, exception, message, index + 1, index + 1)
    return BugReport(traceback, parse_environment(lines), (note,), url, tuple(missing))


def _lone_exception(line: str) -> bool:
    """An exception line as Python prints it, not prose or a warning: 'ValueError: ...' flush with its text."""
    text = _unmark(line.strip())
    if not _strong_exception(text) or text.startswith(("#", "File ")):
        return False
    name = text.partition(":")[0].rpartition(".")[2]
    return name not in ("Error", "Exception", "Warning") and not name.endswith("Warning")


def clean_lines(text: str) -> list[str]:
    """The report's lines without colours, launcher prefixes, line-end variants or the HTML of a raw markdown
    paste (``<pre>AttributeError: &apos;x&apos; ...</pre>``), one per report line."""
    text = _ANSI.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))
    return [_LINE_PREFIX.sub("", _unhtml(_straight_quotes(line[:MAX_LINE]))).rstrip() for line in text.split("\n")]


def _straight_quotes(line: str) -> str:
    """A frame line an editor or chat gave typographic quotes (File “/x/y.py”, line 3): Python's own quotes."""
    return line.replace("“", '"').replace("”", '"') if "File “" in line else line


# A frame line a console cut at its width ('File "C:\\...\\model', no closing quote): the rest is on the next line.
_CUT_FILE = re.compile(r'^\s*File "[^"]{8,}$')
_MIN_WRAP = 60


def unwrap_console(lines: list[str]) -> list[str]:
    """Join the lines a console hard-wrapped at a fixed width (Windows' cmd: 80 columns): the width is read from
    a frame line cut before its closing quote, and every line exactly that wide continues on the next one. The
    lines joined away stay as blank lines, so report line numbers hold."""
    widths = {len(line) for line in lines if 'File "' in line and _CUT_FILE.match(line)}
    if len(widths) != 1 or (width := widths.pop()) < _MIN_WRAP:
        return lines
    out = list(lines)
    index = 0
    while index < len(out) - 1:
        head = index
        while len(lines[index]) == width and index + 1 < len(out) and lines[index + 1].strip():
            out[head] += lines[index + 1]
            out[index + 1] = ""
            index += 1
        index += 1
    return out


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


# --- tracebacks -------------------------------------------------------------------------------------------


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
                  if _MAYBE_FRAME.search(line) and _frame_of(line, i) is not None), None)
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
        match = _RICH_FRAME.match(rich_path + text.strip())
        return Frame(match["path"], int(match["line"]), match["func"] or "", "", index + 1) if match else None
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
    """``**_RuntimeError: ..._**`` or ``\\`RuntimeError: ...\\``` -> the line without its markdown."""
    lead = re.match(r"^[*_`]+", text)
    if not lead:
        return text
    marks = lead.group()
    inner = text[len(marks):]
    return inner[:-len(marks)] if inner.endswith(marks[::-1]) else inner


# A log record printed after the exception (glog's "[W1210 12:30:57.09 ProcessGroupNCCL.cpp:1250] ...", torch
# elastic's "E1126 23:28:11.64 402381 ...", a timestamped "[2024-11-26 23:28:07,821] ..."): not its message.
_LOG_RECORD = re.compile(r"^\s*\[?(?:[IWEF]\d{4} \d\d:\d\d:\d\d|\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d)")


def _read_exception(lines: list[str], index: int, stop: int, prefix: str, part: _Part) -> None:
    match = _EXCEPTION.match(_unmark(_without(prefix, lines[index]).strip()))
    assert match is not None  # _strong_exception checked it
    part.exception, part.exception_index = match["type"], index
    message = [match["msg"] or ""]
    end = index + 1
    while end < min(stop, index + 40):
        text = _without(prefix, lines[end])
        if not text.strip() or text.strip().startswith(("```", "╭", "│")) or _CHAIN.search(text) \
                or _HEADER.search(text) or _LOG_RECORD.match(text) or _frame_of(text, end) is not None:
            break
        message.append(text)
        end += 1
    if lines[index].count("`") % 2 and "`" in message[0]:  # inline code closing after the message: prose follows
        message = [message[0].partition("`")[0]]
    part.message = "\n".join(message).strip()
    part.end = end


def _pick(chains: list[list[_Part]]) -> tuple[Traceback, list[str]]:
    """The last complete traceback, unless it is a launcher's summary of a worker's earlier one."""
    complete = [chain for chain in chains if chain[-1].complete]
    if not complete:
        last = chains[-1][-1]
        raise UsageError(f"the traceback at report line {last.start + 1} stops before its final exception line "
                         "(e.g. 'RuntimeError: ...'): paste the traceback down to its last line")
    chosen, why = complete[-1], "the last"
    if chosen is not chains[-1]:
        why = f"the last complete one; the one at line {chains[-1][0].start + 1} is cut before its exception line"
    if chosen[-1].exception.rpartition(".")[2] in _LAUNCHERS and len(complete) > 1:
        why = (f"the worker's; the one at line {chosen[0].start + 1} is the launcher's "
               f"{chosen[-1].exception.rpartition('.')[2]}")
        chosen = complete[-2]
    notes = []
    if len(chains) > 1:
        where = ", ".join(str(chain[0].start + 1) for chain in chains)
        notes.append(f"the report has {len(chains)} separate tracebacks (report lines {where}); "
                     f"took the one at line {chosen[0].start + 1} ({why})")
    final = chosen[-1]
    frames = tuple(frame for part in chosen for frame in part.frames)
    traceback = Traceback(frames, tuple(final.frames), final.exception, final.message,
                          chosen[0].start + 1, final.exception_index + 1)
    return traceback, notes
