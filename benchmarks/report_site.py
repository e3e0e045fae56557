"""Benchmark: build the report site from 1,000 stored runs x 5 cases (goal: under 1 s CPU on a rebuild).

    python benchmarks/report_site.py [--runs 1000] [--reps 5] [--keep-all]

Generates synthetic runs the way the harness stores them (results.json, logs, junit.xml, index.html) in a
temp folder, then times ``build_site`` into a fresh output folder per repetition and prints the median: once
checking every input (no record of checked inputs), once as a rebuild (the record filled by an earlier build;
harness/report/_checked.py), side by side with their ratio. Also times the nightly publish: the previous
history.json plus one new run. The record lives in the temp folder, never in the user's cache.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from harness.report import build_site, write_run_reports
from harness.report._io import write_json_atomic
from harness.report._site import KEEP_REPORTS

CASES = ["var-resume", "lycoris-extract-diff", "onetrainer-validation-device", "deepspeed-zero3-offload-clip",
         "ai-toolkit-flux-ids"]
VARIANTS = [("buggy", "buggy"), ("fix-release", "fix"), ("fix-workaround", "fix")]
LANES = ["cpu", "cuda", "cuda-sim"]
START = datetime(2024, 3, 1, 2, 0, tzinfo=UTC)
BASE_PACKAGES = {f"dep-{i:02d}": f"1.{i}.0" for i in range(20)}


def synthetic_run(index: int, rng: random.Random) -> dict[str, Any]:
    started = START + timedelta(hours=24 * index)
    torch = f"2.{10 + index // 250}.0+{'cu128' if index % 3 == 0 else 'cpu'}"
    gpu = index % 3 == 0
    host = {"hostname": "gpu-box" if gpu else "gh-runner", "os": "Linux-6.8", "machine": "x86_64", "python": "3.11.7",
            "cpu": "AMD EPYC 7763", "cpu_count": 4, "memory_gb": 15.6,
            "gpus": [{"name": "RTX 4090", "memory_mb": 24564, "driver": "550.54"}] if gpu else [],
            "cuda_driver": "550.54" if gpu else None}
    environments, cells, verdicts = {}, [], []
    for case in CASES:
        for variant, _ in VARIANTS:
            env_id = f"venv-{case[:6]}-{variant[:6]}"
            environments[env_id] = {"id": env_id, "backend": "venv", "python": "3.11.7",
                                    "requires": ["torch==2.13.0", f"{case}-lib=={1 + index // 400}.0"],
                                    "patches": [], "installed": {**BASE_PACKAGES, "torch": torch,
                                                                 f"{case}-lib": f"{1 + index // 400}.0"},
                                    "reused": True, "build_s": 0.0, "image": None, "error": None}
        for lane in LANES:
            lane_cells = [_cell(case, variant, role, lane, index, gpu, rng, started) for variant, role in VARIANTS]
            cells += lane_cells
            worst = min((c["judgement"] for c in lane_cells), key=_SEVERITY.index)
            verdicts.append({"case": case, "lane": lane, "verdict": worst, "cells": [v for v, _ in VARIANTS],
                             "reason": "no GPU on this host" if worst == "skipped" else f"{worst} (synthetic)"})
    return {"version": 1,
            "run": {"id": f"{started:%Y%m%dT%H%M%SZ}-{index:06x}", "started": started.isoformat(),
                    "finished": (started + timedelta(minutes=20)).isoformat(), "status": "completed",
                    "exit_code": 0, "harness_version": "0.1.0", "host": host,
                    "selection": {"cases": None, "lanes": LANES, "variants": None, "backend": "venv", "shard": None,
                                  "jobs": 2, "argv": []}},
            "cases": {case: {"title": f"{case} title", "upstream": {"issue": f"https://example.org/{case}",
                                                                     "links": []},
                             "signature": "Expected all tensors to be on the same device", "exception": None,
                             "summary": "synthetic", "status": "active", "tags": []} for case in CASES},
            "environments": environments, "cells": cells, "verdicts": verdicts}


_SEVERITY = ["fix-regressed", "stale-repro", "failed-differently", "infra-error", "confirmed", "skipped"]


def _cell(case: str, variant: str, role: str, lane: str, index: int, gpu: bool, rng: random.Random,
          started: datetime) -> dict[str, Any]:
    skipped = lane == "cuda" and not gpu
    judgement = "skipped" if skipped else rng.choices(["confirmed", "fix-regressed", "failed-differently"],
                                                       weights=[96, 2, 2])[0]
    raised = role == "buggy" and lane != "cpu" and not skipped
    return {"case": case, "variant": variant, "role": role, "lane": lane,
            "environment": f"venv-{case[:6]}-{variant[:6]}",
            "expected": "reproduces" if role == "buggy" and lane != "cpu" else "passes",
            "status": "skipped" if skipped else ("raised" if raised else "passed"), "judgement": judgement,
            "reason": "no GPU on this host" if skipped else "synthetic", "started": started.isoformat(),
            "duration_s": 0.0 if skipped else 3.2, "exit_code": None if skipped else int(raised), "signal": None,
            "exception": {"type": "RuntimeError", "message": "Expected all tensors to be on the same device",
                          "traceback": []} if raised else None,
            "signature_matched": raised, "log": None if skipped else f"logs/{case}/{lane}/{variant}.log",
            "shims": [], "patches": [], "imported": {}, "image": None}


def generate(folder: Path, runs: int) -> list[Path]:
    """The runs as the harness stores them; not timed."""
    rng = random.Random(1234)
    dirs = []
    for index in range(runs):
        results = synthetic_run(index, rng)
        run_dir = folder / results["run"]["id"]
        for cell in results["cells"]:
            if cell["log"]:
                log = run_dir / cell["log"]
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text(f"[repro] {cell['case']} {cell['variant']} {cell['lane']}\n[repro] done\n")
        write_json_atomic(run_dir / "results.json", results)
        write_run_reports(run_dir, results)
        dirs.append(run_dir)
    return dirs


def timed(inputs: list[Path], output: Path, keep: int | None, *, fresh: bool = True) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process): on a shared machine the CPU figure is the steadier one.
    ``fresh``: into an empty output folder; else over the site already there (a rebuild)."""
    if fresh:
        shutil.rmtree(output, ignore_errors=True)
    begin, cpu = time.perf_counter(), time.process_time()
    build_site(inputs, output, keep_reports=keep, now=START + timedelta(days=2000))
    return time.perf_counter() - begin, time.process_time() - cpu


