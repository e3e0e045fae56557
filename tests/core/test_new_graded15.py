"""graded15's miss classes on made-up reports of each shape (issue 21 §1; tests/fixtures/graded15/EXPECTED.md lists
the real reports behind them). Each test fails on main 66122ed and passes with the fix of its class."""

from __future__ import annotations

from typing import Any

from harness.authoring._bugreport import parse_report
from tests.core.test_new_graded14 import SITE, _draft

HALF = "expected scalar type Half but found Float"
PLACED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _attack(function: str, tail: str = "", head: str = "") -> str:
    """A made-up ta-lbf-shaped report: a script's frame (in ``function``) calling torch/tensor.py (torch < 1.9)."""
    return ("https://github.com/someone/widget-attack/issues/2\n"
            f"# RuntimeError: Expected all tensors to be on the same device\n\n{head}"
            f'File "attack_widget.py", line 235, in {function}\n'
            " acc = len([i for i in range(len(output)) if labels[i] == pred[i]])\n"
            'File "/opt/conda/lib/python3.7/site-packages/torch/tensor.py", line 27, in wrapped\n'
            f" return f(*args, **kwargs)\nRuntimeError: {PLACED}\n{tail}")


def _titled(report: str) -> str:
    return str(_draft(report, released=lambda dist: True)[1]["title"])


def _buggy(data: dict[str, Any]) -> str:
    return " ".join(data["variants"]["buggy"]["requires"])


def test_a_model_cards_two_releases_of_one_package_give_the_released_one() -> None:
    """Class (peft-175): a Hugging Face "framework versions" block naming two installs tried on one line
    ("widgetft 0.2.0/widgetft 0.3.0.dev0", "other 0.4.1.dev0/ other 0.4.0"): the release the index has is the run's."""
    report = (f"https://github.com/widget-org/widgetft/issues/9\n# RuntimeError: {HALF}\n\nEnvironment:\n"
              "Transformers 4.27.0\nother 0.4.1.dev0/ other 0.4.0\nwidgetft 0.2.0/widgetft 0.3.0.dev0\n\n"
              "Training with the adapter fails as the title says.\n")
    pins = parse_report(report).environment.pins
    assert (pins["widgetft"].version, pins["other"].version) == ("0.2.0", "0.4.0")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widgetft"
    assert "widgetft==0.2.0" in _buggy(data)


def test_a_cut_traceback_blames_the_linked_project_its_listing_pins_over_the_outer_frame_shown() -> None:
    """Class (bitsandbytes-392): the stored text stops inside the traceback (the exception is in the title); the only
    frame shown is an outer trainer's; the report pins the linked project on its own line. The trainer only called
    the code that raised: the linked, pinned project is blamed and its release is the buggy pin."""
    report = (f"https://github.com/widget-org/widgetquant/issues/3\n# RuntimeError: {HALF}\n\nwidgetquant==0.3.1\n"
              "my error log:\n"
              f'  File "{SITE}/widgettrain/trainer.py", line 1662, in train\n'
              "    return inner_training_loop(\n"
              '  File "/home/u\n')
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widgetquant", draft.culprit
    assert data["title"].startswith("widgetquant"), data["title"]
    assert "widgetquant==0.3.1" in _buggy(data)
    # a complete traceback keeps its innermost library's blame
    whole = report.replace('  File "/home/u\n', f"RuntimeError: {HALF}\n")
    assert _draft(whole, released=lambda dist: True)[0].culprit == "widgettrain"


def test_a_checkouts_copy_of_a_package_above_a_cut_traceback_is_the_linked_projects() -> None:
    """Class (prollama-15): a checkout of the linked repository (``WidgetLM-main``) holds its own copy of a PyPI
    package (``WidgetLM-main/adapterlib/model.py``) that calls an installed library; the stored traceback stops before
    the raising frame. The copy is the project's code: the project is blamed, named with the copy's call."""
    report = (f"https://github.com/Widget-Group/WidgetLM/issues/15\n# RuntimeError: {HALF}\n\n"
              "Traceback (most recent call last):\n"
              '  File "infer.py", line 204, in <module>\n'
              "    out = model.generate(**batch)\n"
              '  File "/root/work/WidgetLM-main/adapterlib/model.py", line 581, in generate\n'
              "    return self.base_model.generate(**kwargs)\n"
              f'  File "{SITE}/widgetformers/generation/utils.py", line 2801, in sample\n'
              "    outputs = self(**model_inputs)\n"
              f'  File "{SITE}/torch/nn/modules/module.py",\n')
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widgetlm", draft.culprit
    assert data["title"].startswith("widgetlm generate"), data["title"]


