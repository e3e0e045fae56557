"""`new`'s titles and skeletons, and graded13's miss classes, on made-up reports of each shape (issue 21 §1).

A title is ``<library> <API>: <symptom>``: the API from the blamed project's frames, else from what the report's own
words say ran; the skeleton starts where the report's code enters the blamed project. Each test is a report shape
that used to draft wrong (tests/fixtures/graded13/EXPECTED.md lists the real reports behind them)."""

from __future__ import annotations

import re
from typing import Any

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case

PLACEMENT = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _draft(text: str, **index: object) -> tuple[Draft, dict[str, Any]]:
    draft = draft_case("t", parse_report(text), "report.txt", **index)  # type: ignore[arg-type]
    return draft, yaml.safe_load(draft.case_yaml)


# --- graded13's miss classes ------------------------------------------------------------------------------------------

def test_a_logged_error_record_gives_the_message_without_the_loggers_words() -> None:
    """Class: a service logs the error (``ERROR:<logger>:Error in step: <message>``) and the traceback inside a WARNING
    record, cut mid-path; the issue's title names the class alone. The record's message is the exception's, without
    the logger's "Error in step: ", and a device-placement message drafts device lanes."""
    message = ("Expected all tensors to be on the same device, but got mat2 is on cuda:0, different from other tensors "
               "on cpu (when checking argument in method wrapper_CUDA_bmm)")
    text = ("Source: https://github.com/acme/speakkit/issues/3\n# RuntimeError\n\n"
            f"ERROR:speakkit.diar.backend:Error in diarize: {message}\n"
            f"WARNING:speakkit.processor:Exception in diar_worker: {message}\n"
            "WARNING:speakkit.processor:Traceback: Traceback (most recent call last):\n"
            '  File "/home/u/env/lib/python3.12/site-packages/speakkit/processor.py", line 373, in diar_worker\n'
            "    await diar.diarize(pcm)\n"
            '  File "/home/u/env/lib/python3.12/site-packages/speakkit/diar/backend.py", line 192, in diarize\n'
            "    feats = self.mel.get_features(chunk)\n"
            '  File "/home/u/min')
    _, data = _draft(text)
    assert data["exception"] == "RuntimeError"
    assert re.search(data["signature"], message) and "diarize" not in data["signature"], data["signature"]
    assert data["variants"]["buggy"]["expect"]["cpu"] == "passes" and "device-placement" in data["tags"]


def test_a_review_note_quoting_an_exception_is_not_the_reports_own() -> None:
    """Class: a pull request's description says what it resolved; a review note below quotes another exception in prose.
    The description's exception is the report's."""
    text = ("Source: https://github.com/acme/segkit/pull/10\n# Update utils.py\n\n"
            f"resolved RuntimeError: {PLACEMENT}\n\n"
            "someone · review · 2020-08-14\nthe TypeError: unsupported operand type(s) is still there\n")
    _, data = _draft(text)
    assert data["exception"] == "RuntimeError" and re.search(data["signature"], PLACEMENT), data["signature"]


def test_prose_set_off_by_spaces_after_a_quoted_message_is_not_the_message() -> None:
    """Class: "it resolved RuntimeError: <message>   not the TypeError problem": a run of spaces ends the message."""
    _, data = _draft(f"# segkit\n\nsry. it resolved RuntimeError: {PLACEMENT}   not the other problem\n")
    assert re.search(data["signature"], PLACEMENT) and "problem" not in data["signature"], data["signature"]


def test_an_index_name_with_no_link_never_wins_over_the_reports_repository() -> None:
    """Class: the index has a project of the repository's name whose metadata links nowhere (PyPI's ``brats``): nothing
    ties it to the report's repository, so both variants pin commits of the repository and no module is imported."""
    draft, data = _draft(f"Source: https://github.com/acme/segkit/pull/10\n# Update utils.py\n\nRuntimeError: {PLACEMENT}\n",
                         released=lambda _: True, project_urls=lambda _: ())
    assert "segkit @ git+https://github.com/acme/segkit@<commit>" in data["variants"]["buggy"]["requires"][0]
    assert "\nimport segkit" not in draft.repro_py  # the import statement; the FILL-IN comment asks for it
    # graded15 (cleanrl): no link proves no other project either: the note never says "another project"
    assert any("links no repository, so nothing ties it to the report's (it may be this project's" in note
               for note in draft.notes), draft.notes
    assert not any("another project" in note for note in draft.notes), draft.notes


def _installed_caller(message: str) -> str:
    return ("Source: https://github.com/acme/speakkit/issues/3\n\nTraceback (most recent call last):\n"
            '  File "/env/lib/python3.12/site-packages/speakkit/processor.py", line 373, in diar_worker\n'
            "    await diar.diarize(pcm)\n"
            '  File "/env/lib/python3.12/site-packages/speakkit/diar/backend.py", line 192, in diarize\n'
            "    feats = self.mel.get_features(chunk)\n"
            '  File "/env/lib/python3.12/site-packages/nemo/asr/preprocessing.py", line 300, in get_features\n'
            "    return self.featurizer(x, length)\n"
            f"RuntimeError: {message}\n")


