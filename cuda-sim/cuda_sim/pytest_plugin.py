"""pytest plugin: ``pytest --cuda-sim`` runs a test suite with CUDA simulated on the CPU.

Registered through the ``pytest11`` entry point ``cuda_sim``, so installing cuda-sim is enough.
Importing this module imports neither torch nor the simulation, and a session that turns nothing
on only gets a header-less, summary-less plugin object; ``-p no:cuda_sim`` removes it altogether.

- ``--cuda-sim`` (``cuda_sim = true`` in the ini file, ``PYTEST_CUDA_SIM=1``): the simulation starts in
  ``pytest_load_initial_conftests``, before pytest imports the root ``conftest.py`` files (a suite
  whose conftest builds ``DEVICES`` at import sees CUDA), or in ``pytest_configure`` where the plugin
  was registered too late for that hook; the header says which. Module-level
  ``torch.cuda.is_available()`` checks, ``skipif`` markers and device-parametrised test generators all
  see one CUDA device. Refused on a
  host with a real GPU unless ``--cuda-sim-force``: the simulation must never hide a real device.
- A test that reaches something the simulation cannot follow (NotSimulatedError) is reported as
  ``NOT SIMULATED`` (a skip whose reason starts with ``not simulated:``), counted apart from real
  skips; ``--cuda-sim-strict`` (``cuda_sim_strict = true``, ``PYTEST_CUDA_SIM=strict``) fails it.
- A crash of the simulator's own code stays a failure, with a ``cuda-sim internal error`` section
  naming the simulator frame. Every failure the simulator raised (a CUDA error it emulates, or any
  error whose innermost frame is its code) is counted and listed in the summary.
- The ``cuda_sim`` fixture and ``@pytest.mark.cuda_sim`` simulate one test without the flag.
- Child Python processes the tests start (``subprocess``, ``accelerate launch``, ``torchrun``) join
  the simulation where cuda-sim is installed: the session exports ``CUDA_SIM_SUBPROCESS=1``
  (cuda_sim/_startup.py, the wheel's ``cuda_sim.pth``).
- pytest-xdist: the controller decides (and checks for a GPU) once; every worker follows that
  decision through ``config.workerinput``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import subprocess
from collections.abc import Generator, Iterator
from typing import Any, cast

import pytest

from cuda_sim import _activity
from cuda_sim._crash import internal_error, simulator_site
from cuda_sim._errors import NotSimulatedError
from cuda_sim._version import UnsupportedTorchError

ENV = "PYTEST_CUDA_SIM"
_NAME = "cuda-sim-session"
_WORKER_KEY = "cuda_sim"
_START = pytest.StashKey[int]()
_EARLY = pytest.StashKey["Decision"]()
_EARLY_WHEN = "before the initial conftests were imported (pytest_load_initial_conftests)"
_LATE_WHEN = "at pytest_configure (the plugin was registered after the initial conftests)"
_ON = {"1", "true", "yes", "on", "strict"}
_OFF = {"", "0", "false", "no", "off"}


@dataclasses.dataclass(frozen=True)
class Decision:
    """What the plugin does in this session; made once, by the controller under xdist."""

    enabled: bool
    strict: bool
    force: bool = False
    gpu: str = ""  # the real GPU seen (only when forced)
    torch: str = ""
    when: str = ""  # when the simulation was switched on


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    """Entry-point and ``-p`` plugins get this hook before pytest imports the initial conftests."""
    decision = dataclasses.replace(_decide(early_config), when=_EARLY_WHEN)
    early_config.stash[_EARLY] = decision
    if decision.enabled:
        import cuda_sim

        cuda_sim.install()


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("cuda-sim", "cuda-sim: CUDA device placement simulated on the CPU")
    group.addoption("--cuda-sim", action="store_true", default=None, dest="cuda_sim",
                    help=f"simulate one CUDA device on the CPU for the whole session (ini cuda_sim, env {ENV}=1)")
    group.addoption("--cuda-sim-strict", action="store_true", default=None, dest="cuda_sim_strict",
                    help="fail tests that reach something not simulated instead of skipping them "
                         f"(ini cuda_sim_strict, env {ENV}=strict)")
    group.addoption("--cuda-sim-force", action="store_true", default=False, dest="cuda_sim_force",
                    help="simulate even on a host with a real GPU (hides it from the tests)")
    parser.addini("cuda_sim", "simulate CUDA for the whole session, as --cuda-sim", type="bool", default=False)
    parser.addini("cuda_sim_strict", "fail not-simulated tests, as --cuda-sim-strict", type="bool", default=False)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "cuda_sim: run this test with CUDA simulated on the CPU (the cuda_sim fixture)")
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None and _WORKER_KEY in workerinput:
        decision = Decision(**workerinput[_WORKER_KEY])
    else:
        decision = config.stash.get(_EARLY, None) or dataclasses.replace(_decide(config), when=_LATE_WHEN)
    session = CudaSimSession(config, decision)
    config.pluginmanager.register(session, _NAME)
    if decision.enabled:
        import cuda_sim

        cuda_sim.install()
        session.watch()
        session.propagate()


def _decide(config: pytest.Config) -> Decision:
    env = os.environ.get(ENV, "").strip().lower()
    if env not in _ON | _OFF:
        raise pytest.UsageError(f"{ENV}={env!r}: expected 1, strict or 0")
    option = _option(config, "cuda_sim")
    enabled = bool(option) if option is not None else (env in _ON if env else bool(config.getini("cuda_sim")))
    strict_option = _option(config, "cuda_sim_strict")
    strict = bool(strict_option) or env == "strict" or bool(config.getini("cuda_sim_strict"))
    force = bool(_option(config, "cuda_sim_force"))
    if not enabled:
        return Decision(False, strict, force)
    from cuda_sim._version import check_torch

    try:
        version = check_torch()
    except UnsupportedTorchError as error:
        raise pytest.UsageError(f"--cuda-sim: {error}") from None
    gpu = real_gpu()
    if gpu and not force:
        raise pytest.UsageError(
            f"--cuda-sim refuses to run on a host with a real GPU ({gpu}): the simulation would hide it. "
            "Run the tests on the GPU without --cuda-sim, or pass --cuda-sim-force to simulate anyway.")
    return Decision(True, strict, force, gpu, version)


def _option(config: pytest.Config, name: str) -> object:
    """A command-line option, also before pytest has parsed them all (``known_args_namespace``)."""
    early = getattr(config, "known_args_namespace", None)
    if early is not None and hasattr(early, name):
        return getattr(early, name)
    return getattr(config.option, name, None)


def real_gpu() -> str:
    """A description of the real NVIDIA GPU this host has ('' for none): torch sees CUDA before any
    simulation, or ``nvidia-smi -L`` lists a GPU."""
    import torch

    import cuda_sim

    if not cuda_sim.is_active() and torch.cuda.is_available():
        return f"torch sees {torch.cuda.device_count()} CUDA device(s): {torch.cuda.get_device_name(0)}"
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            listed = subprocess.run([smi, "-L"], capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return ""
        lines = [line for line in listed.stdout.splitlines() if line.startswith("GPU")]
        if listed.returncode == 0 and lines:
            return f"nvidia-smi lists {lines[0].strip()}" + (f" and {len(lines) - 1} more" if len(lines) > 1 else "")
    return ""


class CudaSimSession:
    """The plugin's state in one pytest process: header, xdist hand-over, counting, summary."""

    def __init__(self, config: pytest.Config, decision: Decision) -> None:
        self.config = config
        self.decision = decision
        self.watching = False
        self.fixture_gpu: str | None = None  # the GPU check for the fixture, made once
        self.used: set[str] = set()
        self.not_simulated: dict[str, str] = {}
        self.internal: dict[str, str] = {}
        self.raised: dict[str, str] = {}  # failures the simulator raised (emulated or in its frames)

    def propagate(self) -> None:
        """Child Python processes of the tests join the simulation (cuda_sim/_startup.py)."""
        from cuda_sim import _startup

        self._previous_env = _startup.propagate()
        self._propagating = True

    def pytest_unconfigure(self) -> None:
        if getattr(self, "_propagating", False):
            from cuda_sim import _startup

            _startup.restore(self._previous_env)
            self._propagating = False

    def watch(self) -> None:
        """Start inspecting each test's outcome (the session flag, or the fixture's first use)."""
        if not self.watching:
            self.watching = True
            self.config.pluginmanager.register(_Watch(self.decision.strict), f"{_NAME}-watch")

    def pytest_report_header(self) -> list[str]:
        d = self.decision
        if not d.enabled:
            return []
        forced = f"; FORCED over a real GPU, which the tests cannot see: {d.gpu}" if d.force and d.gpu else ""
        return [f"cuda-sim: on, one simulated CUDA device (cuda:0) over the CPU; torch {d.torch}; "
                f"not-simulated tests {'fail (strict)' if d.strict else 'are skipped'}; "
                f"child Python processes join (CUDA_SIM_SUBPROCESS=1); switched on {d.when}{forced}"]

    @pytest.hookimpl(optionalhook=True)
    def pytest_configure_node(self, node: Any) -> None:
        """pytest-xdist: hand this session's decision to a worker before it configures."""
        node.workerinput[_WORKER_KEY] = dataclasses.asdict(self.decision)

    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            fixturenames = getattr(item, "fixturenames", None)
            if item.get_closest_marker("cuda_sim") and fixturenames is not None and "cuda_sim" not in fixturenames:
                fixturenames.append("cuda_sim")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, "cuda_sim_used", False):
            self.used.add(report.nodeid)
        reason = getattr(report, "cuda_sim_not_simulated", None)
        if reason:
            self.not_simulated[report.nodeid] = reason
        site = getattr(report, "cuda_sim_internal", None)
        if site:
            self.internal[report.nodeid] = site
        raised = getattr(report, "cuda_sim_raised", None)
        if raised:
            self.raised[report.nodeid] = raised

    def pytest_report_teststatus(self, report: pytest.TestReport) -> tuple[str, str, Any] | None:
        if report.skipped and getattr(report, "cuda_sim_not_simulated", None):
            return "not simulated", "n", ("NOT SIMULATED", {"yellow": True})
        return None

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not (self.decision.enabled or self.used or self.not_simulated or self.internal):
            return
        tr = terminalreporter
        tr.section("cuda-sim")
        failing = "failed: --cuda-sim-strict" if self.decision.strict else "skipped; --cuda-sim-strict fails them"
        tr.write_line(f"{len(self.used)} test(s) ran on simulated CUDA (placed or computed a tensor on cuda:0); "
                      f"{len(self.not_simulated)} not simulated ({failing}); "
                      f"{len(self.internal)} cuda-sim internal error(s); {len(self.raised)} failure(s) raised by "
                      "cuda-sim (a CUDA error it emulates, or an error in its own frames: a placement bug the "
                      "simulation found, or a simulator gap; a GPU run tells them apart)")
        for nodeid, reason in sorted(self.not_simulated.items()):
            tr.write_line(f"NOT SIMULATED {nodeid} - {reason}")
        for nodeid, site in sorted(self.internal.items()):
            tr.write_line(f"CUDA-SIM INTERNAL ERROR {nodeid} - at {site}", red=True)
        for nodeid, site in sorted(self.raised.items()):
            tr.write_line(f"RAISED BY CUDA-SIM {nodeid} - {site}")


