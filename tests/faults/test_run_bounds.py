"""One case must not drown the run (issue 19 section 2): what a case's cells add to results.json is bounded,
so the report still publishes every other case's verdicts."""

from __future__ import annotations

import json

import pytest

from harness.run._results import CASE_BYTES
from tests.faults.conftest import SIGNATURE_SCRIPT, cell, results_of, run_harness, verdict, write_case

pytestmark = pytest.mark.slow

FLOOD = """
    import argparse, sys
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    sys.setrecursionlimit(10_000)

    def deeper(n):
        if n == 0:
            raise RuntimeError(a.variant + " " + "long message " * 5_000)  # the runner keeps 20,000 characters
        deeper(n - 1)

    deeper(200)  # the runner keeps 40 frames
"""
PASSES = {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}


@pytest.mark.fault("one case with many variants floods results.json")
def test_one_flooding_case_is_trimmed_and_the_others_are_published(tmp_path):
    write_case(tmp_path / "cases", "aa-calm", SIGNATURE_SCRIPT)
    write_case(tmp_path / "cases", "zz-flood", FLOOD,
               variants={f"v{i:02d}": {"role": "buggy" if i == 0 else "fix", "expect": PASSES} for i in range(45)})
    run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu", "--jobs", "2", "--output",
                str(tmp_path / "out"), timeout=900)
    results = results_of(tmp_path / "out")[0]
    flood = [c for c in results["cells"] if c["case"] == "zz-flood"]
    assert len(flood) == 45 and all("trimmed in results.json" in c["reason"] for c in flood), flood[0]["reason"]
    assert sum(len(json.dumps(c)) for c in flood) < 2 * CASE_BYTES
    assert "trimmed" not in cell(results, "aa-calm", "buggy")["reason"]
    assert verdict(results, "aa-calm")["verdict"] == "confirmed"
    # the log still has the whole message
    run = next(p for p in (tmp_path / "out").iterdir() if (p / "results.json").is_file())
    assert (run / flood[0]["log"]).read_text().count("long message") >= 1000
    proc = run_harness("report", "--input", str(tmp_path / "out"), "--output", str(tmp_path / "site"))
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    pages = " ".join(p.read_text(errors="replace") for p in (tmp_path / "site").rglob("*.html"))
    assert "aa-calm" in pages and "zz-flood" in pages