def test_the_reports_installed_project_that_hands_a_library_mixed_devices_is_blamed() -> None:
    """Class: two installed projects, the report's own (its link's) calling another that raised a device-placement
    error: the caller chose the devices, so the report's project is blamed (its innermost frame titles the draft,
    the first of its frames starts the skeleton); the inner library stays pinned. An error of the library's own (no
    device mix) stays the library's."""
    draft, data = _draft(_installed_caller(PLACEMENT))
    assert draft.culprit == "speakkit" and data["title"].startswith("speakkit diarize: Expected all"), data["title"]
    assert "await diar.diarize(pcm)" in draft.repro_py  # the call the project's code entered, shown
    assert any("nemo" in req for req in data["requires"]), data["requires"]
    assert _draft(_installed_caller("featurizer expects a 1-D signal"))[0].culprit == "nemo-toolkit"


# --- titles: the blamed project's frames --------------------------------------------------------------------------------

def _checkout(inner: str) -> str:
    return ("Source: https://github.com/acme/SRKit/issues/22\n\nTraceback (most recent call last):\n"
            '  File "/content/drive/SRKit-master/train.py", line 40, in <module>\n    main()\n'
            '  File "/content/drive/SRKit-master/train.py", line 30, in train_gan\n'
            "    content_loss = content_criterion(sr, hr.detach())\n"
            '  File "/usr/local/lib/python3.7/dist-packages/torch/nn/modules/module.py", line 727, in _call_impl\n'
            "    result = self.forward(*input, **kwargs)\n" + inner + f"RuntimeError: {PLACEMENT}\n")


def test_a_packages_forward_called_only_by_the_checkouts_script_is_named_with_its_file() -> None:
    """Class: a checkout's script calls a module of its package (``srkit/loss.py``'s forward): the title names that
    module's file and forward, the project's code a maintainer fixes, not the script's function that called it. A
    model's forward at the checkout's root (``SRKit-master/model.py``, next to the script) is the script's run: the
    title keeps the script's function."""
    title = _draft(_checkout('  File "/content/drive/SRKit-master/srkit/loss.py", line 156, in forward\n'
                             "    source = (source - self.mean) / self.std\n"))[1]["title"]
    assert title.startswith("srkit loss.py forward: Expected all"), title
    title = _draft(_checkout('  File "/content/drive/SRKit-master/model.py", line 156, in forward\n'
                             "    x = self.conv(x)\n"))[1]["title"]
    assert title.startswith("srkit train_gan: Expected all"), title


# --- titles: a report without the project's frames ---------------------------------------------------------------------

@pytest.mark.parametrize(("head", "body", "api"), [
    ("# RuntimeError: expected scalar type Half but found Float", "finetune.py 脚本根本训练不了啊\n", "finetune.py"),
    ("# Update utils.py", "resolved the error below\n", "utils.py"),
    ("# MultiBand should pass device to NoiseSchedule", "", "MultiBand"),
    ("# When i click train i receive this error", "", "training"),
    ("# Expected all tensors to be on the same device", "Now Tensor preprocessing is acting up.\n",
     "Tensor preprocessing"),
    ("# Error in colab", "I try the Face_Verification demo in colab\n", "Face_Verification"),
])
def test_a_frameless_reports_title_names_what_its_words_say_ran(head: str, body: str, api: str) -> None:
    """Class: no frame at all (an error line, a PR line): the title names the run the report's own words give, a file,
    a name shaped like code, else a run word with the noun before it (never a reply's words)."""
    text = (f"Source: https://github.com/acme/lawkit/issues/60\n{head}\n\n{body}\n"
            "RuntimeError: expected scalar type Half but found Float\n\nbob · comment · 2023-05-26\nUse OtherThing.py\n")
    title = _draft(text)[1]["title"]
    assert title == f"lawkit {api}: expected scalar type Half but found Float", title


def test_a_listing_a_vendor_and_an_acronym_are_passed_over_for_the_run() -> None:
    """A version listing's name, a GPU's name and an acronym are not what ran: the file the prose names after them is."""
    text = ("Source: https://github.com/acme/lawkit/issues/60\n# Help\n\nTorchVision: 0.14.1+cu117\nGPU: NVIDIA GeForce "
            "RTX 3060\nIt uses LoRA\nthen export.py fails\n\nRuntimeError: bad thing happened\n")
    assert _draft(text)[1]["title"] == "lawkit export.py: bad thing happened"


