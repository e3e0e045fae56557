"""Fix round E (fixlanes2): the lanes of an error cuDNN itself raises (only a CUDA run calls cuDNN; the CPU kernels take
the same call) and its device-placement tag; the blame of a library's copy inside the project's checkout (its fork);
the array libraries a short listing states pinned beside the package; a torch 1.x wording left as the torch pin to
fill in.

The reports are made up, each of a shape seen across projects (not one project's text)."""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._expect import DEVICE_BOUND_GUESSES, _expectations

# cuDNN's own checks of how it is called: an RNN's backward in eval mode, a dropout state, a packed sequence.
CUDNN_CHECKS = ("cudnn RNN backward can only be called in training mode",
                "cuDNN RNN only supports inputs of dtype Float, Half or Double",
                "CuDNN: the dropout state must be set before the RNN runs")


def _report(message: str) -> str:
    """A continual-learning plugin computing importances with the model in eval mode: a fenced trace, cut paths."""
    return f"""Source: https://github.com/someorg/replaylab/issues/88
# Importance computation fails for LSTM models

When I train an LSTM with the importance plugin on the GPU the second experience fails:

```
  File "/home/u/replaylab/replaylab/training/plugins/importance.py", line 123, in compute_importances
    loss.backward()
  File "/opt/env/lib/python3.9/site-packages/torch/_tensor.py", line 255, in backward
    torch.autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)
  File "/opt/env/lib/python3.9/site-packages/torch/autograd/__init__.py", line 147, in backward
    Variable._execution_engine.run_backward(
RuntimeError: {message}
```
"""


@pytest.mark.parametrize("message", CUDNN_CHECKS)
def test_an_error_cudnn_raises_passes_on_the_cpu_and_is_tagged_device_bound(message: str) -> None:
    lanes, guess = _expectations("RuntimeError", message)
    assert lanes["cpu"] == "passes" and lanes["cuda"] == "reproduces"
    assert lanes["cuda-sim"].startswith("unsupported: ") and "cuDNN" in lanes["cuda-sim"]
    assert guess in DEVICE_BOUND_GUESSES and "cuDNN" in guess


def test_a_drafted_cudnn_report_expects_cpu_passes_and_is_tagged() -> None:
    draft = draft_case("replaylab-88", parse_report(_report(CUDNN_CHECKS[0])), "replaylab-88.txt")
    data = yaml.safe_load(draft.case_yaml)
    assert data["variants"]["buggy"]["expect"]["cpu"] == "passes"
    assert "device-placement" in data["tags"]
    assert "cuDNN-only" in draft.case_yaml


@pytest.mark.parametrize("message", [
    "cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",  # the runtime's error: a GPU runtime error, untagged
    "CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input.",
])
def test_the_cudnn_runtime_status_stays_a_gpu_runtime_error(message: str) -> None:
    lanes, guess = _expectations("RuntimeError", message)
    assert lanes["cpu"] == "passes" and guess not in DEVICE_BOUND_GUESSES


@pytest.mark.parametrize("message", [
    # torch's op name in a placement message is no cuDNN check: a device error, its own lanes
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking "
    "argument for argument weight in method wrapper_cudnn_convolution)",
    "module 'torch.backends.cudnn' has no attribute 'allow_tf32'",  # a module path: every lane
])
def test_cudnn_inside_a_name_is_no_cudnn_check(message: str) -> None:
    assert "cuDNN-only" not in _expectations("RuntimeError", message)[1]


# A project's own fork of a library, copied into its checkout (not installed): the frames under the checkout's
# `<lib>/...` folder are the project's code.
_FORK = """Source: https://github.com/someorg/VisionChat/issues/20
# Error running with two GPUs

```
Traceback (most recent call last):
  File "/home/u/VisionChat/scripts/chat.py", line 123, in generate_reply
    out = model(
  File "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
  File "{path}/models/llama/modeling_llama.py", line 617, in forward
    hidden = embeds + (0. * image_features).sum()
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cuda:3!
```
"""


def _drafted_fork(path: str) -> tuple[str, dict[str, Any], str]:
    draft = draft_case("visionchat-20", parse_report(_FORK.format(path=path)), "visionchat-20.txt")
    data = yaml.safe_load(draft.case_yaml)
    return draft.culprit, data, " ".join(draft.notes)


@pytest.mark.parametrize("path", ["/home/u/VisionChat/transformers", "/home/u/VisionChat-main/transformers"])
def test_a_library_copied_into_the_projects_checkout_is_the_projects_code(path: str) -> None:
    culprit, data, text = _drafted_fork(path)
    assert culprit == "visionchat"
    assert str(data["title"]).startswith("visionchat generate_reply: ")
    pins = " ".join((*data["requires"], *data["variants"]["buggy"]["requires"]))
    assert "transformers" not in pins  # the fork ships with the project's commit
    assert "copied into a checkout" in text


