"""Fix round F (fixlanes3): lanes and the device-placement tag of three message shapes seen across projects.

- Code that hard-codes CUDA run on a CPU-only torch ("torch.cuda.FloatTensor is not enabled", "Torch not compiled with
  CUDA enabled", "Found no NVIDIA driver"): the inverted lane, cpu reproduces, cuda and cuda-sim pass (cuda-sim
  presents a CUDA device and places `.cuda()` on it), tagged device-placement.
- A device-check message cut at a word boundary ("Expected all tensors to be on the same"): the family of the torch
  message it is a prefix of, for lanes and the tag; not a prefix shared with a dtype message, nor a short one.
- A Half/Float mismatch (fp16 is a GPU path: `--fp16`, autocast, `.half()` on a GPU): the cpu lane is not claimed to
  reproduce; its reason says why; bf16 and other dtype mismatches keep "every device alike".

The reports are made up, each of a shape seen across projects (not one project's text)."""

from __future__ import annotations

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._expect import _expectations
from tests.core.test_new_fixlanes import _report


def _lanes(message: str, text: str = "", exception: str = "RuntimeError", title: str = "training fails"
           ) -> tuple[dict[str, str], bool]:
    """The drafted buggy lanes of a made-up report and whether the draft is tagged device-placement."""
    draft = draft_case("made-up", parse_report(_report(message, text, exception, title)))
    data = yaml.safe_load(draft.case_yaml)
    lanes = {lane: str(kind) for lane, kind in data["variants"]["buggy"]["expect"].items()}
    return lanes, "device-placement" in data["tags"]


@pytest.mark.parametrize("message, exception", [
    ("torch.cuda.FloatTensor is not enabled.", "RuntimeError"),
    ("Torch not compiled with CUDA enabled", "AssertionError"),
    ("Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver",
     "RuntimeError"),
    ("type torch.cuda.LongTensor not available. Torch not compiled with CUDA enabled.", "TypeError"),
    ("CUDA driver initialization failed, you might not have a CUDA gpu.", "RuntimeError"),
    ("module 'torch._C' has no attribute '_cuda_setDevice'", "AttributeError"),
])
def test_code_hard_coding_cuda_on_a_cpu_only_torch_has_the_inverted_lane(message: str, exception: str) -> None:
    lanes, tagged = _lanes(message, "I train on my laptop, which has no GPU.", exception)
    assert {lane: kind.split(":")[0] for lane, kind in lanes.items()} == {
        "cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}
    assert tagged


def test_a_cuda_type_named_in_an_argument_error_is_not_read_as_a_cpu_only_host() -> None:
    expect, guess = _expectations("TypeError", "addcmul_ received an invalid combination of arguments - got (int, "
                                  "torch.cuda.FloatTensor, torch.FloatTensor)")
    assert expect["cpu"] == "passes" and "without CUDA" not in guess


@pytest.mark.parametrize("cut", [
    "Expected all tensors to be on the same",
    "Expected all tensors to be on the same ...",
    "Expected object of device type cuda but got",
    "Tensor for argument #2 'mat1' is on CPU, but",
])
def test_a_device_check_cut_at_a_word_boundary_is_read_as_a_device_check(cut: str) -> None:
    lanes, tagged = _lanes(cut, "I train with `somelib.fit`.")
    assert lanes == {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"} and tagged


def test_a_cut_checkpoint_message_is_read_as_the_host_without_cuda() -> None:
    lanes, tagged = _lanes("Attempting to deserialize object on a CUDA device but")
    assert (lanes["cpu"], lanes["cuda"], lanes["cuda-sim"]) == ("reproduces", "passes", "passes") and tagged


@pytest.mark.parametrize("cut", [
    "Expected all tensors to be on the sa",  # cut inside a word
    "Expected all tensors to",  # too short to tell
    "Expected object of",  # a device check's start and a dtype check's
    "Expected tensor for argument #1 'input' to have the same",  # device or type: both are torch's
    "Attempting to deserialize object on",  # a host without CUDA or a device index
])
def test_a_cut_message_two_families_start_alike_or_too_short_is_not_completed(cut: str) -> None:
    lanes, tagged = _lanes(cut)
    assert lanes == {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"} and not tagged


@pytest.mark.parametrize("message, text", [
    ("expected scalar type Half but found Float", "Multi-GPU LoRA training: the loss falls, then evaluation fails."),
    ("expected scalar type Float but found Half", "```\npython train.py --fp16 --batch_size 8\n```"),
    ("expected mat1 and mat2 to have the same dtype, but got: float != c10::Half", "I load the model with `.half()`."),
    ("Found dtype Float but expected Half", "I train with `torch.autocast(\"cuda\")` and a `GradScaler`."),
])
def test_a_half_float_mismatch_does_not_claim_the_cpu_lane_reproduces(message: str, text: str) -> None:
    lanes, tagged = _lanes(message, text)
    assert lanes["cpu"].startswith("unsupported: ") and "fp16" in lanes["cpu"]
    assert (lanes["cuda"], lanes["cuda-sim"], tagged) == ("reproduces", "reproduces", False)


def test_the_cpu_reason_names_what_says_the_run_used_fp16() -> None:
    lanes, _ = _lanes("expected scalar type Half but found Float", "```\npython train.py --fp16\n```")
    assert "`--fp16`" in lanes["cpu"] and "the report's run uses fp16" in lanes["cpu"]


@pytest.mark.parametrize("message, text, cpu", [
    ("expected scalar type BFloat16 but found Float", "", "reproduces"),  # bf16: CPUs run it
    ("expected scalar type Long but found Float", "", "reproduces"),
    ("expected scalar type Half but found Float", "I don't have a GPU, so I train on the CPU.", "reproduces"),
])
def test_other_dtype_mismatches_and_a_cpu_run_keep_the_cpu_lane(message: str, text: str, cpu: str) -> None:
    assert _lanes(message, text)[0]["cpu"] == cpu


@pytest.mark.parametrize("message, cpu, tagged", [
    ("Input type (torch.cuda.HalfTensor) and weight type (torch.cuda.FloatTensor) should be the same", "unsupported",
     False),  # one device, two dtypes: an fp16 run's mismatch
    ("Input type (c10::Half) and bias type (float) should be the same", "unsupported", False),
    ("Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same", "passes", True),
    ("Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same", "passes", True),
    ("Input type (torch.cuda.FloatTensor) and weight type", "passes", True),  # the weight's type cut off
])
def test_a_convs_input_and_weight_types_are_a_device_error_only_on_two_devices(message: str, cpu: str,
                                                                              tagged: bool) -> None:
    lanes, is_tagged = _lanes(message)
    assert (lanes["cpu"].split(":")[0], is_tagged) == (cpu, tagged)
