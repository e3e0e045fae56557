"""graded22 (tests/fixtures/graded22), held out (issue 21 §1): ten real reports drafted by `new` on main 4ca186d and
graded by hand in EXPECTED.md's Results, the round's final held-out grading. HELD_OUT_22 asserts what is drafted now,
known misses marked, so a change to any of them is seen; MAINTAINER_22 encodes EXPECTED.md's accepted values, graded
strictly as its Results, and the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out18 import TWO_GPUS
from tests.core.test_new_reports import DEV_LANES, HUB, TWO_AT

GRADED22 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded22"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by hand):
# no project for the six checkouts; PyPI's easyedit links no repository; PyPI's sentimentanalysis is another project.
NOT_RELEASED_22 = {"brevitas-examples", "cvt2distilgpt2", "neural-bounding", "pytorch-connectomics", "scaleformer",
                   "sub-sentence-encoder"}
INDEX_URLS_22: dict[str, tuple[str, ...]] = {
    "easyedit": (), "sentimentanalysis": ("https://github.com/arunkottilukkal/AnalyseSentiment",)}
DEVICE = {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
EVERYWHERE = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
CPU_CUDA0 = f"{TWO_AT}cpu and cuda:0!"
CUDA0_CPU = f"{TWO_AT}cuda:0 and cpu!"
ADDMM = f"{CPU_CUDA0} (when checking argument for argument mat1 in method wrapper_addmm)"
RANK1 = f"{TWO_AT}cpu and cuda:1! (when checking argument for argument index in method wrapper_CUDA__index_select)"
SELECT = f"{CUDA0_CPU} (when checking argument for argument index in method wrapper__index_select)"
CUDA_SELECT = f"{CUDA0_CPU} (when checking argument for argument index in method wrapper_CUDA__index_select)"
CAT = f"{TWO_AT}cuda:1 and cuda:0! (when checking argument for argument tensors in method wrapper_CUDA_cat)"
NO_MODEL = "'Trainer' object has no attribute 'model'"
LAZY = "CUDA call failed lazily at initialization with error: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED"
CUDA_CONTEXT = f"{LAZY} at \"../aten/src/ATen/cuda/CUDAContext.cpp\":50, please report a bug to PyTorch. "
DEVICE_STRING = ("Expected one of cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu device type at start of device "
                 "string: train")
CHEXBERT = "[Errno 2] No such file or directory: 'checkpoints/stanford/chexbert/chexbert.pth'"
HELD_OUT_22 = {
    # known miss: S judgement (the notebook named, the report's `trainer(reg, ...)` call not carried)
    "alibi-detect-439": ("RuntimeError", ADDMM, "alibi-detect",
                         "alibi-detect cd_model_unc_cifar10_wine.ipynb: Expected all", DEVICE, True,
                         "pin the alibi-detect release", 0),
    # known miss: none of B/P/F (brevitas_examples ships in brevitas); T right since fixtitle3 (trainer.py __init__)
    "brevitas-126": ("AttributeError", NO_MODEL, "brevitas", f"brevitas_examples trainer.py __init__: {NO_MODEL}",
                     EVERYWHERE, False, "brevitas==X.Y.Z", 1),
    # known miss: S judgement (Lightning's _teardown given as where it failed; the CheXbert torch.load not named)
    "cvt2distilgpt2-13": ("FileNotFoundError", CHEXBERT, "cvt2distilgpt2", f"cvt2distilgpt2 stages: {CHEXBERT}",
                          EVERYWHERE, False, f"cvt2distilgpt2 {reports.GIT}aehrc/cvt2distilgpt2@<commit>", 3),
    # known miss: L judgement (cpu unsupported with fixlanes' reason); T right since fixtitle3 (the cut path
    # `at "../aten/src` -> " ...")
    "easyedit-40": ("DeferredCudaCallError", CUDA_CONTEXT, "easyedit", f"easyedit from_hparams: {LAZY} ...",
                    {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "unsupported"}, True,
                    f"easyedit {reports.GIT}zjunlp/EasyEdit@<commit>", 1),
    # known miss: S (launch_agent); T, B, P, F right since fixlanes (LLaMA-Factory's run_dpo called transformers'
    # Trainer.train, the loop only: the checkout's project blamed, not transformers)
    "llamafactory-4608": ("RuntimeError", RANK1, "llamafactory", f"llamafactory run_dpo: {RANK1}", DEVICE, True,
                          f"llamafactory {reports.GIT}hiyouga/LlamaFactory@<commit>", 3),
    "neural-bounding-2": ("RuntimeError", CUDA0_CPU, "neural-bounding", f"neural-bounding OElli.py: {CUDA0_CPU}",
                          DEVICE, True, f"neural-bounding {reports.GIT}wenxin-liu/neural_bounding@<commit>", 0),
    # known misses: T (no API), S (scripts/main.py's mode line not named); fixframe2: the title's " in
    # configs/CREMI-Synaptic-Cleft.yaml" no longer in the message (M right); fixlanes: a device string no host parses,
    # all reproduce, no tag (L and D right)
    "pytorch-connectomics-40": ("RuntimeError", DEVICE_STRING,
                                "pytorch-connectomics",
                                f"pytorch-connectomics main.py: {DEVICE_STRING}", EVERYWHERE, False,
                                f"pytorch-connectomics {reports.GIT}PytorchConnectomics/pytorch_connectomics@<commit>",
                                0),
    # known misses: T (no API), S judgement (fixframe2: the body's message line read under the title's class: M, L
    # and D right)
    "scaleformer-5": ("RuntimeError", CAT, "scaleformer", f"scaleformer: {TWO_AT}cuda:1", TWO_GPUS, True,
                      f"scaleformer {reports.GIT}BorealisAI/scaleformer@<commit>", 0),
    # known misses: T judgement (the reporter's "analize.py" for analyze.py), S judgement (the device lines dropped)
    "sentimentanalysis-31": ("RuntimeError", SELECT, "sentimentanalysis", f"sentimentanalysis analize.py: {SELECT}",
                             DEVICE, True, f"sentimentanalysis {reports.GIT}barissayil/SentimentAnalysis@<commit>", 0),
    # known misses: T (no API: PropPairModelInput, step #3), S
    "sub-sentence-encoder-1": ("RuntimeError", CUDA_SELECT, "sub-sentence-encoder", f"sub-sentence-encoder data_utils.py: {CUDA0_CPU} (... wrapper_CUDA__index_select)",
                               DEVICE, True, f"{reports.GIT}schen149/sub-sentence-encoder@490d3d0", 0),
}


def _title(project: str, apis: str, message: str, tail: str = "") -> str:
    """A maintainer's title: the project, an accepted API before the colon, the message (a tail it may keep)."""
    return rf"^(?i:{project}) [^:]*(?:{apis})[^:]*: {re.escape(message)}{tail}$"


