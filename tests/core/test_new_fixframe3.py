"""No refusal of a report that states its error (issue 21 §1), on made-up reports of the shapes held-out sets refused:
a traceback cut before its exception line with the message only in a title that says what failed ("... fails :
<message>"), with no class; a cut traceback with no message anywhere (drafted from its frames, nothing invented)."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness._exceptions import UsageError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.cases._placeholders import MARK

CUT = ("```\nTraceback (most recent call last):\n  File \"run.py\", line 15, in <module>\n    trainer.fit(model)\n"
       "  File \"/home/u/venv/lib/python3.10/site-packages/rlkit/algo.py\", line 264, in fit\n    self.step()\n"
       "  File \"/home/u/venv/lib/python3.10/site-packages/rlkit/algo.py\", line 301, in step\n    self.opt.step()\n"
       "  File \"/home/u/venv/lib/python3.10/\n```\n")


def _draft(text: str) -> dict[str, str]:
    report = parse_report(text)
    data = draft_case("x", report, source="r.txt", released=lambda name: None, project_urls=lambda name: None,
                      versions=lambda name: None)
    fields = dict(re.findall(r'^(signature|exception|title): "(.*)"$', data.case_yaml, re.MULTILINE))
    return {**fields, "message": report.traceback.message, "frames": str(len(report.traceback.frames))}


# The title says what failed, then the library's message after a colon (spaces around it or not): drafted from the
# title's message and the cut traceback's frames, the class left to fill in (an unknown message's class is not
# guessed), or torch's class where the message is one of torch's known ones.
@pytest.mark.parametrize(("title", "message", "exception"), [
    ("[Bug] Resuming a run fails : optimizer state dict has 3 groups but 2 were given",
     "optimizer state dict has 3 groups but 2 were given", MARK),
    ("Training crashed: the replay buffer should not be empty", "the replay buffer should not be empty", MARK),
    ("[BUG] fit() breaks: Expected all tensors to be on the same device with LinearModel",
     "Expected all tensors to be on the same device", "RuntimeError"),
    ("Loading a saved agent failed: If capturable=False, state_steps should not be CUDA tensors.",
     "If capturable=False, state_steps should not be CUDA tensors.", "AssertionError"),
])
def test_a_cut_traceback_under_a_title_stating_its_message_is_drafted(title: str, message: str,
                                                                       exception: str) -> None:
    fields = _draft(f"# {title}\n\nIt stops.\n\n{CUT}")
    assert fields["message"] == message and fields["frames"] == "3"
    assert fields["exception"].startswith(MARK) if exception == MARK else fields["exception"] == exception
    assert re.search(fields["signature"].encode().decode("unicode_escape"), message)
    assert not fields["title"].startswith("[")


def test_a_cut_traceback_with_no_message_anywhere_is_drafted_from_its_frames() -> None:
    """A question as the title: nothing to take a message from; the frames are the run's path, the class and the
    signature left to fill in (validate refuses the draft until they are written)."""
    fields = _draft(f"# How do I resume training with a saved optimizer?\n\n{CUT}")
    assert fields["frames"] == "3" and fields["message"] == ""
    assert fields["exception"].startswith(MARK) and fields["signature"].startswith(MARK)


@pytest.mark.parametrize("title", ["Training fails when resuming: any idea?", "Feature: resume training",
                                   "Bug: training fails on resume"])
def test_a_title_without_a_failure_and_colon_then_text_is_no_message(title: str) -> None:
    """The failure verb must come right before the colon: a topic ("Bug:", "Feature:") or a question is not a
    message; with no traceback at all the report is drafted with the class and the signature to fill in."""
    report = parse_report(f"# {title}\n\nIt stops after loading.\n")
    assert report.traceback.exception.startswith(MARK) and report.traceback.message == ""


def test_a_bare_traceback_header_with_no_frame_and_no_message_is_drafted_with_the_class_to_fill_in() -> None:
    report = parse_report("# Training stops\n\nTraceback (most recent call last):\n")
    assert report.traceback.exception.startswith(MARK) and not report.traceback.frames
    assert "the exception line as Python printed it" in report.missing


_PIECES = [*CUT.splitlines(), "# [Bug] X fails : boom", "# Training crashed: x should be y", "Traceback (most recent "
           "call last):", "  File \"a.py\", line 1, in f", "# How?", "fails :", ": :", "```", ""]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=20), max_size=14))
def test_no_parse_raises_but_a_usage_error_and_only_an_empty_report_is_refused(pieces: list[str]) -> None:
    text = "\n".join(pieces)
    try:
        report = parse_report(text)
    except UsageError:
        assert not text.strip()  # only an empty report is refused
        return
    draft_case("x", report, source="r.txt", released=lambda name: None, project_urls=lambda name: None,
               versions=lambda name: None)
