"""graded17 (tests/fixtures/graded17), held out: what main d14b247 drafts for ten real reports, and its score against
the fixture's EXPECTED.md (its Results section grades them by hand, strictly; this file's scorer gives the same
figure field by field)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_reports import (
    ALL_LANES,
    DEV_LANES,
    DEVICE,
    HUB,
    ROOT,
    TWO_AT,
    _pinned,
)

GRADED17 = ROOT / "tests" / "fixtures" / "graded17"
# Checkouts with no project on the package index (pypi.org answered 404 to `new`'s lookup for each).
CHECKOUTS_17 = {"fast-reid", "trackformer", "instructdiffusion", "llama2-c"}
ALL = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
GPU_RUN = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}  # a dtype error of a GPU run
GIT = "@ git+https://github.com/"
STFT = "stft input and window must be on the same device but got self on cuda:0 and window on cpu"
INDICES = "indices should be either on cpu or on the same device as the indexed tensor (cpu)"
ADDCMUL = ("addcmul_ received an invalid combination of arguments - got (int, torch.cuda.FloatTensor, "
           "torch.cuda.FloatTensor), but expected one of:")
MM = " (when checking argument for argument mat2 in method wrapper_CUDA_mm)"


@pytest.fixture(autouse=True)
def _index_without_the_checkouts(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(reports, "NOT_RELEASED", reports.NOT_RELEASED | CHECKOUTS_17)
    yield


# The rows assert what main d14b247 drafts now (test_new_reports' HELD_OUT columns), known misses included (marked),
# so a change to any of them is seen.
HELD_OUT_17 = {
    # known misses: T (no API: the failing line, "recover" and "adagrad" not used), P (no torch 0.3), L and D (a
    # TypeError naming torch.cuda tensors read as "not a device error"), S (no frame: the failing line not shown)
    "allennlp-1102": ("TypeError", ADDCMUL, "allennlp", "allennlp training: addcmul_ received", DEVICE, True, "allennlp==X.Y.Z",
                      0),
    # commit pins: the report installed a clone of the repository (`pip install .`), fixenv2
    "diffusers-5897": ("RuntimeError", f"{TWO_AT}cuda:0 and cpu!{MM}", "diffusers",
                       "diffusers train_text_to_image_lora.py: Expected all", DEVICE, True,
                       f"diffusers {GIT}huggingface/diffusers@<commit>", 0),
    "fast-reid-469": ("RuntimeError", f"{TWO_AT}cuda:0 and cpu!", "fast-reid", "fast-reid preprocess_image: Expected",
                      DEVICE, True, f"fast-reid {GIT}JDAI-CV/fast-reid@<commit>", 3),
    # known misses: L (cpu reproduces with no reason), S (forward skipped); T and M kept the bold's closing `"**` on
    # main d14b247, fixed by fixframe (not held out)
    "instructdiffusion-22": ("RuntimeError", "expected scalar type Half but found Float", "instructdiffusion",
                             "instructdiffusion get_input: expected scalar type Half but found Float", GPU_RUN, False,
                             f"instructdiffusion {GIT}cientgu/InstructDiffusion@<commit>", 2),
    "llama2c-148": ("KeyError", "'optimizer'", "llama2-c", "llama2-c train.py: KeyError 'optimizer'", ALL, False,
                    f"llama2-c {GIT}karpathy/llama2.c@<commit>", 1),
    # known misses: V (the environment dict's 'Python': '3.8.6' not read); P right after fixlanes5 (torch==2.0.0)
    "mmpose-2364": ("RuntimeError", INDICES, "mmpose", "mmpose: indices should", DEVICE, True, "mmpose==X.Y.Z", 0),
    # known misses: F (a speechbrain release; the fix is the Hub model's yaml), S (the
    # from_hparams call not carried)
    "speechbrain-2804": ("RuntimeError", f"{TWO_AT}cuda:1 and cpu!{MM}", "speechbrain", "speechbrain SaveableDataLoader: Expected",
                         DEVICE, True, "speechbrain==X.Y.Z", 0),
    "torchaudio-3446": ("RuntimeError", STFT, "torchaudio", f"torchaudio _stretch_waveform: {STFT}", DEVICE, True,
                        "torchaudio==X.Y.Z", 4),
    # P: torch==2.13.0 kept when graded; a torch placeholder naming 1.13.1 since fixtitle2
    "trackformer-85": ("RuntimeError", INDICES, "trackformer", "trackformer add_track_queries_to_targets: indices",
                       DEVICE, True, f"trackformer {GIT}timmeinhardt/trackformer@<commit>", 3),
    # refused on main d14b247 (its Logs paraphrase the message without a class); drafted since fixframe (not held out):
    # known misses: T (no API), L (not a device error: all lanes), S (no frames)
    "diffusers-4139": ("RuntimeError", "expected BFloat16 but found Float", "diffusers",
                       "diffusers training: expected BFloat16", ALL, False, "diffusers==0.18.2", 0),
}


@pytest.mark.parametrize("name", sorted(HELD_OUT_17))
def test_a_seventeenth_set_report_drafts_what_main_drafted(name: str) -> None:
    reports.assert_drafted(*reports._graded(GRADED17, name), HELD_OUT_17[name])



# EXPECTED.md's accepted values, as test_new_reports' MAINTAINER_12 columns (title, exception, message, blamed, buggy
# pin, fix pin, lanes, torch read, Pythons accepted, Python required), graded strictly as its Results: a title needs
# the project, an API the report shows or names, and the symptom, with no junk (a stray quote included); STATED_17
# adds what these columns cannot say.
MAINTAINER_17 = {
    "allennlp-1102": (r"^allennlp [^:]*(?:recover|[Aa]dagrad|addcmul_)[^:]*: addcmul_ received an invalid combination of "
                      r"arguments - got \(int, torch\.cuda\.FloatTensor, torch\.cuda\.FloatTensor\)", "TypeError",
                      ADDCMUL, {"allennlp"}, None, "#1144", DEV_LANES, None, (), False),
    "diffusers-4139": (r"^diffusers [^:]*(?:CustomDiffusionAttnProcessor|to_k_custom_diffusion|train_custom_diffusion)"
                       r"[^:]*: expected (?:scalar type )?BFloat16 but found Float$", "RuntimeError",
                       "expected BFloat16 but found Float", {"diffusers"}, "diffusers==0.18.2", None, ALL_LANES,
                       "1.12.1", ("3.7.13",), True),
    "diffusers-5897": (rf"^diffusers [^:]*(?:train_text_to_image_lora(?:\.py)?|LoRA text-to-image)[^:]*: "
                       rf"{re.escape(TWO_AT)}cuda:0 and cpu! \((?:\.\.\.|when checking).*wrapper_CUDA_mm\)$",
                       "RuntimeError", f"{TWO_AT}cuda:0 and cpu!{MM}", {"diffusers"}, f"{HUB}huggingface/diffusers@",
                       f"{HUB}huggingface/diffusers", DEV_LANES, None, (), False),
    "fast-reid-469": (rf"^(?i:fast-reid|fastreid) [^:]*(?:demo(?:/demo)?\.py|run_on_image|__call__|forward|"
                      rf"preprocess_image)[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                      f"{TWO_AT}cuda:0 and cpu!", {"fast-reid", "fastreid"}, f"{HUB}JDAI-CV/fast-reid@",
                      f"{HUB}JDAI-CV/fast-reid", DEV_LANES, None, ("3.7",), False),
    "instructdiffusion-22": (r"^(?i:instructdiffusion) [^:]*(?:main\.py|ddpm_edit\.py|forward|get_input)[^:]*: expected "
                             r"scalar type Half but found Float$", "RuntimeError", "expected scalar type Half but found Float",
                             {"instructdiffusion"}, f"{HUB}cientgu/InstructDiffusion@", f"{HUB}cientgu/InstructDiffusion",
                             {"cpu": {"unsupported", "reproduces"}, "cuda": {"reproduces"}}, None, ("3.8",), False),
    "llama2c-148": (r"^llama2[.-]?c [^:]*(?:train\.py|[Rr]esum|load_state_dict)[^:]*: (?:KeyError:? )?'optimizer'$",
                    "KeyError", "'optimizer'", {"llama2-c", "llama2.c", "llama2c"}, f"{HUB}karpathy/llama2.c@",
                    f"{HUB}karpathy/llama2.c", ALL_LANES, None, (), False),
    "mmpose-2364": (rf"^mmpose(?: [^:]*(?:PyTorch 2\.0|[Ww]indows|cuda|CUDA)[^:]*)?: {re.escape(INDICES)}$",
                    "RuntimeError", INDICES, {"mmpose"}, None, None, DEV_LANES, "2.0.0", ("3.8.6",), True),
    "speechbrain-2804": (rf"^(?:speechbrain|asr-crdnn-switchboard)\b[^:]*(?:EncoderDecoderASR|asr-crdnn-switchboard|"
                         rf"SaveableDataLoader|ctc_lin)[^:]*: {re.escape(TWO_AT)}cuda:1 and cpu! \(.*wrapper_CUDA_mm\)$",
                         "RuntimeError", f"{TWO_AT}cuda:1 and cpu!{MM}", {"speechbrain", "asr-crdnn-switchboard"}, None,
                         "asr-crdnn-switchboard", DEV_LANES, None, (), False),
    "torchaudio-3446": (rf"^torchaudio (?:PitchShift(?:\.forward|\.__init__)?|(?:_transforms\.py )?forward|"
                        rf"(?:functional\.py )?_stretch_waveform)\b[^:]*: {re.escape(STFT)}$", "RuntimeError", STFT,
                        {"torchaudio"}, None, None, DEV_LANES, None, ("3.9",), False),
    "trackformer-85": (rf"^trackformer (?:(?:src/)?train(?:\.py)?|(?:engine\.py )?train_one_epoch|(?:detr_tracking\.py )?"
                       rf"(?:forward|add_track_queries_to_targets))\b[^:]*: {re.escape(INDICES)}$", "RuntimeError",
                       INDICES, {"trackformer"}, f"{HUB}timmeinhardt/trackformer@", f"{HUB}timmeinhardt/trackformer",
                       DEV_LANES, "1.13.1", ("3.7",), False),
}


def _torch_pinned(*releases: str) -> Callable[[dict[str, Any]], bool]:
    """A buggy variant that runs the report's torch: a pin of one of its releases, or a torch placeholder."""
    pinned = re.compile(rf"torch==(?:{'|'.join(map(re.escape, releases))})|FILL-IN.*\btorch\b")
    return lambda data: any(pinned.match(line) for line in [*data["requires"], *data["variants"]["buggy"]["requires"]])


