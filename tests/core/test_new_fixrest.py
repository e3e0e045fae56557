"""Fix round (fixrest): the report's API is read from its own text, not from a library's log record, a fenced run
output or a reply's fix helper; a run launched over several GPUs makes no cpu-lane claim."""

from __future__ import annotations

import pytest

from harness.authoring._draft import draft_case
from harness.authoring._expect import _expectations, multi_gpu_launch
from harness.authoring._prose import _called_names, _code_names

_LOGGED = """\
# training fails with fp16: RuntimeError: Found dtype Float but expected Half

I run `train.py` with `precision` set to 16 and get an error.
```
/env/lib/python3.10/site-packages/somelightning/trainer/validator.py:74: You defined a `validation_step` but have no `val_dataloader`.
WARNING: `configure_optimizers` returned nothing
Enabling FP16. Model parameters and inputs will be cast to `float16`.
```
"""

_PLACED = "Expected all tensors to be on the same device, but found at least two devices, "
_REPLIED = """\
# RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!

`RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!`

someone · comment · 2023-10-05
Fixed it, just call `get_device` inside make_mask, easy:

    return make_mask(x).to(get_device())
"""


def test_a_library_log_record_or_fenced_output_names_no_api() -> None:
    assert _code_names(_LOGGED.splitlines()) == ("train.py", "precision")


def test_an_unfenced_warning_line_names_no_api() -> None:
    lines = ["I train with `Trainer.fit`.",
             "/x/site-packages/lib/warn.py:12: UserWarning: `old_step` is deprecated",
             "[rank: 0] calling `setup_hook` now"]
    assert _code_names(lines) == ("Trainer.fit",)


def test_a_reply_turn_names_no_api_of_the_report() -> None:
    lines = _REPLIED.splitlines()
    assert _code_names(lines) == () and _called_names(lines) == ()


def test_the_description_before_a_reply_still_names_its_api() -> None:
    lines = ["# crash in `build_model`", "I call build_model(cfg) and it fails", "",
             "maint · comment · 2024-01-01", "use `other_helper` instead"]
    assert _code_names(lines) == ("build_model",)


def test_a_draft_of_a_replied_report_does_not_title_the_fix_helper() -> None:
    from harness.authoring._bugreport import parse_report
    report = parse_report("Source: https://github.com/someone/sometrainer/issues/4\n" + _REPLIED)
    draft = draft_case("sometrainer-4", report, released=lambda n: None, project_urls=lambda n: None,
                       versions=lambda n: None)
    title = next(line for line in draft.case_yaml.splitlines() if line.startswith("title:"))
    assert "get_device" not in title and "Expected all tensors" in title


@pytest.mark.parametrize(("command", "launch"), [
    ("torchrun --standalone --nproc_per_node=2 train.py --lr 1e-4", "--nproc_per_node=2"),
    ("python -m torch.distributed.launch --nproc-per-node $NGPU train.py", "--nproc-per-node $NGPU"),
    ("deepspeed --num_gpus 4 finetune.py", "--num_gpus 4"),
    ("CUDA_VISIBLE_DEVICES=0,1 accelerate launch --num_processes 2 train.py", "CUDA_VISIBLE_DEVICES=0,1"),
    ("accelerate launch --num_processes 2 train.py", "--num_processes 2"),
    ("CUDA_VISIBLE_DEVICES=0,1 python train.py", "CUDA_VISIBLE_DEVICES=0,1"),
    ("torchrun --nproc_per_node=1 train.py", ""),
    ("CUDA_VISIBLE_DEVICES=0 python train.py --gpus 1", ""),
    ("python train.py --epochs 2", ""),
])
def test_a_command_over_several_gpus_is_read(command: str, launch: str) -> None:
    assert multi_gpu_launch(command) == launch


def test_a_plain_error_of_a_run_over_several_gpus_is_no_cpu_lane_claim() -> None:
    lanes, _ = _expectations("AssertionError", "shapes differ", launch="--nproc_per_node=2")
    assert lanes["cpu"].startswith("unsupported:") and "--nproc_per_node=2" in lanes["cpu"]
    assert lanes["cuda"] == "reproduces"
    # a device error keeps its own rule, and one process claims nothing
    assert _expectations("RuntimeError", f"{_PLACED}cuda:0 and cpu!", launch="--nproc_per_node=2")[0]["cpu"] == "passes"
    assert _expectations("AssertionError", "shapes differ")[0]["cpu"] == "reproduces"


def test_a_draft_of_a_torchrun_report_says_why_the_cpu_lane_is_unsupported() -> None:
    from harness.authoring._bugreport import parse_report
    text = ("Source: https://github.com/someone/trainlib/issues/7\n# assert fails in step\n\nI ran\n```\n"
            "torchrun --nproc_per_node=2 train.py --zero 2\n```\nTraceback (most recent call last):\n"
            '  File "/env/site-packages/trainlib/opt.py", line 9, in step\n    assert a.shape == b.shape\n'
            "AssertionError: param and grad have different shape\n")
    draft = draft_case("trainlib-7", parse_report(text), released=lambda n: None, project_urls=lambda n: None,
                       versions=lambda n: None)
    assert "launched over several GPUs (`--nproc_per_node=2`)" in draft.case_yaml


def test_a_bracketed_label_is_no_log_record() -> None:
    assert _code_names(["[Bug] `trainer.fit` crashes", "[2024-05-01 10:00] calling `hook_a`"]) == ("trainer.fit",)
