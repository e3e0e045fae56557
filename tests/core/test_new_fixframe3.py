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
from harness.authoring._lines import clean_lines, unwrap_console
from harness.authoring._traceback import _chains, _Part
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
    message; with no traceback at all the report is still refused, with the reason."""
    with pytest.raises(UsageError, match="no Python traceback and no exception line"):
        parse_report(f"# {title}\n\nIt stops after loading.\n")


def test_a_bare_traceback_header_with_no_frame_and_no_message_is_refused() -> None:
    with pytest.raises(UsageError, match="has no frame and no exception line"):
        parse_report("# Training stops\n\nTraceback (most recent call last):\n")


_PIECES = [*CUT.splitlines(), "# [Bug] X fails : boom", "# Training crashed: x should be y", "Traceback (most recent "
           "call last):", "  File \"a.py\", line 1, in f", "# How?", "fails :", ": :", "```", ""]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=20), max_size=14))
def test_no_parse_raises_but_a_usage_error_and_a_cut_traceback_with_frames_drafts(pieces: list[str]) -> None:
    text = "\n".join(pieces)
    try:
        report = parse_report(text)
    except UsageError:
        assert not any(part.frames for part in _cut_parts(text))
        return
    draft_case("x", report, source="r.txt", released=lambda name: None, project_urls=lambda name: None,
               versions=lambda name: None)


def _cut_parts(text: str) -> list[_Part]:
    return [part for chain in _chains(unwrap_console(clean_lines(text))) for part in chain]


# Class 2: a thread whose later reply pastes a traceback of another error than the one the reporter states.
OWN = "ValueError: tokenizer vocabulary has 32000 entries but the embedding has 32001"
REPLY_TB = ("Traceback (most recent call last):\n  File \"/venv/lib/python3.10/site-packages/vislib/rope.py\", line 16, "
            "in get_index\n    t = r * s\nRuntimeError: Expected all tensors to be on the same device, but found at "
            "least two devices, cuda:0 and cpu!\n")


def _thread(description: str, reply: str, title: str = "Loading the chat model") -> str:
    return (f"# {title}\n\nI ran the chat example.\n\n{description}\n\nsomeone · comment · 2025-01-02\n"
            f"same here, with video:\n\n{reply}")


def test_a_replys_different_error_is_not_the_reporters_bug() -> None:
    report = parse_report(_thread(OWN, REPLY_TB))
    assert (report.traceback.exception, report.traceback.message) == ("ValueError", OWN.partition(": ")[2])
    assert report.traceback.frames == () and "traceback frames" in report.missing
    # the reporter's error only in the title: the same
    report = parse_report(_thread("It fails.", REPLY_TB, title=f"[BUG] {OWN}"))
    assert report.traceback.exception == "ValueError"


def test_a_reply_with_the_reporters_error_or_a_reporter_stating_none_keeps_the_replys_traceback() -> None:
    shortened = "RuntimeError: Expected all tensors to be on the same device"
    for description in (shortened, "It stops with an error."):
        report = parse_report(_thread(description, REPLY_TB))
        assert report.traceback.message.endswith("cuda:0 and cpu!")
        assert [frame.function for frame in report.traceback.frames] == ["get_index"]


# Class 2: the stored text cut inside the final exception line, the title stating the same class's whole message.
CUT_LAST = ("Traceback (most recent call last):\n  File \"/home/u/ocr/modules/enc.py\", line 49, in forward\n"
            "    src = src * self.scale\nRuntimeError: expected device cuda:1")


def test_a_cut_last_exception_line_is_completed_from_the_titles_same_class_message() -> None:
    whole = "expected device cuda:1 but got device cuda:0"
    report = parse_report(f"# RuntimeError: {whole}\n\nTraining on two GPUs:\n{CUT_LAST}\n")
    assert report.traceback.message == whole


@pytest.mark.parametrize("text", [
    f"# RuntimeError: expected device cuda:1 but got device cuda:0\n\n{CUT_LAST}\n\nAny idea?\n",  # not the last text
    f"# ValueError: expected device cuda:1 but got device cuda:0\n\n{CUT_LAST}\n",  # another class
    f"# RuntimeError: expected device cuda:0 but got device cpu\n\n{CUT_LAST}\n",  # another message
])
def test_an_exception_line_not_cut_or_another_titles_error_is_kept(text: str) -> None:
    assert parse_report(text).traceback.message == "expected device cuda:1"


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=20), max_size=12), st.integers(min_value=0, max_value=12))
def test_a_report_with_an_exception_line_is_never_refused(pieces: list[str], at: int) -> None:
    """§1: a report holding an exception line as Python prints it drafts, whatever surrounds it."""
    pieces.insert(min(at, len(pieces)), "ValueError: the batch is empty")
    report = parse_report("\n".join(pieces))
    assert report.traceback.exception
