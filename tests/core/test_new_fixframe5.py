"""Round F's classes for the exception line and the frames: a torch message in a reporter's short or paraphrased
form (its family read from a distinctive fragment, rebuilt to torch's words with torch's class), a chain whose final
exception is cut (both errors named), and a rich-boxed traceback's frames."""

from __future__ import annotations

import re

import pytest

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
    ("# Fit crashed: Expected all tensors to be on the same...", "Expected all tensors to be on the same device"),
    ("# Error: expected dtype Half but got Float in fit", "expected scalar type Half but found Float"),
])
def test_a_paraphrased_torch_message_gets_torchs_words_and_class(title: str, message: str) -> None:
    report = parse_report(f"{title}\n\nIt breaks, log below.\n{CUT_FRAMES}")
    assert (report.traceback.exception, report.traceback.message) == ("RuntimeError", message)
    assert "rebuilt to torch's" in report.notes[0] or "completed to its head" in report.notes[0]
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
