"""The whole run in-process: load -> select -> plan -> run (a fake backend) -> judge -> results.json -> report.

No environment is built and no process started: the fake backend answers each cell from its ``--behaviour``
argument the way the fixture repro would behave, so the pipeline's own logic is what is tested, in well
under a second.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from harness._vocabulary import ExitCode, Verdict
from harness.environments._spec import EnvSpec
from harness.run import _workflow
from harness.run._backend import CellRequest, ChildOutcome, PreparedEnv
from harness.run._plan import Selection
from harness.run._results import CellRecord
from harness.run._workflow import UI, RunOptions, run_cases

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "cases"
SIGNATURE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


class FakeBackend:
    """Plays the fixture repro: ``--behaviour signature|other-error|clean|exit-3|hang``."""

    name = "fake"

    def __init__(self) -> None:
        self.requests: list[CellRequest] = []

    def prepare(self, spec: EnvSpec, progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        return PreparedEnv(id=f"fake-{spec.key()}", spec=spec, backend=self.name, python_path=sys.executable,
                           installed={"torch": "2.13.0"}, reused=True, build_s=0.0)

    def is_ready(self, spec: EnvSpec) -> bool:
        return True

    def build_log(self, spec: EnvSpec) -> Path | None:
        return None

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        return False, "the fake backend has no GPU"

    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        self.requests.append(request)
        behaviour = request.argv[request.argv.index("--behaviour") + 1]
        if behaviour == "signature":
            return ChildOutcome("raised", exit_code=1, exception={"type": "RuntimeError", "message": SIGNATURE})
        if behaviour == "other-error":
            return ChildOutcome("raised", exit_code=1,
                                exception={"type": "ValueError", "message": "something unrelated went wrong"})
        if behaviour == "hang":
            return ChildOutcome("timeout", reason="timed out after 60s")
        return ChildOutcome("passed", exit_code=0)

    def cancel(self) -> None:
        pass


def _ui(done: list[CellRecord]) -> UI:
    messages: list[str] = []
    return UI(info=messages.append, error=messages.append, messages=messages,
              cell_done=lambda i, total, record: done.append(record))


@pytest.fixture
def fake(monkeypatch) -> FakeBackend:
    backend = FakeBackend()
    monkeypatch.setattr(_workflow, "make_backend", lambda options, cells=(), run_id=None: backend)
    return backend


def test_the_pipeline_judges_every_fixture_case_in_process(tmp_path, fake):
    done: list[CellRecord] = []
    options = RunOptions(case_roots=(FIXTURES,), output=tmp_path / "reports",
                         selection=Selection(lanes=("cpu", "cuda-sim")))
    started = time.process_time()  # CPU time: a loaded machine stretches the wall clock
    code = run_cases(options, _ui(done))
    elapsed = time.process_time() - started

    assert code == ExitCode.VERDICTS  # fix-regressed, stale-repro... need attention
    (run_dir,) = (tmp_path / "reports").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    verdicts = {(v["case"], v["lane"]): v["verdict"] for v in results["verdicts"]}
    for lane in ("cpu", "cuda-sim"):
        assert verdicts[("confirmed", lane)] == "confirmed"
        assert verdicts[("fix-regressed", lane)] == "fix-regressed"
        assert verdicts[("stale-repro", lane)] == "stale-repro"
        assert verdicts[("failed-differently", lane)] == "failed-differently"
        assert verdicts[("hangs", lane)] == "infra-error"
    assert len(fake.requests) == len(done) == len(results["cells"]) == 5 * 2 * 2
    assert all(isinstance(record.judgement, Verdict) for record in done)
    assert {r.sim for r in fake.requests} == {False, True}  # the cuda-sim lane asks for the simulation
    assert results["run"]["exit_code"] == 1 and results["run"]["status"] == "completed"
    assert (run_dir / "index.html").is_file() and (run_dir / "junit.xml").is_file()
    assert elapsed < 5, f"the in-process pipeline took {elapsed:.2f}s"


def test_a_selection_of_only_confirmed_cells_exits_0(tmp_path, fake):
    options = RunOptions(case_roots=(FIXTURES,), output=tmp_path / "reports",
                         selection=Selection(cases=("confirmed",), lanes=("cpu",)))
    assert run_cases(options, _ui([])) == ExitCode.OK
    assert [r.argv[-1] for r in fake.requests] in (["signature", "clean"], ["clean", "signature"])


_SHARED_PATCH = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a\n+b\n"


def _write_case(root: Path, case_id: str, body: str, patch: bool = False) -> None:
    folder = root / case_id
    folder.mkdir(parents=True)
    (folder / "repro.py").write_text((FIXTURES / "confirmed" / "repro.py").read_text())
    if patch:
        (folder / "same.diff").write_text(_SHARED_PATCH)
    (folder / "case.yaml").write_text(f"id: {case_id}\n" + body)


_CASE = """title: "Fixture: environments a lane needs"
upstream: {{issue: "https://example.invalid/issue/1"}}
signature: "Expected all tensors to be on the same device"
exception: RuntimeError
summary: Test fixture for environment planning; not a documented bug.
requires: [torch==2.13.0]
timeout: 60
variants:
  buggy:
    role: buggy
    requires: [{buggy}]
    {patches}args: [--behaviour, signature]
    expect: {{cpu: reproduces, cuda: reproduces, cuda-sim: reproduces}}
  fixed:
    role: fix
    requires: [{fixed}]
    args: [--behaviour, clean]
    expect: {{cpu: passes, cuda: passes, cuda-sim: passes}}
  gpu-only:
    role: fix
    requires: [{gpu_only}]
    args: [--behaviour, clean]
    expect: {{cpu: "unsupported: needs a GPU", cuda: passes, cuda-sim: passes}}
