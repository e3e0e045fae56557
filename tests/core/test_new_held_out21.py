"""graded21 (tests/fixtures/graded21), held out: what `new` drafts for each real report, and the 8-field score
against its EXPECTED.md (issue 21 §1), as graded16 is wired in tests/core/test_new_reports.py.

Drafted on main 4ca186d (EXPECTED.md's Results); HELD_OUT_21's rows assert what is drafted now, known misses
included (marked), so a change to any of them is seen. MAINTAINER_21 encodes EXPECTED.md's accepted values, graded
strictly as its Results: the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core import test_new_reports as reports
from tests.core.test_new_reports import DEV_LANES, DEVICE, GIT, HUB, TWO_AT, _pinned

GRADED21 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded21"
ALL = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
ON_ANY = {"cpu": {"reproduces"}, "cuda": {"reproduces"}}
# The index's answers `new` got on 2026-11-29 for graded21's names: no such project for the checkouts (and sam2's
# `training`); PyPI's kraken and starling are read as other projects (kraken.re is in fact kraken's own site).
NOT_RELEASED_21 = {"e5-mistral-7b-instruct", "geektime-semantic-segmentation", "mllmseg", "training"}
INDEX_URLS_21 = {"kraken": ("https://kraken.re",), "starling": ("https://github.com/geoneric/starling",)}
PLACED = f"{TWO_AT}cuda:0 and cpu!"
NLL = f"{PLACED} (when checking argument for argument target in method wrapper_nll_loss_forward)"
ADDMM = f"{TWO_AT}cpu and cuda:0! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)"
INITIAL_LR = "\"param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer\""
HYDRA = "Error in call to target 'training.trainer.Trainer':"
HELD_OUT_21 = {
    # known misses: P (composer, not PyPI's mosaicml), S; T names the fenced train_and_eval since fixshown (not held
    # out)
    "composer-1092": ("RuntimeError", NLL, "composer", f"composer train_and_eval: {PLACED} (when checking", DEVICE, True,
                      "composer==X.Y.Z", 0),
    # known misses: T (no API; the title's scheduler.py __init__ since fixtitle3 is the checkout's), S
    "deocclusion-43": ("KeyError", INITIAL_LR, "deocclusion", "deocclusion", ALL, False,
                       f"deocclusion {GIT}XiaohangZhan/deocclusion@<commit>", 1),
    # known miss: S (DeepSpeed's forward shown as where it failed); T right since fixtitle3 (main, not the bare model)
    "e5-mistral-7b-instruct-1": ("RuntimeError", PLACED, "e5-mistral-7b-instruct",
                                 f"e5-mistral-7b-instruct main: {PLACED}", DEVICE, True,
                                 f"e5-mistral-7b-instruct {GIT}kamalkraj/e5-mistral-7b-instruct@<commit>", 2),
    # known misses: S; T names the reply's `forward` body since fixshown (not held out)
    "geektime-semantic-segmentation-1": ("RuntimeError", PLACED, "geektime-semantic-segmentation",
                                         f"geektime-semantic-segmentation forward: {PLACED}", DEVICE, True,
                                         f"{GIT}syuu1987/geekTime-semantic-segmentation@<commit>", 0),
    # known miss: S (torch's pin_memory frame only); T right since fixtitle3 (the title's `ketos test`), P since fixenv2
    # (kraken.re is the project's site), L and D since fixlanes (pin-memory thread under `--device cpu`)
    "kraken-380": ("RuntimeError", "CUDA error: out of memory", "kraken", "kraken ketos test: CUDA error: out of memory",
                   {"cpu": "unsupported", "cuda": "reproduces"}, True, "kraken==X.Y.Z", 1),
    # known miss: S; P right since fixenv2 (the stated 0.8.0), L since fixlanes (HYBRID_SHARD: cpu unsupported)
    "llm-foundry-1231": ("KeyError", "'state'", "llm-foundry", "llm-foundry main: KeyError 'state'",
                         {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}, False,
                         "llm-foundry==0.8.0", 1),
    # known misses: T (the bare source line's call `offset` since fixshown, not DySample.forward_lp / init_pos), S
    "mllmseg-2": ("RuntimeError", PLACED, "mllmseg", f"mllmseg offset: {PLACED}", DEVICE, True,
                  f"mllmseg {GIT}jcwang0602/MLLMSeg@<commit>", 0),
    # known miss: S (no agent built with a device)
    "morl-baselines-153": ("RuntimeError", ADDMM, "morl-baselines", f"morl-baselines: {TWO_AT}cpu and cuda:0!", DEVICE,
                           True, "morl-baselines==X.Y.Z", 0),
    # known misses: T B P F (hydra, whose exception class the text names, drafted as the project), L (no reason), S
    "sam2-415": ("InstantiationException", HYDRA, "hydra", f"hydra: {HYDRA}", ALL, False, "hydra==X.Y.Z", 0),
    # known misses: P and F (a `starling` commit pin: the repository's distribution is biostarling), S; L right since
    # fixlanes (cpu "unsupported: <why>", a kind validate takes)
    "starling-46": ("RuntimeError", PLACED, "starling", f"starling ST.train_and_fit: {PLACED}",
                    {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}, True,
                    f"starling {GIT}camlab-bioml/starling@<commit>", 2),
}
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list (the bare noun "model" is not e5's `model(...)` call) and the message.
MAINTAINER_21 = {
    "composer-1092": (rf"^(?i:composer) [^:]*(?:train_and_eval|Composer_Functional)[^:]*: {re.escape(PLACED)}"
                      r"(?: \(.*wrapper_nll_loss_forward\))?$", "RuntimeError", NLL, {"composer", "mosaicml"},
                      (f"{HUB}mosaicml/composer@", "mosaicml"), f"{HUB}mosaicml/composer@68a3f92", DEV_LANES, None, (),
                      False),
    "deocclusion-43": (r"^(?i:deocclusion) [^:]*(?:__init__|scheduler\.py|_LRScheduler|StepLRScheduler)[^:]*: "
                       r"(?:KeyError )?\"?param 'initial_lr' is not specified in param_groups\[0\] when resuming an "
                       r"optimizer\"?$", "KeyError", INITIAL_LR, {"deocclusion"}, f"{HUB}XiaohangZhan/deocclusion@",
                       f"{HUB}XiaohangZhan/deocclusion", ON_ANY, None, (), False),
    "e5-mistral-7b-instruct-1": (rf"^(?i:e5-mistral-7b-instruct) [^:]*(?:\bmain\b|peft_lora_embedding_semantic_search"
                                 rf"\.py|model\(|sentence_embs)[^:]*: {re.escape(PLACED)}$", "RuntimeError", PLACED,
                                 {"e5-mistral-7b-instruct"}, f"{HUB}kamalkraj/e5-mistral-7b-instruct@",
                                 f"{HUB}kamalkraj/e5-mistral-7b-instruct", DEV_LANES, None, ("3.10",), False),
    "geektime-semantic-segmentation-1": (rf"^(?i:geekTime-semantic-segmentation) [^:]*(?:forward|unet\.py|BatchNorm2d)"
                                         rf"[^:]*: {re.escape(PLACED)}$", "RuntimeError", PLACED,
                                         {"geektime-semantic-segmentation"},
                                         f"{HUB}syuu1987/geekTime-semantic-segmentation@",
                                         f"{HUB}syuu1987/geekTime-semantic-segmentation", DEV_LANES, None, (), False),
    "kraken-380": (r"^(?i:kraken) [^:]*(?:ketos test|ketos\.py|\btest\b)[^:]*: (?:Caught RuntimeError in pin memory "
                   r"thread for device 0\.?|CUDA error: out of memory)$", "RuntimeError",
                   "CUDA error: out of memory", {"kraken"}, "kraken==", None,
                   {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}, None, ("3.8",), False),
    "llm-foundry-1231": (r"^(?i:llm-foundry|composer) [^:]*(?:train\.py|\bmain\b)[^:]*: KeyError 'state'$", "KeyError",
                         "'state'", {"llm-foundry", "composer"}, "llm-foundry==0.8.0", None,
                         {"cpu": {"unsupported"}, "cuda": {"reproduces", "unsupported"}}, None, (), False),
    "mllmseg-2": (rf"^(?i:MLLMSeg) [^:]*(?:DySample|forward_lp|init_pos)[^:]*: {re.escape(PLACED)}$", "RuntimeError",
                  PLACED, {"mllmseg"}, f"{HUB}jcwang0602/MLLMSeg@", f"{HUB}jcwang0602/MLLMSeg", DEV_LANES, None, (),
                  False),
    "morl-baselines-153": (rf"^(?i:morl-baselines)(?: [^:]*(?:PCN|MOPolicy)[^:]*)?: {re.escape(TWO_AT)}cpu and "
                           r"cuda:0!(?: \(.*wrapper_CUDA_addmm\))?$", "RuntimeError", ADDMM, {"morl-baselines"},
                           None, None, DEV_LANES, None, (), False),
    "sam2-415": (r"^(?i:sam2) [^:]*(?:training\.trainer\.Trainer|VOSDataset|vos_dataset)[^:]*: Error in call to target "
                 r"'training\.trainer\.Trainer'", "InstantiationException", HYDRA, {"sam2"},
                 f"{HUB}facebookresearch/sam2@", None,
                 {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces", "unsupported"}}, "2.5", (), False),
    "starling-46": (rf"^(?i:starling) [^:]*train_and_fit[^:]*: {re.escape(PLACED)}$", "RuntimeError", PLACED,
                    {"starling", "biostarling"}, "biostarling", None,
                    {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}, None, ("3.10",), False),
}


def _fix(data: dict[str, Any]) -> str:
    return " ".join(data["variants"]["fix"]["requires"])


def _cpu_reason(data: dict[str, Any]) -> bool:
    """A cpu kind with its reason that validate takes: the schema admits a reason only after "unsupported: " (a
    "passes" whose reason is a YAML comment is right by hand; the scorer, reading data, cannot see it)."""
    return re.fullmatch(r"unsupported: .+", data["variants"]["buggy"]["expect"]["cpu"]) is not None


def _every_lane_reason(data: dict[str, Any]) -> bool:
    return all(re.fullmatch(r"unsupported: .+", kind) for kind in data["variants"]["buggy"]["expect"].values())


# What EXPECTED.md asks beyond MAINTAINER_21's columns: sam2's stated tensordict 0.6 and a reason on every lane,
# starling's fix not under the `starling` name (the repository's distribution is biostarling), kraken's and
# starling's cpu kind with a reason, llm-foundry's GPU lanes with one.
STATED_21: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "sam2-415": {"P": lambda data: re.search(r"\btensordict==0\.6\b", _pinned(data)) is not None,
                 "L": _every_lane_reason},
    "starling-46": {"F": lambda data: re.search(r"(?<![\w-])starling @ git\+", _fix(data)) is None,
                    "L": _cpu_reason},
    "kraken-380": {"L": _cpu_reason},
}
GRADED21_FLOOR = 70  # of 80: 57 held out (main 4ca186d, this scorer; 57 by hand, strict; 63 lenient); 59 after
# fixtitle3, 63 after fixenv2, 60 after fixlanes, 68 all together, 70 with fixshown (composer, geektime T) (NOT held
# out)


@pytest.fixture(autouse=True)
def _graded21_index(monkeypatch: pytest.MonkeyPatch) -> None:
    reports.answer_for(monkeypatch, NOT_RELEASED_21, INDEX_URLS_21)


@pytest.mark.parametrize("name", sorted(HELD_OUT_21))
def test_a_graded21_report_drafts_what_it_drafted_when_graded(name: str) -> None:
    reports.assert_drafted(*reports._graded(GRADED21, name), HELD_OUT_21[name])


def test_the_twenty_first_held_out_set_scores_at_least_its_measured_fields() -> None:
    reports.assert_set_scores(GRADED21, MAINTAINER_21, HELD_OUT_21, STATED_21, GRADED21_FLOOR)
