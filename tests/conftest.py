"""Shared fixtures, the fault catalogue's ``faults handled: N/M`` line, and what the session leaves behind.

Each test marked ``@pytest.mark.fault("<fault>")`` (tests/faults, and tests/docker for the daemon fault)
triggers one fault of the catalogue for real. A fault counts as handled when every test marked with it
ran and passed; M is the whole catalogue, so a fault whose tests were skipped is not counted as handled.
Under pytest-xdist each worker reports its outcomes to the controller, which prints the one line.

Docker: the images the session built (labelled with its id through REPRO_DOCKER_LABELS), their cache
volumes and the build cache made meanwhile are removed when it ends (the controller, once every worker is
done), unless ``REPRO_TEST_KEEP_IMAGES=1`` keeps them for a faster next run. Images that were there
before, or that another session on the same daemon built, are never touched.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_CASES = REPO / "tests" / "fixtures" / "cases"
# The report's record of checked inputs (harness/report/_checked.py) is off unless a test turns it on: every
# other test sees every check run, and nothing is written into the user's cache folder.
os.environ.setdefault("REPRO_MATRIX_REPORT_CACHE", "")


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
    "a package build poisons uv's shared cache",
    "a package build reads root-only host files (as root)",
    # sealed by construction (issue 19): a cell starts with nothing and gets an allow-list
    "a repro writes host kernel settings (/proc/sys)",
    "a repro opens host devices or the harness's terminal",
    "a repro reads and publishes the harness's secrets",
    "a repro connects to host network services (loopback TCP)",
    "a repro connects to a host abstract unix socket",
    "a repro reads host SysV shared memory",
    "a repro ptraces the namespace's init",
    "a repro finds the hidden output folder in mountinfo",
    "a repro plants bytecode in its case cache for later runs",
    "a fork bomb in a cell",
    "a cell fills /dev/shm or escapes its memory bound by forking",
    "the harness's own machinery fails under a cell (disk full, environment removed)",
    # issue 19 section 3-4: the site tells one story; nothing the tools read hangs or crashes them
    "a results.json or history run dated in the future",
    "two verdicts for one (case, lane) in a run",
    "a hard-link backup of a run",
    "a killed report build's temporary files",
    "two report builds into one output",
    "a results.json of 20,000 cases",
    "a FIFO or deeply nested results.json in the output folder",
    "bisect against a hostile package index",
    "cuda-sim given a folder instead of a script",
    "a dangling symlink in the cases folder",
    "the same --cases-dir given twice",
    "a repro deletes its own working folder",
    "a fresh adversary's attacks on a sealed cell",
    "one case with many variants floods results.json",
)
_FAULT_RESULTS: dict[str, list[str]] = defaultdict(list)  # fault -> outcomes ("passed", "failed", "skipped")


# Parallel runs (`nox -s tests` runs pytest-xdist with --dist loadgroup): every module runs whole on one
# worker (its module fixtures are built once); these folders run on one worker together: the docker tests
# share one daemon, its images and session fixtures; the fault tests hang, kill and fill on purpose.
# (pytest-xdist 3.8's own loadgroup cannot tag nodes under pytest 9, so the scheduler below groups by path.)
_GROUPS = {"tests/docker/": "docker", "tests/faults/": "faults"}
# The longest groups start first, so that no long one starts last and runs alone at the end.
_START_FIRST = ("docker", "tests/cases/test_all_cases.py", "tests/core/test_readme_commands.py",
                "tests/sim/test_package.py", "faults", "tests/cases/test_seed_case_scripts.py",
                "tests/cases/test_deepspeed_shims.py", "tests/sim/test_sim_session.py")


def group_of(nodeid: str) -> str:
    """The worker group of a test: its folder's group, else its module."""
    path = nodeid.split("::", 1)[0]
    return next((group for folder, group in _GROUPS.items() if path.startswith(folder)), path)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist: unknown with -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """``--dist loadgroup``: whole groups (see :func:`group_of`) to one worker each, in collection order."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class GroupScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return group_of(nodeid)

    return GroupScheduling(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    rank = {group: index for index, group in enumerate(_START_FIRST)}
    items.sort(key=lambda item: rank.get(group_of(item.nodeid), len(rank)))  # stable: order within a group stays
    for item in items:
        marker = item.get_closest_marker("fault")
        if marker and marker.args[0] not in FAULT_CATALOGUE:
            raise pytest.UsageError(f"{item.nodeid}: fault {marker.args[0]!r} is not in FAULT_CATALOGUE "
                                    "(tests/conftest.py): use a row's exact text or add the row")
        if marker:
            item.user_properties.append(("fault", marker.args[0]))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    # Under xdist the controller gets every worker's reports here too: the count is whole-session.
    fault = report.user_properties and dict(report.user_properties).get("fault")
    if fault and (report.when == "call" or not report.passed):
        _FAULT_RESULTS[fault].append(report.outcome)


def pytest_terminal_summary(terminalreporter, exitstatus: int, config: pytest.Config) -> None:
    _docker_summary(terminalreporter, config)
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


# -- Docker: a daemon for the tests that need one, and what the session leaves on it ----------------------
def _docker_missing(reason: str) -> None:
    """Skip, or fail under ``REPRO_REQUIRE_DOCKER=1`` (CI): a missing daemon must not pass as a skip there."""
    if os.environ.get("REPRO_REQUIRE_DOCKER") == "1":
        pytest.fail(f"REPRO_REQUIRE_DOCKER=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def docker_unavailable():
    """``docker_unavailable(reason)``: skip the test, or fail it under ``REPRO_REQUIRE_DOCKER=1``."""
    return _docker_missing


@pytest.fixture(scope="session")
def docker_client():
    from harness.docker import DockerUnavailableError, connect

    try:
        return connect()
    except DockerUnavailableError as error:
        _docker_missing(str(error))


@dataclass
class _DockerLedger:
    session: str  # the label every image this session builds carries (REPRO_DOCKER_LABELS)
    tags: set[str]  # image tags there before the session: a rebuild under one of them is kept
    build_cache: set[str]
    removed: list[str] = field(default_factory=list)


_LEDGER = pytest.StashKey[_DockerLedger]()
_SESSION_LABEL = "repro-matrix.test-session"


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _daemon() -> Any:
    try:
        from harness.docker import DockerUnavailableError, connect
    except ImportError:
        return None
    try:
        return connect(timeout=120)
    except DockerUnavailableError:
        return None


def pytest_sessionstart(session: pytest.Session) -> None:
    """Label what this session builds (xdist workers and the harness's subprocesses inherit the variable), so
    that the end of the session removes exactly that: never an image another session on this daemon built."""
    if _is_worker(session.config) or os.environ.get("REPRO_TEST_KEEP_IMAGES") == "1":
        return
    client = _daemon()
    if client is None:
        return
    from harness.docker._build import LABELS_VARIABLE
    from harness.docker._clean import build_cache_ids

    tags = {tag for image in client.api.images() for tag in image.get("RepoTags") or []}
    ledger = _DockerLedger(session=uuid.uuid4().hex[:16], tags=tags, build_cache=build_cache_ids(client))
    os.environ[LABELS_VARIABLE] = ",".join(filter(None, (os.environ.get(LABELS_VARIABLE, ""),
                                                          f"{_SESSION_LABEL}={ledger.session}")))
    session.config.stash[_LEDGER] = ledger


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    ledger = session.config.stash.get(_LEDGER, None)
    client = _daemon() if ledger is not None else None
    if ledger is None or client is None:
        return
    from docker.errors import APIError

    from harness.docker._clean import prune_build_cache_since
    from harness.docker._containers import remove_cache_volumes
    from harness.environments._clean import human_size

    built = client.api.images(filters={"label": f"{_SESSION_LABEL}={ledger.session}"})
    made = [image for image in built if not ledger.tags & set(image.get("RepoTags") or [])]
    size = 0
    for image in made:
        try:
            client.api.remove_image(image["Id"], force=True)
            size += int(image.get("Size") or 0)
        except APIError as error:
            ledger.removed.append(f"kept image {image['Id'][7:19]}: {error.explanation or error}")
            continue
        remove_cache_volumes(client, image["Id"])
    # Build cache records are a cache: pruning the ones made meanwhile (by any build not running now) is safe.
    cache = prune_build_cache_since(client, ledger.build_cache)
    if made or cache:
        ledger.removed.insert(0, f"removed what this session built: {len(made)} image(s) ({human_size(size)}) "
                                 f"with their cache volumes, {human_size(cache)} of build cache "
                                 "(REPRO_TEST_KEEP_IMAGES=1 keeps them for the next run)")


def _docker_summary(terminalreporter, config: pytest.Config) -> None:
    ledger = config.stash.get(_LEDGER, None)
    if ledger is not None and ledger.removed:
        terminalreporter.write_sep("=", "docker")
        for line in ledger.removed:
            terminalreporter.write_line(line)