"""


class CountingBackend(FakeBackend):
    """The fake backend, but nothing is built yet: every ``prepare`` is a build, counted by content key."""

    def __init__(self) -> None:
        super().__init__()
        self.built: list[str] = []
        self.requires: dict[str, tuple[str, ...]] = {}

    def is_ready(self, spec: EnvSpec) -> bool:
        return spec.key() in self.built

    def prepare(self, spec: EnvSpec, progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        if spec.key() not in self.built:
            self.built.append(spec.key())
            self.requires[spec.key()] = spec.requires
        return super().prepare(spec, progress, private=private)


@pytest.mark.parametrize(("lanes", "built"), [(("cpu",), 3), (("cuda-sim",), 4), (("cpu", "cuda-sim"), 4)])
def test_environments_are_built_only_for_cells_that_run_and_once_per_content(tmp_path, monkeypatch, lanes, built):
    """Two cases whose buggy variants pin the same set (and apply the same patch, from their own folders)
    share one environment; a variant unsupported on every selected lane gets none."""
    root = tmp_path / "cases"
    _write_case(root, "one", _CASE.format(buggy="lib==1.0", fixed="lib==1.1", gpu_only="lib==9.0",
                                          patches="patches: [same.diff]\n    "), patch=True)
    _write_case(root, "two", _CASE.format(buggy="lib==1.0", fixed="lib==1.2", gpu_only="lib==9.0",
                                          patches="patches: [same.diff]\n    "), patch=True)
    backend = CountingBackend()
    monkeypatch.setattr(_workflow, "make_backend", lambda options, cells=(), run_id=None: backend)
    messages: list[str] = []
    ui = UI(info=messages.append, error=messages.append, messages=messages, cell_done=lambda *args: None)
    options = RunOptions(case_roots=(root,), output=tmp_path / "reports", selection=Selection(lanes=lanes))
    run_cases(options, ui)

    # buggy (shared by both cases), fixed 1.1, fixed 1.2; gpu-only 9.0 (shared) only when cuda-sim runs
    assert len(backend.built) == built, backend.requires
    assert (any("lib==9.0" in r for r in backend.requires.values())) == ("cuda-sim" in lanes)
    (run_dir,) = (tmp_path / "reports").iterdir()
    results = json.loads((run_dir / "results.json").read_text())
    assert len(results["environments"]) == built
    ran = {(c["case"], c["lane"], c["variant"]) for c in results["cells"] if c["status"] != "skipped"}
    assert {env for c in results["cells"] if c["status"] != "skipped" for env in [c["environment"]]} == {
        f"fake-{key}" for key in backend.built}
    assert ("one", "cpu", "gpu-only") not in ran
    assert any(m.startswith("estimate:") and (f"{built} environment(s) to build" in m) for m in messages), messages
