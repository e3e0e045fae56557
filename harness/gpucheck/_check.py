"""The GPU check (``scripts/gpu-check.sh``, ``python -m harness gpu-check``): one short window on a GPU node.

1. What the node is: GPU, driver, CUDA and torch.
2. The simulator's conformance scenarios on real CUDA and under cuda-sim, with the same torch
   (harness/gpucheck/_scenarios.py, each in its own process: the simulation runs with no GPU visible).
3. The chosen cases on ``cuda`` and ``cuda-sim`` with the node's own torch (``cases --python``), offline
   from a wheelhouse made beforehand (``--prepare``), compared cell by cell.
4. One JSON and one Markdown table, disagreements first, and which cases were left out and why.

Without a GPU it is a dry run: the cuda-sim side only (CI runs it so the check keeps working).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.containment._process import run_helper
from harness.run._backend import REPO_ROOT

Say = Callable[[str], None]
# Seed cases first, then one case each of transformers, peft and torchmetrics whose pins all have Python 3.12
# wheels (peft-adalora-ranknum-device's numpy 1.24.3 has none: it cannot run on the node). Dry runs and the
# wheelhouse are measured in benchmarks/README.md; --budget-s keeps the check inside the window regardless.
CHOSEN = ("ai-toolkit-flux-ids", "lycoris-extract-diff", "onetrainer-validation-device", "var-resume",
          "deepspeed-zero3-offload-clip", "transformers-dynamic-rope-device", "peft-low-cpu-mem-usage-device",
          "torchmetrics-ssim-uniform-kernel")
BUDGET_NOTE = ("not chosen: the check runs the seed cases and one case each of transformers, peft and "
               "torchmetrics, to fit 8 minutes (harness/gpucheck/_check.py CHOSEN)")

_INFO = r"""
import json, subprocess, torch
ok = torch.cuda.is_available()
info = {"torch": torch.__version__, "cuda_build": torch.version.cuda, "cuda_available": ok,
        "gpus": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if ok else []}
try:
    out = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"],
                         capture_output=True, text=True, timeout=30)
    info["nvidia_smi"] = out.stdout.strip().splitlines()
except (OSError, subprocess.TimeoutExpired) as error:
    info["nvidia_smi"] = ["not available: %s" % error]
