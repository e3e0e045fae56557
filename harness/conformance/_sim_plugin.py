"""Interim pytest plugin for the conformance runs: ``--cuda-sim`` until harness.sim's own plugin lands.

Same semantics as the planned ``pytest11: cuda_sim`` plugin: the simulation is switched on in
``pytest_configure`` (before collection, so module-level ``torch.cuda.is_available()`` sees a GPU), and
a test that hits ``NotSimulatedError`` is reported as skipped with the reason ``not simulated: ...``.
"""

from __future__ import annotations

from collections.abc import Generator

import pytest

_NOT_SIMULATED = "not simulated:"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cuda-sim")
    group.addoption("--cuda-sim", action="store_true", help="run the tests on a simulated CUDA device")
    group.addoption("--cuda-sim-strict", action="store_true", help="fail tests that hit NotSimulatedError")


def pytest_configure(config: pytest.Config) -> None:
    if _on(config):
        import harness.sim

        harness.sim.install()


def pytest_report_header(config: pytest.Config) -> str | None:
    return "cuda-sim: tests run on a simulated CUDA device (interim conformance plugin)" if _on(config) else None


def _on(config: pytest.Config) -> bool:
    return bool(config.getoption("--cuda-sim"))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if not _on(config):
        return
    skipped = terminalreporter.stats.get("skipped", [])
    count = sum(1 for r in skipped if isinstance(r.longrepr, tuple) and str(r.longrepr[2]).startswith(_NOT_SIMULATED))
    terminalreporter.write_line(f"cuda-sim: {count} test(s) skipped as not simulated")


def _not_simulated(error: BaseException | None) -> str | None:
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        text = str(error)
        if type(error).__name__ == "NotSimulatedError" or text.startswith(_NOT_SIMULATED):
            return text.splitlines()[0] if text else _NOT_SIMULATED
        error = error.__cause__ or error.__context__
    return None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or not report.failed or item.config.getoption("--cuda-sim-strict"):
        return
    reason = _not_simulated(call.excinfo.value)
    if reason is not None:
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, reason)
