"""pytest plugin loaded (``-p``) into both runs of a library's tests: one JSON line per event, flushed at once.

The JUnit XML pytest writes at the end is lost when a test kills the process (a segfault, the OOM killer, a
timeout); these lines are not, so the runner knows which tests ran, which one was running, and which are left
to run in a fresh process. Standard library and pytest only: it runs inside the library's environment.
"""

from __future__ import annotations

import json
import resource
from typing import IO, Any

import pytest

_stream: IO[str] | None = None
_cpu_start: dict[str, float] = {}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--conformance-record", default=None, help="append one JSON line per test event here")


def _write(record: dict[str, Any]) -> None:
    if _stream is not None:
        _stream.write(json.dumps(record) + "\n")
        _stream.flush()


def pytest_configure(config: pytest.Config) -> None:
    global _stream
    path = config.getoption("--conformance-record")
    if path and not hasattr(config, "workerinput"):  # xdist workers report through the controller
        _stream = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the whole session


def pytest_collection_finish(session: pytest.Session) -> None:
    _write({"collected": [item.nodeid for item in session.items]})


def _cpu_seconds() -> float:
    """Process CPU time (user + system) of pytest and the children it waited for: unlike a test's wall-clock
    duration, it does not grow with the other jobs of a shared host."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


def pytest_runtest_logstart(nodeid: str) -> None:
    _cpu_start[nodeid] = _cpu_seconds()
    _write({"start": nodeid})


def pytest_runtest_logfinish(nodeid: str) -> None:
    start = _cpu_start.pop(nodeid, None)
    if start is not None:
        _write({"cpu": nodeid, "seconds": round(_cpu_seconds() - start, 6)})


def _message(report: pytest.TestReport) -> str:
    if report.skipped and isinstance(report.longrepr, tuple):
        return str(report.longrepr[2])
    crash = getattr(report.longrepr, "reprcrash", None)
    if crash is not None:
        return str(crash.message)
    return str(report.longrepr or "")[-2000:]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _write({"id": report.nodeid, "when": report.when, "outcome": report.outcome,
            "duration": round(report.duration, 6), "message": _message(report)[:4000] if not report.passed else ""})


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _write({"finished": int(exitstatus)})


def pytest_unconfigure(config: pytest.Config) -> None:
    global _stream
    if _stream is not None:
        _stream.close()
        _stream = None
