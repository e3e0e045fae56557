"""With two workers, a free worker builds the next environment instead of waiting for the one the other
worker is building (issue 21: a cold run went at about one worker's pace). No timings: a barrier that
only two builds side by side can pass."""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from harness.environments._spec import EnvSpec
from harness.run import _workflow
from harness.run._backend import CellRequest, ChildOutcome, PreparedEnv
from harness.run._execute import _CellQueue
from harness.run._plan import Selection
from harness.run._workflow import UI, RunOptions, run_cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"

_CASE = """title: "Fixture: two variants with the same pins"
upstream: {{issue: "https://example.invalid/issue/1"}}
signature: "Expected all tensors to be on the same device"
exception: RuntimeError
summary: Test fixture for build scheduling; not a documented bug.
requires: [torch==2.13.0]
timeout: 60
variants:
  buggy:
    role: buggy
    requires: [{pin}]
    args: [--behaviour, clean]
    expect: {{cpu: passes, cuda: passes, cuda-sim: passes}}
  fixed:
    role: fix
    requires: [{pin}]
    args: [--behaviour, clean, --again]
    expect: {{cpu: passes, cuda: passes, cuda-sim: passes}}
"""


class SideBySideBackend:
    """Nothing is built yet; each build waits at a barrier for a second build to be under way."""

    name = "fake"

    def __init__(self) -> None:
        self.barrier = threading.Barrier(2)
        self.built: list[str] = []
        self.passed_barrier: list[str] = []
        self.lock = threading.Lock()

    def is_ready(self, spec: EnvSpec) -> bool:
        return spec.key() in self.built

    def build_log(self, spec: EnvSpec) -> Path | None:
        return None

    def prepare(self, spec: EnvSpec, progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        with self.lock:
            first = spec.key() not in self.built
            self.built.append(spec.key())
        if first:
            # Wait for another build. Before the fix the other worker waited for this one (the next cell in
            # plan order needs the same environment), so the barrier broke and the build failed.
            self.barrier.wait(timeout=60)
            self.passed_barrier.append(spec.key())
        return PreparedEnv(id=f"fake-{spec.key()}", spec=spec, backend=self.name, python_path=sys.executable,
                           installed={"torch": "2.13.0"}, reused=not first, build_s=0.0)

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        return False, "the fake backend has no GPU"

    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        return ChildOutcome("passed", exit_code=0)

    def cancel(self) -> None:
        pass


def _write_case(root: Path, case_id: str, pin: str) -> None:
    folder = root / case_id
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text((FIXTURES / "confirmed" / "repro.py").read_text())
    (folder / "case.yaml").write_text(f"id: {case_id}\n" + _CASE.format(pin=pin))


def test_two_workers_build_two_environments_side_by_side(tmp_path, monkeypatch):
    """Plan order: one/buggy (env A), one/fixed (env A), two/buggy (env B), two/fixed (env B). The second
    worker must not take one/fixed (it would wait for A) but two/buggy, and build B while A builds."""
    root = tmp_path / "cases"
    _write_case(root, "one", "lib==1.0")
    _write_case(root, "two", "lib==2.0")
    backend = SideBySideBackend()
    monkeypatch.setattr(_workflow, "make_backend", lambda options, cells=(), run_id=None: backend)
    messages: list[str] = []
    done: list[object] = []
    ui = UI(info=messages.append, error=messages.append, messages=messages,
            cell_done=lambda i, total, record: done.append(record))
    options = RunOptions(case_roots=(root,), output=tmp_path / "reports", selection=Selection(lanes=("cpu",)),
                         jobs=2)
    run_cases(options, ui)

    assert len(backend.passed_barrier) == 2, messages  # both builds were under way at once
    assert len(set(backend.built)) == 2
    assert [r.status for r in done] == ["passed"] * 4, [r.reason for r in done]  # type: ignore[attr-defined]


def test_the_queue_hands_out_a_cell_whose_environment_nobody_prepares():
    cells = ["a1", "a2", "b1", "ready", "b2"]
    needs = {"a1": "A", "a2": "A", "b1": "B", "ready": None, "b2": "B"}
    queue = _CellQueue(cells, needs.__getitem__)  # type: ignore[arg-type]
    first, second, third = queue.take(), queue.take(), queue.take()
    assert (first[1], second[1], third[1]) == ("a1", "b1", "ready")
    assert queue.take()[1] == "a2"  # every cell left waits for a build under way: plan order
    queue.done(first[2])
    queue.done(second[2])
    assert queue.take() == (4, "b2", "B")
