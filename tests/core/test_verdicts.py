"""Every row of DESIGN.md's verdict table, per cell and per (case, lane)."""

from __future__ import annotations

import re

import pytest

from harness.cases._load import Expectation
from harness.run._judge import SEVERITY, Judgement, Verdict, combine, judge_cell

SIG = re.compile("Expected all tensors to be on the same device")
MATCH = {"type": "RuntimeError", "message": "Expected all tensors to be on the same device, but found ..."}
OTHER = {"type": "ValueError", "message": "unrelated"}
REPRODUCES, PASSES = Expectation("reproduces"), Expectation("passes")


def judge(role, expected, status, exception=None, exception_type="RuntimeError", signature=SIG):
    return judge_cell(role=role, expected=expected, status=status, exception=exception, signature=signature,
                      exception_type=exception_type)


@pytest.mark.parametrize(
    ("role", "expected", "status", "exception", "verdict"),
    [
        ("buggy", REPRODUCES, "raised", MATCH, Verdict.CONFIRMED),
        ("fix", PASSES, "passed", None, Verdict.CONFIRMED),
        ("buggy", PASSES, "passed", None, Verdict.CONFIRMED),
        ("fix", PASSES, "raised", MATCH, Verdict.FIX_REGRESSED),
        ("buggy", REPRODUCES, "passed", None, Verdict.STALE_REPRO),
        ("buggy", REPRODUCES, "raised", OTHER, Verdict.FAILED_DIFFERENTLY),
        ("fix", PASSES, "raised", OTHER, Verdict.FAILED_DIFFERENTLY),
        ("buggy", REPRODUCES, "exited", None, Verdict.FAILED_DIFFERENTLY),
        ("buggy", REPRODUCES, "crashed", None, Verdict.FAILED_DIFFERENTLY),
        ("buggy", REPRODUCES, "timeout", None, Verdict.INFRA_ERROR),
        ("fix", PASSES, "infra-error", None, Verdict.INFRA_ERROR),
        ("buggy", REPRODUCES, "oom", None, Verdict.INFRA_ERROR),
        ("buggy", REPRODUCES, "interrupted", None, Verdict.INFRA_ERROR),
        ("buggy", Expectation("unsupported", "needs X"), "skipped", None, Verdict.SKIPPED),
    ],
)
def test_cell_rules(role, expected, status, exception, verdict):
    assert judge(role, expected, status, exception).verdict is verdict


def test_signature_needs_the_declared_exception_type():
    wrong_type = {"type": "AssertionError", "message": MATCH["message"]}
    assert judge("buggy", REPRODUCES, "raised", wrong_type).verdict is Verdict.FAILED_DIFFERENTLY
    assert judge("buggy", REPRODUCES, "raised", wrong_type, exception_type=None).verdict is Verdict.CONFIRMED


def test_a_signature_copied_from_a_terminal_matches_a_coloured_message():
    coloured = {"type": "UnpicklingError", "message": "Weights only load failed.\n\x1b[1mWeightsUnpickler error: "
                "Unsupported global: GLOBAL numpy.core.multiarray._reconstruct\x1b[0m was not an allowed global"}
    signature = r"WeightsUnpickler error: Unsupported global: GLOBAL numpy\.core\.multiarray\._reconstruct was"
    assert judge("buggy", REPRODUCES, "raised", coloured, signature=signature,
                 exception_type="UnpicklingError").verdict is Verdict.CONFIRMED
    assert judge("buggy", REPRODUCES, "raised", coloured, signature="a message it does not contain",
                 exception_type="UnpicklingError").verdict is Verdict.FAILED_DIFFERENTLY


def test_buggy_raising_signature_where_it_should_pass_is_not_a_fix_regression():
    judgement = judge("buggy", PASSES, "raised", MATCH)
    assert judgement.verdict is Verdict.FAILED_DIFFERENTLY and judgement.signature_matched


def _j(verdict: Verdict, reason: str = "r") -> Judgement:
    return Judgement(verdict, reason, False)


def test_lane_verdict_is_the_worst_cell():
    for worse_index, worse in enumerate(SEVERITY):
        for better in SEVERITY[worse_index:]:
            assert combine([("a", _j(better)), ("b", _j(worse))]).verdict is worse


def test_all_skipped_lane_is_skipped_with_reason_and_ok():
    lane = combine([("a", _j(Verdict.SKIPPED, "no GPU")), ("b", _j(Verdict.SKIPPED, "no GPU"))])
    assert lane.verdict is Verdict.SKIPPED and lane.reason == "no GPU" and lane.verdict.ok


def test_unsupported_variant_does_not_hide_a_confirmed_lane():
    lane = combine([("a", _j(Verdict.CONFIRMED)), ("b", _j(Verdict.SKIPPED, "unsupported"))])
    assert lane.verdict is Verdict.CONFIRMED


@pytest.mark.parametrize("verdict", [v for v in Verdict if v not in (Verdict.CONFIRMED, Verdict.SKIPPED)])
def test_only_confirmed_and_skipped_are_ok(verdict):
    assert not verdict.ok


def test_a_catastrophic_signature_is_an_infra_error_naming_the_regex():
    import threading
    import time

    message = {"type": "RuntimeError", "message": "a" * 5000}
    started = time.monotonic()
    judged = judge_cell(role="buggy", expected=REPRODUCES, status="raised", exception=message,
                        signature=re.compile("(a|aa)+$x"), exception_type=None)
    assert time.monotonic() - started < 30
    assert judged.verdict is Verdict.INFRA_ERROR and "(a|aa)+$x" in judged.reason and "fix:" in judged.reason
    # The matching releases the GIL: another thread keeps running meanwhile (the main thread's Ctrl-C too).
    ticks = []
    ticker = threading.Thread(target=lambda: [ticks.append(time.sleep(0.05)) for _ in range(10)])
    ticker.start()
    judge_cell(role="buggy", expected=REPRODUCES, status="raised", exception=message,
               signature=re.compile("(a|aa)+$x"), exception_type=None)
    ticker.join()
    assert len(ticks) == 10


def test_signatures_compile_with_re_syntax_and_report_errors():
    from harness.run._judge import compile_signature, search_signature

    assert search_signature(r"device(s)? \w+:\d", "two devices cuda:0 and cpu")
    with pytest.raises(ValueError, match="missing"):
        compile_signature("Expected (all")