def test_a_command_names_the_run_when_the_frames_are_torchs_only() -> None:
    """Class: the report's only frame is torch's (functional.py layer_norm) and its command runs ``track.py``: the title
    names the script, not torch's function under the project's name."""
    text = ("Source: https://github.com/acme/mottrack/pull/1820\n# FIX: error on half\n\n"
            "python track.py --source 0 --reid-model=clip.pt --half\n\nTraceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.8/dist-packages/torch/nn/functional.py", line 2486, in layer_norm\n'
            "    return torch.layer_norm(input, normalized_shape, weight, bias, eps)\n"
            "RuntimeError: expected scalar type Float but found Half\n")
    draft, data = _draft(text)
    assert data["title"] == "mottrack track.py: expected scalar type Float but found Half", data["title"]
    assert "the API it names: track.py" in draft.repro_py


def test_a_long_device_check_keeps_its_method_when_the_title_is_cut() -> None:
    """Class: project, API and a device message with its "(when checking argument ...)" run past the schema's 200
    characters: the check's wording is elided, the operator it names kept (``(... wrapper__cudnn_convolution)``)."""
    message = ("Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (when "
               "checking argument for argument weight in method wrapper__cudnn_convolution)")
    title = _draft(f"Source: https://github.com/acme/yolov5face_torchserve_tensorrt/issues/1\n# RuntimeError: {message}\n"
                   )[1]["title"]
    assert len(title) <= 200 and title.endswith("cuda:1 and cuda:0! (... wrapper__cudnn_convolution)"), title


# --- skeletons -----------------------------------------------------------------------------------------------------------

def test_the_skeleton_shows_the_blamed_projects_first_frame_after_the_reports_call() -> None:
    """Class: a script calls ``checkpoints.resume``, whose buggy line calls the project's ``load_state_dict`` that
    raised: the skeleton shows the script's call, the project's first frame (the buggy line) and the frame that
    raised."""
    text = ("Source: https://github.com/acme/grainkit/issues/4\n\nTraceback (most recent call last):\n"
            '  File "scripts/train.py", line 9, in <module>\n    run(args)\n'
            '  File "scripts/train.py", line 60, in run\n    epoch = checkpoints.resume(model, optimizers)\n'
            '  File "/tmp/grainkit/grainkit/utils/checkpoint.py", line 114, in resume\n'
            "    optimizer.load_state_dict('optimizer_state')\n"
            '  File "/tmp/grainkit/grainkit/modules/multioptim.py", line 86, in load_state_dict\n'
            "    for k, v in D.items():\n"
            "AttributeError: 'str' object has no attribute 'items'\n")
    repro = _draft(text)[0].repro_py
    shown = [line.strip("# ") for line in repro.splitlines() if line.startswith("    #     ")]
    assert shown == ["epoch = checkpoints.resume(model, optimizers)", "optimizer.load_state_dict('optimizer_state')",
                     "for k, v in D.items():"], shown


def test_a_frameless_skeleton_names_the_run_the_report_names() -> None:
    """Class: an error line and one sentence naming ``finetune.py``: the skeleton says which run to write."""
    text = ("Source: https://github.com/acme/lawkit/issues/60\n# RuntimeError: expected scalar type Half but found "
            "Float\n\nRuntimeError: expected scalar type Half but found Float\n\nfinetune.py fails\n")
    assert "The report shows no frame; the API it names: finetune.py" in _draft(text)[0].repro_py


def test_a_skeleton_with_no_frame_and_no_api_names_the_project_whose_call_is_to_be_found() -> None:
    """Class: the report is its message alone (no class, no frame, no API in its words): the skeleton says the call
    is the blamed project's, to be found (not a bare raise under ``import torch``)."""
    message = ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:1! (when "
               "checking argument for argument index in method wrapper_CUDA_scatter__value)")
    text = f"Source: https://github.com/acme/Face-Kit/issues/37\n# {message}\n\n  {message}\n"
    assert "find the call of face-kit that ends this way" in _draft(text)[0].repro_py


def test_a_skeleton_starts_one_call_out_when_the_reports_call_is_the_blamed_frame() -> None:
    """Class: the checkout's ``train_epoch`` is both the report's call into torch and the blamed frame: the skeleton
    starts at the script's call of it (``train_epoch(...)`` in main) and shows that frame once."""
    text = ("Source: https://github.com/acme/creamkit/issues/2\n\nTraceback (most recent call last):\n"
            '  File "tools/train.py", line 300, in <module>\n    main()\n'
            '  File "tools/train.py", line 218, in main\n    metrics = train_epoch(epoch, model, loader, optimizer)\n'
            '  File "/opt/tiger/creamkit/tools/../lib/core/train.py", line 68, in train_epoch\n    optimizer.step()\n'
            '  File "/usr/local/lib/python3.8/site-packages/torch/optim/sgd.py", line 106, in step\n'
            "    buf.mul_(momentum).add_(d_p, alpha=1 - dampening)\n"
            f"RuntimeError: {PLACEMENT}\n")
    repro = _draft(text)[0].repro_py
    shown = [line.strip("# ") for line in repro.splitlines() if line.startswith("    #     ")]
    assert shown[:3] == ["metrics = train_epoch(epoch, model, loader, optimizer)", "optimizer.step()",
                         "buf.mul_(momentum).add_(d_p, alpha=1 - dampening)"], shown  # then the message's wrapped end
