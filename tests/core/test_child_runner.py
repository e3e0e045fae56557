"""The child runner records what a script did as data, whatever the script does."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.run._backend import CHILD_RUNNER, SIM_ROOT


def run_child(tmp_path: Path, source: str, argv=(), shims=()) -> tuple[dict, subprocess.CompletedProcess]:
    script = tmp_path / "repro.py"
    script.write_text(source)
    spec = {"script": str(script), "shims": [str(s) for s in shims], "argv": list(argv), "sim": False,
            "sim_root": str(SIM_ROOT), "outcome": str(tmp_path / "outcome.json")}
    (tmp_path / "spec.json").write_text(json.dumps(spec))
    proc = subprocess.run([sys.executable, str(CHILD_RUNNER), str(tmp_path / "spec.json")], capture_output=True,
                          text=True, timeout=60, cwd=tmp_path)
    return json.loads((tmp_path / "outcome.json").read_text()), proc


def test_clean_run(tmp_path):
    outcome, proc = run_child(tmp_path, "import sys\nprint('args', sys.argv[1:])\n", ["--variant", "v"])
    assert outcome["status"] == "passed" and proc.returncode == 0
    assert "args ['--variant', 'v']" in proc.stdout


def test_exception_is_recorded_with_traceback(tmp_path):
    source = "def inner():\n    raise RuntimeError('Expected all tensors\\nsecond line')\ninner()\n"
    outcome, proc = run_child(tmp_path, source)
    assert outcome["status"] == "raised" and proc.returncode == 1
    exc = outcome["exception"]
    assert exc["type"] == "RuntimeError" and exc["message"] == "Expected all tensors\nsecond line"
    assert [f["function"] for f in exc["traceback"]] == ["<module>", "inner"]
    assert exc["traceback"][-1]["line"] == 2


@pytest.mark.parametrize(("source", "status", "code"), [
    ("import sys; sys.exit(3)", "exited", 3),
    ("import sys; sys.exit(0)", "passed", 0),
    ("import sys; sys.exit('fatal: message')", "exited", 1),
    ("try:\n    raise ValueError('x')\nfinally:\n    import sys; sys.exit(0)\n", "passed", 0),
    ("raise KeyboardInterrupt", "raised", 1),
])
def test_exit_paths(tmp_path, source, status, code):
    outcome, proc = run_child(tmp_path, source)
    assert (outcome["status"], outcome["exit_code"], proc.returncode) == (status, code, code)


def test_shims_run_first_and_imported_versions_are_recorded(tmp_path):
    shim = tmp_path / "shim.py"
    shim.write_text("import builtins\nbuiltins.SHIMMED = True\n")
    outcome, _ = run_child(tmp_path, "import builtins, yaml\nassert builtins.SHIMMED\n", shims=[shim])
    assert outcome["status"] == "passed"
    assert "PyYAML" in outcome["imported"]


def test_script_changing_cwd_and_env_does_not_lose_the_outcome(tmp_path):
    outcome, _ = run_child(tmp_path, "import os\nos.chdir('/')\nos.environ.clear()\nraise OSError('gone')\n")
    assert outcome["status"] == "raised" and outcome["exception"]["type"] == "OSError"


def test_a_timeout_stays_a_timeout_when_the_teardown_then_fails(tmp_path):
    """Under load the namespace's init can end before the killed command's status is read: the supervisor reports
    an error as well, but the cell timed out (tests/faults' hang test once got infra-error from that order)."""
    from harness.containment._process import ProcessResult
    from harness.run._outcome import outcome_from_process

    result = ProcessResult(None, True, False, 3.2, 0, error="the namespace init ended before the command did")
    assert outcome_from_process(result, tmp_path / "outcome.json", 3).status == "timeout"
    failed = ProcessResult(None, False, False, 0.1, 0, error="bwrap: cannot start")
    assert outcome_from_process(failed, tmp_path / "outcome.json", 3).status == "infra-error"
