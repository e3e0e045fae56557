"""graded30 (tests/fixtures/graded30), held out (issue 21 §1): ten real reports drafted by `new` on main 491a365 and
graded by hand in EXPECTED.md's Results. HELD_OUT_30 asserts what is drafted now (none refused), known misses marked,
so a change to any of them is seen; MAINTAINER_30 encodes EXPECTED.md's accepted values, graded strictly as its
Results, and the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out18 import TWO_GPUS
from tests.core.test_new_held_out22 import DEVICE, EVERYWHERE, _title
from tests.core.test_new_held_out26 import Drafter, _checkout
from tests.core.test_new_reports import DEV_LANES, FP16_LANES, HUB, TWO_AT, _pinned

GRADED30 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded30"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by the
# grader): no project for the eight checkouts; PyPI's cider is another project (msanders/cider).
NOT_RELEASED_30 = {"bubogpt", "c-3-framework", "chatglm-efficient-tuning", "dcnet", "fast-nn", "gpt-neox",
                   "higherhrnet-human-pose-estimation", "paccmann-chemistry"}
INDEX_URLS_30: dict[str, tuple[str, ...]] = {"cider": ("https://github.com/msanders/cider",)}


@pytest.fixture(name="drafted")
def graded30_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded30's drafts, with the index's answers for its names beside the other sets' (`_graded` reads them)."""
    reports.answer_for(monkeypatch, NOT_RELEASED_30, INDEX_URLS_30)
    return partial(reports._graded, GRADED30)


CUDA1_CUDA0 = f"{TWO_AT}cuda:1 and cuda:0!"
MM = f"{TWO_AT}cpu and cuda:0! (when checking argument for argument mat2 in method wrapper_mm)"
CUT = "Expected all tensors to be on the same"
INPUT = "Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same"
HALF = "expected scalar type Half but found Float"
ORDINAL = "CUDA error: invalid device ordinal"
STACK = "stack expects each tensor to be equal size"
DEVICE_STRING = ("Expected one of cpu, cuda, mkldnn, opengl, opencl, ideep, hip, msnpu device type at start of device "
                 "string: 0")
GT4SD = "paccmann-chemistry"