def _method(wrapper: str) -> str:
    return rf"(?: \(.*{wrapper}\))?"


# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list and the message, with no junk (a cut path, a config-file suffix, a misspelt script) after or in it.
MAINTAINER_22 = {
    "alibi-detect-439": (_title(r"alibi[-_ ]detect", r"\btrainer\b|cd_model_unc_cifar10_wine(?:\.ipynb)?", CPU_CUDA0,
                                _method("wrapper_addmm")), "RuntimeError", ADDMM, {"alibi-detect"}, None, None,
                         DEV_LANES, None, (), False),
    "brevitas-126": (_title(r"brevitas(?:_examples)?", r"Trainer\.__init__|__init__|trainer\.py|brevitas_bnn_pynq_train|"
                            r"load_state_dict", NO_MODEL), "AttributeError", NO_MODEL, {"brevitas"}, None, None,
                     {"cpu": {"reproduces"}}, None, ("3.6",), False),
    "cvt2distilgpt2-13": (_title("cvt2distilgpt2", r"stages\.py|\bstages\b|trainer\.fit", CHEXBERT), "FileNotFoundError",
                          CHEXBERT, {"cvt2distilgpt2"}, f"{HUB}aehrc/cvt2distilgpt2@", f"{HUB}aehrc/cvt2distilgpt2",
                          {"cpu": {"reproduces"}}, None, ("3.8",), False),
    "easyedit-40": (_title("EasyEdit", r"BaseEditor\.__init__|from_hparams|editor\.py|edit\.py|test_ROME_GPTJ|"
                           r"from_pretrained", LAZY, r"(?: \.\.\.| at \"\.\./aten/src/ATen/cuda/CUDAContext\.cpp\":50.*)?"),
                    "DeferredCudaCallError", CUDA_CONTEXT, {"easyedit"}, f"{HUB}zjunlp/EasyEdit@",
                    f"{HUB}zjunlp/EasyEdit", {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}, None, (), False),
    "llamafactory-4608": (rf"^(?i:trl|LLaMA-Factory|llamafactory) [^:]*(?:DPOTrainer|run_dpo|workflow\.py|run_exp|"
                          rf"train\.py|trainer\.train)[^:]*: {re.escape(TWO_AT)}cpu and cuda:[01]!"
                          rf"{_method('wrapper_CUDA__index_select')}$", "RuntimeError", RANK1,
                          {"trl", "llamafactory", "llama-factory"}, None, None, DEV_LANES, None, ("3.10",), False),
    "neural-bounding-2": (_title(r"neural[-_]bounding", r"OElli(?:\.py)?", CUDA0_CPU), "RuntimeError", CUDA0_CPU,
                          {"neural-bounding"}, f"{HUB}wenxin-liu/neural_bounding@", f"{HUB}wenxin-liu/neural_bounding",
                          DEV_LANES, None, (), False),
    "pytorch-connectomics-40": (_title(r"pytorch[-_]connectomics", r"scripts/main\.py|main\.py|\bmode\b", DEVICE_STRING),
                                "RuntimeError", DEVICE_STRING, {"pytorch-connectomics"},
                                f"{HUB}PytorchConnectomics/pytorch_connectomics@",
                                f"{HUB}PytorchConnectomics/pytorch_connectomics", {"cpu": {"reproduces"}}, None, (),
                                False),
    "scaleformer-5": (_title("scaleformer", r"torch\.cat|not stated|multi-scale", f"{TWO_AT}cuda:1 and cuda:0!",
                             _method("wrapper_CUDA_cat")), "RuntimeError", CAT, {"scaleformer"},
                      f"{HUB}BorealisAI/scaleformer@", f"{HUB}BorealisAI/scaleformer",
                      {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, (), False),
    "sentimentanalysis-31": (_title(r"(?:barissayil/)?SentimentAnalysis", r"analyze\.py|model\.to\(device\)", CUDA0_CPU,
                                    _method("wrapper__index_select")), "RuntimeError", SELECT, {"sentimentanalysis"},
                             f"{HUB}barissayil/SentimentAnalysis@", f"{HUB}barissayil/SentimentAnalysis", DEV_LANES,
                             None, (), False),
    "sub-sentence-encoder-1": (_title("sub-sentence-encoder", r"PropPairModelInput|data_utils\.py|step #?3", CUDA0_CPU,
                                      _method("wrapper_CUDA__index_select")), "RuntimeError", CUDA_SELECT,
                               {"sub-sentence-encoder"}, f"{HUB}schen149/sub-sentence-encoder@", None, DEV_LANES, None,
                               (), False),
}
# D, scored by hand in the 9-field variant only: the device-placement bugs (pytorch-connectomics' bad device string is
# an argument error every host shows). STATED_22: what the expectation asks beyond the columns, a reason for
# EasyEdit's cpu lane.
DEVICE_BOUND_22 = {name for name, row in HELD_OUT_22.items() if name not in {"brevitas-126", "cvt2distilgpt2-13",
                                                                             "pytorch-connectomics-40"}}
STATED_22: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "easyedit-40": {"L": lambda data: ":" in data["variants"]["buggy"]["expect"]["cpu"]},
}
GRADED22_FLOOR = 77  # of 80: 62 held out, main 4ca186d, this scorer; 62 by hand, strict; 66 lenient; 67 after
# fixframe2 and fixtitle3, 70 with fixenv2, 76 with fixlanes, 77 with fixtitle6 (pytorch-connectomics-40 T: the reply's
# "in the file scripts/main.py") (NOT held out: measured after fixing on these reports)


