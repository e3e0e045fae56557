"""Every kept report (tests/fixtures/new-reports/<case id>.txt) still drafts what its confirmed case says.

Each report is the real upstream text a catalogue case was started from with `new`. The draft's exception
class must be the case's, its signature must match the message the case's own signature was written for
(the case's signature is searched in the drafted one's source message), and the blamed distribution must be
pinned by the case's buggy variant: the fields a maintainer kept unedited stay right as `new` changes."""

from __future__ import annotations

import re
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


# Report shapes `new` used to refuse although they name the exception (issue 21 §1: no refusal of a report with
# at least an exception line). Each is a real report; what a maintainer would keep from each.
NAMED_ONLY = {
    # raw markdown: <pre>AttributeError: &apos;OneCycleLR&apos; ...</pre>
    "mmengine-1401-raw-html.txt": ("AttributeError", "'OneCycleLR' object has no attribute 'end'", "mmengine"),
    # "Fix AttributeError: module 'torch.nn' has no attribute 'Layernorm' in vit_1d."
    "vit-pytorch-285-inline.txt": ("AttributeError", "module 'torch.nn' has no attribute 'Layernorm'", "vit-pytorch"),
    # IPython's "RuntimeError   Traceback (most recent call last)", cut before the message
    "tabnet-197-ipython-cut.txt": ("RuntimeError", None, "pytorch-tabnet"),
    "timm-913-ipython-cut.txt": ("RuntimeError", None, "timm"),
}


@pytest.mark.parametrize("name", sorted(NAMED_ONLY))
def test_a_report_that_only_names_its_exception_is_drafted(name: str):
    exception, message, library = NAMED_ONLY[name]
    report = parse_report((ROOT / "tests" / "fixtures" / "reports" / name).read_text())
    draft = draft_case("named", report, name)
    data = yaml.safe_load(draft.case_yaml)
    assert data["exception"] == exception
    if message is None:  # the report cut the message off: the signature is a placeholder, never a regex of nothing
        assert data["signature"].startswith("FILL-IN")
    else:
        assert re.search(data["signature"], message), data["signature"]
    assert draft.culprit == library
    assert report.missing and any("no exception line of its own" in n or "exception line at" in n for n in draft.notes)
    assert "device-placement" not in data.get("tags", [])  # none of these is a device error


def test_a_bug_template_bullet_gives_the_torch_release():
    """GitHub's bug template "Desktop" bullets (" - PyTorch 2.0.1 CUDA", no colon) name the versions the report ran."""
    report = parse_report((ROOT / "tests" / "fixtures" / "new-reports" / "timm-resample-patch-embed-device.txt")
                          .read_text())
    assert report.environment.pins["torch"].version == "2.0.1"
    assert "os" not in report.environment.pins  # " - OS: Debian" names no release


def test_a_project_the_index_does_not_have_is_pinned_by_commit():
    """Code run from its repository (TOOD has no release on any index): both variants draft a commit pin of the
    report's repository, not a release that does not exist. `new` asks the configured index; here a table."""
    report = parse_report((ROOT / "tests" / "fixtures" / "graded3" / "tood-8.txt").read_text())
    asked: list[str] = []
    draft = draft_case("tood", report, "tood-8.txt", released=lambda name: asked.append(name) or False)
    data = yaml.safe_load(draft.case_yaml)
    buggy = " ".join(data["variants"]["buggy"]["requires"])
    fix = " ".join(data["variants"]["fix"]["requires"])
    assert asked == ["tood"]
    assert "tood @ git+https://github.com/fcjian/TOOD@<commit>" in buggy and "git+https://github.com/fcjian/TOOD" in fix
    assert any("no project named tood" in note for note in draft.notes)
    kept = draft_case("tood", report, "tood-8.txt", released=lambda name: None)  # no answer: the release placeholder
    assert "tood==X.Y.Z" in " ".join(yaml.safe_load(kept.case_yaml)["variants"]["buggy"]["requires"])


def test_the_index_lookup_tells_a_released_project_from_a_missing_one():
    """`new`'s question to the configured index (the one cells install from): a 404 everywhere is "no"."""
    from harness.authoring._new import index_released

    released = index_released(deadline_s=20)
    known = released("timm")
    if known is None:
        pytest.skip("the configured package index did not answer (an offline host)")
    assert known is True
    assert released("repro-matrix-no-such-project-4f1c2") is False
