"""Read a pasted bug report: its final exception, the frames that led there, and the versions it lists.

A report is text as users paste it into an issue, in any order: a Python traceback (plain or chained,
with ``[rank0]:`` prefixes, IPython/Colab or rich-boxed, inside markdown fences or quotes, with ANSI
colours), and environment listings (``pip freeze``, ``pip list``, ``conda list``,
``python -m torch.utils.collect_env``, ``transformers-cli env`` and its kin, ``ds_report``).
:func:`parse_report` returns a :class:`BugReport`; text it cannot use raises :class:`UsageError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from harness._exceptions import UsageError
from harness.authoring._envlist import Environment, Pin, parse_environment
from harness.authoring._lines import MAX_LINE, _colours, clean_lines, unwrap_console
from harness.authoring._prose import (
    REPLY_HEADER,
    _called_names,
    _cited,
    _class_calls,
    _code_names,
    _eight_bit,
    _issue_url,
    _modules,
    _named_calls,
    _named_fixes,
    _path_tops,
    _ran_command,
    _ran_on,
    _ran_script,
    _subjects,
)
from harness.authoring._traceback import (
    Frame,
    Traceback,
    _chains,
    _Part,
    _pick,
    _read_exception,
    _strong_exception,
    _unmark,
    cut_chain_frames,
)
from harness.cases._placeholders import MARK

__all__ = ["MAX_LINE", "BugReport", "Environment", "Frame", "Pin", "Traceback", "clean_lines", "parse_environment",
           "parse_report", "unwrap_console"]


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
    class_calls: tuple[str, ...] = ()  # `Class.method(` calls in the report's code: a frameless report's API
    named_calls: tuple[str, ...] = ()  # calls a frameless report's prose and code name, best first (_prose)
    ran_on: str = ""  # where the run happened, as the text says: "cpu", "gpu" or "" (_prose._ran_on)
    script: str = ""  # the script the report's command or launcher summary names (_prose._ran_script)
    subjects: tuple[str, ...] = ()  # what the report's own prose says ran when it failed (_prose._subjects)
    fixes: tuple[str, ...] = ()  # fixes a reply names: "commit:<sha>" of the report's repository, "name==version"
    eight_bit: bool = False  # the run loaded bitsandbytes' CUDA library or an 8-bit model (_prose._eight_bit)
    command: str = ""  # the command line that ran the script, with its settings (_prose._ran_command)


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
                       code_names=_code_names(lines), called_names=_called_names(lines),
                       class_calls=_class_calls(lines), fixes=_named_fixes(lines, url),
                       named_calls=_named_calls(lines), ran_on=_ran_on(lines), script=_ran_script(lines),
                       eight_bit=_eight_bit(lines), command=_ran_command(lines),
                       subjects=_subjects(lines))
    modules, cited = _modules(lines), _cited(lines, url)
    traceback, notes = _pick(chains)
    traceback = replace(traceback, colours=_colours(text, traceback))
    if (summary := _launcher_summary(traceback, title)) is not None:
        traceback = summary
        notes.append("the traceback ends in the launcher's ChildFailedError summary, not the bug: drafted from the "
                     "issue title's exception (no frames of the rank that failed: its call is yours to find)")
    if _innermost_first(lines, traceback):
        traceback = replace(traceback, frames=traceback.frames[::-1], final_frames=traceback.final_frames[::-1])
        notes.append("the frames come from an editor's or debugger's dump (\"Exception has occurred:\", no "
                     "Traceback header, the script's top level last), innermost first: read in Python's order")
    return BugReport(traceback, parse_environment(lines), tuple(notes), url, modules=modules, title=title,
                     cited=cited, paths=_path_tops(lines), code_names=_code_names(lines),
                     called_names=_called_names(lines), fixes=_named_fixes(lines, url),
                     named_calls=_named_calls(lines), ran_on=_ran_on(lines), script=_ran_script(lines),
                       eight_bit=_eight_bit(lines), command=_ran_command(lines),
                       subjects=_subjects(lines))


def _launcher_summary(traceback: Traceback, title: str) -> Traceback | None:
    """torchrun's (elastic's) ``ChildFailedError`` whose message is its ``====`` banner only says a rank failed: the
    exception the issue title names is the bug's (its frames are the launcher's, never the bug's)."""
    if traceback.exception_class != "ChildFailedError" or traceback.first_message_line.strip("=- "):
        return None
    named = next((m for m in _INLINE.finditer(title) if m["type"] not in ("Error", "Exception")), None)
    if named is None:
        return None
    return Traceback((), (), named["type"], named["msg"].strip(), traceback.start_line, traceback.exception_line)