def test_a_dtype_error_of_an_8bit_run_is_unsupported_on_cpu_and_cuda_sim() -> None:
    """Class (peft-175, bitsandbytes-392): the run loaded bitsandbytes' CUDA library (its setup banner) and failed with
    a dtype error: the 8-bit layers are CUDA kernels, which neither the cpu lane nor cuda-sim runs."""
    report = (f"https://github.com/widget-org/widgetft/issues/9\n# RuntimeError: {HALF}\n\nwidgetft==0.2.0\n"
              f"CUDA SETUP: Loading binary {SITE}/bitsandbytes/libbitsandbytes_cuda116.so...\n")
    expect = _draft(report, released=lambda dist: True)[1]["variants"]["buggy"]["expect"]
    assert {lane: kind.split(":")[0] for lane, kind in expect.items()} == \
        {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "unsupported"}
    plain = report.replace(f"CUDA SETUP: Loading binary {SITE}/bitsandbytes/libbitsandbytes_cuda116.so...\n", "")
    assert _draft(plain, released=lambda dist: True)[1]["variants"]["buggy"]["expect"]["cuda-sim"] == "reproduces"


def test_a_message_the_stored_text_cuts_inside_a_word_is_taken_whole_from_its_other_copy() -> None:
    """Class (lightning-16816): the report quotes the error twice; the last traceback's copy stops inside a word where
    the stored text was cut ("... and c"). The signature is the whole message, from the earlier copy."""
    whole = "You asked for -1 widgets but only 1 is free. The widgets [] are held by other processes and can't be used."
    trace = ("Traceback (most recent call last):\n"
             '  File "<stdin>", line 1, in <module>\n'
             f'  File "{SITE}/widgetfab/finder.py", line 122, in find_widgets\n'
             "    raise RuntimeError(\n"
             "RuntimeError: {}\n")
    report = (f"https://github.com/widget-org/widgetfab/issues/8\n\n```\n{trace.format(whole)}```\n\nLater:\n```\n"
              f"{trace.format(whole[:whole.index('and c') + 5])}\n[gap: stored text not returned]\n```\n")
    signature = _draft(report, released=lambda dist: True)[1]["signature"]
    assert signature.endswith("can't be used\\."), signature


def test_a_title_naming_a_script_file_gives_the_script_not_its_suffix() -> None:
    """Class (cleanrl-396): a pull request titled "Update ppo_widget_action.py" with the fixed error in its text and no
    frame: the title's API is the script's name, never the file suffix "py"."""
    report = ("https://github.com/someone/widgetrl/pull/396\n# Update ppo_widget_action.py\n\n"
              "Fix RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
              "cuda:0 and cpu!\n")
    title = _titled(report)
    assert title.startswith("widgetrl ppo_widget_action.py: Expected all tensors"), title


def test_a_scripts_comprehension_frame_names_the_script_in_the_title() -> None:
    """Class (ta-lbf-2): the report's own frame is a list comprehension at a script's top level ("attack_one.py", in
    <listcomp>) calling into torch: the title names the script, not nothing."""
    report = _attack("<listcomp>")
    title = _titled(report)
    assert title.startswith("widget-attack attack_widget.py: Expected all"), title


def test_a_source_line_the_prose_quotes_as_the_failing_one_names_the_api() -> None:
    """Class (slime-7): no frames; the reporter writes "I find the error on the line:" and quotes the source line
    below. What that line computes names the API, not the prose's "training"."""
    report = ("https://github.com/someone/WidgetSeg/issues/7\n# RuntimeError: expected scalar type float but found long int"
              "\n\nHi, when I train the model on my data, I find the error on the line:\n"
              "pixel_scale = torch.where(counts > 0, counts.sum() / counts, 0)\n\nPlease help me debug this issue?\n")
    title = _titled(report)
    assert title.startswith("widgetseg pixel_scale: expected scalar type float"), title


