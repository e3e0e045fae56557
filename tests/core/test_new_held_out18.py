"""graded18 (tests/fixtures/graded18), held out (issue 21 §1): ten real reports drafted by `new` on main d14b247 and
graded by hand in EXPECTED.md's Results. HELD_OUT_18 asserts what is drafted now (known misses marked) so a change to
any of them is seen; MAINTAINER_18 encodes EXPECTED.md's accepted values and scores the drafts against them."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

import tests.core.test_new_reports as scorer
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case
from tests.core.test_new_reports import ALL_LANES, DEV_LANES, HUB, TWO_AT, _pinned, _scored

GRADED18 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded18"
# What the index answered `new` on 2026-11-29 for these drafts (the drafts below equal the CLI's, checked by hand):
# no project named chatglm3-base-tuning; PyPI's nasbench-pytorch, moco and spg link no repository.
NOT_RELEASED_18 = {"chatglm3-base-tuning", "knowledge-tracing-collection-pytorch"}  # pip index: no such project
INDEX_URLS_18: dict[str, tuple[str, ...]] = {"nasbench-pytorch": (), "moco": (), "spg": ()}


def _graded18(folder: Path, name: str) -> tuple[Draft, dict[str, Any]]:
    report = parse_report((folder / f"{name}.txt").read_text())
    draft = draft_case(name, report, f"{name}.txt", released=lambda dist: dist not in NOT_RELEASED_18,
                       project_urls=lambda dist: INDEX_URLS_18.get(dist), versions=lambda dist: None)
    return draft, yaml.safe_load(draft.case_yaml)


@pytest.fixture(autouse=True)
def _index_of_this_set(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared scorer drafts through test_new_reports._graded: give it this set's index answers."""
    monkeypatch.setattr(scorer, "_graded", _graded18)


