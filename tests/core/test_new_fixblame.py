"""Fix round D (fixblame): the blame of a report that pastes only a fragment of an installed library's frames while it
is filed on another project (the library ran the tensors the project handed it), never when it is filed on the
library, the library raised its own check, or the error is about the library's own state; no skeleton import guessed
from a repository's name; the cpu lane of an error raised inside a compiled extension's op.

The reports are made up, each of a shape seen across projects (not one project's text)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._expect import DEVICE_BOUND_GUESSES, _expectations
from harness.cases._load import load_case
from tests.core.test_new import fill_in

DTYPE = "expected mat1 and mat2 to have the same dtype, but got: float != c10::BFloat16"
PLACED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"

# Frames of an installed library only: its op on the tensors it was handed (a dtype mismatch), its own check, its
# own buffer indexed by the caller's tensor, and its module passing the caller's input to torch's layer.
_LIBRARY_OP = """  File "/opt/env/lib/python3.11/site-packages/fastshard/zero/linear.py", line 57, in forward
    output = input.matmul(weight.t())
"""
_LIBRARY_CHECK = """  File "/opt/env/lib/python3.11/site-packages/fastshard/zero/linear.py", line 51, in forward
    assert input.dtype == weight.dtype, "expected the same dtype"
"""
_LIBRARY_BUFFER = """  File "/opt/env/lib/python3.11/site-packages/fastshard/schedulers/noise.py", line 290, in add_noise
    scale = self.alphas[timesteps] ** 0.5
"""
_LIBRARY_MODULE = """  File "/opt/env/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1750, in _call_impl
    return forward_call(*args, **kwargs)
  File "/opt/env/lib/python3.11/site-packages/fastshard/models/embeddings.py", line 1305, in forward
    sample = self.linear_1(sample)
  File "/opt/env/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1750, in _call_impl
    return forward_call(*args, **kwargs)
  File "/opt/env/lib/python3.11/site-packages/torch/nn/modules/linear.py", line 125, in forward
    return F.linear(input, self.weight, self.bias)