def report(label: str, samples: list[tuple[float, float]]) -> None:
    walls, cpus = [w for w, _ in samples], [c for _, c in samples]
    print(f"{label}: median {statistics.median(walls):.3f} s wall (min {min(walls):.3f}, max {max(walls):.3f}), "
          f"median {statistics.median(cpus):.3f} s CPU, {len(samples)} reps")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--keep-all", action="store_true", help="also time keeping every run's report in the site")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repro-bench-") as tmp:
        root = Path(tmp)
        begin = time.perf_counter()
        generate(root / "runs", args.runs)
        print(f"generated {args.runs} runs x {len(CASES)} cases x {len(LANES)} lanes x {len(VARIANTS)} variants "
              f"in {time.perf_counter() - begin:.1f} s")
        os.environ["REPRO_MATRIX_REPORT_CACHE"] = ""  # off: every input checked
        every = [timed([root / "runs"], root / "site", KEEP_REPORTS) for _ in range(args.reps)]
        report(f"build_site from {args.runs} stored runs, every input checked (keep_reports={KEEP_REPORTS})", every)
        os.environ["REPRO_MATRIX_REPORT_CACHE"] = str(root / "report-checked")
        first = timed([root / "runs"], root / "site", KEEP_REPORTS)  # checks all and fills the record
        report("first build filling the record of checked inputs", [first])
        fresh = [timed([root / "runs"], root / "site", KEEP_REPORTS) for _ in range(args.reps)]
        report(f"build from the same {args.runs} runs into an empty folder, with the record", fresh)
        rebuild = [timed([root / "runs"], root / "site", KEEP_REPORTS, fresh=False) for _ in range(args.reps)]
        report(f"rebuild of that site from the same {args.runs} runs, with the record (goal < 1 s CPU)", rebuild)
        cpu_every, cpu_rebuild = (statistics.median(c for _, c in s) for s in (every, rebuild))
        print(f"CPU: every input checked {cpu_every:.3f} s | rebuild {cpu_rebuild:.3f} s | "
              f"ratio {cpu_rebuild / cpu_every:.2f}x")
        if args.keep_all:
            report(f"build_site, keep_reports=None (all {args.runs} reports linked/copied)",
                   [timed([root / "runs"], root / "site-all", None) for _ in range(max(1, args.reps // 2))])
        latest = sorted((root / "runs").iterdir())[-1]
        previous = root / "previous"
        previous.mkdir()
        shutil.copy(root / "site" / "history.json", previous / "history.json")
        report(f"nightly publish (previous history.json of {args.runs} runs + 1 new run)",
               [timed([previous, latest], root / "site-nightly", KEEP_REPORTS) for _ in range(args.reps)])
        print(f"history.json: {(root / 'site' / 'history.json').stat().st_size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
