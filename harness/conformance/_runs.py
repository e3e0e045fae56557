"""One pass of a library's selected tests: plainly on the CPU, or under ``pytest --cuda-sim``.

Both passes run the same command in a fresh copy of the unpacked sdist; only ``--cuda-sim`` (and the library's
``cuda:`` args/env, for suites that do not ask torch) differs. CPU time is the process CPU time (user + system)
of pytest and every process it waited for, from ``getrusage(RUSAGE_CHILDREN)`` taken before and after (passes
run one at a time, so nothing else is counted).
If a test kills the process (signal, OOM killer, hang past the pass's time limit), that test is recorded as
``crashed`` and the tests not yet run go on in a new process, in the same order.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.conformance._errors import SourceError
from harness.conformance._suites import Library

MODES = ("cpu", "sim")
NOT_SIMULATED = "not simulated:"
MEMORY_LIMIT = 10 << 30  # address space per pass: a runaway allocation fails its test instead of the host
MAX_RESTARTS = 20
Log = Callable[[str], None]


@dataclass
class Result:
    outcome: str  # passed | failed | error | skipped | not-simulated | crashed
    duration: float = 0.0
    message: str = ""
    cpu: float | None = None  # process CPU seconds, setup to teardown (None: recorded by an older recorder)


@dataclass
class Pass:
    mode: str
    cpu_seconds: float = 0.0
    wall_seconds: float = 0.0
    processes: int = 0
    collected: list[str] = field(default_factory=list)
    results: dict[str, Result] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # crashes, time-outs, a collection that failed

    def serialize(self) -> dict[str, object]:
        counts: dict[str, int] = {}
        for result in self.results.values():
            counts[result.outcome] = counts.get(result.outcome, 0) + 1
        return {"mode": self.mode, "cpu_seconds": round(self.cpu_seconds, 2),
                "wall_seconds": round(self.wall_seconds, 2), "processes": self.processes,
                "collected": len(self.collected), "counts": counts, "notes": self.notes}


def plugin_args() -> list[str]:
    """The ``-p`` options of both passes: cuda_sim's pytest plugin, named explicitly because the library's
    venv sees this checkout's ``harness`` through a path entry, not an installed distribution (no entry point)."""
    return ["-p", "cuda_sim.pytest_plugin"]


