"""Read a pasted bug report: its final exception, the frames that led there, and the versions it lists.

A report is text as users paste it into an issue, in any order: a Python traceback (plain or chained,
with ``[rank0]:`` prefixes, IPython/Colab or rich-boxed, inside markdown fences or quotes, with ANSI
colours), and environment listings (``pip freeze``, ``pip list``, ``conda list``,
``python -m torch.utils.collect_env``, ``transformers-cli env`` and its kin, ``ds_report``).
:func:`parse_report` returns a :class:`BugReport` for any non-empty text (what it lacks is said in its notes and
``missing``, the class and signature left as placeholders); only an empty text raises :class:`UsageError`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from harness._exceptions import UsageError
from harness.authoring._casefold_error import casefold_exception
from harness.authoring._chain_choice import _pick, chained_over, complete_cause, cut_chain_frames
from harness.authoring._envlist import Environment, Pin, parse_environment
from harness.authoring._exception_line import (
    _INLINE,
    _bare_message,
    _header_exception,
    _logged_error,
    _named_with_message,
    _printed_message,
    _stated_in_body,
    _typed_fields,
)
from harness.authoring._lines import MAX_LINE, _colours, clean_lines, clean_lines_tagged, unwrap_console
from harness.authoring._own_error import _lone_exception, completed_from_title, own_error
from harness.authoring._prose import (
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
    first_reply,
)
from harness.authoring._prose_modules import unused_imports
from harness.authoring._pytest_report import unpytest
from harness.authoring._raise_template import raised_template
from harness.authoring._said_last import said_activity, said_file
from harness.authoring._shown import shown_calls
from harness.authoring._torch_messages import library_words, torch_fragment
from harness.authoring._traceback import (
    Frame,
    Traceback,
    _chains,
    _Part,
    _read_exception,
    _unmark,
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
    ran_on: str = ""  # where the run happened, as the text says: "cpu", "cpu-arg", "gpu" or "" (_prose._ran_on)
    script: str = ""  # the script the report's command or launcher summary names (_prose._ran_script)
    subjects: tuple[str, ...] = ()  # what the report's own prose says ran when it failed (_prose._subjects)
    fixes: tuple[str, ...] = ()  # fixes a reply names: "commit:<sha>" of the report's repository, "name==version"
    eight_bit: bool = False  # the run loaded bitsandbytes' CUDA library or an 8-bit model (_prose._eight_bit)
    command: str = ""  # the command line that ran the script, with its settings (_prose._ran_command)
    shown_calls: tuple[str, ...] = ()  # the calls the report's own code shows, best first (_shown.shown_calls)
    said_file: str = ""  # the first source file of its own repository the text names (_said_last.said_file)
    said_activity: str = ""  # what the title or text says failed: "resume", "training" (_said_last.said_activity)
    unused_imports: tuple[str, ...] = ()  # modules the report's code imports and never uses (_prose_modules)


def parse_report(text: str) -> BugReport:
    """The report's final exception with its frames; a report with no complete traceback but an exception line
    (``[rank1]: ValueError: ...``, a final line pasted alone) gives that line without frames, said in ``missing``."""
    if not text.strip():
        raise UsageError("the report is empty: paste the issue's text, at least the error the bug printed")
    # pytest's traceback read as Python's, before its ">" marks go with a quote's
    cleaned, tags = clean_lines_tagged(_unpytested(text))
    lines = unwrap_console(cleaned)
    tagged = ("the traceback's lines carry a launcher's tag, read without it (a rank or worker of a multi-process "
              f"run): {'  '.join(tags[:4])}",) if tags else ()
    chains = _chains(lines)
    url = _issue_url(lines)
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
    if not any(chain[-1].complete for chain in chains):
        found = _exception_only(lines, chains, url)  # raises before the text is read further when it has none
        garbled = () if (ocr := _transcribed(lines)) is None else (ocr,)
        return replace(found, notes=found.notes + garbled + tagged, modules=_modules(lines), title=title,
                       cited=_cited(lines, url), paths=_path_tops(lines),
                       code_names=_code_names(lines), called_names=_called_names(lines),
                       class_calls=_class_calls(lines), fixes=_named_fixes(lines, url),
                       named_calls=_named_calls(lines), ran_on=_ran_on(lines), script=_ran_script(lines),
                       eight_bit=_eight_bit(lines), command=_ran_command(lines),
                       subjects=_subjects(lines), shown_calls=shown_calls(lines),
                       said_file=said_file(lines, url), said_activity=said_activity(title, lines),
                       unused_imports=unused_imports(lines))
    modules, cited = _modules(lines), _cited(lines, url)
    traceback, notes = _pick(chains)
    missing: tuple[str, ...] = ()
    if (own := own_error(traceback, chains, lines, title)) is not None:
        traceback, missing = own[0], () if own[0].frames else ("traceback frames",)
        notes.append(own[1])
    if (whole := completed_from_title(traceback, lines, title)) is not None:
        traceback = whole[0]
        notes.append(whole[1])
    if (cause := complete_cause(traceback, lines)) is not None:
        traceback = cause[0]
        notes.append(cause[1])
    if (transcribed := _transcribed(lines)) is not None:
        notes.append(transcribed)
    traceback = replace(traceback, colours=_colours(text, traceback))
    if (chained := chained_over(chains, lines, traceback.exception_line - 1, traceback.exception, title)) is not None:
        traceback = replace(traceback, chained=chained[0])
        notes.append(_chained_note(chained, traceback.exception_class))
    if (summary := _launcher_summary(traceback, title)) is not None:
        traceback = summary
        notes.append("the traceback ends in the launcher's ChildFailedError summary, not the bug: drafted from the "
                     "issue title's exception (no frames of the rank that failed: its call is yours to find)")
    if _innermost_first(lines, traceback):
        traceback = replace(traceback, frames=traceback.frames[::-1], final_frames=traceback.final_frames[::-1])
        notes.append("the frames come from an editor's or debugger's dump (\"Exception has occurred:\", no "
                     "Traceback header, the script's top level last), innermost first: read in Python's order")
    return BugReport(traceback, parse_environment(lines), (*notes, *tagged), url, modules=modules, title=title,
                     missing=missing,
                     cited=cited, paths=_path_tops(lines), code_names=_code_names(lines),
                     called_names=_called_names(lines), fixes=_named_fixes(lines, url),
                     named_calls=_named_calls(lines), ran_on=_ran_on(lines), script=_ran_script(lines),
                     eight_bit=_eight_bit(lines), command=_ran_command(lines),
                     subjects=_subjects(lines), shown_calls=shown_calls(lines),
                     said_file=said_file(lines, url), said_activity=said_activity(title, lines),
                     unused_imports=unused_imports(lines))


def _unpytested(text: str) -> str:
    lines = text.splitlines()
    rewritten = unpytest(lines)
    return text if rewritten is lines else "\n".join(rewritten)


def _launcher_summary(traceback: Traceback, title: str) -> Traceback | None:
    """torchrun's (elastic's) ``ChildFailedError`` whose message is its ``====`` banner only says a rank failed: the
    exception the issue title names is the bug's (its frames are the launcher's, never the bug's)."""
    if traceback.exception_class != "ChildFailedError" or traceback.first_message_line.strip("=- "):
        return None
    named = next((m for m in _INLINE.finditer(title) if m["type"] not in ("Error", "Exception")), None)
    if named is None:
        return None
    return Traceback((), (), named["type"], library_words(named["msg"].strip()), traceback.start_line,
                     traceback.exception_line)


