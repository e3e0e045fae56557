"""graded29 (tests/fixtures/graded29), held out (issue 21 §1): ten real reports drafted by `new` on main f9fec9e and
graded by hand in EXPECTED.md's Results. HELD_OUT_29 asserts what is drafted now (scvi-tools-242 refused), known misses
marked, so a change to any of them is seen; MAINTAINER_29 encodes EXPECTED.md's accepted values, graded strictly as its
Results, and the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out22 import CUDA0_CPU, DEVICE, EVERYWHERE, _title
from tests.core.test_new_held_out26 import Drafter, _checkout
from tests.core.test_new_reports import DEV_LANES, HUB, TWO_AT, _pinned

GRADED29 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded29"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by hand):
# no project for the five checkouts (real-esrgan-707's misread name layer1 among them); PyPI's yolov7 links no
# repository; PyPI's secml-torch links only its documentation, which `new` takes for another project; PyPI's toolformer
# is xrsrke's (pypi.org's JSON, read by the grader).
NOT_RELEASED_29 = {"layer1", "robustdet", "rotateobjectdetection", "syndiff", "tud-rl"}
INDEX_URLS_29: dict[str, tuple[str, ...]] = {"yolov7": (),
                                             "secml-torch": ("https://secml-torch.readthedocs.io/en/latest/",),
                                             "toolformer": ("https://github.com/xrsrke/toolformer",)}
@pytest.fixture(name="drafted")
def graded29_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded29's drafts, with the index's answers for its names beside the other sets' (`_graded` reads them)."""
    reports.answer_for(monkeypatch, NOT_RELEASED_29, INDEX_URLS_29)
    return partial(reports._graded, GRADED29)


INDICES = "indices should be either on cpu or on the same device as the indexed tensor (cpu)"
MPS0_CPU = f"{TWO_AT}mps:0 and cpu!"
LSTM_DEVICE = ("Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor "
               "at cuda:0")
EMA = "'EMA' object has no attribute 'defaults'"
STATE_DICT = "Error(s) in loading state_dict"
GENERATOR = "Expected a 'cuda' device type for generator but found 'cpu'"
NUMPY = "can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first"
SCVI_NUMPY = "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
REFUSED_29 = "scvi-tools-242"


HELD_OUT_29: dict[str, tuple[Any, ...] | None] = {
    # state_dict keys no longer read as a module since fixenv4 (was `layer1` for T, B, P, F, S)
    "real-esrgan-707": ("RuntimeError", STATE_DICT, "real-esrgan", f"real-esrgan resume: {STATE_DICT}", EVERYWHERE, False,
                        "pin the real-esrgan release the report ran", 0),
    # known misses (T fixed by fixtitle5: train_robust.py), P (torch 2.1 stated: pinned after
    # fixlanes5), L judgement (cpu passes for the cpu run's generator error)
    "robustdet-15": ("RuntimeError", GENERATOR, "robustdet", f"robustdet train_robust.py: {GENERATOR}", DEVICE, True,
                     _checkout("robustdet", "IrisRainbowNeko/RobustDet"), 0),
    "rotateobjectdetection-27": ("RuntimeError", CUDA0_CPU, "rotateobjectdetection",
                                 f"rotateobjectdetection: {CUDA0_CPU}", DEVICE, True,
                                 _checkout("rotateobjectdetection", "XinzeLee/RotateObjectDetection"), 0),
    REFUSED_29: None,
    # T fixed by fixtitle5 (Trackers); P right since fixenv4 (the index's documentation site,
    # secml-torch.readthedocs.io, is the project's own page)
    "secml-torch-41": ("RuntimeError", MPS0_CPU, "secml-torch", f"secml-torch Trackers: {MPS0_CPU}", DEVICE, True,
                       "pin the secml-torch release the report ran", 0),
    "syndiff-23": ("AttributeError", EMA, "syndiff", f"syndiff load_state_dict: {EMA}", EVERYWHERE, False,
                   _checkout("syndiff", "icon-lab/SynDiff"), 3),
    "toolformer-6": ("RuntimeError", CUDA0_CPU, "toolformer", f"toolformer: {CUDA0_CPU}", DEVICE, True,
                     "toolformer==X.Y.Z", 0),
    "torchgeo-763": ("RuntimeError", CUDA0_CPU, "torchgeo", f"torchgeo transforms_gpu: {CUDA0_CPU}", DEVICE, True,
                     "torchgeo==X.Y.Z", 1),
    # fixtitle5: T right (the command's -a LSTMRecDQN); S names it
    "tud-rl-21": ("RuntimeError", LSTM_DEVICE, "tud-rl", f"tud-rl LSTMRecDQN: {LSTM_DEVICE}", DEVICE, True,
                  _checkout("tud-rl", "MarWaltz/TUD_RL"), 0),
    "yolov7-306": ("RuntimeError", INDICES, "yolov7", f"yolov7 build_targets: {INDICES}", DEVICE, True,
                   _checkout("yolov7", "WongKinYiu/yolov7"), 1),
}

