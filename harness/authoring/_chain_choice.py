"""Which of a report's tracebacks is the bug's (the last complete one, not a launcher's summary), its whole message,
and the frames of a chain cut before its own exception line."""

from __future__ import annotations

import re
from dataclasses import replace

from harness.authoring._traceback import (
    _CHAIN,
    _EXCEPTION,
    _LAUNCHERS,
    Frame,
    Traceback,
    _Part,
    _strong_exception,
    _unmark,
)
from harness.authoring._traceback import _HEADER as _HEADER_LINE
from harness.cases._placeholders import MARK


def _pick(chains: list[list[_Part]]) -> tuple[Traceback, list[str]]:
    """The last complete traceback, unless it is a launcher's summary of a worker's earlier one."""
    complete = [chain for chain in chains if chain[-1].complete]
    if not complete:  # parse_report reads such a report elsewhere; drafted from the cut frames all the same
        last = chains[-1]
        frames = tuple(frame for part in last for frame in part.frames)
        note = (f"the traceback at report line {last[0].start + 1} stops before its final exception line: drafted "
                "from its frames, the class and the signature left to fill in")
        return Traceback(frames, tuple(last[-1].frames), f"{MARK}: the exception class (the traceback is cut before "
                         "it)", "", last[0].start + 1, last[-1].start + 1), [note]
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
    message = _whole_message(final, [chain[-1] for chain in complete], notes)
    traceback = Traceback(frames, tuple(final.frames), final.exception, message,
                          chosen[0].start + 1, final.exception_index + 1)
    return traceback, notes


def _whole_message(final: _Part, others: list[_Part], notes: list[str]) -> str:
    """The chosen message, or another copy of it that goes on where the chosen one stops inside a word (the stored
    text cut it: "... used by other processes and c")."""
    cut = final.message
    for other in others:
        whole = other.message
        if other.exception == final.exception and len(whole) > len(cut) and whole.startswith(cut) \
                and cut[-1:].isalnum() and whole[len(cut)].isalnum():
            notes.append(f"the message at line {final.exception_index + 1} stops inside a word; took its whole copy "
                         f"at line {other.exception_index + 1}")
            return whole
    return cut

_DIRECT_CAUSE = re.compile(r"The above exception was the direct cause")


def cut_chain_frames(chains: list[list[_Part]], lines: list[str],
                     exception_index: int) -> tuple[tuple[Frame, ...], int]:
    """The frames of the last chain that has any, outermost first, and its 1-based start line, for a report whose
    traceback is cut before its own exception line. When the exception line at ``exception_index`` ends a chain's
    cause ("The above exception was the direct cause ...": a wrapper re-raised it) and the wrapper's part is cut, the
    bug is the cause's: the wrapper's frames are the calls that led there, the cause's the innermost."""
    framed = [chain for chain in chains if chain[-1].frames]
    if not framed:
        return (), 0
    chain = framed[-1]
    at = next((n for n, part in enumerate(chain[:-1]) if part.exception_index == exception_index
               and any(_DIRECT_CAUSE.search(line) for line in lines[part.end:chain[n + 1].start])), None)
    parts = chain if at is None else [*chain[at + 1:], *chain[:at + 1]]
    return tuple(frame for part in parts for frame in part.frames), chain[0].start + 1


_HANDLING = re.compile(r"During handling of the above exception")
_INLINE_CLASS = re.compile(r"(?<![\w.])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception)):\s")
_CUT_CLASS = re.compile(r"^\s*(?P<name>[A-Za-z_][\w.]{0,200})\s*$")


def chained_over(chains: list[list[_Part]], lines: list[str], exception_index: int, exception: str,
                 title: str) -> tuple[str, str] | None:
    """The chain's final exception where the exception line at ``exception_index`` is a cause whose chain goes on
    ("During handling of the above exception, another exception occurred", "The above exception was the direct
    cause") to a part cut before its own exception line: that final exception as the issue title states it (else
    the cut start of its class the body keeps ("NameE..."), else ''), and how it is chained. None for any other
    line."""
    starts = [chain[0].start for chain in chains] + [len(lines)]
    for n, chain in enumerate(chains):
        at = next((k for k, part in enumerate(chain) if part.exception_index == exception_index), None)
        if at is None or (chain[-1].complete and at + 1 < len(chain)):
            continue
        # the paste may stop right after the separator: the chain's last part is this one, nothing follows
        between = lines[chain[at].end:chain[at + 1].start if at + 1 < len(chain) else starts[n + 1]]
        if at + 1 == len(chain) and not any(_CHAIN.search(line) for line in between[:8]):
            return None
        how = ("raised while handling it" if any(_HANDLING.search(line) for line in between[:8])
               else "raised from it (its direct cause)")
        cut = _cut_class(lines, chain[-1]) if at + 1 < len(chain) else ""
        mine = exception.rpartition(".")[2]
        for final in _title_exceptions(title):
            if final.partition(":")[0] != mine and final.startswith(cut):
                return final, how
        return (f"{cut}..." if cut else ""), how
    return None


def _cut_class(lines: list[str], part: _Part) -> str:
    """The start of the class name a cut part's last line keeps ("NameE"), or ''."""
    last = max((frame.report_line for frame in part.frames), default=part.start + 1)
    for line in lines[last:part.end]:
        match = _CUT_CLASS.match(line)
        if match and not line[:1].isspace():
            return match["name"]
    return ""


def _title_exceptions(title: str) -> list[str]:
    """The "Class: message" pairs an issue title states, each message cut where the next pair or a " ; " begins."""
    found = list(_INLINE_CLASS.finditer(title))
    pairs = []
    for n, match in enumerate(found):
        end = found[n + 1].start() if n + 1 < len(found) else len(title)
        text = re.split(r"\s+[;|]\s+|\s+-\s+", title[match.start():end], maxsplit=1)[0].strip(" ,;")
        pairs.append(text)
    return pairs


_ELLIPSIS = re.compile(r"^\s*(?:\.{3}|…|\[\.\.\.\])\s*$")


def complete_cause(traceback: Traceback, lines: list[str]) -> tuple[Traceback, str] | None:
    """The complete exception line pasted just above the traceback's frames (its cause, the error the reporter saw
    first: "RuntimeError: Expected all tensors ...", "...", the frames) where the final exception the paste ends on
    is a re-raise whose message the stored text cut inside a word ("RuntimeError: Encountered differen"): that
    cause, the cut re-raise kept as what it chained to, the frames kept (they are the failing path). None else."""
    at, message = traceback.exception_line - 1, traceback.message
    if not 0 <= at < len(lines) or not message[-1:].isalnum() or "\n" in message \
            or any(line.strip() for line in lines[at + 1:]):
        return None
    first = min((frame.report_line for frame in traceback.frames), default=traceback.start_line) - 1
    above = first - 1
    while above >= 0 and (not lines[above].strip() or _ELLIPSIS.match(lines[above])
                          or _HEADER_LINE.search(lines[above])):
        above -= 1
    if above < max(0, first - 4) or not _strong_exception(lines[above]):
        return None
    cause = _EXCEPTION.match(_unmark(lines[above].strip()))
    if cause is None or not cause["msg"] or cause["msg"].startswith(message):
        return None
    chained = f"{traceback.exception}: {message}..."
    note = (f"the traceback's final line {at + 1} is cut inside a word (a re-raise: {chained}); took the complete "
            f"error pasted above its frames at line {above + 1}")
    return replace(traceback, exception=cause["type"], message=cause["msg"].strip(), exception_line=above + 1,
                   chained=chained), note
