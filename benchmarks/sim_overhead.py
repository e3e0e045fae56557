"""Benchmark: what the cuda-sim lane costs compared with the cpu lane, per seed case.

Runs the selected cases (default: every active case) on the ``cpu`` and ``cuda-sim`` lanes with
``python -m harness cases --case ... --lane LANE --jobs 1 --output DIR``, several times with the
lanes interleaved, reads each run's ``results.json`` (``cells[].duration_s``: the child process
from start to exit, imports included) and prints, per case, the median cell durations of both
lanes and their ratio, then the median of the per-case ratios (the goal is < 3x).

    python benchmarks/sim_overhead.py                      # all cases, 3 repetitions
    python benchmarks/sim_overhead.py --case var-resume --repeat 5 --json overhead.json

A benchmark, not a test: nothing is asserted. Cells that did not run (infra-error, skipped,
timeout) are left out of the figures and listed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parent.parent
LANES = ("cpu", "cuda-sim")
RAN = {"passed", "raised", "exited"}


def active_cases(cases_dir: Path) -> list[str]:
    found = []
    for case_file in sorted(cases_dir.glob("*/case.yaml")):
        data = yaml.safe_load(case_file.read_text(encoding="utf-8")) or {}
        if data.get("status", "active") == "active":
            found.append(case_file.parent.name)
    return found


def run_lane(cases: list[str], lane: str, output: Path) -> dict:
    command = [sys.executable, "-m", "harness", "cases", "--lane", lane, "--jobs", "1", "--output", str(output)]
    for case in cases:
        command += ["--case", case]
    subprocess.run(command, cwd=REPO, check=False, stdout=subprocess.DEVNULL)
    results = sorted(output.glob("*/results.json"))
    if not results:
        raise SystemExit(f"no results.json under {output}: the harness run failed ({' '.join(command)})")
    return json.loads(results[-1].read_text(encoding="utf-8"))


def collect(cases: list[str], repeat: int, workdir: Path) -> tuple[dict, list[str]]:
    durations: dict[tuple[str, str, str], list[float]] = {}
    dropped: list[str] = []
    for rep in range(repeat):
        for lane in LANES if rep % 2 == 0 else reversed(LANES):
            print(f"repetition {rep + 1}/{repeat}: {lane} lane", file=sys.stderr, flush=True)
            results = run_lane(cases, lane, workdir / f"rep{rep}-{lane}")
            for cell in results["cells"]:
                key = (cell["case"], cell["variant"], cell["lane"])
                if cell["status"] in RAN and cell.get("duration_s") is not None:
                    durations.setdefault(key, []).append(float(cell["duration_s"]))
                else:
                    dropped.append(f"{'/'.join(key)} (rep {rep + 1}: {cell['status']})")
    return durations, dropped


def summarize(durations: dict[tuple[str, str, str], list[float]]) -> dict:
    medians = {key: statistics.median(values) for key, values in durations.items()}
    per_case: dict[str, dict] = {}
    for (case, variant, lane), value in medians.items():
        row = per_case.setdefault(case, {"cells": {}})
        row["cells"].setdefault(variant, {})[lane] = value
    for row in per_case.values():
        paired = [v for v in row["cells"].values() if all(lane in v for lane in LANES)]
        row["cpu_s"] = statistics.median(v["cpu"] for v in paired) if paired else None
        row["sim_s"] = statistics.median(v["cuda-sim"] for v in paired) if paired else None
        row["ratio"] = row["sim_s"] / row["cpu_s"] if paired and row["cpu_s"] else None
    ratios = [row["ratio"] for row in per_case.values() if row["ratio"] is not None]
    return {"cases": per_case, "median_ratio": statistics.median(ratios) if ratios else None}


def render(summary: dict, dropped: list[str]) -> str:
    lines = [f"{'case':32} {'cpu s':>8} {'cuda-sim s':>11} {'ratio':>7}   (median cell durations)"]
    for case, row in sorted(summary["cases"].items()):
        if row["ratio"] is None:
            lines.append(f"{case:32} {'-':>8} {'-':>11} {'-':>7}")
            continue
        lines.append(f"{case:32} {row['cpu_s']:8.2f} {row['sim_s']:11.2f} {row['ratio']:6.2f}x")
        for variant, lanes in sorted(row["cells"].items()):
            cells = "  ".join(f"{lane} {lanes[lane]:.2f}s" for lane in LANES if lane in lanes)
            lines.append(f"    {variant:28} {cells}")
    median = summary["median_ratio"]
    lines.append(f"median ratio over cases: {median:.2f}x" if median is not None else "median ratio: n/a")
    if dropped:
        lines.append("left out (did not run): " + "; ".join(dropped))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--case", action="append", help="case id (repeatable; default: every active case)")
    parser.add_argument("--repeat", type=int, default=3, help="runs per lane (default 3)")
    parser.add_argument("--output", type=Path, help="keep the harness runs here (default: a temp folder)")
    parser.add_argument("--json", type=Path, help="also write the summary as JSON")
    args = parser.parse_args(argv)
    cases = args.case or active_cases(REPO / "cases")
    with tempfile.TemporaryDirectory(prefix="sim-overhead-") as scratch:
        workdir = args.output or Path(scratch)
        durations, dropped = collect(cases, args.repeat, workdir)
    summary = summarize(durations)
    print(render(summary, dropped))
    if args.json:
        args.json.write_text(json.dumps({**summary, "dropped": dropped, "repeat": args.repeat}, indent=2) + "\n",
                             encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
