"""Shared fixtures, and the fault catalogue's ``faults handled: N/M`` line.

Each test marked ``@pytest.mark.fault("<fault>")`` (tests/faults, and tests/docker for the daemon fault)
triggers one fault of the catalogue for real. A fault counts as handled when every test marked with it
ran and passed; M is the whole catalogue, so a fault whose tests were skipped is not counted as handled.
"""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_CASES = REPO / "tests" / "fixtures" / "cases"


@pytest.fixture
def fixture_cases(tmp_path: Path) -> Path:
    """A private copy of tests/fixtures/cases that a test may modify."""
    target = tmp_path / "cases"
    shutil.copytree(FIXTURE_CASES, target)
    return target


# The fault table of the fault-catalogue issue, one row each.
FAULT_CATALOGUE = (
    "repro hangs forever",
    "repro segfaults / is killed by a signal",
    "repro exhausts memory",
    "repro prints 1 GB to stdout, or binary / invalid UTF-8",
    "repro exits in a finally, forks a survivor, or changes cwd/env",
    "malformed or invalid case files",
    "arbitrary YAML never crashes the loader",
    "environment install fails (bad pin, no network)",
    "Ctrl-C / SIGTERM mid-run",
    "two runs at once into the same output folder",
    "disk full while writing results",
    "docker daemon gone mid-run (docker backend)",
    "captured text with HTML/JS in it",
    # hostile input (the hardening issue): every repro, case file and results.json is untrusted
    "results.json names that would write outside the site",
    "results.json log paths outside the run, or symlinked logs",
    "a repro writes into the run folder (forges or destroys records)",
    "terminal escapes and markup in repro or case text",
    "YAML alias bombs, self-references and deep nesting",
    "catastrophic signature regex",
    "case values that pass the schema but break later",
    "out-of-range command-line numbers",
    "a repro leaves a setsid daemon behind",
    "the harness is SIGKILLed mid-run",
    "an environment build is SIGKILLed mid-install",
    "output folder read-only or a file",
    "structurally wrong results.json in the report input",
    "a local file: requirement whose code changed",
    "report file permissions and links",
    "report --output inside its own input",
    "a huge results.json",
    "harness exit codes through nox",
    # found by the adversarial pass over the hardened harness
    "a repro plants code that other cells or later runs execute",
    "an image folder whose symlinks name host files",
    "a package build writes outside its environment",
)
_FAULT_RESULTS: dict[str, list[str]] = defaultdict(list)  # fault -> outcomes ("passed", "failed", "skipped")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        marker = item.get_closest_marker("fault")
        if marker and marker.args[0] not in FAULT_CATALOGUE:
            raise pytest.UsageError(f"{item.nodeid}: fault {marker.args[0]!r} is not in FAULT_CATALOGUE "
                                    "(tests/conftest.py): use a row's exact text or add the row")
        if marker:
            item.user_properties.append(("fault", marker.args[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    fault = report.user_properties and dict(report.user_properties).get("fault")
    if fault and (report.when == "call" or not report.passed):
        _FAULT_RESULTS[fault].append(report.outcome)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    if not _FAULT_RESULTS:
        return
    handled = [f for f in FAULT_CATALOGUE if _FAULT_RESULTS.get(f) and set(_FAULT_RESULTS[f]) == {"passed"}]
    terminalreporter.write_sep("=", "fault catalogue")
    missing = [f for f in FAULT_CATALOGUE if not _FAULT_RESULTS.get(f)]
    if missing:
        terminalreporter.write_line(f"not exercised in this run ({len(missing)}; `nox -s faults` runs them all): "
                                    + "; ".join(missing))
    for fault in FAULT_CATALOGUE:
        outcomes = _FAULT_RESULTS.get(fault)
        if outcomes and fault not in handled:
            summary = ", ".join(f"{outcomes.count(o)} {o}" for o in ("failed", "skipped") if o in outcomes)
            terminalreporter.write_line(f"outcome differed from the table: {fault} ({summary})")
    terminalreporter.write_line(f"faults handled: {len(handled)}/{len(FAULT_CATALOGUE)}")
