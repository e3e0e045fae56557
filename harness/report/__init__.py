"""Reports over results.json: per-run junit.xml and index.html, the terminal summary, the cross-run site.

Pure functions over results dicts; the command line lives in ``harness._cli``.
"""

from harness.report._io import ReportInputError
from harness.report._run import write_run_reports
from harness.report._site import SiteSummary, build_site
from harness.report._terminal import terminal_summary
from harness.report._timeline import StaleItem

__all__ = ["ReportInputError", "SiteSummary", "StaleItem", "build_site", "terminal_summary", "write_run_reports"]
