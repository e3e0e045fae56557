"""fixenv7: environment-listing shapes seen in graded reports, on made-up reports of the same shape."""

from typing import Any

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._envlist import parse_environment
from harness.authoring._prose_modules import _modules


@pytest.mark.parametrize(("line", "python"), [
    ("- Python version: python3.8", "3.8"),  # a bug form's bullet repeating the name, glued
    ("- Python: Python3.7.4", "3.7.4"),
    ("Python version: Python 3.10.12", "3.10.12"),
])
def test_a_listing_value_that_repeats_the_name_is_the_python(line: str, python: str) -> None:
    assert parse_environment(["**Environment:**", " - OS: Ubuntu 20.04", line]).python == python


def test_a_value_naming_another_thing_is_no_release() -> None:
    env = parse_environment([" - GPU version: A100 80GB", " - Python version: python"])
    assert env.python is None
    assert "gpu" not in env.pins


def test_a_variable_the_text_assigns_is_no_module() -> None:
    """A reply's fix in inline code (`out = out.data.numpy()`): the dotted use is an attribute chain of a variable."""
    lines = ["# CUDA error: invalid device ordinal",
             "In trainer.py you need to replace `out = out.data[0]` with `out = out.data.item()`, and",
             "`for batch in loader:` then `batch.data.cuda()`."]
    assert _modules(lines) == ()


def test_a_module_named_in_prose_beside_an_assignment_stays() -> None:
    lines = ["The error comes from timm.layers.patch_embed when `img_size = 224` and `x = x.data.float()`."]
    assert _modules(lines) == ("timm",)


# A library user's report at the library's repository: the code imports it, no checkout shows, and the index's
# project of the repository's name links no repository.
_LIBRARY_USER = """Source: https://github.com/tabular-dev/tabnetx/issues/41
# Fit on GPU fails

When the data is already on the GPU, fitting fails:

```python
from tabnetx.utils import to_tensor
X = to_tensor(X, "cuda")
model.fit(X, y)
```

TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.
"""


def _buggy(text: str) -> str:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=lambda name: True,
                       project_urls=lambda name: ())
    data: dict[str, Any] = yaml.safe_load(draft.case_yaml)
    return " ".join(data["variants"]["buggy"]["requires"])


def test_an_unlinked_index_project_named_as_the_repository_and_imported_keeps_its_releases() -> None:
    assert "pin the tabnetx release the report ran" in _buggy(_LIBRARY_USER)


@pytest.mark.parametrize("checkout", [
    "### Version\n\ngit\n",  # a bug form's version field naming the source
    "Version: master\n",
    "I ran `python main.py --epochs 3` and got:\n",  # a script of the repository run
])
def test_an_unlinked_index_project_stays_commit_pins_when_the_report_ran_the_source(checkout: str) -> None:
    text = _LIBRARY_USER.replace("When the data", f"{checkout}\nWhen the data")
    assert "tabnetx @ git+https://github.com/tabular-dev/tabnetx@" in _buggy(text)


def test_a_source_version_field_is_read_and_a_release_is_not() -> None:
    assert parse_environment(["### Version", "", "git"]).from_source
    assert parse_environment(["- Version: main (3f2a1b0)"]).from_source
    assert not parse_environment(["### Version", "", "0.9.1"]).from_source
    assert not parse_environment(["Python version: 3.8"]).from_source


# A research repository run from its checkout ("running eval_all.py"), whose name on the index links nowhere, while a
# later repackaging of another name links the repository.
_CHECKOUT_RUN = """Source: https://github.com/visionlab/segformerx/issues/77
# RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!

I got this error when running eval_all.py with cuda as input
"""


def _repackaged(name: str) -> tuple[str, ...]:
    return ("https://github.com/visionlab/segformerx",) if name == "python-segformerx" else ()


def _checkout_draft(text: str) -> tuple[str, str]:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=lambda name: True,
                       project_urls=_repackaged)
    return draft.culprit, " ".join(yaml.safe_load(draft.case_yaml)["variants"]["buggy"]["requires"])


def test_a_checkout_run_pins_commits_not_a_later_repackaging() -> None:
    culprit, buggy = _checkout_draft(_CHECKOUT_RUN)
    assert culprit == "segformerx"
    assert "segformerx @ git+https://github.com/visionlab/segformerx@" in buggy


def test_a_repackaging_stays_when_the_report_shows_no_run_of_the_checkout() -> None:
    culprit, _ = _checkout_draft(_CHECKOUT_RUN.replace("when running eval_all.py with cuda as input",
                                                       "with cuda as input"))
    assert culprit == "python-segformerx"
