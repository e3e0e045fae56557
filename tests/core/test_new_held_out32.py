"""graded32 (tests/fixtures/graded32), held out (issue 21 §1): ten real reports drafted by `new` on main ab612f7 and
graded by hand in EXPECTED.md's Results. HELD_OUT_32 asserts what is drafted now (none refused), known misses marked,
so a change to any of them is seen; MAINTAINER_32 encodes EXPECTED.md's accepted values, graded strictly as its
Results, and the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out22 import CPU_CUDA0, CUDA0_CPU, DEVICE, EVERYWHERE, _method, _title
from tests.core.test_new_held_out26 import Drafter, _checkout
from tests.core.test_new_reports import DEV_LANES, HUB

GRADED32 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded32"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by the
# grader): no project for four checkouts; PyPI's knowledgedistillation is another project (DunZhang's); PyPI's matgl
# links no repository.
NOT_RELEASED_32 = {"dive-into-dl-pytorch", "gazetteer-ner-acl19", "icefall", "lfesm"}
INDEX_URLS_32: dict[str, tuple[str, ...]] = {
    "knowledgedistillation": ("https://github.com/DunZhang/KnowledgeDistillation",), "matgl": ()}


@pytest.fixture(name="drafted")
def graded32_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded32's drafts, drafted as `new` drafted them: the index's answers for this set's names put beside the other
    sets' (`_graded` and `maintainer_fields` read them)."""
    reports.answer_for(monkeypatch, NOT_RELEASED_32, INDEX_URLS_32)
    return lambda name: reports._graded(GRADED32, name)