# Signs of a traceback transcribed from a picture (OCR): Python never prints these.
_TRANSCRIBED = re.compile(r"Traceback \(most recent call last\)[.,;]|, in [a-z]module>|/\w+,py\b")


def _transcribed(lines: list[str]) -> str | None:
    """A note for a traceback that reads as an OCR transcription: its message is likely not the library's words."""
    signs = [match.group() for line in lines if (match := _TRANSCRIBED.search(line))]
    if not signs:
        return None
    return (f"the traceback looks transcribed from a picture (OCR-like: {signs[0]!r}, which Python never prints): "
            "its message is likely not the library's exact words; check the signature against the library's text")


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
        found = (casefold_exception(lines) or _typed_fields(lines) or _header_exception(lines, chains)
                 or _stated_in_body(lines) or _logged_error(lines) or _named_with_message(lines, bool(chains))
                 or (None if chains else _bare_message(lines)) or _printed_message(lines) or torch_fragment(lines)
                 or raised_template(lines, chains))
        found = _reporters_over_reply(lines, found)
        if found is None and any(part.frames for chain in chains for part in chain):
            # frames cut before their error, no message anywhere: still the run's path
            found = (chains[-1][-1].start, f"{MARK}: the exception class (the traceback is cut before it)", "",
                     "the frames of a traceback cut before its exception line (no message in the report)")
        if found is None:  # no error stated anywhere: drafted all the same, class and signature left to fill in
            found = _nothing_stated(lines, chains)
        return _exception_named(found, lines, chains, url)
    if (logged := _logged_over_cause(lines, chains, index)) is not None:
        return BugReport(logged[0], parse_environment(lines), (logged[1],), url,
                         ("the traceback's exception line (its frames are cut)" if logged[0].frames
                          else "traceback frames",))
    stated, wrapper = _stated_over_cause(lines, chains, index)
    part = _Part(stated)
    _read_exception(lines, stated, len(lines), "", part)
    frames, start = cut_chain_frames(chains, lines, stated)
    if wrapper is not None:  # the cause's frames raised the other error: the cut wrapper's are the run's path
        frames, start = tuple(wrapper.frames), wrapper.start + 1
    index = stated
    missing = "traceback frames" if not frames else "the traceback's exception line (its frames are cut)"
    note = (f"the report has no complete traceback: drafted from the exception line at report line {index + 1}"
            + (f" and the frames of the traceback at line {start}, cut before its exception line"
               if frames else " alone (no frames: the library, the call and the repro are yours to find)")
            + ("" if wrapper is None else "; the log's chained cause (another error, re-raised by the cut traceback) "
               "is left out: the report states this one above its log"))
    traceback = Traceback(frames, frames, part.exception, part.message, index + 1, index + 1)
    notes = [note]
    title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
    if wrapper is None and (chained := chained_over(chains, lines, index, part.exception, title)) is not None:
        traceback = replace(traceback, chained=chained[0])
        notes.append(_chained_note(chained, traceback.exception_class))
    return BugReport(traceback, parse_environment(lines), tuple(notes), url, (missing,))