print(json.dumps(info))
"""


@dataclass(frozen=True)
class CheckOptions:
    host_python: Path
    output: Path
    cases: tuple[str, ...] = CHOSEN
    find_links: Path | None = None
    offline: bool = False
    jobs: int = 2
    cases_dirs: tuple[Path, ...] = ()
    budget_s: float = 480.0  # the window's 8 minutes: cells still running then are stopped (SIGTERM, kept)


def node_info(python: Path) -> dict[str, Any]:
    proc = run_helper([str(python), "-c", _INFO], env=dict(os.environ), timeout=120)
    if proc.returncode != 0:
        return {"error": (proc.stderr.strip() or proc.error)[-500:]}
    return dict(json.loads(proc.stdout.strip().splitlines()[-1]))


def run_scenarios(mode: str, output: Path) -> dict[str, Any]:
    """The scenario table in a fresh process of this interpreter (it shares the node's torch)."""
    out = output / f"scenarios-{mode}.json"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    if mode == "sim":
        env["CUDA_VISIBLE_DEVICES"] = ""  # the simulation stands in for a GPU the process does not see
    proc = run_helper([sys.executable, "-m", "harness.gpucheck._scenarios", mode, str(out)], env=env, timeout=600,
                      cwd=REPO_ROOT)
    if proc.returncode != 0 or not out.is_file():
        return {"error": f"exit {proc.returncode}: {(proc.stderr.strip() or proc.error)[-1500:]}", "scenarios": []}
    return dict(json.loads(out.read_text()))


def compare_scenarios(real: Mapping[str, Any] | None, sim: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per scenario: the table's expectation, real CUDA (None in a dry run), cuda-sim, and the finding."""
    real_by_id = {row["id"]: row["outcome"] for row in (real or {}).get("scenarios", [])}
    rows = []
    for row in sim.get("scenarios", []):
        got_real = real_by_id.get(row["id"]) if real else None
        sim_ok = _matches(row["table"], row["outcome"])
        if real is None:
            finding = "dry run: cuda-sim matches the table" if sim_ok else "dry run: cuda-sim differs from the table"
            agree = sim_ok
        else:
            agree = got_real == row["outcome"] or (_matches(row["table"], got_real) and sim_ok)
            finding = _finding(row["table"], got_real, row["outcome"])
        rows.append({"id": row["id"], "source": row["source"], "table": row["table"], "cuda": got_real,
                     "cuda_sim": row["outcome"], "agree": agree, "finding": finding})
    return sorted(rows, key=lambda r: (r["agree"], r["id"]))


def _matches(table: Mapping[str, Any], got: Mapping[str, Any] | None) -> bool:
    if got is None:
        return False
    if "raises" in table:
        return bool(got.get("raises") == table["raises"] and got.get("message") == table["message"])
    return all(got.get(k) == v for k, v in table.items() if v is not None) and "raises" not in got


def _finding(table: Mapping[str, Any], real: Mapping[str, Any] | None, sim: Mapping[str, Any]) -> str:
    if real is None:
        return "real CUDA run missing"
    real_ok, sim_ok = _matches(table, real), _matches(table, sim)
    if real_ok:
        return "agree" if sim_ok else "cuda-sim is wrong: real CUDA matches the table"
    if sim_ok:
        return "the table and cuda-sim are wrong: real CUDA does something else"
    if _matches(_as_table(sim), real):
        return "the table is wrong: cuda-sim does what real CUDA does"
    return "real CUDA, cuda-sim and the table all differ"


def _as_table(outcome: Mapping[str, Any]) -> dict[str, Any]:
    if "raises" in outcome:
        return {"raises": outcome["raises"], "message": outcome.get("message")}
    return {k: outcome.get(k) for k in ("device", "dtype")}


def run_cases(options: CheckOptions, lanes: Sequence[str], say: Say,
              seconds: float) -> tuple[dict[str, Any] | None, str, bool]:
    """``cases --python`` over the chosen cases on ``lanes``, stopped like Ctrl-C after ``seconds`` (the
    finished cells are kept); (results.json, the harness's output tail, whether the budget stopped it)."""
    out = options.output / "runs"
    argv = [sys.executable, "-m", "harness", "cases", "--python", str(options.host_python), "--output", str(out),
            "--jobs", str(options.jobs), *(a for lane in lanes for a in ("--lane", lane)),
            *(a for case in options.cases for a in ("--case", case)),
            *(a for d in options.cases_dirs for a in ("--cases-dir", str(d)))]
    if options.find_links is not None:
        argv += ["--find-links", str(options.find_links)] + (["--offline"] if options.offline else [])
    say(f"$ {' '.join(argv[1:])}  (stopped after {seconds:.0f} s)")
    # The harness itself, which supervises what it starts; SIGTERM at the budget lets it keep finished cells.
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=REPO_ROOT,
                            env={**os.environ, "PYTHONPATH": str(REPO_ROOT), "COLUMNS": "160"})
    stopped = False
    try:
        output, _ = proc.communicate(timeout=max(seconds, 1.0))
    except subprocess.TimeoutExpired:
        stopped = True
        proc.send_signal(signal.SIGTERM)  # the harness stops its cells and writes what finished
        output, _ = proc.communicate()
    runs = sorted(p for p in out.glob("*/results.json")) if out.is_dir() else []
    results = json.loads(runs[-1].read_text()) if runs else None
    return results, (output or "")[-3000:], stopped


def compare_cells(results: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """Per (case, variant): what ``cuda`` and ``cuda-sim`` did, and whether they agree."""
    cells: dict[tuple[str, str], dict[str, Any]] = {}
    for cell in (results or {}).get("cells", []):
        row = cells.setdefault((cell["case"], cell["variant"]), {"case": cell["case"], "variant": cell["variant"]})
        row[cell["lane"]] = _cell_outcome(cell)
    rows = []
    for row in cells.values():
        real, sim = row.get("cuda"), row.get("cuda-sim")
        row["agree"], row["finding"] = _compare_row(real, sim)
        rows.append(row)
    order = {False: 0, None: 1, True: 2}
    return sorted(rows, key=lambda r: (order[r["agree"]], r["case"], r["variant"]))


def _compare_row(real: Mapping[str, Any] | None, sim: Mapping[str, Any] | None) -> tuple[bool | None, str]:
    if "interrupted" in ((real or {}).get("status"), (sim or {}).get("status")):
        return None, "not compared: stopped at the time budget"
    if real is None or real["status"] == "skipped" or sim is None or sim["status"] == "skipped":
        return None, _not_compared(real, sim)
    agree = (real["judgement"], real["raises"]) == (sim["judgement"], sim["raises"])
    return agree, "agree" if agree else "cuda and cuda-sim differ"


def _cell_outcome(cell: Mapping[str, Any]) -> dict[str, Any]:
    exception = cell.get("exception") or {}
    torch = cell.get("torch") or {}
    return {"status": cell.get("status"), "judgement": cell.get("judgement"), "raises": exception.get("type"),
            "message": str(exception.get("message") or "")[:300], "reason": str(cell.get("reason") or "")[:300],
            "torch": torch.get("version")}


def _not_compared(real: Mapping[str, Any] | None, sim: Mapping[str, Any] | None) -> str:
    for lane, side in (("cuda", real), ("cuda-sim", sim)):
        if side is None:
            return f"not compared: {lane} did not run"
        if side["status"] == "skipped":
            return f"not compared: {lane} skipped ({side['reason']})"
    return "not compared"


def left_out(all_cases: Sequence[str], chosen: Sequence[str], results: Mapping[str, Any] | None) -> dict[str, str]:
    """Each case the check does not compare, and why."""
    note = BUDGET_NOTE if tuple(chosen) == CHOSEN else "not selected: the check was given its cases with --case"
    why = {case: note for case in all_cases if case not in chosen}
    for cell in (results or {}).get("cells", []):
        if cell["status"] == "skipped" and cell["case"] in chosen:
            why.setdefault(f"{cell['case']}/{cell['variant']}", str(cell["reason"])[:300])
    return why


def run_check(options: CheckOptions, all_cases: Sequence[str], say: Say) -> dict[str, Any]:
    started = time.perf_counter()
    options.output.mkdir(parents=True, exist_ok=True)
    info = node_info(options.host_python)
    gpu = bool(info.get("cuda_available"))
    say(f"node: torch {info.get('torch')} (CUDA build {info.get('cuda_build')}), GPUs {info.get('gpus') or 'none'}, "
        f"nvidia-smi {info.get('nvidia_smi')}" + ("" if gpu else ": no GPU, a dry run (cuda-sim lane only)"))
    sim = run_scenarios("sim", options.output)
    real = run_scenarios("real", options.output) if gpu else None
    scenarios = compare_scenarios(real, sim)
    say(f"scenarios: {len(scenarios)}, {sum(not r['agree'] for r in scenarios)} disagreement(s)")
    left = options.budget_s - (time.perf_counter() - started) - 15  # 15 s to stop cells and write the report
    results, tail, stopped = run_cases(options, ["cuda", "cuda-sim"] if gpu else ["cuda-sim"], say, left)
    cells = compare_cells(results)
    report = {"version": 1, "dry_run": not gpu, "node": info, "host_python": str(options.host_python),
              "scenario_torch": {"sim": sim.get("torch"), "real": (real or {}).get("torch")},
              "scenario_errors": [e for e in (sim.get("error"), (real or {}).get("error")) if e],
              "scenarios": scenarios, "cells": cells, "left_out": left_out(all_cases, options.cases, results),
              "verdicts": (results or {}).get("verdicts", []), "run": (results or {}).get("run", {}).get("id"),
              "budget_s": options.budget_s, "stopped_at_budget": stopped,
              "harness_tail": tail if results is None else "", "seconds": round(time.perf_counter() - started, 1)}
    (options.output / "gpu-check.json").write_text(json.dumps(report, indent=1))
    (options.output / "gpu-check.md").write_text(markdown(report))
    say(f"gpu check: {report['seconds']} s; {options.output / 'gpu-check.md'}")
    return report


def markdown(report: Mapping[str, Any]) -> str:
    node = report["node"]
    lines = [f"# GPU check{' (dry run: no GPU, cuda-sim only)' if report['dry_run'] else ''}", "",
             f"- torch {node.get('torch')} (CUDA build {node.get('cuda_build')}), host python "
             f"`{report['host_python']}`", f"- GPUs: {', '.join(node.get('gpus') or []) or 'none'}; nvidia-smi: "
             f"{'; '.join(node.get('nvidia_smi') or [])}",
             f"- took {report['seconds']} s (budget {report['budget_s']} s"
             + ("; cells still running then were stopped)" if report["stopped_at_budget"] else ")"), ""]
    lines += [f"**error:** {e}" for e in report["scenario_errors"]]
    bad = [r for r in report["scenarios"] if not r["agree"]]
    lines += ["## Conformance scenarios", "", f"{len(report['scenarios'])} scenarios, {len(bad)} disagreement(s).", "",
              "| scenario | table | cuda | cuda-sim | finding |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {_md(r['id'])} | {_short(r['table'])} | {_short(r['cuda'])} | {_short(r['cuda_sim'])} | "
              f"{r['finding']} |" for r in report["scenarios"]]
    lines += ["", "## Cases, cell by cell (cuda vs cuda-sim, host torch)", "",
              "| case | variant | cuda | cuda-sim | finding |", "| --- | --- | --- | --- | --- |"]
    lines += [f"| {r['case']} | {r['variant']} | {_cell(r.get('cuda'))} | {_cell(r.get('cuda-sim'))} | "
              f"{_md(r['finding'])} |" for r in report["cells"]]
    lines += ["", "## Left out", ""] + [f"- {k}: {_md(v)}" for k, v in report["left_out"].items()]
    return "\n".join(lines) + "\n"


def _short(outcome: Mapping[str, Any] | None) -> str:
    if not outcome:
        return "—"
    if outcome.get("raises"):
        return _md(f"{outcome['raises']}: {str(outcome.get('message') or '')[:90]}")
    return _md(" ".join(str(outcome.get(k)) for k in ("device", "dtype") if outcome.get(k) is not None)
               or str(outcome.get("value", "")))


def _cell(outcome: Mapping[str, Any] | None) -> str:
    if not outcome:
        return "—"
    raised = f" {outcome['raises']}" if outcome.get("raises") else ""
    return _md(f"{outcome['judgement']} ({outcome['status']}{raised}; torch {outcome.get('torch')})")


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")
