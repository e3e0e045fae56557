"""Title classes of graded36-37's misses (issue 21 §1), each on a made-up report of its shape: junk as the API (a
name the error message quotes, a warning a pasted log prints) (tests/fixtures/graded36..37/EXPECTED.md list the real
reports)."""

from __future__ import annotations

from tests.core.test_new_fixtitle6 import _report, _title

_PADDING = ("ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
            "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your features "
            "(`widget_ids` in this case) have excessive nesting (inputs type `list` where type `int` is expected).")


def test_a_name_the_error_message_quotes_is_no_api() -> None:
    """Class (h2o-llmstudio-357): a frameless report quotes an error whose later sentence names a field in backticks
    (`widget_ids`); that word of the symptom is not what failed. Written as a call in the prose, it still is."""
    body = f"I started an experiment with the defaults and it fails:\n\n{_PADDING}\n"
    title = _title(_report("widgetstudio", "No clear error when training", body))
    assert title.startswith("widgetstudio: Unable to create tensor"), title
    called = body + "\nThe error comes from `widget_ids()` in my collate code.\n"
    assert _title(_report("widgetstudio", "No clear error when training", called)).startswith(
        "widgetstudio widget_ids: Unable"), called


def test_a_warning_a_pasted_log_prints_is_no_api() -> None:
    """Class (h2o-llmstudio-357): a pasted log's ``warn("The installed version ... without GPU support")`` line is
    another library's warning, never the call that failed."""
    log = ('```\n  warn("The installed version of widgetbits was compiled without GPU support. "\n'
           "Killed\n```\n")
    body = f"Full log below:\n{log}\nThe app says:\n\n```\n{_PADDING}\n```\n"
    title = _title(_report("widgetstudio", "No clear error when training", body))
    assert title.startswith("widgetstudio: Unable to create tensor"), title
