"""Per test: the plain-CPU outcome against the cuda-sim outcome, and the triage of every difference.

A test *needs triage* when the simulated pass fails it (or it crashed, hit NotSimulatedError, or never ran)
although the plain pass passed it or skipped it (a CUDA-only test the simulation now runs). Each such test is
looked up in its library file's triage; one that is not there is *unexplained*: a new failure, and the run
fails. A test the simulated pass skips by the library's own decision (a CPU-only test) needs nothing.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import dataclass, field

from harness.conformance._runs import Pass, Result
from harness.conformance._suites import TRIAGE_CLASSES, Library, Triage

UNEXPLAINED = "unexplained"
# Real CUDA's device-mismatch messages (TensorIterator, the generated checks, convolution, RNNs, indexing).
DEVICE_ERROR = re.compile(
    r"Expected all tensors to be on the same device|to be on the same device|must be on the same device"
    r"|Input type \(.*\) and weight type|should be the same or input should be a MKLDNN tensor"
    r"|Input and parameter tensors are not at the same device|indices should be either on cpu or on the same device")
# A skip under the simulation is the library's own choice (a CPU-only test); not-simulated is not a skip.
_SIM_FAILED = ("failed", "error", "crashed", "not-simulated", "missing")


@dataclass
class Row:
    test: str
    cpu: str
    sim: str
    kind: str  # a triage class, 'unexplained', or '' when nothing needs explaining
    reason: str = ""
    message: str = ""  # the simulated pass's first line
    device_error: bool = False

    def serialize(self) -> dict[str, object]:
        return {"test": self.test, "cpu": self.cpu, "sim": self.sim, "class": self.kind, "reason": self.reason,
                "message": self.message, "device_error": self.device_error}


@dataclass
class Comparison:
    library: Library
    selection: tuple[str, ...]
    cpu: Pass
    sim: Pass
    rows: list[Row] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)  # triaged tests that now pass under the simulation
    twins_passed: int = 0  # cuda twins (only the simulated pass collects them) that passed

    @property
    def ratio(self) -> float | None:
        return self.sim.cpu_seconds / self.cpu.cpu_seconds if self.cpu.cpu_seconds > 0 else None

    @property
    def same_tests_ratio(self) -> float | None:
        """Process CPU time of the tests both passes passed, sim / cpu (the process ratio also counts the CUDA-only
        tests that only the simulated pass runs); their summed wall-clock durations where a pass recorded no CPU
        time (stored by an older recorder)."""
        both = [t for t, r in self.cpu.results.items()
                if r.outcome == "passed" and self.sim.results.get(t, _MISSING).outcome == "passed"]
        pairs = [(self.cpu.results[t], self.sim.results[t]) for t in both]
        if pairs and all(a.cpu is not None and b.cpu is not None for a, b in pairs):
            cpu = sum(a.cpu or 0.0 for a, _ in pairs)
            return sum(b.cpu or 0.0 for _, b in pairs) / cpu if cpu > 0 else None
        cpu = sum(a.duration for a, _ in pairs)
        return sum(b.duration for _, b in pairs) / cpu if cpu > 0 else None

    def count(self, kind: str) -> int:
        return sum(1 for row in self.rows if row.kind == kind)

    @property
    def false_device_errors(self) -> int:
        """Device-mismatch errors under the simulation in tests real CUDA passes (not triaged cuda-only)."""
        return sum(1 for row in self.rows if row.device_error and row.kind != "cuda-only")

    @property
    def newly_run(self) -> int:
        """Tests the plain pass skipped, and cuda twins it never collected, that passed on simulated CUDA."""
        return self.twins_passed + sum(1 for t in self.sim.results if self.sim.results[t].outcome == "passed"
                                       and self.cpu.results.get(t, _MISSING).outcome == "skipped")

    def serialize(self) -> dict[str, object]:
        lib = self.library
        return {
            "library": lib.name, "sdist": f"{lib.sdist}=={lib.version}", "sha256": lib.sha256,
            "selection": list(self.selection), "cpu": self.cpu.serialize(), "sim": self.sim.serialize(),
            "cpu_time_ratio": None if self.ratio is None else round(self.ratio, 3),
            "same_tests_cpu_ratio": None if self.same_tests_ratio is None else round(self.same_tests_ratio, 3),
            "triage": {kind: self.count(kind) for kind in (*TRIAGE_CLASSES, UNEXPLAINED)},
            "false_device_errors": self.false_device_errors, "newly_run_on_sim": self.newly_run,
            "stale_triage": self.stale, "rows": [row.serialize() for row in self.rows],
        }


_MISSING = Result("missing")


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]


# A parameter id naming the cuda device: `test_x[cuda-fp16]`, `test_y[cuda:0]`, `test_z[fp16-cuda]`,
# `test_w[torch.gpu.compile]`.
_CUDA_PARAM = re.compile(r"(?<=[\[\-_.])(?:cuda(?::\d+)?|gpu)(?=[\]\-_.])")


def cpu_twin(test: str) -> str | None:
    """The node id of a test's CPU twin, for a test a suite parametrizes by device only when cuda is available
    (`devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])`): the plain pass never collects it."""
    head, bracket, params = test.partition("[")
    twin = head + bracket + _CUDA_PARAM.sub("cpu", bracket + params)[1:] if bracket else test
    return twin if twin != test else None


def _before(test: str, cpu: Pass) -> tuple[Result, bool]:
    """The plain pass's outcome for ``test``, or for its CPU twin when only the simulated pass collected it."""
    if test in cpu.results or test in cpu.collected:
        return cpu.results.get(test, _MISSING), False
    twin = cpu_twin(test)
    if twin is not None and twin in cpu.results:
        return cpu.results[twin], True
    return _MISSING, False


def compare(library: Library, selection: tuple[str, ...], cpu: Pass, sim: Pass, triage: Triage) -> Comparison:
    result = Comparison(library, selection, cpu, sim)
    for test in dict.fromkeys([*cpu.collected, *sim.collected, *cpu.results, *sim.results]):
        (before, twin), after = _before(test, cpu), sim.results.get(test, _MISSING)
        if twin and after.outcome == "passed":
            result.twins_passed += 1
        entry = triage.lookup(library.name, test)
        if before.outcome not in ("passed", "skipped") or after.outcome not in _SIM_FAILED:
            if entry is not None and after.outcome == "passed" and not entry.test.endswith("*"):
                result.stale.append(test)
            continue
        message = _first_line(after.message)
        cpu_outcome = f"{before.outcome} (cpu twin)" if twin else before.outcome
        result.rows.append(Row(test, cpu_outcome, after.outcome, entry.kind if entry else UNEXPLAINED,
                               entry.reason if entry else "", message, bool(DEVICE_ERROR.search(after.message))))
    return result


def median_ratio(comparisons: list[Comparison]) -> float | None:
    ratios = [c.ratio for c in comparisons if c.ratio is not None]
    return statistics.median(ratios) if ratios else None