_PANEL = re.compile(r"^\s*Exception has occurred: ")  # VS Code's exception panel: frames listed innermost first


def _innermost_first(lines: list[str], traceback: Traceback) -> bool:
    """Whether the traceback's frames follow an editor's exception panel header (a few lines above the first)."""
    if not traceback.frames:
        return False
    first = min(frame.report_line for frame in traceback.frames) - 1
    if any(_PANEL.match(line) for line in lines[max(0, first - 4):first]):
        return True
    # any debugger's dump ("发生异常: RuntimeError", a quoted one): no header, the script's top level listed last
    frames = traceback.frames
    return frames[-1].function == "<module>" != frames[0].function and not any("Traceback (most recent" in line
                                                                                for line in lines)


def _exception_only(lines: list[str], chains: list[list[_Part]], url: str) -> BugReport:
    """The report's last exception line outside any traceback: what a report without a full stack gives."""
    index = next((i for i in range(len(lines) - 1, -1, -1) if _lone_exception(lines[i])), None)
    if index is None:
        found = (_header_exception(lines, chains) or _inline_exception(lines) or _logged_error(lines)
                 or _class_named(lines)
                 or (None if chains else _bare_message(lines)) or _printed_message(lines) or _torch_fragment(lines))
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
    frames, start = cut_chain_frames(chains, lines, index)
    missing = "traceback frames" if not frames else "the traceback's exception line (its frames are cut)"
    note = (f"the report has no complete traceback: drafted from the exception line at report line {index + 1}"
            + (f" and the frames of the traceback at line {start}, cut before its exception line"
               if frames else " alone (no frames: the library, the call and the repro are yours to find)"))
    traceback = Traceback(frames, frames, part.exception, part.message, index + 1, index + 1)
    return BugReport(traceback, parse_environment(lines), (note,), url, (missing,))


# IPython's header names the class before its "Traceback (most recent call last)"; a paste cut before the last
# line still gives the class.
_IPY_HEADER = re.compile(r"^\s*(?P<type>[A-Za-z_][\w.]{0,200}?)\s+Traceback \(most recent call last\)")
# An exception named inside a sentence or a title: "Fix AttributeError: module 'torch.nn' has no attribute ...".
_INLINE = re.compile(r"(?<![\w.])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception)):\s(?P<msg>\S.{0,1000})")


def _header_exception(lines: list[str], chains: list[list[_Part]]) -> tuple[int, str, str, str] | None:
    """The class IPython's header names; the message from the issue's title when it names the same class with one
    ("# TypeError: Accelerator.__init__() got ..."), else none (cut off)."""
    for chain in reversed(chains):
        match = _IPY_HEADER.match(lines[chain[-1].start])
        if match and _strong_exception(match["type"]):
            title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
            named = next((m for m in _INLINE.finditer(title) if m["type"] == match["type"]), None)
            if named is not None:
                return (chain[-1].start, match["type"], named["msg"].strip(),
                        "its IPython header (the message is cut off; the message from the issue's title)")
            return chain[-1].start, match["type"], "", "its IPython header (the message is cut off)"
    return None


# An exception quoted in prose ends at the closing mark.
_CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}


# An exception written as its repr in prose (a logger's or a config tool's `error:TypeError("...")`): class and
# message, the message ending at the quote that closes the call; `raise X("...")` is code, not the error it printed.
_CALL_INLINE = re.compile(r"(?<![\w.])(?<!raise )(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception))"
                          r"\((?P<quote>[\"'])(?P<msg>.{1,1000}?)(?P=quote)\)")