# What the expectation asks beyond MAINTAINER_17's columns: the torch each old bug needs (allennlp's pre-0.4 TypeError,
# mmpose's stated 2.0.0, trackformer's stated 1.13.1, diffusers-4139's stated 1.12.1), the Hub model's revision for
# speechbrain, DeepSpeed's placeholder for InstructDiffusion, and a reason for InstructDiffusion's cpu lane.
STATED_17: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "allennlp-1102": {"P": _torch_pinned("0.3")},
    "diffusers-4139": {"P": _torch_pinned("1.12.1")},
    "instructdiffusion-22": {"P": lambda data: "deepspeed" in _pinned(data),
                             "L": lambda data: ":" in data["variants"]["buggy"]["expect"]["cpu"]},
    "mmpose-2364": {"P": _torch_pinned("2.0.0")},
    "speechbrain-2804": {"P": lambda data: "asr-crdnn-switchboard" in _pinned(data)},
    "trackformer-85": {"P": _torch_pinned("1.13.1")},
}
GRADED17_FLOOR = 75  # of 80: 57 held out (main d14b247, this scorer; 57 by hand, strict; 61 lenient); 63 after fixenv + fixtitle2;
# 72 with fixframe merged, 74 after fixenv2 (NOT held out); 75 after fixlanes5 (mmpose-2364 P: torch==2.0.0)


def test_the_seventeenth_held_out_set_scores_at_least_its_measured_fields() -> None:
    reports.assert_set_scores(GRADED17, MAINTAINER_17, HELD_OUT_17, STATED_17, GRADED17_FLOOR)

