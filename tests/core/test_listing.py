"""``--list``: grouped by library, upstream links in full, readable at 80 and 200 columns and piped."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len
from rich.console import Console

from harness.cases._listing import group_by_library, library_of, print_case_list
from harness.cases._load import load_cases

LONG_FIX = "https://github.com/huggingface/diffusers/commit/" + "8d6dc2be5dfe9f54e455d9ca7a6acbd9181fba7b"
VERY_LONG = "https://github.com/org/lib/blob/" + "a" * 40 + "/src/lib/deeply/nested/module/with/a/long/path/file.py#L120"


def _add(root: Path, case_id: str, **changes) -> None:
    shutil.copytree(root / "confirmed", root / case_id)
    path = root / case_id / "case.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(id=case_id, **changes)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.fixture
def catalogue(fixture_cases):
    _add(fixture_cases, "flux-ids", title="Flux sampling after PR #9817 [/] adds a CPU arange \x1b]0;owned\x07",
         upstream={"issue": "https://github.com/ostris/ai-toolkit/issues/212?q=[x]", "fix": LONG_FIX,
                   "links": [VERY_LONG]}, tags=["diffusers"])
    _add(fixture_cases, "deep-path", upstream={"issue": "https://github.com/org/lib/issues/1", "commit": VERY_LONG})
    _add(fixture_cases, "tagged", upstream={"issue": "https://bugs.example.invalid/7"}, tags=["lightning", "amp"])
    _add(fixture_cases, "gone", status="retired", retired_reason="upstream removed the API")
    loaded = load_cases([fixture_cases])
    assert not loaded.errors, loaded.errors
    return loaded.cases


def _render(cases, *, width: int, terminal: bool) -> str:
    out = io.StringIO()
    console = (Console(file=out, width=width, force_terminal=True, color_system=None, highlight=False)
               if terminal else Console(file=out, width=160, soft_wrap=True, highlight=False))
    print_case_list(console, cases)
    return out.getvalue()


def test_library_is_the_fix_repository_else_a_tag(catalogue):
    by_id = {case.id: case for case in catalogue}
    assert library_of(by_id["flux-ids"]) == "huggingface/diffusers"          # fix, not the repository
    assert library_of(by_id["deep-path"]) == "org/lib"                       # commit, when there is no fix
    assert library_of(by_id["tagged"]) == "lightning"                        # no code-host link: first tag
    assert library_of(by_id["confirmed"]) == "other"                         # example.invalid, no tag
    groups = group_by_library(catalogue)
    assert list(groups) == sorted(groups, key=str.lower)
    assert sum(len(members) for members in groups.values()) == len(catalogue)


def test_piped_output_has_every_url_whole_on_one_line(catalogue):
    text = _render(catalogue, width=160, terminal=False)
    lines = text.splitlines()
    for url in (LONG_FIX, VERY_LONG, "https://github.com/ostris/ai-toolkit/issues/212?q=[x]"):
        assert any(url in line for line in lines), url
    assert "…" not in text and "┃" not in text
    assert "\x1b" not in text and "\\x1b]0;owned\\x07" in text and "[/] adds" in text
    assert "retired: upstream removed the API" in text
    for case in catalogue:
        assert case.id in text


def test_eighty_columns_get_one_block_per_case(catalogue):
    text = _render(catalogue, width=80, terminal=True)
    assert all(cell_len(line) <= 80 for line in text.splitlines())
    assert "┃" not in text and "…" not in text
    assert "huggingface/diffusers (1)" in text and "lightning (1)" in text
    for case in catalogue:
        assert f"  {case.id}" in text
    block = text[text.index("  flux-ids"):]
    for label in ("title", "issue", "fix", "variants", "expects"):
        assert f"    {label}" in block, label
    assert "1 more link(s)" in block
    # a URL wider than the column is folded onto the next lines, never cut with an ellipsis
    assert LONG_FIX in "".join(line.strip() for line in block.splitlines()[:8]).replace("fix", "")


def test_two_hundred_columns_get_one_table_grouped_by_library(catalogue):
    text = _render(catalogue, width=200, terminal=True)
    assert all(cell_len(line) <= 200 for line in text.splitlines())
    assert "┃ library / case" in text and "cuda-sim" in text
    assert text.index("huggingface/diffusers (1)") < text.index("flux-ids")
    assert LONG_FIX in text and "…" not in text
    assert "\x1b]0;" not in text and "[/] adds" in text


def test_colour_terminal_gets_links_but_never_the_case_escapes(catalogue):
    out = io.StringIO()
    print_case_list(Console(file=out, width=200, force_terminal=True, color_system="truecolor"), catalogue)
    text = out.getvalue()
    assert "\x1b]8;id=" in text and LONG_FIX in text   # OSC 8 hyperlinks from rich itself
    assert "\x1b]0;" not in text and "\\x1b]0;owned\\x07" in text
