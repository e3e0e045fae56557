"""Round H's classes for the exception line: a message that writes inline code itself (a library's "Using `x=True`
requires ...") is read whole, while a backquote that closes inline code opened before the class still ends it."""

from __future__ import annotations

import pytest

from harness.authoring._bugreport import parse_report

FRAMES = ['Traceback (most recent call last):', '  File "train.py", line 12, in <module>',
          '    model = Loader.load(path, quantize=True)',
          '  File "/usr/lib/python3.10/site-packages/kit/loading.py", line 40, in load',
          '    raise ImportError(']


@pytest.mark.parametrize("message", [
    "Using `quantize=True` requires kitquant: `pip install kitquant` and the latest `pip install kit` or pip install kit`",
    "Passing `device_map='auto'` needs `accelerate`; run `pip install accelerate`",
    "Loading a `Tokenizer` from a folder needs its `vocab.json`",
])
def test_a_message_writing_inline_code_is_read_whole(message: str) -> None:
    report = parse_report("# load fails\n\n```\n" + "\n".join([*FRAMES, f"ImportError: {message}"]) + "\n```\n")
    assert (report.traceback.exception, report.traceback.message) == ("ImportError", message)


@pytest.mark.parametrize("line", ["`KeyError: 'optimizer'` when I resume from the checkpoint",
                                  "KeyError: 'optimizer'`", "`KeyError: 'optimizer'` at line 333 of `kit/ckpt.py`"])
def test_a_backquote_closing_code_opened_before_the_class_still_ends_the_message(line: str) -> None:
    lines = [*FRAMES[:-1], "    state = ckpt['optimizer']", line]
    report = parse_report("# resume fails\n\n" + "\n".join(lines) + "\n")
    assert (report.traceback.exception, report.traceback.message) == ("KeyError", "'optimizer'")


RERAISE = ['  File "/usr/lib/python3.10/site-packages/kit/train.py", line 80, in fit',
           '    score = self.metric(pred, target)',
           '  File "/usr/lib/python3.10/site-packages/metrickit/metric.py", line 486, in wrapped',
           '    raise RuntimeError(']
CAUSE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


@pytest.mark.parametrize("gap", [["..."], [], ["", "Traceback (most recent call last):"]])
def test_the_complete_cause_pasted_above_a_cut_re_raise_is_the_error(gap: list[str]) -> None:
    text = "# metric fails on cuda\n\nReturns error:\n```\n" + "\n".join(
        [CAUSE, *gap, *RERAISE, "RuntimeError: Encountered differen"])
    traceback = parse_report(text).traceback
    assert (traceback.exception, traceback.message) == ("RuntimeError", CAUSE.partition(": ")[2])
    assert traceback.chained == "RuntimeError: Encountered differen..."
    assert [frame.function for frame in traceback.frames] == ["fit", "wrapped"]


@pytest.mark.parametrize("final, after", [
    ("RuntimeError: Encountered different devices in metric calculation.", ""),  # not cut
    ("RuntimeError: Encountered differen", "\n```\n\nAny idea?\n"),  # the report goes on: the line is as printed
])
def test_a_final_line_not_cut_by_the_store_stays_the_error(final: str, after: str) -> None:
    text = "# metric fails\n\n```\n" + "\n".join([CAUSE, "...", *RERAISE, final]) + after
    traceback = parse_report(text).traceback
    assert f"{traceback.exception}: {traceback.message}" == final and not traceback.chained


def test_a_cut_final_line_with_no_error_above_its_frames_stays_the_error() -> None:
    text = "# metric fails\n\nI ran it on cuda and got\n```\n" + "\n".join(
        ["Traceback (most recent call last):", *RERAISE, "RuntimeError: Encountered differen"])
    assert parse_report(text).traceback.message == "Encountered differen"


@pytest.mark.parametrize("sentence", ["it has RuntimeError:  :expected tensor for argument #1 'input' to have the "
                                      "same device as tensor for argument #2 'weight",
                                      "then I get RuntimeError: : expected tensor for argument #1 'input' to have "
                                      "the same device as tensor for argument #2 'weight"])
def test_a_stray_colon_and_a_name_left_open_by_the_reporters_cut_keep_the_prose_message(sentence: str) -> None:
    text = f'# training fails on the second GPU\n\nwhen I run "python main.py --cuda 1"\n{sentence}\n'
    traceback = parse_report(text).traceback
    assert (traceback.exception, traceback.message) == ("RuntimeError", "expected tensor for argument #1 'input' to "
                                                        "have the same device as tensor for argument #2 'weight")


def test_a_prose_message_still_ends_at_its_last_closed_quoted_name() -> None:
    text = "# fails\n\nI get RuntimeError: Unknown layer 'Layernorm' in vit_1d when I load it\n"
    assert parse_report(text).traceback.message == "Unknown layer 'Layernorm'"


@pytest.mark.parametrize("title", [
    "Tensors of the same index must be on the same device and the same dtype except `step` tensors that can be CPU "
    "and float32 notwithstanding",
    "Tensors of the same index must be on the same device and the same dtype except `step` tensors that can be CPU "
    "and float32/64 notwithstanding"])
def test_torchs_foreach_optimizer_message_in_a_title_alone_is_the_error(title: str) -> None:
    traceback = parse_report(f"# {title}\n\nWhen I was training with FSDP, this error occurred\n").traceback
    assert (traceback.exception, traceback.message) == ("RuntimeError", title)


OCR = ['Traceback (most recent call last).', 'File "home/u/run/predict.py", line 52, in smodule>',
       'predict test(args.ckpt path)', 'File "home/u/envs/lib/python3.8/site-packages/torch/nn/modules/module,py", '
       'line 1667, in load state dict', 'RuntimeError: Error(s) in loading state dict for Net.']


@pytest.mark.parametrize("drop", [None, 0, 1])
def test_a_transcribed_traceback_is_marked_for_the_author(drop: int | None) -> None:
    lines = [line for n, line in enumerate(OCR) if n != drop]
    notes = parse_report("# eval\n\n" + "\n".join(lines) + "\n").notes
    assert any("transcribed from a picture" in note for note in notes)


def test_a_traceback_as_python_prints_it_is_not_marked() -> None:
    notes = parse_report("# fit fails\n\n```\n" + "\n".join([*FRAMES, "ImportError: no kit"]) + "\n```\n").notes
    assert not any("transcribed" in note for note in notes)