HELD_OUT_30: dict[str, tuple[Any, ...]] = {
    "bubogpt-11": ("RuntimeError", CUDA1_CUDA0, "bubogpt", f"bubogpt: {CUDA1_CUDA0}", TWO_GPUS, True,
                   _checkout("bubogpt", "magic-research/bubogpt"), 0),
    "c-3-framework-58": ("KeyError", "'net'", "c-3-framework", "c-3-framework net.load_state_dict: KeyError 'net'",
                         EVERYWHERE, False, _checkout("c-3-framework", "gjy3035/C-3-Framework"), 0),
    # T right since fixtitle6 (the title's evaluation stage, 评估阶段), L since fixlanes3
    "chatglm-efficient-tuning-261": ("RuntimeError", HALF, "chatglm-efficient-tuning",
                                     f"chatglm-efficient-tuning evaluation: {HALF}", FP16_LANES, False,
                                     _checkout("chatglm-efficient-tuning", "hiyouga/ChatGLM-Efficient-Tuning"), 0),
    "chemprop-256": ("RuntimeError", ORDINAL, "chemprop", f"chemprop cross_validate: {ORDINAL}",
                     {"cpu": "passes", "cuda": "reproduces"}, True, "chemprop==X.Y.Z", 0),
    "cider-6": ("RuntimeError", INPUT, "cider", f"cider conv_model.py: {INPUT}", DEVICE, True,
                _checkout("cider", "glam-imperial/cider"), 0),
    # T was a miss (no API); fixtitle6: the prose's trainer.py glued to Chinese words
    "dcnet-10": ("RuntimeError", INPUT, "dcnet", f"dcnet trainer.py: {INPUT}", DEVICE, True,
                 _checkout("dcnet", "hzhupku/DCNet"), 0),
    "fast-nn-1": ("RuntimeError", MM, "fast-nn", f"fast-nn fredmd_cross: {MM}", DEVICE, True,
                  _checkout("fast-nn", "wmyw96/FAST-NN"), 0),
    # T was a miss (the argument dump's key log_dir as the API); fixtitle6: no API
    "gpt-neox-929": ("RuntimeError", STACK, "gpt-neox", f"gpt-neox: {STACK}", EVERYWHERE, False,
                     _checkout("gpt-neox", "EleutherAI/gpt-neox"), 0),
    # L and D right since fixlanes3 (the cut message read as the device check it starts); P and F since fixenv5
    "gt4sd-core-144": ("RuntimeError", CUT, GT4SD, f"paccmann_chemistry sequential_data_preparation: {CUT}",
                       {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"},
                       True, f'"{GT4SD} @ {HUB}<owner>/<repo>@<commit>"', 2),
    # T judgement was a miss ("training"); fixtitle6: the reply's dist_train.py
    "higherhrnet-46": ("RuntimeError", DEVICE_STRING, "higherhrnet-human-pose-estimation",
                       f"higherhrnet-human-pose-estimation dist_train.py: {DEVICE_STRING}", EVERYWHERE, False,
                       _checkout("higherhrnet-human-pose-estimation", "HRNet/HigherHRNet-Human-Pose-Estimation"), 0),
}

ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
GPU_ONLY = {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}
HOST_TOO = {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}
# a placeholder of paccmann_chemistry's own repository (the index links none: the draft cannot name it) is the
# expectation's "paccmann_chemistry placeholder"
PACCMANN = rf"paccmann[-_]chemistry(?:==| @ {re.escape(HUB)}(?:PaccMann/paccmann_chemistry|<owner>/<repo>)@)"
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message (bubogpt-11 and gpt-neox-929 name no call: project and message,
# or the run's context words).
MAINTAINER_30 = {
    "bubogpt-11": (rf"^(?i:bubogpt)(?: [^:]*(?:torchrun|GPU)[^:]*)?: {re.escape(CUDA1_CUDA0)}$", "RuntimeError",
                   CUDA1_CUDA0, {"bubogpt"}, f"{HUB}magic-research/bubogpt@", f"{HUB}magic-research/bubogpt",
                   {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, (), False),
    "c-3-framework-58": (r"^(?i:c-3-framework) [^:]*(?:trainer\.py|resum|load_state_dict|RESUME_PATH)[^:]*: "
                         r"KeyError:? 'net'$", "KeyError", "'net'", {"c-3-framework"}, f"{HUB}gjy3035/C-3-Framework@",
                         f"{HUB}gjy3035/C-3-Framework", ALL_REPRODUCE, None, (), False),
    "chatglm-efficient-tuning-261": (_title(r"chatglm-efficient-tuning|glmtuner", r"LoRA|[Ee]val|[Tt]rainer", HALF),
                                     "RuntimeError", HALF, {"chatglm-efficient-tuning", "glmtuner"},
                                     (f"{HUB}hiyouga/ChatGLM-Efficient-Tuning@", "glmtuner=="), None, GPU_ONLY, None,
                                     (), False),
    "chemprop-256": (_title("chemprop", r"TrainArgs|args\.gpu|gpu ?= ?1|cross_validate|run_training", ORDINAL),
                     "RuntimeError", ORDINAL, {"chemprop"}, None, None, GPU_ONLY, "1.11.0", (), False),
    "cider-6": (_title("cider", r"conv_model", INPUT), "RuntimeError", INPUT, {"cider"}, f"{HUB}glam-imperial/cider@",
                f"{HUB}glam-imperial/cider", DEV_LANES, None, (), False),
    "dcnet-10": (_title("dcnet", r"trainer\.py|train", INPUT), "RuntimeError", INPUT, {"dcnet"}, f"{HUB}hzhupku/DCNet@",
                 f"{HUB}hzhupku/DCNet", DEV_LANES, None, (), False),
    "fast-nn-1": (_title("fast-nn", r"fredmd_cross|NNEstimator|fit_and_predict|FactorAugmentedSparseThroughputNN|FAST",
                         MM), "RuntimeError", MM, {"fast-nn"}, f"{HUB}wmyw96/FAST-NN@", f"{HUB}wmyw96/FAST-NN",
                  DEV_LANES, None, (), False),
    "gpt-neox-929": (rf"^(?i:gpt-neox)(?: [^:]*(?:train|multinode|multi-node)[^:]*)?: {re.escape(STACK)}$",
                     "RuntimeError", STACK, {"gpt-neox"}, f"{HUB}EleutherAI/gpt-neox@", f"{HUB}EleutherAI/gpt-neox",
                     HOST_TOO, None, (), False),
    "gt4sd-core-144": (rf"^(?i:paccmann[_-]chemistry|gt4sd(?:-core)?) [^:]*(?:sequential_data_preparation|"
                       rf"_prepare_padded|train_vae|PaccMannVAETrainingPipeline|\btrain\b|gt4sd-trainer|"
                       rf"paccmann-vae-trainer)[^:]*: {re.escape(CUT)}(?: ?\.\.\.)?$", "RuntimeError", CUT,
                       {GT4SD, "paccmann_chemistry", "gt4sd", "gt4sd-core"}, None, None, DEV_LANES, None, ("3.7",),
                       False),
    "higherhrnet-46": (_title(r"higherhrnet(?:-human-pose-estimation)?", r"dist_train|main_worker|set_device",
                              DEVICE_STRING), "RuntimeError", DEVICE_STRING,
                       {"higherhrnet-human-pose-estimation", "higherhrnet"},
                       f"{HUB}HRNet/HigherHRNet-Human-Pose-Estimation@", f"{HUB}HRNet/HigherHRNet-Human-Pose-Estimation",
                       {**HOST_TOO, "cuda-sim": {"reproduces"}}, None, (), False),
}
# STATED_30: what the expectation asks beyond the columns: chemprop's stated torch 1.11.0 pinned (P); gt4sd-core-144's
# gt4sd placeholder beside a paccmann_chemistry placeholder or a commit pin of PaccMann/paccmann_chemistry (P), and the
# same for its fix (F: the draft's placeholder must name the repository that holds the code).
STATED_30: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "chemprop-256": {"P": lambda data: re.search(r"\btorch==1\.11\.0\b", _pinned(data)) is not None},
    "gt4sd-core-144": {
        "P": lambda data: "gt4sd==" in _pinned(data) and re.search(PACCMANN, _pinned(data)) is not None,
        "F": lambda data: re.search(PACCMANN, " ".join(data["variants"]["fix"]["requires"])) is not None,
    },
}
GRADED30_FLOOR = 80  # of 80: 70 held out, main 491a365, this scorer and by hand, strict; 71 lenient
# NOT held out after: fixenv5 (chemprop P V, gt4sd-core P F), fixlanes3 (gt4sd-core L, chatglm-efficient-tuning L),
# fixtitle6 (chatglm-efficient-tuning, dcnet-10, gpt-neox-929, higherhrnet-46 T)


def test_graded30_is_tagged_device_bound_as_drafted(drafted: Drafter) -> None:
    """D (scored by hand in the 9-field variant): 9 of the 10 drafted right when graded (gt4sd-core-144's cut
    message, a device-placement error, drafted untagged); 10 since fixlanes3."""
    assert all(("device-placement" in drafted(name)[1]["tags"]) is row[5] for name, row in HELD_OUT_30.items())


@pytest.mark.parametrize("name", sorted(HELD_OUT_30))
def test_a_graded30_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str) -> None:
    reports.assert_drafted(*drafted(name), HELD_OUT_30[name])


def test_the_thirtieth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    reports.assert_set_scores(GRADED30, MAINTAINER_30, HELD_OUT_30, STATED_30, GRADED30_FLOOR)