def test_a_frame_quoted_in_a_sentence_names_its_function_with_its_file() -> None:
    """Class (t-gcn-56): no traceback block; the prose quotes the frame ('the problem happen to "..\\Widget-GCN\\
    utils\\callbacks\\best_epoch.py", line 51, in on_validation_batch_end'). The title names the hook with its file:
    a bare hook name says nothing of whose code it is."""
    report = ("https://github.com/someone/Widget-GCN/issues/56\n# A question and solution\n\n"
              'Hi, I meet the error like "RuntimeError: Expected all tensors to be on the same device, but found at '
              'least two devices, cuda:0 and cpu!", and the problem happen to "..\\Widget-GCN\\utils\\callbacks\\'
              'best_epoch.py", line 51, in on_validation_batch_end if monitor_op(monito\n')
    title = _titled(report)
    assert title.startswith("widget-gcn best_epoch.py on_validation_batch_end: Expected all"), title


def test_a_fix_placeholder_says_how_a_reply_fixed_it() -> None:
    """Class (ta-lbf-2): a reply says how the bug was fixed ("Fixed with replacing labels_gpu."), naming no release or
    commit: the fix variant's placeholder carries the reply's words."""
    report = _attack("run", "\nsomeone · comment · 2021-05-31\nFixed with replacing labels_gpu. Is it correct?\n")
    fixed = " ".join(_draft(report, released=lambda dist: True)[1]["variants"]["fix"]["requires"])
    assert "(a reply says it was fixed by replacing labels_gpu)" in fixed, fixed


def test_a_frame_of_torch_tensor_py_dates_an_unlisted_torch_as_older_than_1_9() -> None:
    """Class (ta-lbf-2, unscored): the report lists no torch, but a frame runs site-packages/torch/tensor.py, which
    torch 1.9 renamed to torch/_tensor.py: the note says the report's torch is older than 1.9."""
    report = _attack("run")
    notes = " ".join(_draft(report, released=lambda dist: True)[0].notes)
    assert "its frames show a torch older than 1.9" in notes, notes
    listed = _attack("run", head="torch==1.8.1\n")
    assert "its frames show a torch" not in " ".join(_draft(listed, released=lambda dist: True)[0].notes)


def test_a_library_wrappers_forward_is_named_by_its_caller_in_the_reports_own_repository() -> None:
    """Class (colossalai-6169): the blamed library's only frame is its model wrapper's ``forward`` (reached through
    torch's call plumbing), called from a checkout of the report's own repository (``WidgetAI/applications/chat/
    widgetchat/trainer/sft.py``, in ``_train``). The title names that caller, not the plumbing ``forward``."""
    report = ("https://github.com/widget-org/WidgetAI/issues/61\n\nTraceback (most recent call last):\n"
              '  File "/workspace/WidgetAI/applications/chat/widgetchat/trainer/sft.py", line 133, in _train\n'
              "    outputs = self.model(batch)\n"
              f'  File "{SITE}/torch/nn/modules/module.py", line 1562, in _call_impl\n'
              "    return forward_call(*args, **kwargs)\n"
              f'  File "{SITE}/widgetai/interface/model.py", line 25, in forward\n'
              "    return self.module(*args, **kwargs)\n"
              f'  File "{SITE}/torch/nn/modules/linear.py", line 117, in forward\n'
              "    return F.linear(input, self.weight, self.bias)\n"
              "RuntimeError: mat1 and mat2 must have the same dtype, but got Float and BFloat16\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widgetai", draft.culprit
    assert data["title"].startswith("widgetai _train: mat1 and mat2"), data["title"]


def test_the_skeleton_keeps_the_command_line_and_its_settings() -> None:
    """Class (peft-175, graded15's S): the report ran its script through a launcher with settings; the skeleton shows
    that command line (environment variables, launcher, script, flags), not the prose that goes on after it."""
    report = (f"https://github.com/widget-org/widgetft/issues/9\n# RuntimeError: {HALF}\n\n"
              "When I run CUDA_VISIBLE_DEVICES=0 accelerate launch --mixed_precision fp16 ft_widget.py --load_in_8bit "
              "--output_dir chk to train I get the error in the title.\n")
    repro = _draft(report, released=lambda dist: True)[0].repro_py
    comments = " ".join(line.strip("# ") for line in repro.splitlines() if line.startswith("    #   "))
    assert comments.startswith("CUDA_VISIBLE_DEVICES=0 accelerate launch --mixed_precision fp16 ft_widget.py "
                               "--load_in_8bit --output_dir chk RuntimeError"), comments
