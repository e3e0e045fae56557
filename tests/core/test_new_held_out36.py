"""graded36 (tests/fixtures/graded36), held out (issue 21 §1): ten real reports drafted by `new` on main db5e1a9 and
graded by hand in EXPECTED.md's Results. HELD_OUT_36 asserts what is drafted now (none refused), known misses marked,
so a change to any of them is seen; MAINTAINER_36 encodes EXPECTED.md's accepted values, graded strictly as its
Results, and the floor is the strict score measured there."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import pytest

import tests.core.test_new_reports as reports
from tests.core.test_new_held_out22 import DEVICE, EVERYWHERE, SELECT, _method, _title
from tests.core.test_new_held_out26 import Drafter, _checkout
from tests.core.test_new_reports import DEV_LANES, HUB, TWO_AT

EIGHT_BIT = ("Using `load_in_8bit=True` requires Accelerate: `pip install accelerate` and the latest version of "
             "bitsandbytes `pip install -i https://test.pypi.org/simple/ bitsandbytes` or pip install bitsandbytes`")
CUDA0_CUDA1 = f"{TWO_AT}cuda:0 and cuda:1!"
CUDA7_CUDA3 = f"{TWO_AT}cuda:7 and cuda:3! (when checking argument for argument index in method wrapper_CUDA__index_select)"
CPU_CUDA1 = f"{TWO_AT}cpu and cuda:1!"
HYPERX = "expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight"  # as cut
SHOGI = ("Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; but device "
         "0 does not equal 1 (while checking arguments for cudnn_convolution)")
PADDING = ("Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' "
           "'truncation=True' to have batched tensors with the same length. Perhaps your features (`input_ids` in this "
           "case) have excessive nesting (inputs type `list` where type `int` is expected).")
NO_GPUS = "No CUDA GPUs are available"
HRNET = ('Error(s) in loading state_dict for HRNetFusion:\n\tMissing key(s) in state_dict: "backbone.hrnet.conv1.weight", '
         '"backbone.hrnet.bn1.weight", "backbone.hrnet.bn1.bias", "backbone.hrnet.bn1.running_mean"')
NAMESPACE = "'Namespace' object has no attribute 'deepspeed_config_dict'. Did you mean: 'deepspeed_config'?"
TWO_GPUS = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}
MEGATRON_DRAFTED = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}

HELD_OUT_36: dict[str, tuple[Any, ...]] = {
    # known misses: T, B, P, F (transformers blamed for autotrain's 8-bit request on a CPU host), L (cuda reproduces)
    "autotrain-advanced-351": ("ImportError", EIGHT_BIT, "transformers", "transformers from_pretrained: Using `load_in",
                               EVERYWHERE, False, "pin the transformers release the report ran", 3),
    # graded misses: T (no API: the named `self.netD(fake_B)` not read; read since fixtitle8), S
    "blur2blur-7": ("RuntimeError", CUDA0_CUDA1, "blur2blur", f"blur2blur netD: {CUDA0_CUDA1}",
                    TWO_GPUS, True, _checkout("blur2blur", "VinAIResearch/Blur2Blur"), 0),
    # known miss: S (judgement); E, M, L, D read since fixframe7, T (main.py) since fixtitle8 (NOT held out)
    "deephyperx-54": ("RuntimeError", HYPERX, "deephyperx", f"deephyperx main.py: {HYPERX}", DEVICE, True,
                      _checkout("deephyperx", "nshaud/DeepHyperX"), 0),
    # graded misses: T (no API; the model file's __call__ since fixtitle8), L (two GPUs since fixlanes5), S (judgement:
    # runpy's _run_code)
    "deeplearningshogi-40": ("RuntimeError", SHOGI, "deeplearningshogi",
                             f"deeplearningshogi policy_value_network_resnet10_swish.py __call__: {SHOGI[:30]}", TWO_GPUS,
                             True,
                             _checkout("deeplearningshogi", "TadaoYamaoka/DeepLearningShogi"), 3),
    # P and F right since fixenv7 (python-detr, a 2023 repackaging, was pinned for a 2022 run of test_all.py)
    "detr-524": ("RuntimeError", SELECT, "detr", f"detr test_all: {SELECT}", DEVICE, True,
                 _checkout("detr", "facebookresearch/detr"), 0),
    # known misses: T (no API; graded: input_ids, a key of the message), L (judgement: cuda reproduces), S
    "h2o-llmstudio-357": ("ValueError", PADDING, "h2o-llmstudio", f"h2o-llmstudio text_utils.py: {PADDING[:40]}",
                          EVERYWHERE, False, _checkout("h2o-llmstudio", "h2oai/h2o-llmstudio"), 0),
    # graded misses: T and S (the tokenizer's get_vocab, not the reporter's preprocess): preprocess since fixtitle8
    "llama3.1-finetuning-4": ("RuntimeError", CPU_CUDA1, "llama3-1-finetuning",
                              f"llama3-1-finetuning preprocess: {CPU_CUDA1}", DEVICE, True,
                              _checkout("llama3-1-finetuning", "taishan1994/Llama3.1-Finetuning"), 0),
    # known miss: S (no API; graded: T too, the `lm_eval --model hf ...` command not read, read since fixtitle8)
    "lm-evaluation-harness-1575": ("RuntimeError", CUDA7_CUDA3, "lm-eval", f"lm-eval lm_eval --model hf: {CUDA7_CUDA3[:50]}",
                                   TWO_GPUS, True,
                                   "pin the lm-eval release the report ran", 0),
    # known miss: M (the garbled "state dict", the missing keys dropped: it matches no message torch prints)
    "loveda-54": ("RuntimeError", "Error(s) in loading state dict for HRNetFusion", "loveda",
                  "loveda predict: Error(s) in loading state dict for HRNetFusion", EVERYWHERE, False,
                  _checkout("loveda", "Junjue-Wang/LoveDA"), 2),
    # graded misses (judgement): T and S (data_iterator, the title's second error, as the API): T none since fixtitle8
    "megatron-deepspeed-379": ("AttributeError", NAMESPACE, "megatron-deepspeed",
                               "megatron-deepspeed pretrain_gpt.py: ", MEGATRON_DRAFTED, False,
                               _checkout("megatron-deepspeed", "deepspeedai/Megatron-DeepSpeed"), 0),
}

TWO_GPU_LANES = {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}
CPU_HOST = {"cpu": {"reproduces"}, "cuda": {"passes"}}
ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message.
MAINTAINER_36 = {
    "autotrain-advanced-351": (_title("autotrain(?:-advanced)?", r"\btrain\b|clm|from_pretrained|llm training",
                                      EIGHT_BIT), "ImportError", EIGHT_BIT, {"autotrain-advanced"},
                               (None, f"{HUB}huggingface/autotrain-advanced@"), None, CPU_HOST,
                               None, ("3.10",), False),
    "blur2blur-7": (_title("Blur2Blur", r"netD|training|\btrain\b", CUDA0_CUDA1), "RuntimeError", CUDA0_CUDA1,
                    {"blur2blur"}, f"{HUB}VinAIResearch/Blur2Blur@", f"{HUB}VinAIResearch/Blur2Blur", TWO_GPU_LANES,
                    None, (), False),
    "deephyperx-54": (r"^(?i:DeepHyperX) [^:]*(?:main\.py|hamida)[^:]*: (?i:expected) tensor for argument #1 'input' to "
                      r"have the same device as tensor for argument #2 'weight'?$", "RuntimeError", HYPERX,
                      {"deephyperx"}, f"{HUB}nshaud/DeepHyperX@", f"{HUB}nshaud/DeepHyperX",
                      {"cpu": {"passes"}, "cuda": {"reproduces", "unsupported"}}, None, (), False),
    "deeplearningshogi-40": (_title("DeepLearningShogi", r"train_rl_policy_with_value_using_hcpe_bootstrap|"
                                    r"policy_value_network_resnet10_swish|__call__|data ?loader|データローダ",
                                    SHOGI.partition(" (")[0], r"(?: \(while checking arguments for cudnn_convolution\)|"
                                    r" \.\.\.)?"),
                             "RuntimeError", SHOGI, {"deeplearningshogi"}, f"{HUB}TadaoYamaoka/DeepLearningShogi@",
                             f"{HUB}TadaoYamaoka/DeepLearningShogi", TWO_GPU_LANES, None, (), False),
    "detr-524": (_title("detr", r"test_all", SELECT), "RuntimeError", SELECT, {"detr", "python-detr"},
                 f"{HUB}facebookresearch/detr@", f"{HUB}facebookresearch/detr", DEV_LANES, None, (), False),
    "h2o-llmstudio-357": (r"^(?i:h2o-llmstudio) [^:]*(?:experiment|make llmstudio|text_utils)[^:]*: "
                          r"(?:No CUDA GPUs are available|Unable to create tensor.*)$", "ValueError", PADDING,
                          {"h2o-llmstudio"}, f"{HUB}h2oai/h2o-llmstudio@", f"{HUB}h2oai/h2o-llmstudio", CPU_HOST, None,
                          ("3.10",), False),
    "llama3.1-finetuning-4": (_title(r"Llama3[.-]1-Finetuning", r"preprocess|loss|ZeRO-3|zero3|training", CPU_CUDA1),
                              "RuntimeError", CPU_CUDA1, {"llama3-1-finetuning", "llama3.1-finetuning"},
                              f"{HUB}taishan1994/Llama3.1-Finetuning@", f"{HUB}taishan1994/Llama3.1-Finetuning",
                              DEV_LANES, None, (), False),
    "lm-evaluation-harness-1575": (_title("(?:lm-evaluation-harness|lm[-_]eval)", r"--model hf|\bhf\b|parallelize|HFLM|"
                                          r"evaluator", f"{TWO_AT}cuda:7 and cuda:3!",
                                          _method("wrapper_CUDA__index_select")), "RuntimeError", CUDA7_CUDA3,
                                   {"lm-eval", "lm_eval"}, (None, "lm_eval==0.4.1", "lm-eval==0.4.1"),
                                   None, TWO_GPU_LANES, None, (), False),
    "loveda-54": (r"^(?i:LoveDA) [^:]*(?:predict|load_?state_?dict|load state dict)[^:]*: Error\(s\) in loading "
                  r"state[ _]dict for HRNetFusion", "RuntimeError", HRNET, {"loveda"}, f"{HUB}Junjue-Wang/LoveDA@",
                  f"{HUB}Junjue-Wang/LoveDA", ALL_REPRODUCE, None, ("3.8",), False),
    "megatron-deepspeed-379": (_title("Megatron-DeepSpeed", r"pretrain_gpt(?:\.py)?|model_provider",
                                      NAMESPACE[:-1], r"\??"), "AttributeError", NAMESPACE, {"megatron-deepspeed"},
                               f"{HUB}deepspeedai/Megatron-DeepSpeed@", f"{HUB}deepspeedai/Megatron-DeepSpeed",
                               {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}, None, (), False),
}


def _no_junk_api(junk: str) -> Callable[[dict[str, Any]], bool]:
    """The title's API is not `junk` (a key of the message, another error's expression, another library's call)."""
    return lambda data: junk not in data["title"].split(":")[0]


