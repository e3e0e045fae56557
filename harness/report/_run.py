"""Per-run reports: junit.xml and index.html next to results.json."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.report._bounds import bound_results
from harness.report._io import write_text_atomic
from harness.report._junit import render_junit
from harness.report._render import render
from harness.report._run_view import run_view


def render_run_html(results: Mapping[str, Any], run_dir: Path | None = None) -> str:
    """The self-contained per-run page; log tails are read from run_dir when given."""
    return render("run.html", view=run_view(results, run_dir))


def write_run_reports(run_dir: Path, results: Mapping[str, Any]) -> None:
    """Write junit.xml and index.html into run_dir (atomically); logs are linked relative to it."""
    run_dir = Path(run_dir)
    bounded = bound_results(results)
    write_text_atomic(run_dir / "junit.xml", render_junit(results, run_dir, bounded))
    write_text_atomic(run_dir / "index.html", render("run.html", view=run_view(results, run_dir, bounded)))
