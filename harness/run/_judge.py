"""Judge cells against their expectations, then each (case, lane) by its worst cell.

The rules are DESIGN.md "Verdicts". Per cell:

======================  ============================================  ==================
expected                what the cell did                             judgement
======================  ============================================  ==================
reproduces              raised, message matches the signature         confirmed
reproduces              ran clean                                     stale-repro
passes                  ran clean                                     confirmed
passes (fix variant)    raised, message matches the signature         fix-regressed
either                  failed in any other way (other exception,     failed-differently
                        non-zero exit, killed by a signal)
either                  timeout, environment failure, out of memory,  infra-error
                        interrupted
unsupported / no lane   not run                                       skipped
======================  ============================================  ==================
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any, TypedDict

import regex

from harness._vocabulary import SEVERITY, CellStatus, Verdict

if TYPE_CHECKING:  # the case loader imports this module to check signatures: no import cycle
    from harness.cases._load import Expectation
    from harness.run._backend import ChildOutcome
    from harness.run._plan import Cell
    from harness.run._results import CellRecord


_INFRA = {"timeout", "infra-error", "oom", "interrupted"}


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str
    signature_matched: bool


SIGNATURE_TIMEOUT_S = 1.0
_MAX_MESSAGE = 100_000  # the child keeps 20,000 characters; a forged outcome may not


class SignatureTimeout(Exception):
    """A signature took longer than SIGNATURE_TIMEOUT_S on one message (catastrophic backtracking)."""

    def __init__(self, pattern: str, length: int) -> None:
        self.pattern, self.length = pattern, length
        super().__init__(str(self))

    def __str__(self) -> str:
        shown = self.pattern if len(self.pattern) <= 120 else self.pattern[:117] + "..."
        return (f"the signature regex {shown!r} did not finish within {SIGNATURE_TIMEOUT_S:g}s on a "
                f"{self.length}-character message (catastrophic backtracking); fix: simplify the signature in "
                "case.yaml, e.g. no nested quantifiers like '(a+)+' (a plain substring of the message is enough)")


def compile_signature(pattern: str) -> regex.Pattern[str]:
    """The one way a signature is compiled: the ``regex`` module, with ``re``'s syntax (VERSION0), so its
    matching can be bounded by a timeout. The case loader calls it to check a signature: a ValueError
    carries the syntax error."""
    try:
        return _compiled(pattern)
    except regex.error as error:
        raise ValueError(str(error)) from None


@lru_cache(maxsize=1024)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, regex.VERSION0)


def search_signature(signature: str | re.Pattern[str] | regex.Pattern[str], text: str) -> bool:
    """Does ``signature`` occur in ``text``? Bounded: SignatureTimeout after SIGNATURE_TIMEOUT_S. The GIL is
    released while it runs, so Ctrl-C and SIGTERM are handled meanwhile."""
    pattern = signature if isinstance(signature, str) else signature.pattern
    text = text[:_MAX_MESSAGE]
    try:
        return compile_signature(pattern).search(text, timeout=SIGNATURE_TIMEOUT_S, concurrent=True) is not None
    except TimeoutError:
        raise SignatureTimeout(pattern, len(text)) from None


_COLOUR_CODES = re.compile(r"\x1b\[[0-9;]*m")


def signature_matches(exception: dict[str, Any] | None, signature: str | re.Pattern[str] | regex.Pattern[str],
                      exception_type: str | None) -> bool:
    """The message matches as raised, or as a terminal shows it: some libraries colour parts of their messages
    (torch's weights_only error bolds a line), and a signature copied from a terminal has no escape codes."""
    if not exception:
        return False
    if exception_type and exception.get("type") != exception_type.rpartition(".")[2]:
        return False
    message = str(exception.get("message", ""))
    if search_signature(signature, message):
        return True
    shown = _COLOUR_CODES.sub("", message)
    return shown != message and search_signature(signature, shown)


def judge_cell(*, role: str, expected: Expectation, status: CellStatus | str, exception: dict[str, Any] | None,
               signature: str | re.Pattern[str] | regex.Pattern[str], exception_type: str | None,
               reason: str = "") -> Judgement:
    try:
        matched = status == "raised" and signature_matches(exception, signature, exception_type)
    except (SignatureTimeout, ValueError) as error:  # ValueError: a signature the regex module rejects
        return Judgement(Verdict.INFRA_ERROR, f"the cell ran ({status}) but could not be judged: {error}", False)
    if status == "skipped":
        return Judgement(Verdict.SKIPPED, reason, False)
    if status in _INFRA:
        return Judgement(Verdict.INFRA_ERROR, reason or f"the cell could not run ({status})", False)
    what = _describe_failure(status, exception, matched, reason)
    if expected.kind == "reproduces":
        if matched:
            return Judgement(Verdict.CONFIRMED, f"reproduces: {what}", True)
        if status == "passed":
            return Judgement(Verdict.STALE_REPRO, "expected to reproduce the bug but ran clean", False)
        return Judgement(Verdict.FAILED_DIFFERENTLY, f"expected the signature, but {what}", False)
    if status == "passed":
        return Judgement(Verdict.CONFIRMED, "passes, as expected", False)
    if matched and role == "fix":
        return Judgement(Verdict.FIX_REGRESSED, f"the fix no longer holds: {what}", True)
    return Judgement(Verdict.FAILED_DIFFERENTLY, f"expected to pass, but {what}", matched)


def judge_record(cell: Cell, record: CellRecord, outcome: ChildOutcome) -> CellRecord:
    """The judging step for one cell: its outcome held against its variant's expectation on its lane,
    recorded on ``record`` (which the caller made for the cell)."""
    judgement = judge_cell(
        role=cell.variant.role, expected=cell.variant.expect[cell.lane.name], status=outcome.status,
        exception=outcome.exception, signature=cell.case.signature, exception_type=cell.case.exception,
        reason=outcome.reason,
    )
    record.status, record.duration_s = outcome.status, round(outcome.duration_s, 3)
    record.exit_code, record.signal, record.exception = outcome.exit_code, outcome.signal, outcome.exception
    record.imported, record.image = outcome.imported, dict(outcome.image) if outcome.image else None
    record.judgement, record.reason = judgement.verdict, judgement.reason
    record.signature_matched = judgement.signature_matched
    return record


def _describe_failure(status: str, exception: dict[str, Any] | None, matched: bool, reason: str) -> str:
    if status == "raised" and exception:
        first_line = str(exception.get("message", "")).strip().splitlines()[:1]
        text = f"raised {exception.get('type')}: {first_line[0] if first_line else ''}".rstrip(": ")
        return f"{text} (signature {'matched' if matched else 'not matched'})"
    if status == "passed":
        return "ran clean"
    return reason or status


@dataclass(frozen=True)
class LaneVerdict:
    verdict: Verdict
    reason: str
    cells: tuple[str, ...]


def combine(judged: Sequence[tuple[str, Judgement]]) -> LaneVerdict:
    """The (case, lane) verdict: the worst cell verdict, with the reasons of the cells that set it."""
    names = tuple(name for name, _ in judged)
    if not judged:
        return LaneVerdict(Verdict.SKIPPED, "no variant selected on this lane", names)
    worst = min((j.verdict for _, j in judged), key=SEVERITY.index)
    reasons = _unique(f"{name}: {j.reason}" for name, j in judged if j.verdict == worst)
    if worst is Verdict.SKIPPED:
        reasons = _unique(j.reason for _, j in judged)
    elif worst is Verdict.CONFIRMED:
        reasons = [f"{sum(j.verdict is Verdict.CONFIRMED for _, j in judged)} of {len(judged)} variants "
                   "behave as documented"]
    return LaneVerdict(worst, "; ".join(reasons), names)


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


class VerdictRecord(TypedDict):
    """One (case, lane) verdict as results.json stores it (harness/results.schema.json "verdicts")."""

    case: str
    lane: str
    verdict: str
    reason: str
    cells: list[str]


# (case, lane, variant, judgement) of one cell: what the lane verdicts are computed from.
_Judged = tuple[str, str, str, Judgement]


def judge_lanes(case_ids: Sequence[str], records: Iterable[CellRecord]) -> list[VerdictRecord]:
    """Every (case, lane) verdict of a run from its cell records (cases in ``case_ids`` order)."""
    return _lane_records(case_ids, [(r.case, r.lane, r.variant, Judgement(r.judgement, r.reason, r.signature_matched))
                                    for r in records])


def lane_verdicts(case_ids: Sequence[str], cells: Sequence[Mapping[str, Any]]) -> list[VerdictRecord]:
    """The same from stored cells (a dead run's cells.jsonl): an unknown judgement counts as infra-error."""
    return _lane_records(case_ids, [
        (str(c.get("case")), str(c.get("lane")), str(c.get("variant")),
         Judgement(_verdict(c.get("judgement")), str(c.get("reason") or ""), bool(c.get("signature_matched"))))
        for c in cells])


def _lane_records(case_ids: Sequence[str], judged: Sequence[_Judged]) -> list[VerdictRecord]:
    verdicts: list[VerdictRecord] = []
    lanes = list(dict.fromkeys(lane for _, lane, _, _ in judged))
    for case in case_ids:
        for lane in lanes:
            cells = [(variant, judgement) for c, where, variant, judgement in judged if c == case and where == lane]
            if cells:
                combined = combine(cells)
                verdicts.append({"case": case, "lane": lane, "verdict": combined.verdict.value,
                                 "reason": combined.reason, "cells": list(combined.cells)})
    return verdicts


def _verdict(value: Any) -> Verdict:
    try:
        return Verdict(value)
    except ValueError:
        return Verdict.INFRA_ERROR