"""
_LIBRARY_LOOP = """  File "/opt/env/lib/python3.11/site-packages/fastshard/trainer.py", line 1662, in train
    return inner_training_loop(
"""
# A script's own frame above the library's: the traceback is not a fragment.
_SCRIPT = """  File "/home/u/moe-lab/finetune.py", line 40, in <module>
    trainer.train()
"""


def _fragment(repo: str, frames: str = _LIBRARY_OP, message: str = DTYPE, exception_line: bool = True) -> str:
    """A report filed on ``someorg/<repo>`` pasting a fenced fragment of frames and the error line (else the title
    carries it)."""
    error = f"RuntimeError: {message}" if exception_line else ""
    title = "Finetune with the sharding library: type mismatch" if exception_line else f"RuntimeError: {message}"
    return f"""Source: https://github.com/someorg/{repo}/issues/35
# {title}

I ran the released fine-tuning code with the sharding library. The error:
```
{frames}{error}
```

I am not sure if this is a bug in the library or my usage.
"""


def test_a_library_fragment_with_a_dtype_mismatch_blames_the_project_the_report_is_filed_on() -> None:
    draft = draft_case("moe", parse_report(_fragment("moe-lab")))
    assert draft.culprit == "moe-lab"
    assert any("a fragment cut before any caller" in note and "moe-lab's bug" in note for note in draft.notes)
    assert "fastshard" in draft.case_yaml  # the library stays pinned


def test_a_library_module_passing_the_caller_s_input_to_a_torch_layer_blames_the_project() -> None:
    assert draft_case("emb", parse_report(_fragment("tunelab", _LIBRARY_MODULE, PLACED))).culprit == "tunelab"


@pytest.mark.parametrize(("repo", "frames", "message", "exception_line"), [
    ("fastshard", _LIBRARY_OP, DTYPE, True),  # filed on the library
    ("FastShard-Python", _LIBRARY_OP, DTYPE, True),  # the library's repository under another spelling
    ("moe-lab", _LIBRARY_CHECK, DTYPE, True),  # the library's own assert
    ("moe-lab", _LIBRARY_BUFFER, PLACED, True),  # a placement error on the library's own line: its buffer
    ("moe-lab", _SCRIPT + _LIBRARY_OP, DTYPE, True),  # not a fragment: a script's frame is shown
    ("moe-lab", _LIBRARY_OP, "list index out of range", True),  # not about the tensors it was handed
    ("moe-lab", _LIBRARY_OP, DTYPE, False),  # no error line under the frames: where it raised is not shown
    ("moe-lab", _LIBRARY_LOOP, DTYPE, True),  # the library's loop innermost: it only called the code that raised
])
def test_a_library_fragment_keeps_the_library_blamed_in_other_shapes(repo: str, frames: str, message: str,
                                                                      exception_line: bool) -> None:
    report = parse_report(_fragment(repo, frames, message, exception_line))
    assert draft_case("frag", report).culprit == "fastshard"


# --- the skeleton's imports: only a module the report shows -----------------------------------------------------------

def _linked_only(repo: str, code: str = "") -> str:
    """A report filed on ``someorg/<repo>`` whose frames are torch's only (the link names the project)."""
    return f"""Source: https://github.com/someorg/{repo}/issues/4
# translation training crashes

{code}

```
Traceback (most recent call last):
  File "/opt/env/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1750, in _call_impl
    return forward_call(*args, **kwargs)
  File "/opt/env/lib/python3.11/site-packages/torch/nn/functional.py", line 2551, in embedding
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
IndexError: index out of range in self
```
"""


def _imported(repro: str) -> list[str]:
    return [line.split()[1] for line in repro.splitlines() if line.startswith("import ")]


def test_no_import_is_guessed_from_the_repository_s_name() -> None:
    """OpenNMT-py's package is onmt: ``import opennmt_py`` would raise before the call; the author writes it."""
    draft = draft_case("nmt", parse_report(_linked_only("OpenNMT-tk-py")), released=lambda name: True)
    assert draft.culprit == "opennmt-tk-py"
    assert _imported(draft.repro_py) == ["argparse", "sys", "torch"]


def test_the_import_the_report_s_own_code_writes_is_kept() -> None:
    code = "```python\nimport seqkit\nmodel = seqkit.Translator()\n```"
    draft = draft_case("nmt", parse_report(_linked_only("seqkit", code)), released=lambda name: True)
    assert "seqkit" in _imported(draft.repro_py)


# --- lanes: an op of a compiled (CUDA-only) extension ----------------------------------------------------------------

def _extension_report(source: str, message: str = "expected scalar type Float but found BFloat16") -> str:
    """A research checkout's autograd function calling its compiled extension's op, the error raised inside it."""
    return f"""Source: https://github.com/somelab/deformnet/issues/24
# bf16 training fails

DeformNet/functions/deform_func.py", line 125, in backward
{source}
RuntimeError: {message}
"""


@pytest.mark.parametrize("source", ["ext.deform_backward(*args)", "grad = _ext.rasterize_backward(ctx.raster)",
                                    "out = ext_module.deform_conv_forward(input, offset)", "_C.render(x)"])
def test_an_error_inside_a_compiled_extension_s_op_is_not_a_cpu_reproduction(source: str, tmp_path: Path) -> None:
    draft = draft_case("ext", parse_report(_extension_report(source)))
    data = yaml.safe_load(draft.case_yaml)
    expect = data["variants"]["buggy"]["expect"]
    assert expect["cpu"].startswith("unsupported: a guess — the failing call is a compiled extension's op")
    assert (expect["cuda"], expect["cuda-sim"].split(":")[0]) == ("reproduces", "unsupported")
    # the kinds load once the draft is filled (schema and validate's checks)
    folder = tmp_path / "ext"
    folder.mkdir()
    (folder / "case.yaml").write_text(draft.case_yaml)
    (folder / "repro.py").write_text(draft.repro_py)
    fill_in(folder)
    cpu = load_case(folder).variants["buggy"].expect["cpu"]
    assert (cpu.kind, "compiled extension" in cpu.reason) == ("unsupported", True)


@pytest.mark.parametrize("source", ["return torch._C._nn.linear(input, weight, bias)", "y = self.context.run(x)",
                                    "out = model.forward(x)"])
def test_torch_s_own_bindings_and_plain_calls_are_no_extension_op(source: str) -> None:
    lanes, guess = _expectations("RuntimeError", "expected scalar type Float but found BFloat16", source)
    assert guess != "a compiled extension's error"
    assert lanes["cpu"] == "reproduces"


def test_the_cuda_runtime_s_invalid_device_ordinal_is_a_gpu_runtime_error_the_cpu_never_reaches() -> None:
    """A config's `cuda:1` on a one-GPU host: the CUDA runtime raises it in `.to(device)`; with no GPU the code's
    device choice falls to the CPU. The assert form of a lazy CUDA init keeps the device-index reason."""
    lanes, guess = _expectations("RuntimeError", "CUDA error: invalid device ordinal")
    assert lanes == {"cpu": "passes", "cuda": "reproduces", "cuda-sim": lanes["cuda-sim"]}
    assert lanes["cuda-sim"].startswith("unsupported: ") and "device index" in guess
    assert guess in DEVICE_BOUND_GUESSES  # still tagged device-placement
    lanes, _ = _expectations("RuntimeError", "CUDA call failed lazily at initialization with error: device >= 0 && "
                                             "device < num_gpus INTERNAL ASSERT FAILED")
    assert lanes["cpu"].startswith("unsupported: the message is about a CUDA device index")


def test_lanes_read_the_title_s_whole_message_when_the_error_line_is_cut_inside_it() -> None:
    """The stored error line stops after the first device ("expected device cuda:1"); the title holds the whole
    message naming two GPUs: the lanes are the two-GPU ones. A title that is not the message changes nothing."""
    report = """Source: https://github.com/somelab/ocrnet/issues/2
# RuntimeError: expected device cuda:1 but got device cuda:0

training on two cards fails
  File "/home/u/ocrnet/modules/encoder.py", line 49, in forward
    src = self.dropout((src * self.scale) + self.pos(pos))
RuntimeError: expected device cuda:1
"""
    expect = yaml.safe_load(draft_case("ocr", parse_report(report)).case_yaml)["variants"]["buggy"]["expect"]
    assert (expect["cpu"], expect["cuda"].split(":")[0]) == ("passes", "unsupported")
    other = report.replace("# RuntimeError: expected device cuda:1 but got device cuda:0", "# training crashes")
    expect = yaml.safe_load(draft_case("ocr", parse_report(other)).case_yaml)["variants"]["buggy"]["expect"]
    assert (expect["cpu"], expect["cuda"]) == ("passes", "reproduces")


def test_a_dtype_error_under_deepspeed_says_its_distributed_setup_in_the_cpu_reason() -> None:
    """DeepSpeed's frames (its ZeRO linear) with a dtype mismatch: the run was on GPUs under a distributed engine;
    the cpu lane's reason says so. Without DeepSpeed the reason stays the device's kernels only."""
    report = _fragment("moe-lab").replace("fastshard/", "deepspeed/runtime/")
    cpu = yaml.safe_load(draft_case("ds", parse_report(report)).case_yaml)["variants"]["buggy"]["expect"]["cpu"]
    assert cpu.startswith("unsupported: a guess — the report ran on the GPU under DeepSpeed")
    assert "distributed setup" in cpu
    lanes, _ = _expectations("RuntimeError", DTYPE, ran_on="gpu")
    assert "DeepSpeed" not in lanes["cpu"]
