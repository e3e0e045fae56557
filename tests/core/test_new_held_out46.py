"""graded46 (tests/fixtures/graded46), held out (issue 21 §1): nine real reports (a tenth was withdrawn after grading:
its bug lies in a reserved library) drafted by `new` on main 970d04b and graded by hand in EXPECTED.md's Results.
HELD_OUT_46 asserts what is drafted now, known misses marked; MAINTAINER_46 encodes the accepted values, graded strictly.

The floor is the strict hand grade of the nine; this scorer matched it field for field."""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out22 import CUDA0_CPU, DEVICE, EVERYWHERE, _title
from tests.core.test_new_held_out26 import Drafter, _checkout
from tests.core.test_new_held_out39 import _released
from tests.core.test_new_held_out41 import PLACEMENT
from tests.core.test_new_reports import GIT, HUB, TWO_AT

GRADED46 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded46"
# of 72: 63 held out on main 970d04b, by hand, strict (64 lenient)
GRADED46_FLOOR = 63
NOT_RELEASED_46 = {"color-diffusion", "comfy-mecha", "comfyui-stableaudiox", "cunerf", "fastfcn"}
URLS_46: dict[str, tuple[str, ...]] = {
    "and": (),  # a stub project of that name, linking nothing
    "dcls": ("https://github.com/K-H-Ismail/Dilated-Convolution-with-Learnable-Spacings-PyTorch/issues",
             "https://github.com/K-H-Ismail/Dilated-Convolution-with-Learnable-Spacings-PyTorch"),
    "dalle-pytorch": ("https://github.com/lucidrains/dalle-pytorch", "https://github.com/lucidrains/dalle-pytorch"),
    "dalle2-pytorch": ("https://github.com/lucidrains/dalle2-pytorch", "https://github.com/lucidrains/dalle2-pytorch"),
    "pytorch-lightning": ("https://github.com/Lightning-AI/lightning", "https://github.com/Lightning-AI/pytorch-lightning/issues"),
}