def _environment(library: Library, venv: Path, mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV", "PYTEST_"))}
    env.update({
        "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', os.defpath)}",  # tests that run the library's CLI
        "VIRTUAL_ENV": str(venv),
        "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
        "HF_HUB_DISABLE_TELEMETRY": "1", "TOKENIZERS_PARALLELISM": "false",
        # Some suites switch the hub back online for one download (peft's hub_online_once); a closed loopback
        # port makes that fail at once instead of after ~47 s of retries per test. No test reaches a hub.
        "HF_ENDPOINT": "http://127.0.0.1:9",
        # One intra-op thread in both passes: CPU time then measures work, not spinning worker threads.
        "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
    })
    env.update(library.env)
    if mode == "sim":
        env.update(library.cuda.env)  # how the suite is told to test on CUDA, when it does not ask torch
    return env


def _limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    os.setsid()  # its own process group: a time-out ends pytest and every worker it started


_NONE = Result("none")


def _read_records(path: Path, run: Pass) -> tuple[str | None, bool]:
    """Fold the recorder's lines into ``run``; return the test that was running last and whether pytest ended."""
    running: str | None = None
    finished = False
    phases: dict[str, list[dict[str, object]]] = {}
    cpu: dict[str, float] = {}
    if not path.exists():
        return None, False
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            continue  # a line cut short by a kill
        if "collected" in record and not run.collected:
            run.collected = list(record["collected"])
        elif "start" in record:
            running = str(record["start"])
        elif "id" in record:
            phases.setdefault(str(record["id"]), []).append(record)
            if record.get("when") == "teardown":
                running = None
        elif "cpu" in record:
            cpu[str(record["cpu"])] = float(record["seconds"])
        elif "finished" in record:
            finished = True
    for node_id, reports in phases.items():
        if any(r.get("when") == "teardown" for r in reports) and run.results.get(node_id, _NONE).outcome != "crashed":
            run.results[node_id] = _fold(reports)
            run.results[node_id].cpu = cpu.get(node_id)
    return running, finished


def _fold(reports: Sequence[dict[str, object]]) -> Result:
    duration = sum(float(str(r.get("duration", 0))) for r in reports)
    for report in reports:
        message = str(report.get("message", ""))
        if report["outcome"] == "failed":
            return Result("failed" if report.get("when") == "call" else "error", duration, message)
        if report["outcome"] == "skipped":
            outcome = "not-simulated" if message.startswith(NOT_SIMULATED) else "skipped"
            return Result(outcome, duration, message)
    return Result("passed", duration)


def run_pass(library: Library, mode: str, venv: Path, source: Path, selection: Sequence[str], out: Path,
             log: Log) -> Pass:
    """Run ``selection`` once in ``mode`` ('cpu' or 'sim'); artefacts (log, JUnit XML, records) go to ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    workdir = out / "src"
    if workdir.exists():
        shutil.rmtree(workdir)
    shutil.copytree(source, workdir, symlinks=True)
    records = out / "records.jsonl"
    records.unlink(missing_ok=True)
    run = Pass(mode)
    base = [str(venv / "bin" / "python"), "-m", "pytest", "-p", "harness.conformance._recorder", *plugin_args(),
            "-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--conformance-record={records}",
            *library.pytest_args, *(["--cuda-sim", *library.cuda.args] if mode == "sim" else [])]
    remaining: list[str] = list(selection)
    deadline = time.monotonic() + library.timeout
    for attempt in range(MAX_RESTARTS + 1):
        args_file = out / f"args-{attempt}.txt"
        args_file.write_text("\n".join(remaining) + "\n", encoding="utf-8")
        cmd = [*base, f"--junitxml={out / f'junit-{attempt}.xml'}", f"@{args_file}"]
        code = _one_process(cmd, workdir, _environment(library, venv, mode), out / "pytest.log", deadline, run)
        running, finished = _read_records(records, run)
        if finished or not run.collected:
            if not run.collected:
                run.notes.append(f"pytest collected nothing (exit code {code}): see {out / 'pytest.log'}")
            break
        done = set(run.results)
        if running is not None:
            run.results[running] = Result("crashed", 0.0, _death(code))
            run.notes.append(f"{running}: {_death(code)}")
            done.add(running)
        remaining = [t for t in run.collected if t not in done]
        if not remaining or time.monotonic() >= deadline or attempt == MAX_RESTARTS:
            for node_id in remaining:
                run.results[node_id] = Result("crashed", 0.0, "not run: the pass ran out of time or restarts")
            break
        log(f"{library.name} [{mode}]: pytest ended early ({_death(code)}); "
            f"{len(remaining)} tests go on in a new process")
    (out / "pass.json").write_text(json.dumps({**run.serialize(), "crashed": [
        t for t, r in run.results.items() if r.outcome == "crashed"]}), encoding="utf-8")
    return run


def load_pass(mode: str, out: Path) -> Pass:
    """A pass stored by ``run_pass`` (its records and figures), to compare again after editing a triage."""
    try:
        stored = json.loads((out / "pass.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as error:
        raise SourceError(f"no stored {mode} pass in {out}: {error}") from None
    run = Pass(mode, cpu_seconds=stored["cpu_seconds"], wall_seconds=stored["wall_seconds"],
               processes=stored["processes"], notes=list(stored["notes"]))
    for test in stored.get("crashed", []):
        run.results[test] = Result("crashed", 0.0, "crashed (stored pass)")
    _read_records(out / "records.jsonl", run)
    return run


def _death(code: int) -> str:
    if code < 0:
        return f"the pytest process was killed by {signal.Signals(-code).name}"
    return f"the pytest process ended with exit code {code} before the test finished"


def _one_process(cmd: list[str], cwd: Path, env: dict[str, str], log_path: Path, deadline: float, run: Pass) -> int:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_limit_memory)
        try:
            code = proc.wait(timeout=max(1.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            code = proc.wait()
            log.write("\n[conformance] the pass's time limit was reached; the process group was killed\n")
        finally:
            if proc.poll() is None:  # interrupted (Ctrl-C): leave no pytest behind
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    run.cpu_seconds += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    run.wall_seconds += time.monotonic() - start
    run.processes += 1
    return code
