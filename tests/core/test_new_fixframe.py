"""Report shapes `new` crashed on or refused though they state an exception (issue 21 §1), made up in the shape such
reports take in the wild, and a bounded fuzz of the report parser: any text drafts or is refused with a UsageError."""

from __future__ import annotations

import contextlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness._exceptions import UsageError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._traceback import _unmark

TWO_AT = "Expected all tensors to be on the same device, but found at least two devices, "

CUT_TRACEBACK = """Traceback (most recent call last):
  File "/srv/app/train.py", line 12, in <module>
    run()
  File "/srv/app/train.py", line 8, in run
    step(model)
  File "/srv/venv/lib/python3.10/site-packages/torch/optim/opt"""


def _draft(text: str) -> None:
    draft_case("x", parse_report(text), source="r.txt", released=lambda name: None, project_urls=lambda name: None,
               versions=lambda name: None)


def test_a_bulleted_environment_heading_error_is_no_exception_line() -> None:
    report = parse_report("# RuntimeError: boom in the loader\n\n**Environment**\n\n* Error:\n  * torch: 1.7.1\n"
                          "* No error:\n  * torch: 1.7.0\n")
    assert (report.traceback.exception, report.traceback.message) == ("RuntimeError", "boom in the loader")


def test_markdown_is_taken_off_to_its_fixed_point_and_a_name_keeps_its_underscore() -> None:
    assert _unmark("* Error:") == "Error:"
    assert _unmark("`*ValueError: x*`") == "ValueError: x"
    assert _unmark("**_RuntimeError: a_**") == "RuntimeError: a"
    assert _unmark("_pickle.UnpicklingError: x") == "_pickle.UnpicklingError: x"


def test_any_loggers_error_record_gives_the_message_of_a_cut_traceback() -> None:
    for record in ("2021-03-01T10:00:00Z ERROR    Job failed. Exception: expected device cpu but got device cuda:1",
                   "[2021-03-01 10:00:00,221] [77] [MainThread] [ERROR] (engine.Trainer:178) - Exception: expected "
                   "device cpu but got device cuda:1"):
        report = parse_report(f"# Resume fails\n\n```\n{record}\n{CUT_TRACEBACK}\n```\n")
        assert (report.traceback.exception, report.traceback.message) == \
            ("RuntimeError", "expected device cpu but got device cuda:1")
        assert len(report.traceback.frames) == 2


def test_a_warning_record_or_a_record_without_exception_words_is_not_read_so() -> None:
    for record in ("2021-03-01 WARNING  Exception: retrying", "2021-03-01 ERROR job 7 finished"):
        try:
            report = parse_report(f"# Resume fails\n\n```\n{record}\n{CUT_TRACEBACK}\n```\n")
        except UsageError:
            continue
        assert "retrying" not in report.traceback.message and "finished" not in report.traceback.message


def test_a_dtype_mismatch_paraphrased_without_a_class_drafts_torchs_class() -> None:
    report = parse_report("# Mixed precision breaks validation\n\n### Logs\n\n```shell\n"
                          "Something like `expected Half but found Float` at\n`y = self.proj(x)`\n```\n")
    assert (report.traceback.exception, report.traceback.message) == ("RuntimeError", "expected Half but found Float")
    assert "the exception line as Python printed it" in report.missing


def test_a_titles_closing_tags_with_a_version_are_not_the_message() -> None:
    report = parse_report("# RuntimeError: expected scalar type Half but found Float (ROIAlign, amp, lib 2.0.1)\n\n"
                          "It fails.\n")
    assert report.traceback.message == "expected scalar type Half but found Float"
    kept = parse_report("# RuntimeError: mat2 shapes cannot be multiplied (4x3 and 2x2)\n\nIt fails.\n")
    assert kept.traceback.message == "mat2 shapes cannot be multiplied (4x3 and 2x2)"


