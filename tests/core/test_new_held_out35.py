"""graded35 (tests/fixtures/graded35), held out (issue 21 §1): ten real reports drafted by `new` on main ab612f7 and
graded by hand in EXPECTED.md's Results. HELD_OUT_35 asserts what is drafted now (none refused), known misses marked,
so a change to any of them is seen; MAINTAINER_35 encodes EXPECTED.md's accepted values, graded strictly as its
Results, and the floor is the strict score measured there."""

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
from tests.core.test_new_reports import DEV_LANES, HUB

GRADED35 = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "graded35"
# The index's answers `new` got on 2026-11-29 (the in-process drafts equal the CLI's byte for byte, checked by hand):
# no project for the five checkouts; PyPI's san read as linking no repository.
NOT_RELEASED_35 = {"pytorch-yolo-v3-kaist", "rtfm", "scaledyolov4", "tecogan-pytorch", "trajectory-prediction-traphic"}
INDEX_URLS_35: dict[str, tuple[str, ...]] = {"san": ()}


@pytest.fixture(name="drafted")
def graded35_drafts(monkeypatch: pytest.MonkeyPatch) -> Drafter:
    """graded35's drafts, with the index's answers for its names beside the other sets' (`_graded` reads them)."""
    reports.answer_for(monkeypatch, NOT_RELEASED_35, INDEX_URLS_35)
    return partial(reports._graded, GRADED35)


OLD_DEVICE = "expected device cpu but got device"  # as stored: cut after "got device"
BUS = ("DataLoader worker (pid 2126) is killed by signal: Bus error. It is possible that dataloader's workers are out of "
       "shared memory. Please try to raise your shared memory limit.")
SET_ = "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_set_"
PATH_AR = "The path ar"  # as stored: cut mid-word
CUDA_NONE = "Invalid device string: 'cuda:None'"
WORKER = "Caught RuntimeError in DataLoader worker process 0."
INITIAL_LR = "__init__() got an unexpected keyword argument 'initial_lr'"
SHM_DRAFTED = {"cpu": "unsupported", "cuda": "unsupported", "cuda-sim": "unsupported"}  # each with the /dev/shm reason

HELD_OUT_35: dict[str, tuple[Any, ...]] = {
    "kaist-yolov3-5": ("RuntimeError", CUDA0_CPU, "pytorch-yolo-v3-kaist", f"pytorch-yolo-v3-kaist training: {CUDA0_CPU}", DEVICE,
                       True, _checkout("pytorch-yolo-v3-kaist", "jas-nat/PyTorch-YOLO-V3-KAIST"), 0),
    # known miss (strict): P, the stated torch 1.5.1 left to fill in
    "nni-3090": ("RuntimeError", OLD_DEVICE, "nni", f"nni fix_mask: {OLD_DEVICE}", DEVICE, True, "nni==1.9", 3),
    # known misses: T and S (Net.get; the message's final "_" kept since fixtitle7), B, P and F (pysyft, not PyPI's syft)
    "pysyft-7397": ("RuntimeError", SET_, "pysyft", f"pysyft Net.get: {SET_}", DEVICE, True,
                    "pin the pysyft release the report ran", 0),
    # known miss: F (PyPI's seq2seq is another project); P right since fixenv6 (the egg's 0.1.4 read), NOT held out
    "pytorch-seq2seq-93": ("TypeError", INITIAL_LR, "seq2seq", f"seq2seq train: {INITIAL_LR}", EVERYWHERE, False,
                           "seq2seq==0.1.4", 2),
    "rtfm-15": ("RuntimeError", CUDA_NONE, "rtfm", f"rtfm train: {CUDA_NONE}", EVERYWHERE, True,
                f"rtfm @ {HUB}mlfoundations/rtfm@9884a6be456db74941d48babc1293a2eefb4df6b", 2),
    # known miss (strict): P, the stated torch 1.3.0 left to fill in
    "san-1": ("RuntimeError", WORKER, "san", f"san __init__.py fit: {WORKER[:-1]}", EVERYWHERE, False,
              _checkout("san", "SkBlaz/san"), 2),
    # known miss: S (datasets.py, named in the prose as a workaround, not test.py's `test`); T right since fixtitle7
    # (test.py, the linked failing line's file), NOT held out
    "scaledyolov4-256": ("RuntimeError", CUDA0_CPU, "scaledyolov4", f"scaledyolov4 test.py: {CUDA0_CPU}", DEVICE,
                         True, f"scaledyolov4 @ {HUB}WongKinYiu/ScaledYOLOv4@0c13b23d8cfcbfcd42f7f6731084c4037475a4be",
                         0),
    # known misses (strict): T (no API: test.sh); S; M (the pid in the signature) right since fixframe6, L since fixlanes4
    "tecogan-7": ("RuntimeError", BUS, "tecogan-pytorch", "tecogan-pytorch test.sh: DataLoader worker (pid 2126) is killed",
                  SHM_DRAFTED, False, _checkout("tecogan-pytorch", "skycrapers/TecoGAN-PyTorch"), 1),
    # known miss: S (Lightning's Trainer.fit, not torchio's _parse_path); T right since fixtitle7 (the quoted frame's
    # image.py _parse_path), NOT held out
    "torchio-1189": ("TypeError", PATH_AR, "torchio", f"torchio image.py _parse_path: {PATH_AR}", EVERYWHERE, False,
                     "pin the torchio release the report ran", 0),
    "traphic-1": ("RuntimeError", CUDA0_CPU, "trajectory-prediction-traphic",
                  f"trajectory-prediction-traphic: {CUDA0_CPU}", DEVICE, True,
                  _checkout("trajectory-prediction-traphic", "BenMSK/trajectory_prediction_TraPHic"), 0),
}