def _description_first(lines: list[str]) -> list[int]:
    """Line indexes, last first, the report's own text (title, description) before its replies': an exception a
    reply or review note quotes in prose ("it resolved this problem RuntimeError: ... not the TypeError problem")
    is the report's only when its own text names none."""
    replies = next((i for i, line in enumerate(lines) if REPLY_HEADER.match(line.strip())), len(lines))
    return [*range(replies - 1, -1, -1), *range(len(lines) - 1, replies - 1, -1)]


def _inline_exception(lines: list[str]) -> tuple[int, str, str, str] | None:
    for index in _description_first(lines):
        if "rror" not in lines[index] and "xception" not in lines[index]:
            continue
        calls = [m for m in _CALL_INLINE.finditer(lines[index]) if m["type"] not in ("Error", "Exception")]
        if calls:
            return index, calls[-1]["type"], calls[-1]["msg"], "its repr in a sentence (Class(\"message\"))"
        for match in reversed(list(_INLINE.finditer(lines[index]))):
            if match["type"] not in ("Error", "Exception"):
                opener = lines[index][match.start() - 1: match.start()]
                closer = _CLOSERS.get(opener)
                message = match["msg"].partition(closer)[0] if closer else _quoted_end(
                    lines, match["type"], _sentence_message(match["msg"]))
                return index, match["type"], message, "a sentence that names it (check where the message ends)"
    return None


# A logging record in Python's default format ("ERROR:whisperlivekit.diarization:Error in diarize: <message>"): the
# logger's own words before the message ("Error in diarize: ", "Exception in worker: ") are not the exception's.
_LOGGED = re.compile(r"^(?P<level>ERROR|CRITICAL|FATAL|WARNING):[\w.]+:\s*(?P<text>\S.{2,1000})$")
_LOGGER_WORDS = re.compile(r"^(?:(?:Unhandled |Uncaught )?(?:Error|Exception|Failure|Failed)\b[^:]{0,80}:\s*)+")


