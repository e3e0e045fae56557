"""The skeleton's import of the blamed project: written only as the report shows it, else a `# FILL-IN:` line that
validate lists until the author writes the import (a guess from the project's name is often wrong: OpenNMT-py's
package is onmt); and the report's own code calls shown as the repro's start. Made-up reports of each shape."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from harness._exceptions import CaseFileError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case
from harness.cases._load import load_case
from tests.core.test_new import fill_in

_PLACED = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
_CODE = "```python\nfrom tidekit.train import Fitter\nfitter = Fitter(cfg)\nfitter.run_epoch(loader)\n```\n"


def _drafted(body: str) -> Draft:
    text = f"Source: https://github.com/someone/tide-kit/issues/7\n# error when training on GPU\n\n{body}{_PLACED}\n"
    return draft_case("made-up", parse_report(text), "made-up.txt", released=lambda _: False,
                      project_urls=lambda _: None)


def _written(draft: Draft, folder: Path) -> Path:
    folder.mkdir()
    (folder / "case.yaml").write_text(draft.case_yaml)
    (folder / "repro.py").write_text(draft.repro_py)
    return folder


def test_a_report_showing_no_import_of_the_project_gets_an_import_placeholder_not_a_guess() -> None:
    draft = _drafted("Training the model on a GPU raises:\n\n")
    assert not re.search(r"(?m)^import tide", draft.repro_py)
    assert re.search(r"(?m)^# FILL-IN: import tide-kit's module here", draft.repro_py), draft.repro_py


def test_validate_lists_the_import_placeholder_until_the_author_writes_it(tmp_path: Path) -> None:
    folder = _written(_drafted("Training the model on a GPU raises:\n\n"), tmp_path / "made-up")
    fill_in(folder)  # the author's values, the import included: the case loads
    load_case(folder)
    repro = folder / "repro.py"
    repro.write_text(repro.read_text().replace("# the author's import",
                                               "# FILL-IN: import tide-kit's module here (left unwritten)"))
    with pytest.raises(CaseFileError, match=r"repro\.py.*import tide-kit's module here"):
        load_case(folder)


def test_a_report_whose_code_imports_the_project_gets_no_placeholder() -> None:
    draft = _drafted(_CODE)
    assert "# FILL-IN: import" not in draft.repro_py


def test_the_reports_own_code_calls_are_shown_as_the_repros_start() -> None:
    draft = _drafted(_CODE)
    assert "The report's own code calls (start the repro there):" in draft.repro_py, draft.repro_py
    assert "run_epoch" in draft.repro_py.partition("start the repro there")[2]