DEVICE = {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
ALL = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
TWO_GPUS = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}
OLD_DEVICE = "expected device cpu but got device cuda:0"
GENERATOR = "Expected a 'cuda' device type for generator but found 'cpu'"
GROUPS = "some parameters appear in more than one parameter group."
ODICT = "'odict_keys' object is not subscriptable"
# (exception, a message the signature matches, blamed, title prefix, lanes, device-placement, buggy pin text, frames shown)
HELD_OUT_18 = {
    # known miss: S (the AWS "p2.xlarge" instance as the API, not trainer.py train); T fixed by fixtitle2 (main.py)
    "nasbench-pytorch-3": ("RuntimeError", OLD_DEVICE, "nasbench-pytorch", "nasbench-pytorch main.py: expected device",
                           DEVICE, True, f"nasbench-pytorch @ {HUB}romulus0914/NASBench-PyTorch@<commit>", 0),
    # known misses: P (torch 1.10.0 read, torch==2.13.0 kept), S; B, T, F and V right since fixenv ("pytorch.utils"
    # in prose is torch's; torch "1.10.0+cu113" read)
    "knowledge-tracing-collection-pytorch-1": ("RuntimeError", GENERATOR, "knowledge-tracing-collection-pytorch",
                                               "knowledge-tracing-collection-pytorch random_split: Expected a",
                                               DEVICE, True, f"{HUB}hcnoh/knowledge-tracing-collection-pytorch@<commit>", 2),
    # known miss: S (the command line keeps the Chinese sentence's tail)
    "chatglm3-base-tuning-8": ("RuntimeError", f"{TWO_AT}cuda:2 and cuda:0!", "chatglm3-base-tuning",
                               "chatglm3-base-tuning train: Expected all", TWO_GPUS, True,
                               f"chatglm3-base-tuning @ {HUB}minghaochen/chatglm3-base-tuning@<commit>", 0),
    # known misses: P (a release placeholder: this file's index answers a finetuningllms project), T (no API), S, L (no
    # reason for cuda's guess); B and F right since fixlanes (the notebook's cell called transformers' Trainer.train
    # loop only: the book's notebooks blamed, not accelerate)
    "finetuningllms-1": ("RuntimeError", TWO_AT.removesuffix(", "), "finetuningllms",
                         "finetuningllms memory.py: Expected all", DEVICE, True, "pin the finetuningllms release", 2),
    # known misses: P (a release placeholder), S; M dropped the title's second clause on main d14b247, kept since
    # fixframe; T, B, F right since fixlanes (the traceback stops at torch's Module call, no CGCCP frame: the project
    # the report is filed on) (not held out)
    "cgccp-2023-1": ("RuntimeError", TWO_AT.removesuffix(", "), "cgccp-2023",
                     "cgccp-2023 TrainingPlan.forward: Expected all tensors to be on the same device, but found at",
                     DEVICE, True, "pin the cgccp-2023 release", 3),
    # known misses: T (a bare "moco", facebookresearch's name), S (no save_checkpoint swap)
    "moco-bl0-8": ("KeyError", "'param_groups'", "moco", "moco load_checkpoint: KeyError 'param_groups'", ALL, False,
                   f"moco @ {HUB}bl0/moco@<commit>", 3),
    # known misses: P (the stated torch 2.10.0 and pytorch-lightning 2.6.0 not pinned), V (torch and Python of the
    # Lightning env dump not read), S
    "finetuning-scheduler-30": ("ValueError", GROUPS, "finetuning-scheduler",
                                "finetuning-scheduler _add_groups: some parameters", ALL, False,
                                "finetuning-scheduler==2.10.0", 0),
    # known miss: S (only _model_load's line, not restore's path)
    "spg-15": ("TypeError", ODICT, "spg", "spg _model_load: 'odict_keys'", ALL, False,
               f"spg @ {HUB}xiaomengyc/SPG@<commit>", 1),
    # refused on main d14b247 (a logger's "ERROR ... Exception: <message>", the traceback cut before its last line);
    # drafted since fixframe from the logged message (not held out)
    "innereye-deeplearning-198": ("RuntimeError", OLD_DEVICE, "innereye-deeplearning",
                                  "innereye-deeplearning model_train: expected device", DEVICE, True,
                                  f"innereye-deeplearning @ {HUB}microsoft/InnerEye-DeepLearning@<commit>", 1),
    # known miss: T (no API; CheckpointLoader's file and __call__ since fixtitle8, not the scorer's class name); L right since fixlanes (a CUDA-saved checkpoint fails on a CPU-only host: cpu reproduces)
    "monailabel-1015": ("RuntimeError", "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                        "is False. If you are running on a CPU-only machine, please use torch.load with "
                        "map_location=torch.device('cpu') to map your storages to the CPU.", "monai",
                        "monai checkpoint_loader.py __call__: Attempting to deserialize",
                        {"cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}, True, "pin the monai release", 2),
}


def test_the_eighteenth_held_out_set_is_complete() -> None:
    assert sorted(HELD_OUT_18) == sorted(p.stem for p in GRADED18.glob("*.txt"))


@pytest.mark.parametrize("name", sorted(HELD_OUT_18))
def test_an_eighteenth_set_report_drafts_as_measured(name: str) -> None:
    scorer.assert_drafted(*_graded18(GRADED18, name), HELD_OUT_18[name])



# EXPECTED.md's accepted values, as test_new_reports' MAINTAINER_12 columns (title regex, exception, message, blamed,
# buggy pin(s) (None: the blamed one's placeholder or commit pin), fix (None: likewise), lanes, torch stated, Pythons
# accepted, Python required). Titles: the project where the fix lands, an API the report shows or names, the message.
MESSAGE_18 = f"{TWO_AT}cuda:2 and cuda:0!"
MAINTAINER_18 = {
    "nasbench-pytorch-3": (r"^(?i:nasbench[_-]pytorch) [^:]*(?:trainer|train|model\.py|vertex_input|main\.py)[^:]*: "
                           rf"{OLD_DEVICE}", "RuntimeError", OLD_DEVICE, {"nasbench-pytorch"},
                           (f"{HUB}romulus0914/NASBench-PyTorch@", "nasbench-pytorch==1.2"), None, DEV_LANES, "1.12", (),
                           False),
    "knowledge-tracing-collection-pytorch-1": (r"^knowledge-tracing-collection-pytorch [^:]*(?:train\.py|main|random_split)"
                                               rf"[^:]*: {re.escape(GENERATOR)}", "RuntimeError", GENERATOR,
                                               {"knowledge-tracing-collection-pytorch"},
                                               f"{HUB}hcnoh/knowledge-tracing-collection-pytorch@", None, DEV_LANES,
                                               "1.10.0", ("3.8",), False),
    "chatglm3-base-tuning-8": (rf"^chatglm3-base-tuning (?:train\.py|train)\b(?!ing)[^:]*: {re.escape(MESSAGE_18)}",
                               "RuntimeError", MESSAGE_18, {"chatglm3-base-tuning"},
                               f"{HUB}minghaochen/chatglm3-base-tuning@", None,
                               {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, (), False),
    "finetuningllms-1": (rf"^(?i:FineTuningLLMs) [^:]*(?:Chapter ?0|trainer\.train)[^:]*: {re.escape(TWO_AT[:-2])}",
                         "RuntimeError", TWO_AT[:-2], {"finetuningllms"}, f"{HUB}dvgodoy/FineTuningLLMs@", None,
                         {"cpu": {"passes"}, "cuda": {"reproduces", "unsupported"}}, None, ("3.9",), False),
    "innereye-deeplearning-198": (r"^(?i:InnerEye-DeepLearning|InnerEye) [^:]*(?:run_in_situ|run|model_train|"
                                  r"train_or_validate_epoch|runner\.py|run_ml\.py|model_training\.py|recovery)[^:]*: "
                                  rf"{OLD_DEVICE}", "RuntimeError", OLD_DEVICE, {"innereye-deeplearning", "innereye"},
                                  f"{HUB}microsoft/InnerEye-DeepLearning@", None, DEV_LANES, None, (), False),
    "monailabel-1015": (r"^(?i:monailabel|monai) [^:]*(?:segmentation|train|start_server|CheckpointLoader)[^:]*: "
                        r"Attempting to deserialize object on a CUDA device but torch\.cuda\.is_available\(\) is False",
                        "RuntimeError", "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                        "is False. If you are running on a CPU-only machine, please use torch.load with "
                        "map_location=torch.device('cpu') to map your storages to the CPU.", {"monailabel", "monai"},
                        None, None, {"cpu": {"reproduces"}, "cuda": {"passes"}, "cuda-sim": {"passes", "unsupported"}},
                        None, (), False),
    "cgccp-2023-1": (r"^(?![^:]*(?:Strategy\.|_wrapped_call_impl))(?i:CGCCP_2023|cgccp-2023|BIVI)(?: [^:]*(?:BIVI|TrainingPlan\.(?:training_step|forward)|training)"
                     rf"[^:]*)?: {re.escape(TWO_AT[:-2])}", "RuntimeError", TWO_AT[:-2], {"cgccp-2023", "cgccp_2023"},
                     f"{HUB}pachterlab/CGCCP_2023@", None, DEV_LANES, None, ("3.12",), False),
    "moco-bl0-8": (r"^(?i:bl0/moco) [^:]*(?:load_checkpoint|train|run|save_checkpoint|load_state_dict)[^:]*: "
                   r"(?:KeyError:? )?'param_groups'", "KeyError", "'param_groups'", {"moco", "bl0-moco"},
                   f"{HUB}bl0/moco@", None, ALL_LANES, None, ("3.7",), False),
    "finetuning-scheduler-30": (r"^finetuning-scheduler (?:ScheduleImplMixin\.)?(?:_add_groups|fts_supporters\.py)[^:]*: "
                                r"some parameters appear in more than one parameter group", "ValueError", GROUPS,
                                {"finetuning-scheduler"}, "finetuning-scheduler==2.10.0", None, ALL_LANES, "2.10.0",
                                ("3.11.15",), True),
    "spg-15": (r"^(?i:SPG|xiaomengyc/SPG) [^:]*(?:_model_load|restore|get_model|train|Restore\.py|train_frame\.py)[^:]*: "
               rf"{ODICT}", "TypeError", ODICT, {"spg"}, f"{HUB}xiaomengyc/SPG@", None, ALL_LANES, None, (), False),
}
# What the expectation asks beyond the columns: the stated torch and Lightning pins (finetuning-scheduler), the
# title's whole wording as the message (cgccp), a reason for a lane where two kinds are accepted.
STATED_18: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "finetuning-scheduler-30": {"P": lambda data: all(pin in _pinned(data)
                                                      for pin in ("torch==2.10.0", "pytorch-lightning==2.6.0"))},
    "knowledge-tracing-collection-pytorch-1": {"P": lambda data: "torch==1.10.0" in _pinned(data)},
    "cgccp-2023-1": {"M": lambda data: "but found at least two devices" in data["signature"]},
    "finetuningllms-1": {"L": lambda data: ":" in data["variants"]["buggy"]["expect"]["cuda"]},
    "monailabel-1015": {"L": lambda data: data["variants"]["buggy"]["expect"]["cuda-sim"] == "passes"  # reason: guess
                        or ":" in data["variants"]["buggy"]["expect"]["cuda-sim"]},
}
GRADED18_FLOOR = 72  # of 80: 45 held out (main d14b247, this scorer; 45 by hand, strict; 49 lenient); 51 after fixenv + fixtitle2;
# 66 with fixframe merged, 72 after fixlanes (NOT held out)


def _maintainer_fields_18(name: str) -> dict[str, bool]:
    return scorer.maintainer_fields(name, GRADED18, MAINTAINER_18, STATED_18)


def test_the_eighteenth_held_out_set_scores_at_least_its_measured_fields() -> None:
    right, table = _scored({name: _maintainer_fields_18(name) for name in sorted(MAINTAINER_18)})
    assert sorted(MAINTAINER_18) == sorted(HELD_OUT_18)
    assert right >= GRADED18_FLOOR, table