ALL_REPRODUCE = {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}
SHM_LANES = {"cpu": {"reproduces", "unsupported"}}  # with the shm reason (STATED_35)
# EXPECTED.md's accepted values, as MAINTAINER_16's columns (title, exception, message, blamed, buggy pin, fix pin,
# lanes, torch, pythons, Python required), graded strictly as its Results: a title names the project, an API from the
# per-report list before the colon and the message (kaist-yolov3-5 and traphic-1 show and name no call: project, an
# optional context, the message).
MAINTAINER_35 = {
    "kaist-yolov3-5": (rf"^(?i:PyTorch-YOLO-V3-KAIST)(?: \([^)]*\))?: {re.escape(CUDA0_CPU)}$", "RuntimeError",
                       CUDA0_CPU, {"pytorch-yolo-v3-kaist"}, f"{HUB}jas-nat/PyTorch-YOLO-V3-KAIST@",
                       f"{HUB}jas-nat/PyTorch-YOLO-V3-KAIST", DEV_LANES, None, (), False),
    "nni-3090": (_title("nni", r"speedup_model|fix_mask(?:_conflict)?|mask_conflict|auto_pruners_torch|"
                        r"SimulatedAnnealingPruner", OLD_DEVICE, r"(?: cuda:0|\.\.\.)?"), "RuntimeError", OLD_DEVICE,
                 {"nni"}, "nni==1.9", None, DEV_LANES, "1.5.1", ("3.6",), True),
    "pysyft-7397": (_title("(?:PySyft|syft)", r"\bmodel\.get\b", SET_), "RuntimeError", SET_, {"syft"}, None, None,
                    DEV_LANES, None, (), False),
    "pytorch-seq2seq-93": (rf"^(?i:(?:pytorch-)?seq2seq) [^:]*(?:SupervisedTrainer\.train|supervised_trainer|\btrain\b|"
                           rf"sample\.py|resume|set_scheduler|StepLR)[^:]*: {re.escape(INITIAL_LR)}$", "TypeError",
                           INITIAL_LR, {"seq2seq", "pytorch-seq2seq"}, f"{HUB}IBM/pytorch-seq2seq@",
                           f"{HUB}IBM/pytorch-seq2seq", ALL_REPRODUCE, None, ("3.6",), False),
    "rtfm-15": (_title("rtfm", r"train_utils|\btrain\b|finetune|\bmain\b", CUDA_NONE), "RuntimeError", CUDA_NONE,
                {"rtfm"}, f"{HUB}mlfoundations/rtfm@9884a6be456db74941d48babc1293a2eefb4df6b",
                f"{HUB}mlfoundations/rtfm", ALL_REPRODUCE, None, ("3.8",), False),
    "san-1": (_title("san", r"\bfit\b|__init__\.py|simple usecase", WORKER[:-1], r"\.?"), "RuntimeError", WORKER,
              {"san"}, f"{HUB}SkBlaz/san@", f"{HUB}SkBlaz/san", ALL_REPRODUCE, "1.3.0", ("3.7",), False),
    "scaledyolov4-256": (_title("ScaledYOLOv4", r"test\.py|\btest\b|nonzero", CUDA0_CPU), "RuntimeError", CUDA0_CPU,
                         {"scaledyolov4"}, f"{HUB}WongKinYiu/ScaledYOLOv4@0c13b23d8cfcbfcd42f7f6731084c4037475a4be",
                         f"{HUB}WongKinYiu/ScaledYOLOv4", DEV_LANES, None, (), False),
    "tecogan-7": (r"^(?i:TecoGAN[-_]PyTorch) [^:]*(?:test\.sh|Vid4)[^:]*: (?:DataLoader worker \(pid 2126\) is killed by "
                  r"signal: Bus error\..*|(?:\.\.\. )?DataLoader worker \(pid\(s\) 2126\) exited unexpectedly)$",
                  "RuntimeError", BUS, {"tecogan-pytorch"}, f"{HUB}skycrapers/TecoGAN-PyTorch@",
                  f"{HUB}skycrapers/TecoGAN-PyTorch", SHM_LANES, None, ("3.8",), False),
    "torchio-1189": (r"^(?i:torchio) [^:]*(?:_parse_path|image\.py|\bImage\b|ScalarImage|SubjectsDataset|SubjectsLoader)"
                     r"[^:]*: The path ar(?:\.\.\.|gument cannot be a dictionary)?$", "TypeError", PATH_AR, {"torchio"},
                     None, None, ALL_REPRODUCE, None, (), False),
    "traphic-1": (rf"^(?i:trajectory[-_]prediction[-_]TraPHic)(?: training)?(?: \([^)]*\))?: {re.escape(CUDA0_CPU)}$",
                  "RuntimeError", CUDA0_CPU, {"trajectory-prediction-traphic"},
                  f"{HUB}BenMSK/trajectory_prediction_TraPHic@", f"{HUB}BenMSK/trajectory_prediction_TraPHic",
                  DEV_LANES, None, (), False),
}


