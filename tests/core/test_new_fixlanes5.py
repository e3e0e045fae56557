"""Fix round H (fixlanes5): older torch wordings of a mismatch between two GPUs.

torch < 1.8 words it "... to have the same device as tensor for argument #2 'weight'; but device 0 does not equal 1
(while checking arguments for cudnn_convolution)", torch 0.x's THC "arguments are located on different GPUs": neither
names "cuda:N", yet both need two GPUs, like "found at least two devices, cuda:0 and cuda:1". A CPU tensor there is
device -1, and a message cut before its numbers names no two GPUs: both stay a one-GPU placement error.

The reports are made up, each of a shape seen across projects (not one project's text)."""

from __future__ import annotations

import sys

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case

_REPORT = """Source: https://github.com/someorg/someproject/issues/7
# error with the second GPU

I run `python train.py --gpu 1` and it fails:

```
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    main()
  File "/home/u/someproject/models/net.py", line 120, in forward
    out = self.conv(x)
RuntimeError: {message}
```
"""
_SAME_DEVICE = "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; "


def _lanes(message: str) -> tuple[tuple[str, str, str], bool]:
    """Each buggy lane's kind (its first word) and whether the draft tags device-placement."""
    data = yaml.safe_load(draft_case("made-up", parse_report(_REPORT.format(message=message))).case_yaml)
    expect = data["variants"]["buggy"]["expect"]
    kinds = tuple(str(expect[lane]).split(":")[0] for lane in ("cpu", "cuda", "cuda-sim"))
    return (kinds[0], kinds[1], kinds[2]), "device-placement" in data["tags"]


@pytest.mark.parametrize("message", [
    _SAME_DEVICE + "but device 0 does not equal 1 (while checking arguments for cudnn_convolution)",
    _SAME_DEVICE + "but device 2 does not equal 0 (while checking arguments for cudnn_convolution)",
    "arguments are located on different GPUs at /pytorch/aten/src/THC/generic/THCTensorMathPointwise.cu:233",
])
def test_an_old_wording_of_two_gpus_needs_two_gpus(message: str) -> None:
    kinds, tagged = _lanes(message)
    assert kinds == ("passes", "unsupported", "unsupported") and tagged


@pytest.mark.parametrize("message", [
    _SAME_DEVICE + "but device 1 does not equal -1 (while checking arguments for cudnn_convolution)",
    _SAME_DEVICE + "but device 0 does not equal 0 (while checking arguments for cudnn_convolution)",
    _SAME_DEVICE.rstrip("; "),
])
def test_a_cpu_tensor_or_no_second_index_stays_a_one_gpu_placement_error(message: str) -> None:
    kinds, tagged = _lanes(message)
    assert kinds == ("passes", "reproduces", "reproduces") and tagged


# A stated torch: pinned when this Python has a wheel of it (torch 2.0 onwards for Python 3.11), else a FILL-IN that
# names it and says why it cannot be pinned.
_STATED = """Source: https://github.com/someorg/someproject/issues/9
# crash in training

Environment:
- PyTorch version: {torch}
- Python version: 3.11

```
Traceback (most recent call last):
  File "/home/u/someproject/train.py", line 40, in <module>
    main()
  File "/home/u/someproject/train.py", line 12, in main
    loss = model(x).sum()
RuntimeError: mat1 and mat2 shapes cannot be multiplied (4x3 and 5x6)
```
"""


def _torch_requirement(torch: str) -> str:
    data = yaml.safe_load(draft_case("made-up", parse_report(_STATED.format(torch=torch))).case_yaml)
    return str(next(pin for pin in [*data["requires"], *data["variants"]["buggy"]["requires"]] if "torch" in pin))


_ON_311 = pytest.mark.skipif(sys.version_info[:2] != (3, 11), reason="the wheel table's row for Python 3.11")


@_ON_311
@pytest.mark.parametrize(("stated", "pinned"), [("2.0.1+cu118", "torch==2.0.1"), ("2.5", "torch==2.5"),
                                                ("2.13.0", "torch==2.13.0")])
def test_a_stated_torch_with_a_wheel_here_is_pinned(stated: str, pinned: str) -> None:
    assert _torch_requirement(stated) == pinned


@_ON_311
@pytest.mark.parametrize("stated", ["1.6.0", "1.13.1+cu117", "0.4.1"])
def test_a_stated_torch_without_a_wheel_here_is_a_fill_in_that_says_why(stated: str) -> None:
    requirement = _torch_requirement(stated)
    release = stated.split("+")[0]
    assert requirement.startswith("FILL-IN: ") and f"torch=={release} has no wheel for Python" in requirement


def test_a_stated_pre_release_keeps_the_torch_that_runs_here() -> None:
    assert _torch_requirement("2.6.0.dev20241112") == "torch==2.13.0"
