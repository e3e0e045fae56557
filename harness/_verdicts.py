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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from harness._cases import Expectation


class Verdict(StrEnum):
    CONFIRMED = "confirmed"
    FIX_REGRESSED = "fix-regressed"
    STALE_REPRO = "stale-repro"
    FAILED_DIFFERENTLY = "failed-differently"
    INFRA_ERROR = "infra-error"
    SKIPPED = "skipped"

    @property
    def ok(self) -> bool:
        """Verdicts that let ``nox -s cases`` exit 0."""
        return self in (Verdict.CONFIRMED, Verdict.SKIPPED)


# Worst first: a fix that no longer holds is the news a maintainer must see before anything else.
SEVERITY: tuple[Verdict, ...] = (
    Verdict.FIX_REGRESSED, Verdict.STALE_REPRO, Verdict.FAILED_DIFFERENTLY,
    Verdict.INFRA_ERROR, Verdict.CONFIRMED, Verdict.SKIPPED,
)
_INFRA = {"timeout", "infra-error", "oom", "interrupted"}


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    reason: str
    signature_matched: bool


def signature_matches(exception: dict[str, Any] | None, signature: re.Pattern[str],
                      exception_type: str | None) -> bool:
    if not exception:
        return False
    if exception_type and exception.get("type") != exception_type.rpartition(".")[2]:
        return False
    return signature.search(str(exception.get("message", ""))) is not None


def judge_cell(*, role: str, expected: Expectation, status: str, exception: dict[str, Any] | None,
               signature: re.Pattern[str], exception_type: str | None, reason: str = "") -> Judgement:
    matched = status == "raised" and signature_matches(exception, signature, exception_type)
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