# STATED_36: what the expectation asks beyond the columns: no junk as the title's API (megatron's data_iterator, from
# the title's second error: T; h2o's input_ids and llama's get_vocab likewise); megatron's cpu lane, if unsupported,
# says why (L); autotrain's signature is more than the message's first word "Using" (M). h2o-llmstudio-357's maintainer's RuntimeError "No CUDA GPUs are available" is accepted as well (not
# drafted: the column holds the reporter's ValueError, also accepted).
STATED_36: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "autotrain-advanced-351": {"M": lambda data: "load_in_8bit" in data["signature"]},
    "megatron-deepspeed-379": {"T": _no_junk_api("data_iterator"), "L": lambda data: data["variants"]["buggy"]["expect"]["cpu"]
                               in {"reproduces", "passes"} or ":" in data["variants"]["buggy"]["expect"]["cpu"]},
    "h2o-llmstudio-357": {"T": _no_junk_api("input_ids")},
    "llama3.1-finetuning-4": {"T": _no_junk_api("get_vocab")},
}
# of 80: 59 held out, main db5e1a9, this scorer and by hand, strict; 63 lenient
# NOT held out since: fixenv7 (detr-524 P F), fixframe7, fixtitle8, fixlanes5
GRADED36_FLOOR = 72


def test_the_thirty_sixth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    reports.assert_set_scores(GRADED36, MAINTAINER_36, HELD_OUT_36, STATED_36, GRADED36_FLOOR)


@pytest.mark.parametrize("name", sorted(HELD_OUT_36))
def test_a_graded36_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str) -> None:
    """Each row, its device-placement tag included (D, scored by hand in the 9-field variant)."""
    reports.assert_drafted(*drafted(name), HELD_OUT_36[name])


GRADED36 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded36"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by hand):
# no project for the seven checkouts; PyPI's detr links nothing, detr-python is no project, python-detr (0.1.7, 2023)
# links facebookresearch/detr.
NOT_RELEASED_36 = {"blur2blur", "deephyperx", "deeplearningshogi", "h2o-llmstudio", "llama3-1-finetuning", "loveda",
                   "megatron-deepspeed"}
INDEX_URLS_36: dict[str, tuple[str, ...]] = {"detr": (), "detr-python": (),
                                             "python-detr": ("https://github.com/facebookresearch/detr",)}


@pytest.fixture(name="drafted")
def graded36_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded36's drafts, with the index's answers for its names beside the other sets' (`_graded` reads them)."""
    reports.answer_for(monkeypatch, NOT_RELEASED_36, INDEX_URLS_36)
    return partial(reports._graded, GRADED36)
