"""Every kept report (tests/fixtures/new-reports/<case id>.txt) still drafts what its confirmed case says.

Each report is the real upstream text a catalogue case was started from with `new`. The draft's exception
class must be the case's, its signature must match the message the case's own signature was written for
(the case's signature is searched in the drafted one's source message), and the blamed distribution must be
pinned by the case's buggy variant: the fields a maintainer kept unedited stay right as `new` changes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness._exceptions import UsageError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted((ROOT / "tests" / "fixtures" / "new-reports").glob("*.txt"))
# Reports with no exception line at all (a PR's prose, an issue describing the error in words): `new` refuses
# them with what to paste, and the case was written by hand from the report.
NO_EXCEPTION_LINE = {"accelerate-load-state-tied-weights", "captum-feature-ablation-mask-device",
                     "torchmetrics-ssim-autocast-dtype", "transformers-interpret-explainer-moves-model"}


def _case(report: Path) -> dict:
    case_file = ROOT / "cases" / report.stem / "case.yaml"
    assert case_file.is_file(), f"{report.name}: no case {report.stem} in cases/ (a kept report names its case)"
    return yaml.safe_load(case_file.read_text())


def _buggy_names(case: dict) -> set[str]:
    pins = [*case.get("requires", []), *(p for v in case["variants"].values() if v["role"] == "buggy"
                                         for p in v.get("requires", []))]
    return {p.split("==")[0].split("[")[0].strip().lower().replace("_", "-") for p in pins if "==" in p}


def test_every_kept_report_names_a_case():
    assert len(REPORTS) >= 16
    for report in REPORTS:
        _case(report)


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.stem)
def test_a_kept_report_still_drafts(report: Path):
    case = _case(report)
    if report.stem in NO_EXCEPTION_LINE:
        with pytest.raises(UsageError, match="paste the error"):
            parse_report(report.read_text())
        return
    draft = draft_case(report.stem, parse_report(report.read_text()), report.name)
    data = yaml.safe_load(draft.case_yaml)
    if case.get("exception") and data.get("exception"):
        assert data["exception"] == case["exception"], f"{report.name}: exception drafted {data['exception']}"
    assert data.get("signature"), f"{report.name}: no signature drafted"
    culprit = draft.culprit.lower().replace("_", "-")
    assert culprit == "torch" or culprit in _buggy_names(case), (
        f"{report.name}: blamed {draft.culprit!r}, the case's buggy pins are {sorted(_buggy_names(case))}")
