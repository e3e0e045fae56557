"""graded40 (tests/fixtures/graded40), held out (issue 21 §1): ten real reports drafted by `new` on main c3958d0 and
graded by hand in EXPECTED.md's Results. HELD_OUT_40 asserts what is drafted now (icevision-479 crashed when graded: mended), known
misses marked, so a change to any of them is seen; MAINTAINER_40 encodes EXPECTED.md's accepted values, graded
strictly as its Results, and the floor is the strict score this scorer measured there."""

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
from tests.core.test_new_reports import DEV_LANES, HUB, TWO_AT

GRADED40 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded40"
CHECKOUTS_40 = {"activitygraph-transformer", "bert-ner", "bottlenecktransformers", "comfyui-layerdiffuse", "elasticai",
                "freefuse", "hyperseg", "mmdetection3d"}
# the index's dcnv2 is CharlesShang's DCNv2, not lbin's fork the report ran
INDEX_URLS_40: dict[str, tuple[str, ...]] = {"dcnv2": ("https://github.com/charlesshang/DCNv2",)}


@pytest.fixture(name="drafted")
def graded40_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded40's drafts with the index's answers `new` got on 2026-11-29: no project for the eight checkouts, another
    project's DCNv2 (the in-process drafts equal the CLI's byte for byte, checked)."""
    reports.answer_for(monkeypatch, CHECKOUTS_40, INDEX_URLS_40)
    return partial(reports._graded, GRADED40)


INDEX_SELECT = "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_index_select"
FLOAT_MAT2 = "Expected object of scalar type Float but got scalar type Half for argument #2 'mat2'"
HALF_DCN = ("expected scalar type Float but found Half (data_ptr<float> at /home/amax/.conda/envs/pytorch/lib/python3.6/"
            "site-packages/torch/include/ATen/core/TensorMethods.h:5747)")
MM_CPU_CUDA0 = f"{TWO_AT}cpu and cuda:0! (when checking argument for argument mat2 in method wrapper_CUDA_mm)"
MM_CUDA0_CPU = f"{CUDA0_CPU} (when checking argument for argument mat2 in method wrapper_CUDA_mm)"
SAME_DEVICE = "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'"
DEVICE_0_2 = f"{SAME_DEVICE}; but device 0 does not equal 2 (while checking arguments for cudnn_convolution)"
ICE_HALF = "Expected object of scalar type c10::Half but got scalar type float for argument 'other'"
FP16_CPU = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}
NEEDS_GPUS = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}


def _row(culprit: str, api: str, message: str, lanes: dict[str, str], pin: str, shown: int,
         exception: str = "RuntimeError") -> tuple[Any, ...]:
    """A drafted row: its title is the culprit, the API read (if any) and the message."""
    title = f"{culprit} {api}: " if api else f"{culprit}: "
    return exception, message, culprit, title, lanes, lanes == DEVICE, pin, shown


HELD_OUT_40: dict[str, tuple[Any, ...] | None] = {
    # known misses: T and S judgement (no API: the message's index_select), P (torch 2.13.0 for a torch <= 1.4 wording)
    "activitygraph-transformer-9": _row("activitygraph-transformer", "", INDEX_SELECT, DEVICE,
                                        _checkout("activitygraph-transformer", "Nmegha2601/activitygraph_transformer"), 0),
    # known misses: P judgement (no pytorch_pretrained_bert placeholder), S judgement (--fp16 not said)
    "bert-ner-41": _row("bert-ner", "main", FLOAT_MAT2, FP16_CPU, _checkout("bert-ner", "kamalkraj/BERT-NER"), 2),
    # known misses: T and S judgement (no API: the prose's untrained model)
    "bottlenecktransformers-8": _row("bottlenecktransformers", "", CUDA0_CPU, DEVICE,
                                     _checkout("bottlenecktransformers", "leaderj1001/BottleneckTransformers"), 0),
    # known miss: S judgement (KSampler Adv.'s sample_adv named as "the report's own code", layer diffusion not said)
    "comfyui-layerdiffuse-83": _row("comfyui-layerdiffuse", "sample_adv", CUDA0_CPU, DEVICE,
                                    _checkout("comfyui-layerdiffuse", "huchenlei/ComfyUI-layerdiffuse"), 1),
    # known misses: T and S judgement (no API: the prose's DCN under fp16)
    "dcnv2-lbin-8": _row("dcnv2", "training", HALF_DCN, FP16_CPU, _checkout("dcnv2", "lbin/DCNv2"), 0),
    # known misses: T, B, P, F (elasticai, the import root, for the distribution elasticai.creator)
    "elastic-ai-creator-326": _row("elasticai", "PrecomputedModules", MM_CPU_CUDA0, DEVICE,
                                   _checkout("elasticai", "es-ude/elastic-ai.creator"), 0),
    # known misses: T and S judgement (no API: the log's FreeFuse Flux hooks)
    "freefuse-7": _row("freefuse", "", MM_CUDA0_CPU, DEVICE, _checkout("freefuse", "yaoliliu/FreeFuse"), 0),
    "hyperseg-34": _row("hyperseg", "optimizer.load_state_dict", "'optimizer'", EVERYWHERE,
                        _checkout("hyperseg", "YuvalNirkin/hyperseg"), 1, "KeyError"),
    # `new` crashes (IndexError in _sentence_message): see test_icevision_479_is_drafted
    "icevision-479": None,
    # known misses: T (message cut, torch's cudnn_convolution as API), P and F (mmdetection3d, not mmdet3d), L ("two GPUs"
    # for device index 2), S judgement
    "mmdetection3d-214": ("RuntimeError", SAME_DEVICE, "mmdetection3d", f"mmdetection3d tools/train.py cudnn_convolution: "
                          f"{SAME_DEVICE}", NEEDS_GPUS, True, _checkout("mmdetection3d", "open-mmlab/mmdetection3d"), 0),
}

ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
NO_CPU = {"cpu": {"unsupported"}, "cuda": {"reproduces"}}
MMDET3D_APIS = r"(?:tools/)?train\.py|--gpu-ids|forward_train|votenet|VoteNet|SA_modules|PointNet2|3DSSD"
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon (none where the report names none) and the message (shortened only with "...").
MAINTAINER_40 = {
    "activitygraph-transformer-9": (_title(r"activitygraph[-_]transformer", r"\w*index_select|train\w*", INDEX_SELECT),
                                    "RuntimeError", INDEX_SELECT, {"activitygraph-transformer"},
                                    f"{HUB}Nmegha2601/activitygraph_transformer@",
                                    f"{HUB}Nmegha2601/activitygraph_transformer", DEV_LANES, None, (), False),
    "bert-ner-41": (_title("bert-ner", r"run_ner(?:\.py)?|main|forward|--fp16", FLOAT_MAT2), "RuntimeError", FLOAT_MAT2,
                    {"bert-ner"}, f"{HUB}kamalkraj/BERT-NER@", f"{HUB}kamalkraj/BERT-NER", NO_CPU, None, ("3.6",),
                    False),
    "bottlenecktransformers-8": (_title("bottlenecktransformers", r"untrained|BoTNet|model\.py|MHSA", CUDA0_CPU),
                                 "RuntimeError", CUDA0_CPU, {"bottlenecktransformers"},
                                 f"{HUB}leaderj1001/BottleneckTransformers@", f"{HUB}leaderj1001/BottleneckTransformers",
                                 DEV_LANES, None, (), False),
    "comfyui-layerdiffuse-83": (_title(r"comfyui-layerdiffuse|efficiency-nodes-comfyui",
                                       r"sample_adv|KSampler Adv|layer ?diffus\w*|reverse noise|SD1\.5", CUDA0_CPU),
                                "RuntimeError", CUDA0_CPU, {"comfyui-layerdiffuse", "efficiency-nodes-comfyui"},
                                f"{HUB}huchenlei/ComfyUI-layerdiffuse@", f"{HUB}huchenlei/ComfyUI-layerdiffuse", DEV_LANES,
                                None, (), False),
    "dcnv2-lbin-8": (_title("dcnv2", r"DCN\w*|forward|fp16", "expected scalar type Float but found Half",
                            r"(?: \(data_ptr<float> at \S*TensorMethods\.h:5747\))?"), "RuntimeError", HALF_DCN,
                     {"dcnv2"}, f"{HUB}lbin/DCNv2@", f"{HUB}lbin/DCNv2", NO_CPU, None, ("3.6",), False),
    "elastic-ai-creator-326": (_title(r"elastic-?ai\.creator", r"PrecomputedModule|_stepped_inputs|IdentityStepFunction|"
                                      r"Tanh|Sequential|forward", MM_CPU_CUDA0), "RuntimeError", MM_CPU_CUDA0,
                               {"elasticai.creator", "elasticai-creator", "elastic-ai.creator"}, "elasticai.creator",
                               None, DEV_LANES, None, (), False),
    "freefuse-7": (_title("freefuse", r"Flux|masks?|attention bias|bypass", MM_CUDA0_CPU), "RuntimeError", MM_CUDA0_CPU,
                   {"freefuse"}, f"{HUB}yaoliliu/FreeFuse@", f"{HUB}yaoliliu/FreeFuse", DEV_LANES, None, (), False),
    "hyperseg-34": (_title("hyperseg", r"train(?:\.py)?|main|load_state_dict|cityscapes_efficientnet_b1_hyperseg-s",
                           "KeyError 'optimizer'"), "KeyError", "'optimizer'", {"hyperseg"},
                    f"{HUB}YuvalNirkin/hyperseg@", f"{HUB}YuvalNirkin/hyperseg", ALL_REPRODUCE, None, (), False),
    "icevision-479": (_title("icevision", r"faster_rcnn|to_fp16|learner", ICE_HALF), "RuntimeError", ICE_HALF,
                      {"icevision"}, None, None, {"cpu": {"unsupported", "reproduces"}, "cuda": {"reproduces"}}, None,
                      (), False),
    # a shortened message keeps "device 0 does not equal 2" after a "..."; the placeholders name mmdet3d (the index's)
    "mmdetection3d-214": (rf"^(?i:mmdetection3d|mmdet3d) [^:]*(?:{MMDET3D_APIS})[^:]*: Expected tensor for argument "
                          r"#1 'input' to have the same device as .*device 0 does not equal 2", "RuntimeError",
                          DEVICE_0_2, {"mmdetection3d", "mmdet3d"}, "mmdet3d", "mmdet3d",
                          {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, (), False),
}


def _pinned(data: dict[str, Any]) -> str:
    return " ".join([*data["requires"], *data["variants"]["buggy"]["requires"]])


# STATED_40: what the expectation asks beyond the columns: activitygraph's torch <= 1.4 (its message's wording), BERT-NER's
# pytorch_pretrained_bert placeholder, mmdetection3d's "three GPUs" (device index 2).
STATED_40: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "activitygraph-transformer-9": {"P": lambda data: re.search(r"torch==1\.[0-4]\b", _pinned(data)) is not None},
    "bert-ner-41": {"P": lambda data: re.search(r"pytorch[-_]pretrained[-_]bert", _pinned(data)) is not None},
    "mmdetection3d-214": {"L": lambda data: "three" in data["variants"]["buggy"]["expect"]["cuda"]},
}
# of 80: 58 held out, main c3958d0, by hand, strict (72 lenient); this scorer 58. After the icevision crash was mended
# (it drafts: E, M, L, V right), this scorer 62
GRADED40_FLOOR = 62


@pytest.mark.parametrize("name", sorted(name for name, row in HELD_OUT_40.items() if row))
def test_a_graded40_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str) -> None:
    """Each row, its device-placement tag included (D, scored by hand in the 9-field variant)."""
    row = HELD_OUT_40[name]
    assert row is not None
    reports.assert_drafted(*drafted(name), row)


def test_icevision_479_is_drafted_since_the_crash_was_mended(drafted: Drafter) -> None:
    """Graded on c3958d0, `new` crashed (IndexError in _sentence_message) on the bug template's inline
    ``RuntimeError: `message` `` (a message set in a code span of its own): scored 0, a refusal. The mend drafts its
    class and message; the blame (faster-rcnn, a name from the prose, not icevision) stays a known miss."""
    _, data = drafted("icevision-479")
    assert data["exception"] == "RuntimeError"
    assert data["signature"] == "Expected object of scalar type c10::Half but got scalar type float for argument 'other'"


def test_the_fortieth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    right, scores = reports._scored({name: reports.maintainer_fields(name, GRADED40, MAINTAINER_40, STATED_40)
                                      for name in sorted(MAINTAINER_40)})
    assert sorted(MAINTAINER_40) == sorted(HELD_OUT_40) == sorted(p.stem for p in GRADED40.glob("*.txt"))
    assert right >= GRADED40_FLOOR, scores