@pytest.fixture(name="drafted")
def graded46_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded46's drafts with the index's answers `new` got on 2026-11-29: no project for color-diffusion, comfy-mecha,
    comfyui-stableaudiox, cunerf, fastfcn; the project URLs of and (none), dcls, dalle-pytorch,
    dalle2-pytorch and pytorch-lightning."""
    reports.answer_for(monkeypatch, NOT_RELEASED_46, URLS_46)
    return partial(reports._graded, GRADED46)


GENERATOR = "Expected a 'cuda' device type for generator but found 'cpu'"
ENHANCED = f"Enhanced audio generation failed: {CUDA0_CPU}"
EMA = f"{TWO_AT}cuda:0 and CPU!"
RESNET = "Error(s) in loading state_dict for ResNet:"
SIZE = ("Error(s) in loading state_dict for DALLE:\n\tsize mismatch for transformer.layers.blocks.12.g.net.fn.fn.net.0."
        "weight: copying a param with shape torch.Size([1]) from checkpoint, the shape in current model is "
        "torch.Size([8192, 1024]).")


def _row(culprit: str, api: str, message: str, lanes: dict[str, str], pin: str, shown: int,
         title: str | None = None, exception: str = "RuntimeError") -> tuple[Any, ...]:
    """A drafted row: its title is the culprit, the API read (if any) and the message (or the title given)."""
    shown_title = title or message
    full = f"{culprit} {api}: {shown_title}" if api else f"{culprit}: {shown_title}"
    return exception, message, culprit, full, lanes, lanes is DEVICE, pin, shown


STABLEAUDIOX = _checkout("comfyui-stableaudiox", "lum3on/ComfyUI-StableAudioX")
HELD_OUT_46: dict[str, tuple[Any, ...]] = {
    # known misses: T and S (the API is the log table's first key, ANs_select_rate)
    "and-2": _row("and", "ANs_select_rate", RESNET, EVERYWHERE, _checkout("and", "Raymond-sci/AND"), 0),
    "color-diffusion-1": _row("color-diffusion", "train.py", CUDA0_CPU, DEVICE,
                              _checkout("color-diffusion", "ErwannMillon/Color-diffusion"), 2),
    # graded misses: T, S (the store's turn marker's CyberLykan as the API; none since), B, P, F (sd-mecha named)
    "comfy-mecha-15": _row("comfy-mecha", "", CUDA0_CPU, DEVICE, _checkout("comfy-mecha", "ljleb/comfy-mecha"), 0),
    # known miss: T judgement (no API besides the message's own "Enhanced audio generation")
    "comfyui-stableaudiox-1": _row("comfyui-stableaudiox", "", ENHANCED, DEVICE, STABLEAUDIOX, 0),
    "cunerf-8": _row("cunerf", "example_train", GENERATOR, DEVICE, _checkout("cunerf", "NarcissusEx/CuNeRF"), 2),
    # graded misses: T, E, M (the `size mismatch` lines not read as a message), S judgement; E right since torch's
    # state-dict lines are known (M still wrong: the last line's key, blocks.13, where torch's first is blocks.12)
    "dalle-pytorch-211": ("RuntimeError", SIZE.replace("12.g.net.fn.fn.net.0", "13.g.net.fn.fn.net.3").partition("\t")[2],
                          "dalle-pytorch", "dalle-pytorch Resuming training: size mismatch for", EVERYWHERE, False,
                          _released("dalle-pytorch"), 0),
    "dalle2-pytorch-87": _row("dalle2-pytorch", "calculate_ema", EMA, DEVICE,
                              f"dalle2-pytorch {GIT}lucidrains/DALLE2-pytorch@6f76652d118d3da2419bd12084abfff45772553b", 1,
                              f"{TWO_AT}cuda:0 ..."),
    # known miss: S (the `[...]`-elided frame not read: "no frame; the API it names: IDX")
    "dcls-8": _row("dcls", "modules.py forward_vgauss", CUDA0_CPU, DEVICE, _released("dcls"), 0),
    "fastfcn-99": _row("fastfcn", "test_single_image.py test", "'state_dict'", EVERYWHERE,
                       _checkout("fastfcn", "wuhuikai/FastFCN"), 1, "KeyError 'state_dict", "KeyError"),
}

CPU_EITHER = {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}
ON_ALL = {"cpu": {"reproduces"}, "cuda": {"reproduces"}}
GPU_OR_ALL = {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message; a reporter's name or a log table's key as the API is wrong.
MAINTAINER_46 = {
    "and-2": (_title("and", r"resum|models\.get", RESNET.rstrip(":"), ":?"), "RuntimeError", RESNET, {"and"},
              f"{HUB}Raymond-sci/AND@", f"{HUB}Raymond-sci/AND", GPU_OR_ALL, "1.0.1.post2", ("2.7",), False),
    "color-diffusion-1": (_title("color-diffusion", r"train\.py|trainer\.fit", CUDA0_CPU), "RuntimeError", CUDA0_CPU,
                          {"color-diffusion"}, f"{HUB}ErwannMillon/Color-diffusion@", f"{HUB}ErwannMillon/Color-diffusion",
                          PLACEMENT, None, ("3.10",), False),
    "comfy-mecha-15": (_title(r"sd-mecha|comfy-mecha \(sd-mecha\)", r"ties_sum_with_dropout", CUDA0_CPU), "RuntimeError",
                       CUDA0_CPU, {"sd-mecha"}, None, "sd-mecha==0.0.26", PLACEMENT, None, (), False),
    "comfyui-stableaudiox-1": (rf"^(?i:comfyui-stableaudiox) [^:]*(?:Text to Audio|[Ee]nhanced|[Ll]oader)[^:]*: "
                               rf"(?:Enhanced audio generation failed: )?{re.escape(CUDA0_CPU)}$", "RuntimeError", ENHANCED,
                               {"comfyui-stableaudiox"}, f"{HUB}lum3on/ComfyUI-StableAudioX@",
                               f"{HUB}lum3on/ComfyUI-StableAudioX", CPU_EITHER, None, (), False),
    "cunerf-8": (_title("cunerf", r"run\.py|\btrain\b|trainloader|example_train", GENERATOR), "RuntimeError", GENERATOR,
                 {"cunerf"}, f"{HUB}NarcissusEx/CuNeRF@", f"{HUB}NarcissusEx/CuNeRF", CPU_EITHER, None, ("3.9",), False),
    "dalle-pytorch-211": (r"^(?i:dalle-pytorch) [^:]*(?:[Rr]esum|train_dalle)[^:]*: (?:Error\(s\) in loading state_dict "
                          r"for DALLE: )?size mismatch for transformer\.layers\.blocks\.12", "RuntimeError", SIZE,
                          {"dalle-pytorch"}, None, None, GPU_OR_ALL, None, (), False),
    "dalle2-pytorch-87": (rf"^(?i:dalle2-pytorch) [^:]*(?:EMA\.update|update_moving_average|calculate_ema|DecoderTrainer|"
                          rf"train\.py|train_decoder)[^:]*: {re.escape(TWO_AT)}cuda:0 (?:and (?:CPU|cpu)!|\.\.\.)$",
                          "RuntimeError", EMA, {"dalle2-pytorch"},
                          (None, "lucidrains/DALLE2-pytorch@6f76652d118d3da2419bd12084abfff45772553b"), None, PLACEMENT,
                          None, (), False),
    "dcls-8": (_title(r"dcls|Dilated-Convolution-with-Learnable-Spacings-PyTorch",
                      r"forward_vgauss|modules\.py|Dcls2d|__init_tmp_variables__", CUDA0_CPU), "RuntimeError", CUDA0_CPU,
               {"dcls"}, None, None, PLACEMENT, None, ("3.12",), False),
    "fastfcn-99": (r"^(?i:fastfcn) [^:]*(?:test_single_image|\btest\b|resume)[^:]*: KeyError:? 'state_dict'?$", "KeyError",
                   "'state_dict'", {"fastfcn"}, f"{HUB}wuhuikai/FastFCN@", f"{HUB}wuhuikai/FastFCN", ON_ALL, None, (),
                   False),
}
# STATED_46: what the expectation asks beyond the columns: cunerf-8's cpu "passes" only with the reason that no CUDA
# default exists on cpu (or "unsupported" with a reason).
STATED_46: reports.Stated = {
    "cunerf-8": {"L": lambda data: "only where a GPU is" in data["case.yaml"] or "unsupported:" in data["case.yaml"]},
}


@pytest.mark.parametrize(("name", "row"), sorted(HELD_OUT_46.items()), ids=sorted(HELD_OUT_46))
def test_a_graded46_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str, row: tuple[Any, ...]) -> None:
    """Each row, its device-placement tag included (D, scored by hand in the 9-field variant)."""
    reports.assert_drafted(*drafted(name), row)


def test_the_forty_sixth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    reports.assert_set_scores(GRADED46, MAINTAINER_46, HELD_OUT_46, STATED_46, GRADED46_FLOOR)
