"""A message read as the library wrote it (issue 21 §1), on made-up reports of the shapes that cost M (and T, L, D
after it) on held-out sets: a title's trailing context kept in the message, a message printed without its class under
a title that names the class alone, a message continued on its next line; and the signature of any message matches the
message it was written from."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._signature import make_signature

TWO_AT = "Expected all tensors to be on the same device, but found at least two devices, "
STORE = "(issue title and a part of the description; as the project's issue search stores it)\n"


def _read(text: str) -> tuple[str, str, str]:
    """Exception, the message the draft uses, and the drafted signature."""
    traceback = parse_report(text).traceback
    data = draft_case("x", parse_report(text), source="r.txt", released=lambda name: None,
                      project_urls=lambda name: None, versions=lambda name: None)
    signature = re.search(r'^signature: "(.*)"$', data.case_yaml, re.MULTILINE)
    assert signature is not None
    return traceback.exception, traceback.first_message_line, signature[1].encode().decode("unicode_escape")


# Class 1: a title that wraps one of torch's messages in the reporter's words: what follows the message's end.
@pytest.mark.parametrize(("title", "message"), [
    ("[BUG] RuntimeError: Expected all tensors to be on the same device with LinearModel and TreeModel",
     "Expected all tensors to be on the same device"),
    ("RuntimeError: Expected one of cpu, cuda device type at start of device string: eval in configs/x.yaml",
     "Expected one of cpu, cuda device type at start of device string: eval"),
    ("RuntimeError: CUDA out of memory when training with batch size 64", "CUDA out of memory"),
    ("RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x512 and 256x10) for the custom head",
     "mat1 and mat2 shapes cannot be multiplied (4x512 and 256x10)"),
    ("RuntimeError: CUDA error: device-side assert triggered while evaluating the ranker",
     "CUDA error: device-side assert triggered"),
    (f"RuntimeError: {TWO_AT}cuda:0 and cpu! when using DataParallel", f"{TWO_AT}cuda:0 and cpu!"),
    ("RuntimeError: Trying to backward through the graph a second time during gradient accumulation",
     "Trying to backward through the graph a second time"),
])
def test_a_titles_words_after_a_known_message_are_not_the_message(title: str, message: str) -> None:
    exception, drafted, signature = _read(f"Source: https://github.com/o/p/issues/1\n{STORE}# {title}\n\n"
                                          "**To Reproduce**\nSteps to reproduce the behavior:\n")
    assert (exception, drafted) == ("RuntimeError", message)
    assert re.fullmatch(signature, message), signature  # the library's words, none of the reporter's


@pytest.mark.parametrize("title", [
    # torch's own words after the part a template knows: never cut
    f"RuntimeError: {TWO_AT}cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)",
    "RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other "
    "tensors on cuda:0 (when checking argument in method wrapper_CUDA__index_select)",
    "RuntimeError: Expected object of device type cuda but got device type cpu for argument #3 'index' in call to "
    "_th_index_select",
    # a message torch does not word: as written; Python's own words that go on with a context word
    "ValueError: batch size must be positive with gradient accumulation",
    "RecursionError: maximum recursion depth exceeded while calling a Python object",
])
def test_a_message_that_goes_on_in_its_librarys_words_or_is_unknown_is_kept_whole(title: str) -> None:
    exception, drafted, _ = _read(f"# {title}\n\nIt fails.\n")
    assert f"{exception}: {drafted}" == title


# Class 2: a class named alone (the title "RuntimeError") and the message printed without it in the body.
@pytest.mark.parametrize(("body", "exception", "message"), [
    (f"{TWO_AT}cuda:1 and cuda:0! (when checking argument for argument tensors in method wrapper_CUDA_cat)",
     "RuntimeError", f"{TWO_AT}cuda:1 and cuda:0! (when checking argument for argument tensors in method "
     "wrapper_CUDA_cat)"),
    ("When I train on a GPU I get:\n\nCUDA out of memory. Tried to allocate 20.00 MiB", "RuntimeError",
     "CUDA out of memory. Tried to allocate 20.00 MiB"),
    ("Running fit:\n\n    fit() got an unexpected keyword argument 'gpus'", "TypeError",
     "fit() got an unexpected keyword argument 'gpus'"),
])
def test_a_message_printed_without_its_class_is_read_under_the_class_the_title_names(body: str, exception: str,
                                                                                     message: str) -> None:
    drafted = _read(f"Source: https://github.com/o/p/issues/5\n# {exception}\n\n{body}\n")
    assert drafted[:2] == (exception, message)
    assert re.search(drafted[2], message)


@pytest.mark.parametrize("body", ["It crashes after a few steps.",
                                  # another error's message (torch raises it as a RuntimeError, not the class named)
                                  "Earlier runs ended with CUDA out of memory. Tried to allocate 2.00 GiB"])
def test_a_class_named_alone_with_no_message_of_its_own_keeps_the_signature_to_fill_in(body: str) -> None:
    exception, drafted, signature = _read(f"# ValueError while training\n\n{body}\n")
    assert (exception, drafted) == ("ValueError", "")
    assert signature.startswith("FILL-IN")


def test_a_known_torch_message_alone_gets_torchs_class() -> None:
    assert _read("# Training crashes\n\nCUDA out of memory. Tried to allocate 2.00 GiB\n")[:2] == \
        ("torch.OutOfMemoryError", "CUDA out of memory. Tried to allocate 2.00 GiB")


# Class 3: a message whose first line announces the next (torch's state_dict errors, any "Header:" over an indented
# line): the next line is the message's too; a list of quoted names is cut to its first.
@pytest.mark.parametrize(("detail", "kept"), [
    ('Missing key(s) in state_dict: "encoder.weight", "encoder.bias", "head.w', 'Missing key(s) in state_dict: '
     '"encoder.weight"'),
    ('Unexpected key(s) in state_dict: "module.encoder.weight".', 'Unexpected key(s) in state_dict: '
     '"module.encoder.weight".'),
    ("size mismatch for head.weight: copying a param with shape torch.Size([10, 512]) from checkpoint, the shape in "
     "current model is torch.Size([2, 512]).", "size mismatch for head.weight: copying a param with shape "
     "torch.Size([10, 512]) from checkpoint, the shape in current model is torch.Size([2, 512])."),
])
def test_a_message_continued_on_its_indented_next_line_is_read_whole(detail: str, kept: str) -> None:
    report = ("# Resume fails\n\n```\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
              "    model.load_state_dict(state)\nRuntimeError: Error(s) in loading state_dict for Net:\n"
              f"        {detail}\n```\n")
    exception, drafted, signature = _read(report)
    assert (exception, drafted) == ("RuntimeError", f"Error(s) in loading state_dict for Net:\n{kept}")
    # torch's own message: a tab after the line break
    assert re.search(signature, f"Error(s) in loading state_dict for Net:\n\t{kept}"), signature


def test_a_first_line_not_announcing_more_stays_alone() -> None:
    report = ("```\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    run()\n"
              "ValueError: bad value 3\n  see the docs\n```\n")
    assert _read(report)[1] == "bad value 3"


_PIECES = st.sampled_from(["cuda:0", "GPU 1", "0xdeadbeef", "torch.Size([2, 3])", "[1, 2]", "(3, 4)", "3x4", "12 MiB",
                           "(7)", " ", "\n\t", "\n", "/home/u/x.py", "C:\\a\\b.py", "~/q/", ":", "'", '"', "(", ")",
                           "a", ".", "*", "\\", "#", "$", "x" * 50, ", ", ". ", "\x00", "\x01"])


@settings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=40))
def test_a_signature_matches_the_message_it_was_written_from(parts: list[str]) -> None:
    message = "".join(parts)
    signature, _ = make_signature(message)
    assert re.search(signature, message) or not message.strip(), (message, signature)


def test_a_known_message_quoted_in_prose_ends_at_its_closing_mark() -> None:
    report = ("# Crash in trainer\n\nRunning `python main.py` threw the error `RuntimeError: expected device cpu but got "
              "device cuda:0`. It happened at the optimizer step.\n")
    assert _read(report)[:2] == ("RuntimeError", "expected device cpu but got device cuda:0")


def test_a_titles_cut_message_takes_the_bodys_whole_copy_printed_without_its_class() -> None:
    report = (f"# RuntimeError: Expected all tensors to be on the same device with the ranker\n\nThe log ends:\n\n"
              f"    {TWO_AT}cuda:0 and cpu!\n")
    assert _read(report)[:2] == ("RuntimeError", f"{TWO_AT}cuda:0 and cpu!")


@pytest.mark.parametrize(("title", "message"), [
    ("Expected all tensors to be on the same device with DeepSpeed ZeRO-3", "Expected all tensors to be on the same "
     "device"),
    ("ERROR: CUDA out of memory, when fine-tuning on 2 GPUs", "CUDA out of memory"),
])
def test_a_titles_known_message_without_a_class_is_cut_at_its_end(title: str, message: str) -> None:
    assert _read(f"# {title}\n\nNo more output.\n")[1] == message


def test_a_message_a_paste_wrapped_mid_sentence_is_joined() -> None:
    report = ("```\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    run()\n"
              f"RuntimeError: {TWO_AT}cuda:0 and\ncpu! (when checking argument for argument index in method "
              "wrapper__index_select)\n```\n")
    exception, drafted, signature = _read(report)
    assert exception == "RuntimeError"
    assert drafted == f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument index in method " \
                      "wrapper__index_select)"
    assert re.search(signature, drafted)


def test_a_next_line_that_starts_anew_is_not_joined() -> None:
    report = ("```\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n    run()\n"
              "ValueError: no checkpoint for\nSee the log above.\n```\n")
    assert _read(report)[1] == "no checkpoint for"
