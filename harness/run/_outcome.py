"""Turn what a child process did into a :class:`ChildOutcome` (shared by every backend)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from harness._vocabulary import CellStatus
from harness.containment._process import ProcessResult, signal_name
from harness.run._backend import ChildOutcome

_OOM_TYPES = {"MemoryError", "OutOfMemoryError"}


def outcome_from_process(result: ProcessResult, outcome_path: Path, timeout: float) -> ChildOutcome:
    """Combine the process's exit with the outcome record the child runner wrote (if it got that far).

    The record is written by the repro's own process, so it is read as untrusted: a regular file of a
    bounded size (never through a symlink), and only the fields and types the child runner writes."""
    duration = round(result.duration_s, 3)
    # A timeout or an interrupt is what happened, even when tearing the cell down then went wrong (under load the
    # namespace's init can end before the killed command's status is read): only then is an error the story.
    if result.interrupted:
        return ChildOutcome("interrupted", duration, result.returncode, reason="stopped by the user (interrupt)")
    if result.timed_out:
        return ChildOutcome("timeout", duration, result.returncode,
                            reason=f"no result after the {timeout:g}s timeout; the process group was killed")
    if result.error:
        return ChildOutcome("infra-error", duration, None, reason=f"the cell could not be run: {result.error}")
    if result.oom_killed:  # the cell's memory cgroup killed one of its processes: the cell ran out of memory
        return ChildOutcome("oom", duration, result.returncode, signal_name(result.returncode),
                            reason="the cell reached its memory limit (memory cgroup) and was killed")
    recorded = _read_record(outcome_path)
    if recorded is None:
        return _unrecorded(result, duration)
    if not _agrees(recorded, result.returncode):  # what the harness saw wins over what the process wrote
        outcome = _unrecorded(result, duration)
        outcome.reason = (f"{outcome.reason}; its outcome record (status {recorded['status']}, exit code "
                          f"{recorded['exit_code']}) disagrees with how the process ended and was ignored")
        return outcome
    status: CellStatus = recorded["status"]
    exception = recorded.get("exception")
    reason = ""
    if exception and _is_oom(exception):
        status, reason = "oom", f"{exception['type']}: out of memory"
    elif exception and exception.get("sim_internal"):
        status, reason = "infra-error", _sim_crash_reason(exception)
    return ChildOutcome(status, duration, recorded.get("exit_code"), None, exception,
                        recorded.get("imported", {}), reason)


def _agrees(recorded: dict[str, Any], returncode: int | None) -> bool:
    """The child runner ends with the exit code it recorded (``os._exit``): 0 after ``passed``, 1 after
    ``raised``. A record the process's end contradicts (a signal, another code) was not written by a
    runner that finished: a repro forged it, or died after writing it."""
    if returncode is None:
        return False
    expected = {"passed": 0, "raised": 1}.get(recorded["status"], recorded["exit_code"])
    if returncode < 0:  # under bwrap, an exit code of 128 + N reads as signal N: the runner's own exit agrees
        return recorded["status"] == "exited" and isinstance(expected, int) and expected % 256 == 128 - returncode
    return isinstance(expected, int) and expected % 256 == returncode


def _sim_crash_reason(exception: dict[str, Any]) -> str:
    """A crash of cuda-sim's own code says nothing about the case: the simulator failed, not the repro."""
    first_line = str(exception.get("message", "")).strip().splitlines()[:1]
    return (f"cuda-sim internal error at {exception['sim_internal']}: {exception.get('type')}: "
            f"{first_line[0] if first_line else ''}".rstrip(": ") + " (a simulator bug, not judged against the case)")


def _is_oom(exception: dict[str, Any]) -> bool:
    message = str(exception.get("message", "")).lower()
    return exception.get("type") in _OOM_TYPES or "can't allocate memory" in message


_MAX_RECORD = 8 * 1024 * 1024
_STATUSES = {"passed", "raised", "exited"}


def _read_record(path: Path) -> dict[str, Any] | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None
            record = json.loads(handle.read(_MAX_RECORD + 1)[:_MAX_RECORD])
    except (OSError, ValueError, RecursionError):
        return None
    return _checked(record)


def _checked(record: object) -> dict[str, Any] | None:
    """The outcome's fields with the types the child runner writes; anything else is dropped."""
    if not isinstance(record, dict) or record.get("status") not in _STATUSES:
        return None
    code = record.get("exit_code")
    exception = record.get("exception")
    imported = record.get("imported")
    return {
        "status": record["status"],
        "exit_code": code if isinstance(code, int) and not isinstance(code, bool) else None,
        "exception": _exception(exception) if isinstance(exception, dict) else None,
        "imported": {_text(k, 200): _text(v, 200) for k, v in list(imported.items())[:2000]}
        if isinstance(imported, dict) else {},
    }


def _exception(raw: dict[str, Any]) -> dict[str, Any]:
    frames: list[Any] = raw["traceback"] if isinstance(raw.get("traceback"), list) else []
    exception = {
        "type": _text(raw.get("type", ""), 200), "module": _text(raw.get("module", ""), 200),
        "message": _text(raw.get("message", ""), 20_000),
        "traceback": [{"file": _text(f.get("file", ""), 500), "line": f.get("line") if isinstance(f.get("line"), int)
                       else None, "function": _text(f.get("function", ""), 200), "code": _text(f.get("code", ""), 300)}
                      for f in frames[-40:] if isinstance(f, dict)],
    }
    if isinstance(raw.get("sim_internal"), str) and raw["sim_internal"]:  # a crash of cuda-sim's own code
        exception["sim_internal"] = _text(raw["sim_internal"], 500)
    return exception


def _text(value: object, limit: int) -> str:
    """A bounded string from the record; a lone surrogate (``raise E("\\ud800")``) becomes ``\\ud800``:
    no terminal, UTF-8 file or JSON reader downstream can hold one."""
    return str(value)[:limit].encode("utf-8", "backslashreplace").decode("utf-8")


def _unrecorded(result: ProcessResult, duration: float) -> ChildOutcome:
    name = signal_name(result.returncode)
    if name:
        status: CellStatus = "oom" if name == "SIGKILL" else "crashed"
        reason = (f"killed by {name} (likely the memory limit or the kernel's OOM killer)" if status == "oom"
                  else f"the process died from {name}")
        return ChildOutcome(status, duration, result.returncode, name, reason=reason)
    if result.returncode == 0:
        return ChildOutcome("passed", duration, 0, reason="exited with code 0 before the runner could record it")
    return ChildOutcome("exited", duration, result.returncode,
                        reason=f"exited with code {result.returncode} without a Python exception "
                               "(os._exit, or the interpreter failed to start: see the log)")