ANY_GPU = {"cpu": {"passes"}, "cuda": {"reproduces", "unsupported"}, "cuda-sim": {"reproduces", "unsupported"}}
ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message (rotateobjectdetection-27 and toolformer-6 name no call: project
# and message). robustdet-15's message is the cpu run's generator error as drafted (the TypeError pairing is accepted
# too, but the scorer takes one message): its lane is then cpu reproduces.
MAINTAINER_29 = {
    "real-esrgan-707": (_title(r"real-?esrgan|basicsr", r"resum|load_state_dict|load_network|GAN training", STATE_DICT,
                               r"(?: \([^)]*\))?"), "RuntimeError", STATE_DICT, {"realesrgan", "real-esrgan", "basicsr"},
                        (None, f"{HUB}xinntao/Real-ESRGAN@"), None, ALL_REPRODUCE, None, (), False),
    "robustdet-15": (rf"^(?i:RobustDet) [^:]*(?:train_robust(?:\.py)?|VOC)[^:]*: (?:{re.escape(GENERATOR)}|"
                     rf"{re.escape(NUMPY)})$", "RuntimeError", GENERATOR, {"robustdet"},
                     f"{HUB}IrisRainbowNeko/RobustDet@", f"{HUB}IrisRainbowNeko/RobustDet", {"cpu": {"reproduces"}},
                     "2.1", (), False),
    "rotateobjectdetection-27": (rf"^(?i:RotateObjectDetection)(?: [^:]*)?: {re.escape(CUDA0_CPU)}$", "RuntimeError",
                                 CUDA0_CPU, {"rotateobjectdetection"}, f"{HUB}XinzeLee/RotateObjectDetection@",
                                 f"{HUB}XinzeLee/RotateObjectDetection", DEV_LANES, None, (), False),
    REFUSED_29: (_title(r"scvi[-_]tools|scvi", r"posterior\.py|get_latent|t_sne|t-SNE|tsne|entropy_batch_mixing",
                        SCVI_NUMPY), "TypeError", SCVI_NUMPY, {"scvi-tools", "scvi"},
                 f"{HUB}YosefLab/scVI@6937e0df9c4b37dad2bc6cef5f2d45f4a9ade656", None, DEV_LANES, "1.0.0", (), False),
    "secml-torch-41": (_title(r"secml[-_]torch|secmlt", r"[Tt]racker", MPS0_CPU), "RuntimeError", MPS0_CPU,
                       {"secml-torch", "secmlt"}, None, None, ANY_GPU, None, (), False),
    "syndiff-23": (_title("SynDiff", r"init_processes|train_syndiff|EMA\.py|load_state_dict|--resume", EMA),
                   "AttributeError", EMA, {"syndiff"}, f"{HUB}icon-lab/SynDiff@", f"{HUB}icon-lab/SynDiff",
                   ALL_REPRODUCE, None, ("3.9",), False),
    "toolformer-6": (rf"^(?i:toolformer)(?: [^:]*)?: {re.escape(CUDA0_CPU)}$", "RuntimeError", CUDA0_CPU,
                     {"toolformer"}, (None, f"{HUB}xrsrke/toolformer@"), None, DEV_LANES, None, (), False),
    "torchgeo-763": (_title("torchgeo", r"MinMaxNormalize|\bforward\b|transforms_gpu|transforms tutorial", CUDA0_CPU),
                     "RuntimeError", CUDA0_CPU, {"torchgeo"}, (None, f"{HUB}torchgeo/torchgeo@"), None, DEV_LANES,
                     None, (), False),
    "tud-rl-21": (_title(r"tud[-_]rl", r"LSTMRecDQN|python -m tud_rl|-t train", LSTM_DEVICE), "RuntimeError",
                  LSTM_DEVICE, {"tud-rl", "tud_rl"}, f"{HUB}MarWaltz/TUD_RL@", f"{HUB}MarWaltz/TUD_RL", DEV_LANES,
                  None, (), False),
    "yolov7-306": (_title("yolov7", r"build_targets|ComputeLossOTA|compute_loss_ota|\btrain\b|loss\.py", INDICES),
                   "RuntimeError", INDICES, {"yolov7"}, f"{HUB}WongKinYiu/yolov7@", f"{HUB}WongKinYiu/yolov7",
                   DEV_LANES, None, (), False),
}
# STATED_29: what the expectation asks beyond the columns: robustdet's stated torch 2.1 pinned (P); secml-torch's
# buggy variant a release placeholder of its PyPI distribution, not a commit pin (P).
STATED_29: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "robustdet-15": {"P": lambda data: re.search(r"\btorch==2\.1\b", _pinned(data)) is not None},
    "secml-torch-41": {"P": lambda data: re.search(r"\bsecml-torch==", _pinned(data)) is not None},
}
# of 80: 62 held out, main f9fec9e, this scorer and by hand, strict; 65 lenient
GRADED29_FLOOR = 74  # fixtitle5, fixenv4 and fixframe4 together (NOT held out: read); 74 after fixlanes5 (stated torch 2.1)


def test_graded29_is_tagged_device_bound_as_drafted(drafted: Drafter) -> None:
    """D (scored by hand in the 9-field variant): 9 of the 9 drafted right (seven device-bound, real-esrgan-707 and
    syndiff-23 not; scvi-tools-242 refused)."""
    assert all(("device-placement" in drafted(name)[1]["tags"]) is row[5] for name, row in HELD_OUT_29.items() if row)


@pytest.mark.parametrize("name", sorted(HELD_OUT_29))
def test_a_graded29_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str) -> None:
    """A drafted report's row holds; scvi-tools-242, which quotes torch's message in markdown italics with no class, was
    refused when graded (8 fields lost): drafted now, as every non-empty report is."""
    row = HELD_OUT_29[name]
    if row is None:
        assert drafted(name)[1]["exception"]
    else:
        reports.assert_drafted(*drafted(name), row)


def test_the_twenty_ninth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    reports.assert_set_scores(GRADED29, MAINTAINER_29, HELD_OUT_29, STATED_29, GRADED29_FLOOR)