def _logged_error(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The first error a logger recorded (an ERROR record before a WARNING one: the innermost code logs first), its
    message without the logger's words; the class the issue's title names alone, else torch's for a well-known
    message, else left to fill in."""
    records = [(i, m) for i, line in enumerate(lines) if (m := _LOGGED.match(line.strip()))
               and not m["text"].lstrip().startswith("Traceback")]
    records.sort(key=lambda record: record[1]["level"] == "WARNING")
    for index, match in records:
        message = _LOGGER_WORDS.sub("", match["text"]).strip()
        if message == match["text"].strip() and match["level"] == "WARNING":
            continue  # a warning that names no error is not one
        title = next((line[2:] for line in lines if line.startswith("# ")), "")
        named = next((m["type"] for m in _CLASS_NAMED.finditer(title) if m["type"] not in ("Error", "Exception")), "")
        torch = next((exception for shape, _, exception in _TORCH_MESSAGES if shape.match(message)), "")
        exception = named or torch or f"{MARK}: the exception class (the log records only its message)"
        return index, exception, message, "a logged error record (the logger's words before the message dropped)"
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


# A message without any class: an exception's args printed as a tuple ("('If capturable=False, ...',)"), or a
# title's "ERROR: message" in capitals (not a class name).
_ARGS_TUPLE = re.compile(r"^\(\s*(?P<quote>[\"'])(?P<msg>.{3,1000}?)(?P=quote)\s*,?\s*\)$")
_TITLE_ERROR = re.compile(r"(?<![\w.])(?:ERROR|[Ee]rror)\s*:\s*(?P<msg>\S.{2,1000})$")
# A message that states a condition the code checks ("... should not be CUDA tensors"): what `assert` words.
_ASSERT_LIKE = re.compile(r"\b(?:should(?: not)?|must(?: not)?|expected\b.{0,80}\bto) be\b", re.IGNORECASE)


def _printed_message(lines: list[str]) -> tuple[int, str, str, str] | None:
    """A message with no class anywhere (the args tuple a script printed, else the issue title's "ERROR: ..."):
    drafted with the class left to fill in, the likely one named (AssertionError for a checked condition)."""
    found = next(((i, m["msg"], "its arguments printed as a tuple") for i in range(len(lines) - 1, -1, -1)
                  if (m := _ARGS_TUPLE.match(_unmark(lines[i].strip())))), None)
    if found is None:
        title = next(((i, line[2:].strip()) for i, line in enumerate(lines) if line.startswith("# ")), None)
        match = _TITLE_ERROR.search(title[1]) if title else None
        if title is None or match is None:
            return None
        found = (title[0], match["msg"].strip(), "the issue title's \"error:\" text")
    index, message, where = found
    assert_like = _ASSERT_LIKE.search(message)
    guess = "an AssertionError (it states a checked condition)" if assert_like else "the class it raised"
    exception = f"{MARK}: the exception class (the report prints no class, only its message; likely {guess})"
    return index, exception, message, f"a message without its exception class ({where})"


# A comma or semicolon, then the reporter going on in the first person: no library's message says "I".
_NARRATION = re.compile(r"\s*[,;]\s+(?:(?:and|but|so|then|when|after|because)\s+)?(?:I|I'm|I've|my|My)\b")


# Well-known torch messages a report quotes without their class, often with the head cut ("tensors to be on the same
# device, but found at least two devices, cuda:0 and cpu!"): (the quoted part's shape, its head, torch's class).
_TORCH_MESSAGES = (
    (re.compile(r"(?:Expected all )?tensors to be on the same device(?:, but found at least two devices, \S+ and "
                r"\S+?!(?: \(when checking argument[^)]{0,200}\))?)?"), "Expected all ", "RuntimeError"),
    (re.compile(r"Input type \([\w.]+\) and weight type \([\w.]+\) should be the same"), "Input ", "RuntimeError"),
    (re.compile(r"(?:[Ee]xpected )?scalar type \w+ but found \w+"), "expected ", "RuntimeError"),
    (re.compile(r"(?:mat1 and )?mat2 shapes cannot be multiplied \(\d+x\d+ and \d+x\d+\)"), "mat1 and ",
     "RuntimeError"))


def _torch_fragment(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last part of a well-known torch message the report quotes without any class: the message completed to
    torch's wording and torch's class, both said in the note (the report writes neither)."""
    for index in range(len(lines) - 1, -1, -1):
        for shape, head, exception in _TORCH_MESSAGES:
            if (match := shape.search(lines[index])) is not None:
                text = match.group()
                message = text if text.lower().startswith(head.lower()) else head + text
                return (index, exception, message, f"a quoted part of torch's message, completed to torch's wording; "
                        f"its class {exception} is torch's for that message (the report writes no class: check it)")
    return None


def _quoted_end(lines: list[str], exception: str, message: str) -> str:
    """A sentence's message cut where the report quotes the same exception elsewhere (the title's
    ``"RuntimeError: Format is invalid"`` ends "Format is invalid when training csmsc/tts1")."""
    for opener, closer in _CLOSERS.items():
        end = re.escape(closer)
        quoted = re.compile(re.escape(f"{opener}{exception}: ") + f"([^{end}]{{3,500}}){end}")
        for line in lines:
            for match in quoted.finditer(line):
                if message.startswith(found := match[1].strip()) and len(found) < len(message):
                    return found
    return message


def _sentence_message(text: str) -> str:
    """Where a message named in prose ends: a code span's end, else its last quoted name ("... 'Layernorm' in
    vit_1d." -> "... 'Layernorm'"), else the sentence's end; the reporter's own clause (", I change ...") is never
    the message's."""
    text = _NARRATION.split(text.split("`")[0], maxsplit=1)[0]
    text = re.split(r"\s{3,}", text, maxsplit=1)[0]  # prose set off by a run of spaces goes on after the message
    quote = max(text.rfind("'"), text.rfind('"'))
    if quote > 0 and text.count(text[quote]) >= 2:
        return text[:quote + 1]
    return _CIRCUMSTANCE.sub("", re.split(r"\.(?:\s|$)", text, maxsplit=1)[0].rstrip(" ."))


# Where the reporter ran it, said after the message in a title ("... expected BFloat16 on a CPU"): not the message's.
_CIRCUMSTANCE = re.compile(r"\s+on\s+(?:(?:a|an|the|my|multiple|several|\d+)\s+)?(?:CPU|GPU|TPU|MPS|XPU|NPU|Mac|M[123]"
                           r"|Apple Silicon|Windows|Colab)s?$", re.IGNORECASE)


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
