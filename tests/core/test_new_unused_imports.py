"""A module the report's code imports but never uses is not the bug's project, and an exception in an inline code
span over several lines ends where the span closes (graded49 text2brain-6: `import nibabel as nib`, never called,
was blamed over the repository whose own `models.text2brain_model` the message names; its message kept the span's
closing backquote)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._prose_modules import unused_imports

REPORT = Path(__file__).parents[1] / "fixtures" / "graded49" / "text2brain-6.txt"


@pytest.mark.parametrize(("code", "unused"), [
    ("import nibabel as nib\nx = load()", ("nibabel",)),
    ("import nibabel as nib\nimg = nib.load(path)", ()),
    ("import nibabel\nnibabel.load(path)", ()),
    ("from models.net import Net\nmodel = Net()", ()),
    ("from models.net import Net, Other as O\nmodel = O()", ()),
    ("from models.net import (Net,\n    Other)\nprint(1)", ()),  # an import over lines: its names are not all read
    ("from models.net import Net\nprint(1)", ("models",)),
    ("from timm.layers import *\nprint(1)", ()),
    ("import a.b.c as abc, d\nd.run()", ("a",)),
    ("import nib_tools as nib\nThe nibabel docs say", ("nib_tools",)),  # a longer word is not the alias
    (">>> import deepchem as dc\n>>> dc.models.TorchModel()", ()),
])
def test_an_import_the_code_never_uses_is_told_apart(code: str, unused: tuple[str, ...]) -> None:
    assert unused_imports(code.splitlines()) == unused


def test_the_report_s_repository_is_blamed_over_an_import_its_code_never_uses() -> None:
    text = REPORT.read_text()
    report = parse_report(text)
    assert "nibabel" in report.modules and report.unused_imports == ("numpy", "nibabel")
    draft = draft_case("text2brain-6", report, "text2brain-6.txt", released=lambda dist: dist != "text2brain",
                       project_urls=lambda dist: None, versions=lambda dist: None)
    assert draft.culprit == "text2brain"
    assert yaml.safe_load(draft.case_yaml)["title"].startswith("text2brain Text2BrainModel: ")


def test_a_message_in_a_code_span_over_lines_ends_where_the_span_closes() -> None:
    report = parse_report(REPORT.read_text())
    assert report.traceback.message.endswith('"encoder.embeddings.position_ids".')
    one_line = parse_report("It fails:\n\n`RuntimeError: bad thing` when I run it\n")
    assert one_line.traceback.message == "bad thing"
    opened_inside = parse_report("Error:\n\nRuntimeError: Using `load_in_8bit=True` requires Accelerate\n")
    assert opened_inside.traceback.message == "Using `load_in_8bit=True` requires Accelerate"
