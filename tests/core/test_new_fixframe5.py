"""Round F's classes for the exception line and the frames: a torch message in a reporter's short or paraphrased
form (its family read from a distinctive fragment, rebuilt to torch's words with torch's class), a chain whose final
exception is cut (both errors named), and a rich-boxed traceback's frames."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from harness.authoring._bugreport import parse_report
from harness.authoring._signature import make_signature
from harness.authoring._torch_paraphrase import paraphrased

TWO = "Expected all tensors to be on the same device, but found at least two devices, "
CUT_FRAMES = ("Traceback (most recent call last):\n  File \"demo.py\", line 16, in <module>\n    model.fit(data)\n"
              "  File \"./kit/model.py\", line 98, in fit\n    self.step(x)\n  File \"")


@pytest.mark.parametrize(("title", "message"), [
    ("# running the demo on GPU, error: all tensors on two devices, cuda:0 and cpu!", f"{TWO}cuda:0 and cpu!"),
    ("# Training fails: tensors are on different devices cpu and cuda:1", f"{TWO}cpu and cuda:1!"),
    ("# error: my tensors on two devices, cuda & cpu", f"{TWO}cuda:0 and cpu!"),
    ("# Fit crashed: Expected all tensors to be on the same...", "Expected all tensors to be on the same"),
    ("# Error: expected dtype Half but got Float in fit", "expected scalar type Half but found Float"),
])
def test_a_paraphrased_torch_message_gets_torchs_words_and_class(title: str, message: str) -> None:
    report = parse_report(f"{title}\n\nIt breaks, log below.\n{CUT_FRAMES}")
    assert (report.traceback.exception, report.traceback.message) == ("RuntimeError", message)
    assert "rebuilt to torch's" in report.notes[0] or "cut short" in report.notes[0]
    signature, _ = make_signature(report.traceback.message)
    assert re.search(signature, f"{message} (when checking argument for argument mat1 in method wrapper_addmm)")


@pytest.mark.parametrize("message", ["loss is nan on cuda:0 and cpu", "the devices cpu and cpu agree",
                                     "Expected all tensors", "expected Half but got Half", "model on two GPUs"])
def test_other_words_are_not_read_as_a_torch_message(message: str) -> None:
    assert paraphrased(message) is None


def test_torchs_own_wording_is_kept_as_written() -> None:
    report = parse_report(f"# error: {TWO}cuda:0 and cpu! (when checking argument for argument index in method "
                          f"wrapper__index_select)\n\n{CUT_FRAMES}")
    assert report.traceback.message.startswith(f"{TWO}cuda:0 and cpu! (when checking")


# rich's layout (rich.traceback): a frame whose file exists is "PATH:LINE in FUNC", one it cannot open (a notebook
# cell, exec'd code) "in FUNC:LINE"; then the source with line numbers, the failing line marked "❱"; the box is as
# wide as the terminal, so a long path wraps onto the next box line.
def _box(*rows: str, width: int = 80, closed: bool = True) -> str:
    top = f"╭{' Traceback (most recent call last) '.center(width - 2, '─')}╮"
    body = [f"│ {row.ljust(width - 4)} │" for row in rows]
    return "\n".join([top, *body, *([f"╰{'─' * (width - 2)}╯"] if closed else [])])


SCRIPT_BOX = _box("/home/u/proj/train.py:42 in <module>", "", "  41 │   model = build()",
                  "❱ 42 │   trainer.fit(model, data)", "  43 │", "",
                  "/home/u/.venv/lib/python3.11/site-packages/somekit/training/loops/fit_lo",
                  "op.py:310 in run", "", "  309 │   │   batch = batch.to(self.device)",
                  "❱ 310 │   │   out = self.model(batch)", "  311 │")
NOTEBOOK_BOX = _box("in <module>:1", "", "❱ 1 get_prediction('I am not happy.')", "  2", "",
                    "in get_prediction:8", "", "   7 │", "❱  8 │   outputs = new_model(**encoding)", "   9 │",
                    closed=False)


def test_a_rich_box_of_files_reads_paths_wrapped_paths_functions_and_marked_sources() -> None:
    report = parse_report(f"{SCRIPT_BOX}\nRuntimeError: {TWO}cuda:0 and cpu!\n")
    frames = report.traceback.frames
    assert [(f.path, f.line, f.function, f.source) for f in frames] == [
        ("/home/u/proj/train.py", 42, "<module>", "trainer.fit(model, data)"),
        ("/home/u/.venv/lib/python3.11/site-packages/somekit/training/loops/fit_loop.py", 310, "run",
         "out = self.model(batch)")]
    assert report.traceback.exception == "RuntimeError"


def test_a_rich_box_of_a_notebook_reads_its_pathless_frames_as_the_reports_own_cells() -> None:
    report = parse_report(f"# {TWO}cpu and cuda:0!\n\n{NOTEBOOK_BOX}\n")
    frames = report.traceback.frames
    assert [(f.line, f.function, f.source) for f in frames] == [
        (1, "<module>", "get_prediction('I am not happy.')"), (8, "get_prediction", "outputs = new_model(**encoding)")]
    assert {f.path for f in frames} == {"In []"}
    assert (report.traceback.exception, report.traceback.message) == ("RuntimeError", f"{TWO}cpu and cuda:0!")


@pytest.mark.parametrize("row", ["in the loop:8", "in get_prediction", "see in f:3 here", "in f:x"])
def test_prose_inside_a_box_is_not_a_pathless_frame(row: str) -> None:
    report = parse_report(f"# error: {TWO}cpu and cuda:0!\n\n{_box(row)}\n")
    assert not report.traceback.frames


_BOX_ROWS = ["in <module>:1", "in f:12", "/a/b/c.py:3 in g", "/very/long/path/pie", "ce/mod.py:7 in h", "",
             "❱ 8 │   x = y(z)", "  9 │", "❱ 1 call()", "│", "╰───╯", "RuntimeError: boom", "NameError: x"]


@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.sampled_from(_BOX_ROWS) | st.text(max_size=30), max_size=40), st.booleans())
def test_any_bounded_box_is_drafted_and_its_frames_are_well_formed(rows: list[str], closed: bool) -> None:
    report = parse_report(f"# crash\n{_box(*rows, closed=closed)}\n")
    for frame in report.traceback.frames:
        assert frame.path and (frame.line is None or frame.line >= 0) and "│" not in frame.function


def test_a_long_box_is_read_in_linear_time() -> None:
    rows = ["in f:1", "", "❱ 1 │   x = y(z)", "/p/" + "a" * 60] * 3000
    text = f"# crash\n{_box(*rows, width=90)}\nRuntimeError: boom\n"
    start = time.process_time()
    report = parse_report(text)
    assert time.process_time() - start < 6.0
    assert len(report.traceback.frames) >= 3000


LOAD = ("Traceback (most recent call last):\n  File \"main.py\", line 614, in <module>\n    model = load(cfg, ckpt)\n"
        "  File \"main.py\", line 26, in load\n    sd = torch.load(ckpt, map_location=\"cpu\")\n"
        "_pickle.UnpicklingError: invalid load key, 'm'.\n\n")
HANDLING = "During handling of the above exception, another exception occurred:\n\n"
CLEANUP = "Traceback (most recent call last):\n  File \"main.py\", line 826, in <module>\n    if trainer.rank == 0:\n"


@pytest.mark.parametrize(("title", "tail", "chained", "how"), [
    ("# Unable to run - NameError: name 'trainer' is not defined ; UnpicklingError: invalid load key, 'm'.",
     f"{HANDLING}{CLEANUP}NameE", "NameError: name 'trainer' is not defined", "while handling"),
    ("# Unable to run", f"{HANDLING}{CLEANUP}NameE", "NameE...", "while handling"),
    ("# crash: RuntimeError: Failed processing /tmp/data", "The above exception was the direct cause of the follo",
     "RuntimeError: Failed processing /tmp/data", "direct cause"),
    ("# Unable to run", HANDLING, "", "while handling"),
])
def test_a_chain_cut_before_its_final_exception_keeps_the_cause_and_names_the_final(title: str, tail: str,
                                                                                    chained: str, how: str) -> None:
    report = parse_report(f"{title}\n\n{LOAD}{tail}")
    assert (report.traceback.exception_class, report.traceback.message) == ("UnpicklingError", "invalid load key, 'm'.")
    assert report.traceback.chained == chained
    note = next(note for note in report.notes if note.startswith("the chain goes on"))
    assert how in note and (chained or "a final exception") in note and "the case matches UnpicklingError" in note


@pytest.mark.parametrize("text", [LOAD, f"# error: NameError: x\n\n{LOAD}", f"{LOAD}{HANDLING}{CLEANUP}"
                                  "NameError: name 'trainer' is not defined\n"])
def test_a_whole_chain_or_a_lone_traceback_names_nothing_chained(text: str) -> None:
    report = parse_report(text)
    assert report.traceback.chained == "" and not any(note.startswith("the chain goes on") for note in report.notes)


RAISING = ("# Training stops\n\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
           "    fit()\n  File \"/env/site-packages/kit/loop.py\", line 40, in fit\n    {raise_line}\n")


@pytest.mark.parametrize(("raise_line", "exception", "message", "real"), [
    ("raise RuntimeError('DataLoader worker (pid(s) {}) exited unexpectedly'.format(",
     "RuntimeError", "DataLoader worker (pid(s) {}) exited unexpectedly",
     "DataLoader worker (pid(s) 4242) exited unexpectedly"),
    ('raise ValueError(f"batch size {self.bs} is larger than {len(data)} samples")', "ValueError",
     "batch size {} is larger than {} samples", "batch size 64 is larger than 10 samples"),
    ("raise KeyError('no column %s in the frame' % name)", "KeyError", "no column {} in the frame",
     "no column 'x' in the frame"),
    ("raise kit.errors.ConfigError('the config has no model section')", "kit.errors.ConfigError",
     "the config has no model section", "the config has no model section"),
])
def test_a_traceback_cut_at_its_raise_line_reads_the_class_and_the_template(raise_line: str, exception: str,
                                                                          message: str, real: str) -> None:
    report = parse_report(RAISING.replace("{raise_line}", raise_line))
    assert (report.traceback.exception, report.traceback.message) == (exception, message)
    assert re.search(make_signature(message)[0], real)


@pytest.mark.parametrize("text", [
    RAISING.replace("{raise_line}", "raise RuntimeError('x failed')") + "  File \"/env/kit/b.py\", line 3, in g\n",
    RAISING.replace("{raise_line}", "self.step(x)"),
])
def test_a_raise_line_that_is_not_where_the_traceback_stops_is_not_the_error(text: str) -> None:
    assert parse_report(text).traceback.exception.startswith("FILL-IN")
