"""Messages a report cuts or elides (graded46/47's shapes): a signature that still matches the real message, torch's
training messages quoted without their class, and a thread store's turn markers that name people, not code."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case, make_signature
from harness.authoring._prose import _subjects
from harness.authoring._torch_messages import torch_class

TORCH_KEYS = ('Error(s) in loading state_dict for Net:\n\tMissing key(s) in state_dict: "blocks.1.w", "blocks.2.w", '
              '"blocks.3.w".')


@pytest.mark.parametrize("pasted", [
    'Error(s) in loading state_dict for Net:\nMissing key(s) in state_dict: "blocks.1.w", ......................',
    'Error(s) in loading state_dict for Net:\nMissing key(s) in state_dict: "blocks.1.w", … "blocks.3.w".',
])
def test_the_reporters_elision_matches_any_text(pasted: str) -> None:
    """A reporter's elision: a run of dots (or an ellipsis) where the reporter left keys out is no part of torch's
    message: the signature matches whatever stood there, and nothing is required after a last one."""
    signature, _ = make_signature(pasted)
    assert re.search(signature, TORCH_KEYS), signature


@pytest.mark.parametrize(("cut", "whole"), [
    ("indices should be either on cpu or on the same device as the indexed tensor (cpu) and",
     "indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
    ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and",
     "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"),
    ("weight of size [64, 3], expected input[1, 4] to have 3 channels,", "weight of size [64, 3], expected input[1, 4] "
     "to have 3 channels, but got 4 channels instead"),
])
def test_a_message_cut_after_a_connective_is_matched_without_it(cut: str, whole: str) -> None:
    """yolor-284's shape: an issue title cut after "and" keeps the words before it, so the real message matches."""
    signature, _ = make_signature(cut)
    assert re.search(signature, whole), signature
    assert not signature.endswith(("and", ","))


def test_a_message_that_is_only_a_connective_is_kept() -> None:
    assert make_signature("and")[0] == "and"


@pytest.mark.parametrize(("quoted", "exception"), [
    ("param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer", "KeyError"),
    ("loaded state dict contains a parameter group that doesn't match the size of optimizer's group", "ValueError"),
    ("Attempting to unscale FP16 gradients.", "ValueError"),
    ("Weights only load failed.", "_pickle.UnpicklingError"),
    ("size mismatch for fc.weight: copying a param with shape torch.Size([1]) from checkpoint, the shape in current "
     "model is torch.Size([10, 512]).", "RuntimeError"),
    ("DataLoader worker (pid(s) 2126) exited unexpectedly", "RuntimeError"),
    ("it is not specified", None),
])
def test_torchs_training_messages_quoted_without_their_class_give_it(quoted: str, exception: str | None) -> None:
    assert torch_class(quoted) == exception


def test_a_resume_message_in_an_issue_title_is_drafted_with_torchs_class() -> None:
    """gan-compression-72's shape: the title quotes the scheduler's message in parentheses, no class anywhere."""
    report = parse_report("Source: https://github.com/someone/widgetgan/issues/72\n# (param 'initial_lr' is not "
                          "specified) when resuming training\n\nI resume from epoch 5 and get an error.\n")
    data = yaml.safe_load(draft_case("resume", report).case_yaml)
    assert data["exception"] == "KeyError"
    assert re.search(data["signature"], "param 'initial_lr' is not specified in param_groups[0] when resuming an "
                                        "optimizer")


def test_a_thread_stores_turn_marker_names_a_person_not_what_ran() -> None:
    """comfy-mecha-15's shape: "[turn 0 by SomeUser, continued]" was read as what the report says ran."""
    lines = ["[turn 0 by CyberWidget, continued]", "I get this error when I merge:", "RuntimeError: boom"]
    assert "CyberWidget" not in _subjects(lines)
