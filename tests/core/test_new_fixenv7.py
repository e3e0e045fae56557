"""fixenv7: environment-listing shapes seen in graded reports, on made-up reports of the same shape."""

import pytest

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