@pytest.mark.parametrize("path", [
    "/opt/conda/lib/python3.10/site-packages/transformers",  # the installed library
    "/home/u/OtherProject/transformers",  # a checkout of another repository than the link's
])
def test_an_installed_library_or_another_checkout_stays_the_library(path: str) -> None:
    assert _drafted_fork(path)[0] == "transformers"


def test_the_repositorys_own_package_in_its_checkout_is_no_copy() -> None:
    report = _FORK.replace("someorg/VisionChat", "someorg/OpenNMT-py").format(path="/home/u/OpenNMT-py/onmt")
    draft = draft_case("opennmt-20", parse_report(report), "opennmt-20.txt")
    assert not any("copied into a checkout" in note for note in draft.notes)


# A bug form's environment listing the array/table libraries beside the package (a `datasets-cli env`-style list).
_LISTED = """Source: https://github.com/someorg/tablekit/issues/46
# with_format("torch") fails on string columns

```
Traceback (most recent call last):
  File "/home/u/run.py", line 9, in <module>
    for batch in loader:
  File "/opt/env/lib/python3.10/site-packages/tablekit/formatting/torch_formatter.py", line 55, in _tensorize
    if value.dtype == object:
AttributeError: 'str' object has no attribute 'dtype'
```

## Environment info
- `tablekit` version: 2.3.2
- Python version: 3.10.4
- PyArrow version: 8.0.0
- Pandas version: 1.4.3
{more}"""


def test_the_array_libraries_a_short_listing_states_are_pinned_beside_the_package() -> None:
    data = yaml.safe_load(draft_case("tablekit-46", parse_report(_LISTED.format(more="")), "t.txt").case_yaml)
    assert {"pyarrow==8.0.0", "pandas==1.4.3"} <= set(data["requires"])
    assert data["variants"]["buggy"]["requires"] == ["tablekit==2.3.2"]


def test_a_whole_freeze_pins_none_of_its_array_libraries() -> None:
    freeze = "".join(f"- pkg{i} version: 1.{i}.0\n" for i in range(20))
    report = parse_report(_LISTED.format(more=freeze))
    assert len(report.environment.pins) > 20  # the freeze is read as pins
    data = yaml.safe_load(draft_case("tablekit-46", report, "t.txt").case_yaml)
    assert not any(pin.startswith(("pyarrow", "pandas")) for pin in data["requires"])


# torch 1.x's wording of a device string it cannot parse lists device types torch 2 no longer knows (msnpu).
_DEVICE_STRING = """Source: https://github.com/someorg/fedlab/issues/15
# main.py fails at start

```
Traceback (most recent call last):
  File "src/federated_main.py", line 35, in <module>
    torch.cuda.set_device(args.gpu)
  File "/opt/env/lib/python3.7/site-packages/torch/cuda/__init__.py", line 263, in set_device
    device = _get_device_index(device)
RuntimeError: Expected one of {types} device type at start of device string: 0
```
"""


def test_an_older_torchs_device_list_in_the_message_leaves_the_torch_pin_to_fill_in() -> None:
    report = parse_report(_DEVICE_STRING.format(types="cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu"))
    torch_pin = yaml.safe_load(draft_case("fedlab-15", report, "f.txt").case_yaml)["requires"][0]
    assert torch_pin.startswith("FILL-IN: ") and "msnpu" in torch_pin and "older torch" in torch_pin


def test_the_current_torchs_device_list_keeps_the_torch_pin() -> None:
    report = parse_report(_DEVICE_STRING.format(types="cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, "
                                                      "fpga, maia, xla, lazy, vulkan, mps, meta, hpu, mtia, "
                                                      "privateuseone"))
    assert yaml.safe_load(draft_case("fedlab-15", report, "f.txt").case_yaml)["requires"][0] == "torch==2.13.0"


@pytest.mark.parametrize("message", [
    "Expected all tensors to be on the same device, but got tensors is on cpu, different from other tensors on xpu:0 "
    "(when checking argument in method wrapper_XPU_cat)",
    "Expected all tensors to be on the same device, but found at least two devices, npu:0 and cpu!",
])
def test_a_device_error_on_another_vendors_accelerator_needs_that_accelerator(message: str) -> None:
    lanes, guess = _expectations("RuntimeError", message)
    assert lanes["cpu"] == "passes" and guess in DEVICE_BOUND_GUESSES
    assert all(lanes[lane].startswith("unsupported: ") and "another vendor" in lanes[lane]
               for lane in ("cuda", "cuda-sim"))


def test_a_cuda_device_error_stays_a_placement_error_on_the_cuda_lanes() -> None:
    message = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    assert _expectations("RuntimeError", message)[0]["cuda"] == "reproduces"
