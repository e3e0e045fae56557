"""graded19 (tests/fixtures/graded19), held out (issue 21 §1): what `new` drafts from its ten real reports on main
d14b247 (EXPECTED.md's Results), and the score against EXPECTED.md's accepted values, graded strictly as its Results.
The scorer is test_new_reports.py's; this set's commit-pinned projects are added to its index answers."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from harness._exceptions import UsageError
from tests.core import test_new_reports as reports
from tests.core.test_new_reports import (
    ALL,
    ALL_LANES,
    DEV_LANES,
    DEVICE,
    FP16_LANES,
    GIT,
    HUB,
    PLACEMENT,
    TWO_AT,
    _pinned,
    _scored,
)

GRADED19 = reports.ROOT / "tests" / "fixtures" / "graded19"
# The package index has none of these (as `new` was told on 2026-11-29): their variants pin commits.
NOT_RELEASED_19 = {"ada-cm", "alpaca-lora", "cpa-enhancer", "comfyui-fluxtrainer",
                   "diviner-nonstationary-time-series-forecasting"}
ADDMM = "(when checking argument for argument mat1 in method wrapper_CUDA_addmm)"


@pytest.fixture(autouse=True)
def _index_without_graded19s_checkouts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(reports, "NOT_RELEASED", reports.NOT_RELEASED | NOT_RELEASED_19)


# As drafted on main d14b247, known misses included (marked), so a change to any of them is seen: (exception,
# message, blamed, title's start, lanes, device tag, buggy pin text, frames the skeleton shows).
HELD_OUT_19 = {
    # known misses: T (no API: the reply's line 147 `train` and "lines 366 mask_ori" not read), L (cpu "passes" with
    # no reason; main.py calls .cuda() unconditionally), S
    "ada-cm-10": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "ada-cm", "ada-cm training: Expected all", DEVICE, True,
                  f"ada-cm {GIT}hangyu94/Ada-CM@<commit>", 0),
    # known misses: T (the bare "dpo", not the recipe), S (`import alignment_handbook`: its module is `alignment`)
    "alignment-handbook-209": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0! (when checking argument for argument index "
                               "in method wrapper_CUDA__index_select)", "alignment-handbook",
                               "alignment-handbook dpo: Expected all", DEVICE, True, "alignment-handbook==X.Y.Z", 0),
    # known misses: T (transformers' training_step under alpaca-lora), P (no transformers placeholder), L (cuda and
    # cuda-sim "reproduces": the failure needs two visible GPUs), S (torch's _get_device_index only)
    "alpaca-lora-216": ("ValueError", "Expected a cuda device, but got: cpu", "alpaca-lora",
                        "alpaca-lora training_step: Expected a cuda", DEVICE, True,
                        f"alpaca-lora {GIT}tloen/alpaca-lora@<commit>", 1),
    # known miss: S; the Error Report's "Exception Message" bullet, not read on main d14b247 (T, M, L, D), is read
    # since fixframe (not held out)
    "comfyui-fluxtrainer-124": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0! {ADDMM}", "comfyui-fluxtrainer",
                                "comfyui-fluxtrainer nodes.py train: Expected all", DEVICE, True,
                                f"comfyui-fluxtrainer {GIT}kijai/ComfyUI-FluxTrainer@<commit>", 1),
    # known misses: S; T names the reply's WithBias_LayerNorm since fixshown (not held out). The Chinese sentence after the message, kept in T and M on main
    # d14b247, is cut since fixframe (not held out)
    "cpa-enhancer-3": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "cpa-enhancer",
                       "cpa-enhancer WithBias_LayerNorm: Expected all", DEVICE, True, f"cpa-enhancer {GIT}zyw-stu/CPA-Enhancer@<commit>", 0),
    "diviner-1": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "diviner-nonstationary-time-series-forecasting",
                  "diviner-nonstationary-time-series-forecasting: Expected all", DEVICE, True,
                  f"diviner-nonstationary-time-series-forecasting {GIT}CapricornGuang/"
                  "Diviner-Nonstationary-time-series-forecasting@<commit>", 0),
    # fixblame (not held out): the fragment of diffusers' frames blames finetrainers, the project it is filed on
    "finetrainers-295": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0! {ADDMM}", "finetrainers",
                         "finetrainers validation_cmd: Expected all", DEVICE, True, "finetrainers==X.Y.Z", 2),
    # known miss: T's path cut to 'data' ('/tmp/data' in the message); S shows tokenize's open() only
    "litgpt-1413": ("IsADirectoryError", "[Errno 21] Is a directory: '/tmp/data'", "litgpt",
                    "litgpt tokenize: [Errno 21] Is a directory: 'data'", ALL, False, "litgpt==X.Y.Z", 1),
    # known misses: P ("swift.version: 3.5.0" not read), F (ms-swift's placeholder, the fix is DeepSpeed's), V
    # ("torch:2.6" not read), S (`import ms_swift`: its module is `swift`)
    "ms-swift-5808": ("UnpicklingError", "Weights only load failed. This file can still be loaded, to do so you have two "
                      "options, do those steps only if you trust the source of the checkpoint.", "ms-swift",
                      "ms-swift resume_from_checkpoint: Weights only load failed.", ALL, False, "ms-swift==X.Y.Z", 0),
    # crashed on main d14b247 (its bullet "* Error:" taken for an exception line); drafted since fixframe from its
    # title (not held out): known misses T and B (mmdet's frame, not mmcv's DCN), P, D, S; L right since fixlanes3
    "mmcv-1004": ("RuntimeError", "expected scalar type Half but found Float", "mmdet",
                  "mmdet _inner_forward: expected scalar type Half but found Float", FP16_LANES, False, "pin the mmdet release", 2),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT_19))
def test_a_held_out19_report_drafts_as_graded(name: str) -> None:
    reports.assert_drafted(*reports._graded(GRADED19, name), HELD_OUT_19[name])



# EXPECTED.md's accepted values as MAINTAINER_12's columns (title regex, exception, message, blamed, pin, fix, lanes,
# torch, pythons, python required); a list holds the alternatives EXPECTED.md accepts (a field is right if any is).
# Strict as its Results: a bare word that is not one of the listed APIs is wrong (alignment-handbook's "dpo"), a
# message altered in the title is wrong (litgpt's 'data'), a fix placeholder must name DeepSpeed (ms-swift).
LITGPT = (r"^(?:litgpt|litdata) [^:]*(?:TextFiles|tokenize|text_files\.py|pretrain|optimize|_handle_data_chunk_recipe)"
          r"[^:]*: (?:Failed processing /tmp/data|\[Errno 21\] Is a directory: '/tmp/data')")
MAINTAINER_19: dict[str, tuple[Any, ...] | list[tuple[Any, ...]]] = {
    "ada-cm-10": (rf"^(?i:ada-cm) [^:]*(?:mask_generate|\btrain\b)[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!?$",
                  "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"ada-cm"}, f"{HUB}hangyu94/Ada-CM@",
                  f"{HUB}hangyu94/Ada-CM", {"cpu": {"unsupported", "passes"}, "cuda": {"reproduces"}}, None, (), False),
    "alignment-handbook-209": (rf"^(?:alignment-handbook|trl) [^:]*(?i:dpo recipe|run_dpo(?:\.py)?|zephyr-7b-beta|"
                               rf"DPOTrainer)[^:]*: {re.escape(TWO_AT)}cpu and cuda:[01]! \(when checking argument for "
                               r"argument index in method wrapper_CUDA__index_select\)$", "RuntimeError",
                               f"{TWO_AT}cpu and cuda:0! (when checking argument for argument index in method "
                               "wrapper_CUDA__index_select)", {"alignment-handbook", "trl"}, None, None, DEV_LANES, None,
                               (), False),
    "alpaca-lora-216": (r"^(?:(?i:alpaca-lora) [^:]*(?:finetune\.py|\btrain\b|trainer\.train)|transformers [^:]*"
                        r"(?:training_step|trainer\.train|\btrain\b))[^:]*: Expected a cuda device, but got: cpu$",
                        "ValueError", "Expected a cuda device, but got: cpu", {"alpaca-lora", "transformers"}, None,
                        None, {"cpu": {"passes"}, "cuda": {"unsupported", "reproduces"}, "cuda-sim": {"unsupported"}},
                        None, ("3.10",), False),
    "comfyui-fluxtrainer-124": (rf"^(?i:comfyui-fluxtrainer) [^:]*(?:FluxTrainLoop|\btrain\b|training_loop)[^:]*: "
                                rf"{re.escape(TWO_AT)}cpu and cuda:0! {re.escape(ADDMM)}$", "RuntimeError",
                                f"{TWO_AT}cpu and cuda:0! {ADDMM}", {"comfyui-fluxtrainer"},
                                f"{HUB}kijai/ComfyUI-FluxTrainer@", f"{HUB}kijai/ComfyUI-FluxTrainer",
                                {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}, None, (), False),
    "cpa-enhancer-3": (rf"^(?i:cpa-enhancer) [^:]*(?:CPA_arch|cpa_arch\.py|ContentDrivenPromptBlock|WithBias_LayerNorm|"
                       rf"FeedForward)[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                       f"{TWO_AT}cuda:0 and cpu!", {"cpa-enhancer"}, f"{HUB}zyw-stu/CPA-Enhancer@",
                       f"{HUB}zyw-stu/CPA-Enhancer", DEV_LANES, None, (), False),
    "diviner-1": (rf"^(?i:diviner)[\w-]*(?: [^:]*)?: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                  f"{TWO_AT}cuda:0 and cpu!", {"diviner", "diviner-nonstationary-time-series-forecasting"},
                  f"{HUB}CapricornGuang/Diviner-Nonstationary-time-series-forecasting@",
                  f"{HUB}CapricornGuang/Diviner-Nonstationary-time-series-forecasting", DEV_LANES, None, (), False),
    "finetrainers-295": (rf"^finetrainers [^:]*(?:enable_model_cpu_offload|validation|train\.py|training step)[^:]*: "
                         rf"{re.escape(TWO_AT)}cpu and cuda:0! {re.escape(ADDMM)}$", "RuntimeError",
                         f"{TWO_AT}cpu and cuda:0! {ADDMM}", {"finetrainers"}, None, None, DEV_LANES, None, ("3.11",),
                         False),
    "litgpt-1413": [(LITGPT, "IsADirectoryError", "[Errno 21] Is a directory: '/tmp/data'", {"litgpt", "litdata"}, None,
                     None, ALL_LANES, None, ("3.10",), False),
                    (LITGPT, "RuntimeError", "Failed processing /tmp/data", {"litgpt", "litdata"}, None, None, ALL_LANES,
                     None, ("3.10",), False)],
    "mmcv-1004": (r"^mmcv(?:-full)? [^:]*(?:DCN|DeformConv2d|deform_conv|fp16|new_func)[^:]*: expected scalar type Half "
                  r"but found Float$", "RuntimeError", "expected scalar type Half but found Float", {"mmcv", "mmcv-full"},
                  "mmcv-full==1.3.2", "mmcv-full", {"cpu": {"unsupported"}, "cuda": {"reproduces"}}, "1.7.1", ("3.7",),
                  False),
    "ms-swift-5808": [(r"^(?i:ms-swift|deepspeed) [^:]*(?:resume_from_checkpoint|load_checkpoint|checkpoint load|"
                       r"DeepSpeed's torch\.load)[^:]*: Weights only load failed", exception,
                       "Weights only load failed. This file can still be loaded, to do so you have two options, do those "
                       "steps only if you trust the source of the checkpoint.", {"ms-swift", "deepspeed"}, None,
                       "deepspeed", {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}, "2.6", (), False)
                      for exception in ("UnpicklingError", "_pickle.UnpicklingError", "pickle.UnpicklingError")],
}


def _cpu_reason(data: dict[str, Any]) -> bool:
    cpu = str(data["variants"]["buggy"]["expect"]["cpu"])
    return cpu.startswith("unsupported") or ":" in cpu


def _two_gpu_reason(data: dict[str, Any]) -> bool:
    cuda = str(data["variants"]["buggy"]["expect"]["cuda"])
    return not cuda.startswith("reproduces") or re.search(r"(?i)two GPUs|multi-GPU|more than one GPU", cuda) is not None


# What EXPECTED.md asks beyond the columns: stated versions and the libraries the run's frames show in P, ada-cm's
# cpu "passes" only with the .cuda() reason, alpaca-lora's cuda "reproduces" only with a multi-GPU reason.
STATED_19: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "ada-cm-10": {"L": _cpu_reason},
    "alpaca-lora-216": {"P": lambda data: "tloen/alpaca-lora@" in _pinned(data) and "transformers" in _pinned(data),
                        "L": _two_gpu_reason},
    "finetrainers-295": {"P": lambda data: "diffusers" in _pinned(data)},
    "litgpt-1413": {"P": lambda data: "litgpt" in _pinned(data) and "litdata" in _pinned(data)},
    "mmcv-1004": {"P": lambda data: "torch==1.7.1" in _pinned(data) and "mmdet" in _pinned(data)},
    "ms-swift-5808": {"P": lambda data: "ms-swift==3.5.0" in _pinned(data)},
}
GRADED19_FLOOR = 65  # of 80: 64 after fixblame (finetrainers-295 T B P F; NOT held out); 53 held out (main d14b247, this scorer; 53 by hand, strict; 58 lenient); 54 after fixenv;
# 59 with fixframe merged; 60 after fixshown (cpa-enhancer T); 65 after fixlanes3 (mmcv-1004 L) (NOT held out)


def _maintainer_fields_19(name: str) -> dict[str, bool]:
    try:
        data = reports._graded(GRADED19, name)[1]
    except UsageError:  # refused: 0 on every field
        return dict.fromkeys("TEMBPFLV", False)
    accepted = MAINTAINER_19[name]
    rows = [reports._maintainer_fields_14(name, GRADED19, {name: row})
            for row in (accepted if isinstance(accepted, list) else [accepted])]
    fields = {field: any(row[field] for row in rows) for field in rows[0]}
    for field, kept in STATED_19.get(name, {}).items():
        fields[field] = fields[field] and kept(data)
    return fields


def test_the_nineteenth_held_out_set_scores_at_least_its_measured_fields() -> None:
    right, table = _scored({name: _maintainer_fields_19(name) for name in sorted(MAINTAINER_19)})
    assert sorted(MAINTAINER_19) == sorted(HELD_OUT_19) == sorted(p.stem for p in GRADED19.glob("*.txt"))
    assert right >= GRADED19_FLOOR, table

