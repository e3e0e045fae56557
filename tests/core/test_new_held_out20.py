"""graded20 (tests/fixtures/graded20), held out: what `new` drafts for each real report, and the 8-field score
against its EXPECTED.md (issue 21 §1), as graded16 is wired in tests/core/test_new_reports.py.

Drafted on main d14b247 (EXPECTED.md's Results); HELD_OUT_20's rows assert what is drafted now, known misses
included (marked), so a change to any of them is seen. MAINTAINER_20 encodes EXPECTED.md's accepted values, graded
strictly as its Results: the floor is the strict score measured there."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.core import test_new_reports as reports
from tests.core.test_new_reports import (
    DEV_LANES,
    DEVICE,
    FP16_LANES,
    GIT,
    GPU_LANES,
    HUB,
    TWO_AT,
    TWO_GPUS,
    _pinned,
)

GRADED20 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded20"
ALL = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
ON_ANY = {"cpu": {"reproduces"}, "cuda": {"reproduces"}}
# The index's answers `new` got on 2026-11-29 for graded20's names: the checkouts are 404s, PyPI's tts is Coqui's.
NOT_RELEASED_20 = {"clearervoice-studio", "drl-robot-navigation", "swin-transformer"}
INDEX_URLS_20 = {"tts": ("https://github.com/coqui-ai/TTS",)}
PLACED = f"{TWO_AT}cuda:0 and cpu!"
CLAMP = f"{PLACED} (when checking argument for argument max in method wrapper_CUDA_clamp_Tensor)"
WEIGHTS = ("Weights only load failed. This file can still be loaded, to do so you have two options, do those steps only "
           "if you trust the source of the checkpoint.")
MAT1 = "expected mat1 and mat2 to have the same dtype, but got: struct c10::Half != float"
HELD_OUT_20 = {
    # T: the bare "train" when graded; solver.py train since fixtitle2
    "clearervoice-studio-5": ("KeyError", "'lr'", "clearervoice-studio", "clearervoice-studio solver.py train: KeyError 'lr'", ALL,
                              False, f"clearervoice-studio {GIT}modelscope/ClearerVoice-Studio@<commit>", 1),
    # known misses: P (no TTS placeholder), S (no Tacotron2 Capacitron model)
    "coqui-trainer-72": ("RuntimeError", PLACED, "trainer", "trainer train_epoch: Expected all", DEVICE, True,
                         "trainer==X.Y.Z", 2),
    # known miss: S (the innermost frame only, not the report's network.to_priority call)
    "drl-robot-navigation-142": ("RuntimeError", PLACED, "drl-robot-navigation",
                                 "drl-robot-navigation to_priority: Expected all", DEVICE, True,
                                 f"drl-robot-navigation {GIT}reiniscimurs/DRL-robot-navigation@<commit>", 1),
    # known misses: none of T or P since fixtitle2 (mozilla/TTS losses.py forward) and fixenv (the egg's 6d6dca0)
    "mozilla-tts-491": ("RuntimeError", PLACED, "tts", "mozilla/TTS losses.py forward: Expected all", DEVICE, True,
                        f"tts {GIT}mozilla/TTS@6d6dca0", 3),
    # known miss: S (no model sweep)
    "pytorch-tabular-548": ("UnpicklingError", WEIGHTS, "pytorch-tabular", "pytorch_tabular pl_load: Weights only",
                            ALL, False, "pytorch-tabular==X.Y.Z", 2),
    # known misses: T (compute_loss; since fixlanes the prose's "GPUs"), P and F (no smollm commit pin); B smollm since
    # fixlanes (the traceback stops at torch's Module call: the project the report is filed on; transformers accepted)
    "smollm-32": ("RuntimeError", f"{TWO_AT}cuda:1 and cuda:0!", "smollm", "smollm GPUs: Expected all",
                  TWO_GPUS, True, "smollm==X.Y.Z", 4),
    # known misses: P (no deepspeed), S; M kept the markdown "**" on main d14b247, fixed by fixframe (not held out)
    "stable-audio-tools-198": ("RuntimeError", "Found dtype Float but expected Half", "stable-audio-tools",
                               "stable-audio-tools train.py: Found dtype",
                               {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}, False, "stable-audio-tools==0.0.19",
                               0),
    # known miss: S (no frame, no WindowAttention); T kept the prose's "happend" on main d14b247, cut by fixframe (not
    # held out)
    "swin-transformer-377": ("RuntimeError", CLAMP, "swin-transformer",
                             f"swin-transformer swin_transformer_v2.py: {PLACED} (... wrapper_CUDA_clamp_Tensor)", DEVICE, True,
                             f"swin-transformer {GIT}microsoft/Swin-Transformer@<commit>", 0),
    # since fixframe (not held out): the "Describe the bug" line over the chained cause (T E M B right); known misses:
    # P and F (textgen's release placeholder: PyPI's textgen is another project), S; L right since fixlanes3
    "textgen-6093": ("RuntimeError", MAT1, "textgen", f"textgen reload_model: {MAT1}", FP16_LANES, False,
                     "pin the textgen release", 1),
    # known misses: T (no API named: the reply's get_device is skipped), S (no PositionalEncoding)
    "wingedsheep-transformer-4": ("RuntimeError", PLACED, "transformer", "wingedsheep/transformer: Expected",
                                  DEVICE, True, f"transformer {GIT}wingedsheep/transformer@<commit>", 0),
}
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API the
# report shows on the failing path from the per-report list (a bare generic method such as "train" or "forward" is
# not one) and the message, with no junk after it; textgen's HFValidationError cause is accepted as E/M only with B
# text-generation-webui (not encoded: the primary dtype error is).
MAINTAINER_20 = {
    "clearervoice-studio-5": (r"^(?i:ClearerVoice-Studio) [^:]*(?:Solver\.train|solver\.py|train\.py main|LR halving)"
                              r"[^:]*: KeyError 'lr'$", "KeyError", "'lr'", {"clearervoice-studio"},
                              f"{HUB}modelscope/ClearerVoice-Studio@", f"{HUB}modelscope/ClearerVoice-Studio", ON_ANY,
                              None, (), False),
    "coqui-trainer-72": (rf"^(?i:(?:coqui[- ])?(?:trainer|tts)) [^:]*(?:\b(?:Trainer\.)?(?:fit|_fit|train_epoch|train_step)"
                         rf"\b|Capacitron|Tacotron2?)[^:]*: {re.escape(PLACED)}$", "RuntimeError", PLACED,
                         {"trainer", "tts"}, None, None, DEV_LANES, None, ("3.9",), False),
    "drl-robot-navigation-142": (rf"^(?i:DRL-robot-navigation) [^:]*(?:to_priority|TD3\.py|train_velodyne_td3\.py)[^:]*: "
                                 rf"{re.escape(PLACED)}$", "RuntimeError", PLACED, {"drl-robot-navigation"},
                                 f"{HUB}reiniscimurs/DRL-robot-navigation@", f"{HUB}reiniscimurs/DRL-robot-navigation",
                                 DEV_LANES, None, (), False),
    "mozilla-tts-491": (rf"^(?i:mozilla[ /-]TTS) [^:]*(?:losses\.py|TacotronLoss|GuidedAttentionLoss|criterion_ga|"
                        rf"_make_ga_masks?|train\.py)[^:]*: {re.escape(PLACED)}$", "RuntimeError", PLACED,
                        {"tts", "mozilla-tts"}, f"{HUB}mozilla/TTS@6d6dca0", f"{HUB}mozilla/TTS", DEV_LANES, None,
                        ("3.6",), False),
    "pytorch-tabular-548": (r"^(?:pytorch_tabular|pytorch-tabular) [^:]*(?:pl_load|model_sweep|model sweep)[^:]*: "
                            r"Weights only load failed", "UnpicklingError", WEIGHTS, {"pytorch-tabular"}, None, None,
                            ON_ANY, None, ("3.10",), False),
    "smollm-32": (rf"^(?i:smollm|transformers) [^:]*(?:Smol_VLM_FT\.py|SmolVLM|fine-?tuning notebook|trainer\.train|"
                  rf"Trainer\.train|Idefics3)[^:]*: {re.escape(TWO_AT)}cuda:1 and cuda:0!$", "RuntimeError",
                  f"{TWO_AT}cuda:1 and cuda:0!", {"smollm", "transformers"}, None, None,
                  {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, ("3.11",), False),
    "stable-audio-tools-198": (r"^(?i:stable-audio-tools|stable_audio_tools) [^:]*(?:DiffusionCondTrainingWrapper|"
                               r"\btraining_step|diffusion\.py|train\.py|[Dd]eep[Ss]peed)[^:]*: Found dtype Float but "
                               r"expected Half$", "RuntimeError", "Found dtype Float but expected Half",
                               {"stable-audio-tools"}, None, None, GPU_LANES, None, ("3.10",), False),
    "swin-transformer-377": (rf"^(?i:Swin-Transformer) [^:]*(?:swin_transformer_v2\.py|WindowAttention|clamp|logit_scale)"
                             rf"[^:]*: {re.escape(PLACED)}(?: \(.*wrapper_CUDA_clamp(?:_Tensor\))?)?$", "RuntimeError",
                             CLAMP, {"swin-transformer"}, f"{HUB}microsoft/Swin-Transformer@",
                             f"{HUB}microsoft/Swin-Transformer", DEV_LANES, None, (), False),
    "textgen-6093": (rf"^(?i:text-generation-webui|textgen|oobabooga/textgen|peft) [^:]*(?:do_train|reload_model|LoRA)"
                     rf"[^:]*: {re.escape(MAT1)}$", "RuntimeError", MAT1, {"text-generation-webui", "textgen", "peft"},
                     (f"{HUB}oobabooga/text-generation-webui@", f"{HUB}oobabooga/textgen@", "peft=="), None, GPU_LANES,
                     None, (), False),
    "wingedsheep-transformer-4": (rf"^(?i:wingedsheep/transformer|transformer) [^:]*(?:PositionalEncoding|"
                                  rf"create_positional_encoding|main\.py|positional encoding)[^:]*: {re.escape(PLACED)}$",
                                  "RuntimeError", PLACED, {"transformer", "wingedsheep-transformer"},
                                  f"{HUB}wingedsheep/transformer@", f"{HUB}wingedsheep/transformer", DEV_LANES, None, (),
                                  False),
}


def _fix(data: dict[str, Any]) -> str:
    return " ".join(data["variants"]["fix"]["requires"])


def _cpu_reason(data: dict[str, Any]) -> bool:
    return ":" in data["variants"]["buggy"]["expect"]["cpu"]


# What EXPECTED.md asks beyond MAINTAINER_20's columns: smollm's commit pin of huggingface/smollm (no fix: a commit
# placeholder), coqui's TTS placeholder beside trainer's, stable-audio-tools' deepspeed placeholder, pytorch_tabular's
# torch >= 2.6, ClearerVoice's fix not 89dc5c7 alone, and a cpu kind "with a reason" where two are accepted.
STATED_20: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "smollm-32": {"P": lambda data: f"{HUB}huggingface/smollm@" in _pinned(data),
                  "F": lambda data: f"{HUB}huggingface/smollm" in _fix(data)},
    "coqui-trainer-72": {"P": lambda data: re.search(r"\btrainer(?:==| @ git\+)", _pinned(data)) is not None
                         and re.search(r"(?i)\btts(?:==| @ git\+)", _pinned(data)) is not None},
    "stable-audio-tools-198": {"P": lambda data: re.search(r"\bdeepspeed(?:==| @ git\+)", _pinned(data)) is not None,
                               "L": _cpu_reason},
    "pytorch-tabular-548": {"P": lambda data: re.search(r"\btorch==2\.(?:[6-9]|\d\d)\b", _pinned(data)) is not None},
    "clearervoice-studio-5": {"F": lambda data: "89dc5c7" not in _fix(data) or "4b214ba" in _fix(data)},
    "textgen-6093": {"L": _cpu_reason},
}
GRADED20_FLOOR = 73  # of 80: 60 held out (main d14b247, this scorer; 60 by hand, strict; 70 lenient); 65 after fixenv + fixtitle2 + fixrest;
# 72 with fixframe merged; 73 after fixlanes3 (textgen-6093 L) (NOT held out)


@pytest.fixture(autouse=True)
def _graded20_index(monkeypatch: pytest.MonkeyPatch) -> None:
    reports.answer_for(monkeypatch, NOT_RELEASED_20, INDEX_URLS_20)


@pytest.mark.parametrize("name", sorted(HELD_OUT_20))
def test_a_graded20_report_drafts_what_it_drafted_when_graded(name: str) -> None:
    reports.assert_drafted(*reports._graded(GRADED20, name), HELD_OUT_20[name])


def test_the_twentieth_held_out_set_scores_at_least_its_measured_fields() -> None:
    reports.assert_set_scores(GRADED20, MAINTAINER_20, HELD_OUT_20, STATED_20, GRADED20_FLOOR)