@pytest.fixture(autouse=True)
def _graded22_index(monkeypatch: pytest.MonkeyPatch) -> None:
    reports.answer_for(monkeypatch, NOT_RELEASED_22, INDEX_URLS_22)


@pytest.mark.parametrize("name", sorted(HELD_OUT_22))
def test_a_graded22_report_drafts_what_it_drafted_when_graded(name: str) -> None:
    draft, data = reports._graded(GRADED22, name)
    reports.assert_drafted(draft, data, HELD_OUT_22[name])


def test_graded22_is_tagged_device_bound_as_drafted() -> None:
    """D (scored by hand in the 9-field variant): 8 of 10 right when graded, pytorch-connectomics-40 and scaleformer-5
    wrong; 10 since fixframe2 (scaleformer-5's message read) and fixlanes (pytorch-connectomics-40 untagged)."""
    tagged = {name for name in HELD_OUT_22 if "device-placement" in reports._graded(GRADED22, name)[1]["tags"]}
    assert len(tagged ^ DEVICE_BOUND_22) <= 0, sorted(tagged ^ DEVICE_BOUND_22)


def test_the_twenty_second_held_out_set_scores_at_least_its_measured_fields() -> None:
    reports.assert_set_scores(GRADED22, MAINTAINER_22, HELD_OUT_22, STATED_22, GRADED22_FLOOR)