NO_CUDA = "Torch not compiled with CUDA enabled"
SELECT = f"{CPU_CUDA0} (when checking argument for argument index in method wrapper__index_select)"
NEGATIVE = "Device index must not be negative"
CPU_ONLY = {"cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}
DATA_DEVICE = "Specified device cuda:0 does not match device of data cuda:-2"
NONE_SUBSCRIPT = "'NoneType' object is not subscriptable"
DOUBLE = "Expected object of scalar type Double but got scalar type Float for argument #2 'mat2'"
NLL = ("Expected object of device type cuda but got device type cpu for argument #2 'target' in call to "
       "_thnn_nll_loss_forward")

HELD_OUT_32: dict[str, tuple[Any, ...]] = {
    # known miss (strict): P has no commit pin of the CPM repository beside the deepspeed placeholder
    "cpm-1-finetune-text-generation-5": ("TypeError", NONE_SUBSCRIPT, "deepspeed",
                                         f"deepspeed _load_checkpoint: {NONE_SUBSCRIPT}", EVERYWHERE, False,
                                         "pin the deepspeed release the report ran", 4),
    # known miss: S judgement (the command and its `"device": "cuda"` not carried); T right since fixtitle7 ("dptb
    # train"; "dptb dptb" when graded), NOT held out
    "deeptb-26": ("RuntimeError", CUDA0_CPU, "dptb", f"dptb train: {CUDA0_CPU}", DEVICE, True,
                  "pin the dptb release the report ran", 3),
    # known miss: S (the loop's `next(self.dl).cuda()` not carried); T right since fixtitle7 (the `#here` line's call;
    # "on CPU" when graded), NOT held out
    "denoising-diffusion-pytorch-8": ("AssertionError", NO_CUDA, "denoising-diffusion-pytorch",
                                      f"denoising-diffusion-pytorch next(self.dl).cuda(): {NO_CUDA}",
                                      {"cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}, True,
                                      "pin the denoising-diffusion-pytorch release the report ran", 0),
    # known miss (strict): P leaves the stated torch 1.2.0 in a FILL-IN (and no torchvision 0.4.0)
    "dive-into-dl-pytorch-31": ("RuntimeError", DOUBLE, "dive-into-dl-pytorch", f"dive-into-dl-pytorch linreg: {DOUBLE}",
                                EVERYWHERE, False,
                                _checkout("dive-into-dl-pytorch", "ShusenTang/Dive-into-DL-PyTorch"), 1),
    # L and D right since fixlanes4, T since fixtitle7 (NOT held out)
    "gazetteer-ner-acl19-5": ("RuntimeError", NEGATIVE, "gazetteer-ner-acl19",
                              f"gazetteer-ner-acl19 HSCRF_SoftDict.py forward: {NEGATIVE}",
                              CPU_ONLY, True, _checkout("gazetteer-ner-acl19", "lyutyuh/gazetteer-NER-acl19"), 1),
    # known misses (strict): P without a k2 placeholder; S judgement (the replies' src/index not carried)
    "icefall-33": ("RuntimeError", DATA_DEVICE, "icefall", f"icefall: {DATA_DEVICE}", DEVICE, True,
                   _checkout("icefall", "k2-fsa/icefall"), 0),
    # known miss: S judgement (the reply's "trains on the GPU by default" not carried)
    "knowledgedistillation-9": ("RuntimeError", NLL, "knowledgedistillation", f"knowledgedistillation: {NLL}", DEVICE,
                                True, _checkout("knowledgedistillation", "HoyTta0/KnowledgeDistillation"), 0),
    "lfesm-6": ("RuntimeError", SELECT, "lfesm", f"lfesm train.py: {SELECT}", DEVICE, True,
                _checkout("lfesm", "Thesharing/LFESM"), 0),
    "lighteval-176": ("RuntimeError", CPU_CUDA0, "lighteval", f"lighteval: {CPU_CUDA0}", DEVICE, True,
                      "pin the lighteval release the report ran", 0),
    # known miss: S judgement (`benzene.get_potential_energy()`, the call that fails, not carried)
    "matgl-228": ("RuntimeError", CUDA0_CPU, "matgl", f"matgl load_model: {CUDA0_CPU}", DEVICE, True,
                  _checkout("matgl", "materialyzeai/matgl"), 0),
}

CPU_OR_NOT = {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}
CPU_LANE = {"cpu": {"reproduces"}, "cuda": {"passes"}, "cuda-sim": {"passes", "unsupported"}}
INVERTED = {"cpu": {"reproduces"}, "cuda": {"passes"}, "cuda-sim": {"passes"}}
NO_CPU_OK = {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}
ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
CPM = "CPM-1-Finetune-Text-Generation"
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message (knowledgedistillation-9, lighteval-176 and icefall-33 show no call:
# project and message, an API optional); a "dptb dptb" title (the console script as the API) is not kept.
MAINTAINER_32 = {
    "cpm-1-finetune-text-generation-5": (
        rf"^(?:(?i:DeepSpeed) [^:]*load_checkpoint|(?i:{CPM}) [^:]*(?:load_checkpoint|setup_model_and_optimizer|"
        rf"utils\.py))[^:]*: {re.escape(NONE_SUBSCRIPT)}(?: \(.*\))?$", "TypeError", NONE_SUBSCRIPT,
        {"deepspeed", CPM.lower()}, None, None, NO_CPU_OK, None, ("3.6",), False),
    "deeptb-26": (_title("DeePTB|dptb", r"dptb train|\bmain\b|\btrain\b|trainer\.run|\brun\b|base_trainer", CUDA0_CPU,
                         r"(?: \(.*\))?"), "RuntimeError", CUDA0_CPU, {"dptb", "deeptb"},
                  (None, f"{HUB}deepmodeling/DeePTB@"), None, DEV_LANES, None, ("3.10",), False),
    "denoising-diffusion-pytorch-8": (
        _title("denoising[-_]diffusion[-_]pytorch", r"Trainer|\btrain\b|next\(self\.dl\)|\.cuda\(\)", NO_CUDA,
               r"(?: \(.*\))?"), "AssertionError", NO_CUDA, {"denoising-diffusion-pytorch", "denoising_diffusion_pytorch"},
        None, None, CPU_LANE, None, (), False),
    "dive-into-dl-pytorch-31": (_title("Dive-into-DL-PyTorch", r"linreg|loss\(net|data_iter|torch\.mm", DOUBLE,
                                       r"(?: \(.*\))?"), "RuntimeError", DOUBLE, {"dive-into-dl-pytorch"},
                                f"{HUB}ShusenTang/Dive-into-DL-PyTorch@", None, ALL_REPRODUCE, "1.2.0", (), False),
    "gazetteer-ner-acl19-5": (_title("gazetteer-NER-acl19", r"HSCRF_SoftDict|\bforward\b|end_token_embedding", NEGATIVE,
                                     r"(?: \(.*\))?"), "RuntimeError", NEGATIVE, {"gazetteer-ner-acl19"},
                              f"{HUB}lyutyuh/gazetteer-NER-acl19@", None, INVERTED, None, (), False),
    "icefall-33": (rf"^(?i:icefall|k2)(?:/k2)?(?: [^:]*)?: {re.escape(DATA_DEVICE)}(?: \(.*\))?$", "RuntimeError",
                   DATA_DEVICE, {"icefall", "k2"}, f"{HUB}k2-fsa/icefall@", None, CPU_OR_NOT, None, (), False),
    "knowledgedistillation-9": (rf"^(?i:KnowledgeDistillation)(?: [^:]*)?: {re.escape(NLL)}(?: \(.*\))?$",
                                "RuntimeError", NLL, {"knowledgedistillation"}, f"{HUB}HoyTta0/KnowledgeDistillation@",
                                None, DEV_LANES, None, (), False),
    "lfesm-6": (_title("LFESM", r"train\.py|\btrain\b", CPU_CUDA0, _method("wrapper__index_select")), "RuntimeError",
                SELECT, {"lfesm"}, f"{HUB}Thesharing/LFESM@", f"{HUB}Thesharing/LFESM", DEV_LANES, None, (), False),
    "lighteval-176": (rf"^(?i:lighteval)(?: [^:]*)?: {re.escape(CPU_CUDA0)}$", "RuntimeError", CPU_CUDA0, {"lighteval"},
                      None, None, DEV_LANES, None, (), False),
    "matgl-228": (_title("matgl", r"M3GNetCalculator|load_model|get_potential_energy|simple_m3gnet", CUDA0_CPU,
                         r"(?: \(.*\))?"), "RuntimeError", CUDA0_CPU, {"matgl"},
                  (f"{HUB}materialyzeai/matgl@", "matgl==1.0.0"), f"{HUB}materialyzeai/matgl", DEV_LANES, None,
                  ("3.11",), False),
}


def _pins(data: dict[str, Any]) -> list[str]:
    return [*data["requires"], *data["variants"]["buggy"]["requires"]]


# STATED_32: what the expectation asks beyond the columns (P): icefall's k2 placeholder beside the checkout's pin;
# the CPM repository's commit pin beside deepspeed's placeholder; dive-into-dl's stated torch 1.2.0 pinned, not a
# FILL-IN naming it.
STATED_32: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "icefall-33": {"P": lambda data: any(re.search(r"(?<![\w/-])k2(?:==| @ )", pin) for pin in _pins(data))},
    "cpm-1-finetune-text-generation-5": {"P": lambda data: any(f"{HUB}zhenhao-huang/{CPM}@" in pin
                                                               for pin in _pins(data))},
    "dive-into-dl-pytorch-31": {"P": lambda data: any(re.match(r"torch==1\.2\.0\b", pin) for pin in _pins(data))},
}
# of 80: 73 held out, main ab612f7, this scorer and by hand, strict; 77 lenient; NOT held out since: fixlanes4, fixtitle7
GRADED32_FLOOR = 77


@pytest.mark.parametrize(("name", "row"), sorted(HELD_OUT_32.items()), ids=sorted(HELD_OUT_32))
def test_a_graded32_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str, row: tuple[Any, ...]) -> None:
    """Each field as drafted, D included (the row's device-placement tag: 9 of 10 right when graded, gazetteer-ner-acl19-5
    then untagged although its `.cuda(get_device_of(spans))` on the CPU is a device-bound bug; 10 since fixlanes4)."""
    reports.assert_drafted(*drafted(name), row)


@pytest.mark.usefixtures("drafted")  # the index's answers in place: `maintainer_fields` drafts each report itself
def test_graded32_scores_its_measured_strict_fields_or_more() -> None:
    reports.assert_set_scores(GRADED32, MAINTAINER_32, HELD_OUT_32, STATED_32, GRADED32_FLOOR)