def _pins_torch(version: str) -> Callable[[dict[str, Any]], bool]:
    """A stated torch pinned, not left as a FILL-IN that names it (the rubric: a FILL-IN where stated is an edit)."""
    return lambda data: any(re.match(rf"torch=={re.escape(version)}\b", pin)
                            for pin in [*data["requires"], *data["variants"]["buggy"]["requires"]])


# STATED_35: what the expectation asks beyond the columns: nni's and san's stated torch pinned (P); tecogan's signature
# matching any worker (a run's pid is never 2126 again: M) and its lanes giving the shm reason (L); pytorch-seq2seq's
# pin stating the egg's 0.1.4 (P).
STATED_35: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "nni-3090": {"P": _pins_torch("1.5.1")},
    "san-1": {"P": _pins_torch("1.3.0")},
    "tecogan-7": {"M": lambda data: "2126" not in data["signature"], "L": lambda data: "shm" in data["case.yaml"]},
    "pytorch-seq2seq-93": {"P": lambda data: "0.1.4" in " ".join(data["variants"]["buggy"]["requires"])},
}
# of 80: 67 held out, main ab612f7, this scorer and by hand, strict; 74 lenient; NOT held out since: fixlanes4, fixtitle7,
# fixframe6
GRADED35_FLOOR = 71


def test_the_thirty_fifth_held_out_set_scores_at_least_its_measured_fields(drafted: Drafter) -> None:
    """`drafted` puts the index's answers in place for `maintainer_fields`, which drafts each report itself."""
    reports.assert_set_scores(GRADED35, MAINTAINER_35, HELD_OUT_35, STATED_35, GRADED35_FLOOR)


@pytest.mark.parametrize("name", sorted(HELD_OUT_35))
def test_a_graded35_report_drafts_as_when_graded_or_better(drafted: Drafter, name: str) -> None:
    """Each row, its device-placement tag included (D, scored by hand in the 9-field variant: 9 of 10 right when
    graded; rtfm-15's `cuda:None` device string, device-bound by the expectation, then drafted untagged; 10 since
    fixlanes4)."""
    reports.assert_drafted(*drafted(name), HELD_OUT_35[name])
