"""A message cut short is read by one table of torch's messages (harness/authoring/_cut_message.py): its class when
the report gives none (_torch_paraphrase.py), and its lanes."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.authoring._cut_message import completed, completed_class
from harness.authoring._exception_line import _sentence_message
from harness.authoring._torch_paraphrase import paraphrased


@pytest.mark.parametrize(("cut", "klass"), [
    ("Expected all tensors to be on the same...", "RuntimeError"),
    ("Torch not compiled with CUDA\u2026", "AssertionError"),
    ("Attempting to deserialize object on a CUDA device but", "RuntimeError"),
])
def test_a_cut_head_keeps_the_report_s_words_and_takes_the_class_of_the_message_it_starts(cut: str, klass: str):
    words, found, how = paraphrased(cut)
    assert (words, found) == (cut.rstrip(".\u2026 "), klass) and "cut short" in how
    assert completed(cut).startswith(words)


@pytest.mark.parametrize("cut", [
    "Expected all tensors to be on the sa",  # cut inside a word: a word-boundary cut only
    "Expected all tensors to",  # four words say too little
    "Expected object of",  # device and dtype messages share it
    "Torch not compiled with CUDA enabled",  # the whole message: not cut
])
def test_what_a_head_does_not_decide_is_not_read(cut: str):
    assert completed_class(cut) is None and paraphrased(cut) is None


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("`'\"*_ .,;!?()aI:\u2019\u201d\u3002\n")), max_size=40))
def test_a_message_named_in_prose_ends_somewhere_whatever_its_punctuation(text: str) -> None:
    """graded40 icevision-479: a message set in a code span of its own ("RuntimeError: `...`") crashed `new`."""
    message = _sentence_message(text)
    assert isinstance(message, str) and len(message) <= len(text)