@pytest.mark.parametrize(("sentence", "message"), [
    ("When I train I get an error: **ValueError: bad shape in block 3**. Any idea?", "bad shape in block 3"),
    ('I met this error **"[rank1]: TypeError: cannot cast the weight"** while training', "cannot cast the weight"),
    ("训练时报错 RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 "
     "and cpu! 请问怎么解决", f"{TWO_AT}cuda:1 and cpu!"),
    ("with amp, RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
     "cpu! (when checking argument for argument weight in method wrapper_CUDA_mm) occurred. Thanks",
     f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument weight in method wrapper_CUDA_mm)"),
    ("loading fails with ModuleNotFoundError: No module named 'fused_ops'", "No module named 'fused_ops'"),
])
def test_a_message_read_from_a_sentence_ends_where_the_reporters_text_starts(sentence: str, message: str) -> None:
    report = parse_report(f"# Training fails\n\n{sentence}\n")
    assert report.traceback.message == message


_PIECES = ["Traceback (most recent call last):", '  File "/a/b.py", line 3, in f', "    x = f()", "* Error:",
           "**Error:**", "RuntimeError: boom", "Error:", "# RuntimeError: x (a, b 1.2)", "`*ValueError: x*`",
           "During handling of the above exception, another exception occurred:", "`", "**", "```", "", " ",
           "ERROR:root:Exception: bad", "2024-01-01 00:00:00 ERROR x Exception: m", "ValueError", "│ x.py:3 in f │",
           "----> 3 f()", "Cell In[1], line 3", '  pkg/m.py", line 1, in g', "- Exception Message: x", "_", "*",
           "- **Exception Type:** RuntimeError", "The above exception was the direct cause of the following exception:",
           "TypeError: stated", "[t] [ERROR] (a:1) - Exception: expected device cpu but got device cuda:0", "happend.",
           'I got **"[rank0]: RuntimeError: x"** here', "\u6700\u540e\uff01", "Something like `expected Half but found Float`"]


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=30)), max_size=12))
def test_any_text_drafts_or_is_refused_with_a_reason(lines: list[str]) -> None:
    with contextlib.suppress(UsageError):
        _draft("\n".join(lines))


CHAINED_LOG = """```
Traceback (most recent call last):
  File "/env/site-packages/validators/check.py", line 40, in check_name
    raise NameCheckError(name)
validators.errors.NameCheckError: Name must be alphanumeric: 'models/None'.

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/srv/webapp/modules/train.py", line 220, in run_training
    reload_model()
  File "/srv/webapp/modules/loader.py", line 12, in reload_model
    shared.mo"""


def test_a_stated_error_wins_over_a_cut_chains_cause_from_another_library() -> None:
    stated = parse_report("# training fails\n\n### Describe the bug\n\nValueError: lora rank must be positive\n\n"
                          f"### Logs\n\n{CHAINED_LOG}\n")
    assert (stated.traceback.exception, stated.traceback.message) == ("ValueError", "lora rank must be positive")
    assert [frame.function for frame in stated.traceback.frames] == ["run_training", "reload_model"]
    alone = parse_report(f"# training fails\n\n### Logs\n\n{CHAINED_LOG}\n")
    assert alone.traceback.exception == "validators.errors.NameCheckError"


def test_an_error_reports_exception_fields_give_the_class_and_the_message() -> None:
    report = parse_report("# Node fails\n\n# Error Report\n## Error Details\n- **Node ID:** 7\n"
                          "- **Exception Type:** ValueError\n- **Exception Message:** too many values to unpack\n"
                          "## Stack Trace\n```\n  File \"/app/nodes.py\", line 9, in run\n    a, b = f()\n\n```\n")
    assert (report.traceback.exception, report.traceback.message) == ("ValueError", "too many values to unpack")
    assert [frame.function for frame in report.traceback.frames] == ["run"]


def test_a_jupyterlab_linked_frame_reads_its_path_and_a_store_marker_is_no_source() -> None:
    report = parse_report(
        "```\nValueError                                Traceback (most recent call last)\nCell In[3], line 1\n"
        "----> 1 run()\n\nFile [~/env/lib/python3.9/site-packages/pkg/core.py:12](http://localhost:8888/lab/tree/"
        "~/env/lib/python3.9/site-packages/pkg/core.py#line=11), in run()\n"
        "[turn 0 by someone, continued]\n     11 def run():\n---> 12     raise ValueError('bad')\n\nValueError: bad\n```\n")
    frame = report.traceback.frames[-1]
    assert (frame.path, frame.line, frame.function) == ("~/env/lib/python3.9/site-packages/pkg/core.py", 12, "run")
    assert "turn 0" not in frame.source
