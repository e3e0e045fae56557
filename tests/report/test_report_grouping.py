"""A catalogue reads by library: the terminal summary, the run page and the site head each library's cases."""

from __future__ import annotations

import html
import re
import shutil

from report_helpers import SINGLE, load
from rich.console import Console

from harness.cases._library import group_by_library, library_of
from harness.report import build_site, terminal_summary, write_run_reports

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