def _reporters_over_reply(lines: list[str], found: tuple[int, str, str, str] | None
                          ) -> tuple[int, str, str, str] | None:
    """A reply's exception with no message (an IPython header cut before it: "new problem: ...") yields to the one the
    issue's own title or description states with its message (graded50 autogptq-370: the title's RuntimeError, not a
    later FileNotFoundError)."""
    replies = first_reply(lines)
    if found is None or found[2] or replies is None or found[0] < replies:
        return found
    own = _stated_in_body(lines[:replies])
    if own is None or not own[2]:
        return found
    return own[0], own[1], own[2], f"{own[3]}; the reporter's own, over a reply's {found[1]} whose message is cut"


def _chained_note(chained: tuple[str, str], exception_class: str) -> str:
    final = f"its final exception ({chained[0]})" if chained[0] else "a final exception"
    return (f"the chain goes on past this error to {final}, {chained[1]}, whose line the report cuts; the case "
            f"matches {exception_class} (its line is complete) and the other is chained over it: name it in the "
            "summary, or make the repro raise it and change the exception and the signature")


NO_ERROR = "the report states no error"  # the note's words for a draft made from no exception at all


def _nothing_stated(lines: list[str], chains: list[list[_Part]]) -> tuple[int, str, str, str]:
    """A report that states no error (no exception line, no class, no known message; at most a bare traceback
    header) still says what ran: drafted, with the class and the signature placeholders naming what to write."""
    at = chains[-1][-1].start if chains else next((i for i, line in enumerate(lines) if line.strip()), 0)
    return (at, f"{MARK}: the exception class (the report prints no error line)",
            "", f"its text alone ({NO_ERROR}: no exception line, no class, no known message; write the class and the "
            "message the bug prints)")


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


def _stated_over_cause(lines: list[str], chains: list[list[_Part]], index: int) -> tuple[int, _Part | None]:
    """The exception line the report states above its log, when the log's last one only ends the cause of a chain
    cut before its own exception line (a library's validation error a wrapper re-raised): the reporter's line names
    the error they hit; with no such line of its own (py4cast's shape) the cause is the bug's. With it: its index and
    the chain's cut last part (the run's own path); else ``index`` and None."""
    chain = next((chain for chain in chains if not chain[-1].complete
                  and any(part.exception_index == index for part in chain[:-1])), None)
    stated = [i for i in range(chains[0][0].start if chains else 0) if _lone_exception(lines[i])]
    if chain is None or not stated:
        return index, None
    cause, mine = _Part(index), _Part(stated[-1])
    _read_exception(lines, index, len(lines), "", cause)
    _read_exception(lines, stated[-1], len(lines), "", mine)
    return (stated[-1], chain[-1]) if mine.exception != cause.exception else (index, None)


# A logger's line for the exception that ended the run ("CRITICAL Uncaught ConnectionError: Caught ... Original
# Traceback (most recent call last):"), the chain's cause printed under it.
_UNCAUGHT = re.compile(r"\b(?:CRITICAL|ERROR|FATAL)\b.{0,80}?\b(?:Uncaught|Unhandled)\s+(?P<type>[A-Za-z_][\w.]{0,80}"
                       r"(?:Error|Exception)):\s+(?P<msg>\S.{0,1000}?)(?:\s*Original Traceback \(most recent call "
                       r"last\):?)?\s*$")


def _logged_over_cause(lines: list[str], chains: list[list[_Part]], index: int) -> tuple[Traceback, str] | None:
    """The error a logger says ended the run, where the exception line at ``index`` only ends the cause of a chain
    cut before its own exception line and the logger's line heads that chain: the chain's last error is the bug's."""
    chain = next((chain for chain in chains if not chain[-1].complete
                  and any(part.exception_index == index for part in chain[:-1])), None)
    if chain is None:
        return None
    head = next(((i, m) for i in range(chain[0].start, max(-1, chain[0].start - 4), -1)
                 if (m := _UNCAUGHT.search(_unmark(lines[i].strip())))), None)
    if head is None:
        return None
    at, match = head
    frames, _ = cut_chain_frames(chains, lines, index)
    note = (f"the report's traceback is cut before its last exception line: drafted from the logger's line at report "
            f"line {at + 1} (the error that ended the run; the one at line {index + 1} is its cause)")
    return Traceback(frames, frames, match["type"], match["msg"].strip(), at + 1, at + 1), note
