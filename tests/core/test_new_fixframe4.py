"""Right by construction (issue 21 §1): `new` drafts every non-empty report. A report that prints no error (prose
only, a bare traceback header, a traceback cut before its exception line) is drafted from what it gives, its class
and signature left as placeholders `validate` lists, with a note saying what was missing; only an empty report is
refused."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness._exceptions import CaseFileError, UsageError
from harness.authoring._bugreport import parse_report
from harness.authoring._chain_choice import _pick
from harness.authoring._draft import draft_case
from harness.authoring._lines import clean_lines, unwrap_console
from harness.authoring._traceback import _chains
from harness.cases._load import load_case
from harness.cases._placeholders import MARK

PROSE = ("# Loss goes NaN after resuming from a checkpoint\n\nWhen I resume with `trainer.fit(model, ckpt_path=...)` "
         "the loss is NaN from the first step.\n\n- torch 2.1.0\n- lightning 2.1.2\n")
HEADER_ONLY = "# Training stops at epoch 3\n\n```\nTraceback (most recent call last):\n```\n"
CUT = ("Traceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    main()\n"
       "  File \"/usr/lib/python3.10/site-packages/kit/loop.py\", line 40, in main\n    step()\n")


def _draft(text: str):
    return draft_case("x", parse_report(text), source="r.txt", released=lambda name: None,
                      project_urls=lambda name: None, versions=lambda name: None)


@pytest.mark.parametrize("text", [PROSE, HEADER_ONLY, "segfault", "no error printed\n\n\n"])
def test_a_report_that_prints_no_error_is_drafted_with_placeholders_validate_lists(text: str) -> None:
    report = parse_report(text)
    assert report.traceback.exception.startswith(MARK) and report.traceback.message == ""
    assert "the exception line as Python printed it" in report.missing
    assert any("the report states no error" in note for note in report.notes)
    draft = _draft(text)
    with tempfile.TemporaryDirectory() as temporary:
        folder = Path(temporary) / "cases" / "x"
        folder.mkdir(parents=True)
        (folder / "case.yaml").write_text(draft.case_yaml)
        (folder / "repro.py").write_text(draft.repro_py)
        with pytest.raises(CaseFileError, match="placeholder") as refused:
            load_case(folder)
    assert "exception" in str(refused.value) and "signature" in str(refused.value)


def test_a_report_that_names_its_error_is_not_drafted_as_stating_none() -> None:
    """Guard: the fallback fires only where every reader found nothing."""
    report = parse_report(f"{PROSE}\nValueError: loss is nan\n")
    assert report.traceback.exception == "ValueError" and report.traceback.message == "loss is nan"


def test_the_pick_of_chains_with_none_complete_drafts_the_last_ones_frames() -> None:
    chains = _chains(unwrap_console(clean_lines(CUT)))
    traceback, notes = _pick(chains)
    assert traceback.exception.startswith(MARK) and [frame.function for frame in traceback.frames] == ["<module>",
                                                                                                       "main"]
    assert "stops before its final exception line" in notes[0]


@pytest.mark.parametrize("text", ["", " ", "\n\t\n", "\r\n"])
def test_only_an_empty_report_is_refused(text: str) -> None:
    with pytest.raises(UsageError, match="the report is empty"):
        parse_report(text)


_PIECES = ["Traceback (most recent call last):", '  File "a.py", line 1, in f', "    f()", "```", "> ", "# Bug: x",
           "runtimeerror: boom", "During handling of the above exception, another exception occurred:", "[rank0]: ",
           "Error", ": :", "", " "]


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_PIECES) | st.text(max_size=20), max_size=12))
def test_no_non_empty_report_is_refused_and_nothing_but_usage_error_is_raised(pieces: list[str]) -> None:
    text = "\n".join(pieces)
    try:
        _draft(text)
    except UsageError:
        assert not text.strip()


# --- error shapes read as the exception ----------------------------------------------------------------------------

PARAMS = ("module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on "
          "device: cuda:2")


@pytest.mark.parametrize(("line", "exception", "message"), [
    (f'runtimeerror: {PARAMS}"', "RuntimeError", PARAMS),  # retyped, a stray closing quote from the paste
    ("Keyerror: 'epoch'", "KeyError", "'epoch'"),
    ("valueerror: too many values to unpack (expected 2)", "ValueError", "too many values to unpack (expected 2)"),
    ("outofmemoryerror: CUDA out of memory.", "torch.OutOfMemoryError", "CUDA out of memory."),
])
def test_a_known_class_retyped_in_another_case_at_a_line_start_is_the_exception(line: str, exception: str,
                                                                                 message: str) -> None:
    report = parse_report(f"# Training crashes on the second GPU\n\nI ran `python fit.py` and got\n\n{line}\n")
    assert (report.traceback.exception, report.traceback.message) == (exception, message)


@pytest.mark.parametrize("line", ["the runtimeerror: it happens at epoch 2", "Myerror: not a class we know",
                                  "keyerror happens at the end", "error: the run stops"])
def test_prose_or_an_unknown_class_is_not_read_as_a_retyped_class(line: str) -> None:
    assert not parse_report(f"# Training stops\n\n{line}\n").traceback.exception.endswith(("KeyError", "RuntimeError"))


@pytest.mark.parametrize(("text", "exception", "message"), [
    # a classless title that is torch's message, the log cut at the traceback's first frame
    (f"# {PARAMS}\n\n2024-01-01 [INFO] Starting training!\nTraceback (most recent call last):\n  File \"\n",
     "RuntimeError", PARAMS),
    # quoted in prose, in markdown italics, no class
    ("# t-SNE plot fails on GPU\n\nRunning the tutorial I get\n\"_can't convert CUDA tensor to numpy. Use "
     "Tensor.cpu() to copy the tensor to host memory first._\"\n", "TypeError",
     "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."),
    # a title's "Error : <message>" whose message torch raises as a RuntimeError (not a checked condition's assert)
    ("# Error : indices should be either on cpu or on the same device as the indexed tensor (cpu)\n\nIn evaluation.\n",
     "RuntimeError", "indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
])
def test_a_known_torch_message_without_its_class_gets_torchs_class(text: str, exception: str, message: str) -> None:
    report = parse_report(text)
    assert (report.traceback.exception, report.traceback.message) == (exception, message)


_CHAIN = ("Traceback (most recent call last):\n  File \"/env/lib/python3.11/site-packages/httpx/_transports.py\", line 60, "
          "in connect\n    sock.connect(addr)\nOSError: [Errno 111] Connection refused\n\nThe above exception was the "
          "direct cause of the following exception:\n\nTraceback (most recent call last):\n  File\n")


def test_a_loggers_uncaught_error_heading_a_chain_cut_before_its_end_is_the_bug() -> None:
    """A logger's "ERROR Uncaught X: msg" line heads the chain: the error that ended the run, not the printed cause."""
    text = f"```\n2025-01-01 12:00:00 ERROR Uncaught RemoteError: Fetching shard 3 failed. Original {_CHAIN}```\n"
    report = parse_report(text)
    assert (report.traceback.exception, report.traceback.message) == ("RemoteError", "Fetching shard 3 failed.")


def test_a_chain_cut_before_its_end_with_no_loggers_line_keeps_its_cause() -> None:
    report = parse_report(f"```\n{_CHAIN}```\n")
    assert (report.traceback.exception, report.traceback.message) == ("OSError", "[Errno 111] Connection refused")