class _Watch:
    """Per-test hooks, registered only once simulation is in play: counting, not-simulated, crashes."""

    def __init__(self, strict: bool) -> None:
        self.strict = strict

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> None:
        item.stash[_START] = _activity.placements

    # innermost, so a not-simulated test is decided before xfail handling sees a failure
    @pytest.hookimpl(wrapper=True, trylast=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]
                                  ) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        report = yield
        if call.when == "teardown":
            report.cuda_sim_used = _activity.placements > item.stash.get(_START, _activity.placements)  # type: ignore[attr-defined]
        if call.excinfo is None or not report.failed:
            return report
        missing = _not_simulated(call.excinfo.value)
        if missing is not None:
            report.cuda_sim_not_simulated = str(missing)  # type: ignore[attr-defined]
            if self.strict:
                report.sections.append(("cuda-sim", f"{missing} (failed: --cuda-sim-strict)"))
            elif call.when != "teardown":
                report.outcome = "skipped"
                report.longrepr = (str(item.path), item.location[1] + 1 if item.location[1] is not None else None,
                                   str(missing))  # type: ignore[assignment]
            return report
        raised = simulator_site(call.excinfo.value)
        if raised is not None:
            report.cuda_sim_raised = raised  # type: ignore[attr-defined]
        site = internal_error(call.excinfo.value)
        if site is not None:
            report.cuda_sim_internal = site  # type: ignore[attr-defined]
            error = call.excinfo.value
            report.sections.append(("cuda-sim internal error", (
                f"cuda-sim itself crashed at {site} ({type(error).__name__}: {error}): a bug in the simulator, "
                "not in the code under test. Please report it with this traceback.")))
        return report


def _not_simulated(error: BaseException) -> NotSimulatedError | None:
    """The NotSimulatedError behind ``error``: itself, or one it was raised from or while handling."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        if isinstance(current, NotSimulatedError):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


@pytest.fixture
def cuda_sim(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Simulate CUDA for this test (restored afterwards); yields ``torch.device("cuda", 0)``.

    Under ``--cuda-sim`` the whole session is simulated already. On a host with a real GPU the
    test runs on that GPU, unsimulated (``--cuda-sim-force`` simulates anyway).
    """
    session = cast(CudaSimSession, request.config.pluginmanager.get_plugin(_NAME))  # registered under _NAME
    session.watch()
    request.node.stash.setdefault(_START, _activity.placements)
    import torch

    import cuda_sim

    device = torch.device("cuda", 0)
    if cuda_sim.is_active() and session.decision.enabled:
        yield device
        return
    if session.fixture_gpu is None:
        session.fixture_gpu = real_gpu()
    if session.fixture_gpu and not session.decision.force:
        yield device
        return
    with cuda_sim.simulate():
        yield device
