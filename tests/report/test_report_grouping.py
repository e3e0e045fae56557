"""A catalogue reads by library: the terminal summary, the run page and the site head each library's cases."""

from __future__ import annotations

import copy
import html
import re
import shutil

from report_helpers import SINGLE, load
from rich.console import Console

from harness.cases._library import group_by_library, library_of
from harness.report import build_site, terminal_summary, write_run_reports
from harness.report._terminal import COMPACT_FROM

# The fixture run's four cases and the repositories their fix links name.
LIBRARIES = {"deepspeedai/DeepSpeed": ["deepspeed-zero3-offload-clip"], "KohakuBlueleaf/LyCORIS": ["lycoris-extract-diff"],
             "Nerogar/OneTrainer": ["onetrainer-validation-device"], "pytorch/pytorch": ["var-resume"]}


def test_library_is_the_repository_of_the_first_code_host_link_else_the_first_tag():
    assert library_of({"issue": "https://github.com/a/b/issues/1", "fix": "https://github.com/c/d/pull/2"}) == "c/d"
    assert library_of({"pr": "https://gitlab.com/e/f/-/merge_requests/3"}) == "e/f"
    assert library_of({"issue": "https://example.invalid/1"}, ["optimizer"]) == "optimizer"
    assert library_of({"fix": "http://[bad"}, []) == "other"
    assert library_of("not a mapping", "not a list") == "other"  # untrusted results.json shapes
    assert group_by_library([("b", {}, ["z"]), ("a", {}, ["z"]), ("c", {}, ["A"])]) == [("A", ["c"]), ("z", ["a", "b"])]


def test_terminal_summary_heads_each_library_in_name_order():
    console = Console(width=120, record=True)
    console.print(terminal_summary(load(SINGLE)))
    text = console.export_text()
    positions = [text.index(f"{library} (1)") for library in sorted(LIBRARIES, key=str.lower)]
    assert positions == sorted(positions), text
    for library, (case,) in LIBRARIES.items():
        assert text.index(f"{library} (1)") < text.index(f"  {case}"), text


def test_run_page_and_site_group_rows_by_library(tmp_path):
    run = tmp_path / "runs" / SINGLE.name
    shutil.copytree(SINGLE, run)
    write_run_reports(run, load(run))
    site = tmp_path / "site"
    build_site([tmp_path / "runs"], site)
    for page in (run / "index.html", site / "index.html"):
        matrix = page.read_text().split('id="matrix"', 1)[1].split("</table>", 1)[0]
        headings = [html.unescape(h) for h in re.findall(r'<tr class="group"><th colspan="\d+">([^<]*)</th>', matrix)]
        assert headings == sorted(LIBRARIES, key=str.lower), page
        for library, (case,) in LIBRARIES.items():
            assert matrix.index(f">{library}<") < matrix.index(f">{case}</a>") < matrix.index("</tbody>"), page


def _grown(results: dict, libraries: int, per_library: int) -> dict:
    """The fixture run plus libraries whose cases all confirm on cpu and cuda-sim and skip cuda."""
    grown = copy.deepcopy(results)
    for i in range(libraries):
        for j in range(per_library):
            case = f"lib{i}-case{j}"
            grown["cases"][case] = {"title": f"case {j} of lib {i}",
                                    "upstream": {"fix": f"https://github.com/org{i}/lib{i}/pull/{j}"}, "tags": []}
            grown["verdicts"] += [{"case": case, "lane": lane, "verdict": verdict, "reason": "as documented",
                                   "cells": ["buggy", "fix"]}
                                  for lane, verdict in (("cpu", "confirmed"), ("cuda", "skipped"),
                                                        ("cuda-sim", "confirmed"))]
    return grown


def test_a_large_run_folds_each_library_that_needs_nothing_into_one_row():
    results = _grown(load(SINGLE), libraries=8, per_library=4)  # 36 cases
    assert len(results["cases"]) >= COMPACT_FROM
    console = Console(width=250, record=True)
    console.print(terminal_summary(results))
    text = console.export_text()
    table = text.split("Needs attention", 1)[0]
    for i in range(8):
        (line,) = [line for line in text.splitlines() if f"org{i}/lib{i} (4)" in line]
        assert "4 confirmed" in line and "4 skipped" in line, line
        assert f"lib{i}-case0" not in table  # folded: its cases are not listed one by one
    for library, (case,) in LIBRARIES.items():  # libraries with something to read stay case by case
        if case != "deepspeed-zero3-offload-clip":  # (every lane skipped: folded like the rest)
            assert text.index(f"{library} (1)") < text.index(f"  {case}"), text
    assert "9 libraries with every verdict confirmed or skipped take one row each" in text
    assert len(table.splitlines()) < 30, text  # 36 cases, 12 libraries: one screen
    (skips,) = [line for line in text.splitlines() if line.startswith("  cuda (32 cases: ")]
    assert skips.endswith("lib1-case3 and 24 more): as documented"), skips  # eight named, the rest counted
    small = Console(width=120, record=True)
    small.print(terminal_summary(_grown(load(SINGLE), libraries=1, per_library=2)))  # 6 cases: every row shown
    assert "  lib0-case0" in small.export_text() and "take one row each" not in small.export_text()


def test_the_filter_offers_each_library_and_every_row_carries_what_it_matches(tmp_path):
    run = tmp_path / "runs" / SINGLE.name
    shutil.copytree(SINGLE, run)
    write_run_reports(run, load(run))
    build_site([tmp_path / "runs"], tmp_path / "site")
    for page in (run / "index.html", tmp_path / "site" / "index.html"):
        text = page.read_text()
        form = text.split('<form class="filter" id="matrix-filter"', 1)[1].split("</form>", 1)[0]
        assert form.split(">", 1)[0].rstrip().endswith("hidden"), form  # shown by the script only
        options = [html.unescape(o) for o in re.findall(r'<option value="([^"]+)">', form.split('name="verdict"')[0])]
        assert options == sorted(LIBRARIES, key=str.lower), page
        assert 'value="attention"' in form and 'value="fix-regressed"' in form
        assert text.index('id="attention"' if "site" in str(page) else 'class="attention"') < text.index("matrix-filter")
        for library, (case,) in LIBRARIES.items():
            row = re.search(rf'<tr data-library="([^"]*)" data-text="([^"]*)">\s*<th scope="row"><a href="[^"]*{case}',
                            text)
            assert row and html.unescape(row.group(1)) == library, (page, case)
            assert case in row.group(2) and library.lower() in html.unescape(row.group(2)), row.group(2)


def test_a_long_skip_group_on_the_run_page_gives_the_reason_first_and_the_names_on_demand(tmp_path):
    run = tmp_path / SINGLE.name
    shutil.copytree(SINGLE, run)
    write_run_reports(run, _grown(load(run), libraries=3, per_library=4))
    text = (run / "index.html").read_text()
    skipped = text.split('<ul class="skipped">', 1)[1].split("</ul>", 1)[0]
    long_group = re.search(r"<li>cuda \(12 cases\): as documented<details class=\"names\"><summary>which cases</summary>"
                           r"([^<]*)</details></li>", skipped)
    assert long_group and long_group.group(1).split(", ") == [f"lib{i}-case{j}" for i in range(3) for j in range(4)]
    assert "<li>cuda (4 cases: var-resume, lycoris-extract-diff, " in skipped  # short groups as before
