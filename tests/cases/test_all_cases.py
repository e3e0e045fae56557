"""Every case in cases/: loads, plans an environment per variant, and every cpu and cuda-sim cell runs
for real with the verdict its case file documents and the library versions its pins promise.

One harness run (``python -m harness cases --lane cpu --lane cuda-sim``) feeds every assertion here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from harness.cases._load import load_cases
from harness.run._lanes import LANE_TABLE
from harness.run._plan import plan_cells

REPO = Path(__file__).resolve().parents[2]
CASES = load_cases([REPO / "cases"])
# Every case is loaded and planned here. Running every cell of the whole catalogue cold (a fresh machine:
# ~60 environments to download and build) is a measurement, `nox -s cases -- --lane cpu --lane cuda-sim`,
# not a test: the tests run the cells of this fixed subset, which covers each way a case is built (patches,
# shims, an sdist build, the diffusers and transformers stacks, an old release needing setuptools) and one
# case each of transformers, peft and torchmetrics. REPRO_TEST_CASES=all runs every case instead.
SUBSET = ("ai-toolkit-flux-ids", "deepspeed-zero3-offload-clip", "lycoris-extract-diff", "onetrainer-validation-device",
          "var-resume", "transformers-dynamic-rope-device", "peft-adalora-ranknum-device",
          "torchmetrics-ssim-uniform-kernel")
RUN = [c.id for c in CASES.cases] if os.environ.get("REPRO_TEST_CASES") == "all" else list(SUBSET)


def test_the_subset_names_active_cases():
    active = {c.id for c in CASES.cases if c.status == "active"}
    assert set(SUBSET) <= active, f"SUBSET names cases that are not active cases: {set(SUBSET) - active}"


def test_every_case_loads_and_plans_its_environments():
    assert not CASES.errors, "\n".join(map(str, CASES.errors))
    assert len(CASES.cases) >= 5
    cells = plan_cells(CASES.cases, [LANE_TABLE["cpu"]])
    specs = {cell.env_spec().key() for cell in cells}
    assert len(specs) <= len(cells)
    for cell in cells:
        assert any(r.startswith("torch==") for r in cell.env_spec().requires), cell.key
    for case in CASES.cases:
        assert any(case.upstream.get(key) for key in ("issue", "pr", "commit")), case.id
        assert any(case.upstream.get(key) for key in ("fix", "pr", "commit")), f"{case.id}: no link to the fix"
        assert len(case.summary) > 80, case.id


@pytest.fixture(scope="module")
def suite_run(tmp_path_factory) -> dict:
    output = tmp_path_factory.mktemp("suite")
    proc = subprocess.run(
        [sys.executable, "-m", "harness", "cases", "--lane", "cpu", "--lane", "cuda-sim", "--output", str(output),
         *(arg for case in RUN for arg in ("--case", case))],
        cwd=REPO, capture_output=True, text=True, timeout=3600, env={**os.environ, "COLUMNS": "200"},
    )
    print(proc.stdout[-20000:])
    runs = [p for p in output.iterdir() if (p / "results.json").exists()]
    assert len(runs) == 1, proc.stdout + proc.stderr
    results = json.loads((runs[0] / "results.json").read_text())
    results["_exit_code"] = proc.returncode
    return results


@pytest.mark.slow
@pytest.mark.parametrize("lane", ["cpu", "cuda-sim"])
@pytest.mark.parametrize("case", RUN)
def test_lane_verdict_is_confirmed(suite_run, case, lane):
    verdict = next(v for v in suite_run["verdicts"] if v["case"] == case and v["lane"] == lane)
    variants = next(c for c in CASES.cases if c.id == case).variants.values()
    if all(v.expect[lane].kind == "unsupported" for v in variants):  # the case says why, in its file
        assert verdict["verdict"] == "skipped", verdict["reason"]
    else:
        assert verdict["verdict"] == "confirmed", verdict["reason"]


@pytest.mark.slow
def test_suite_exits_zero(suite_run):
    assert suite_run["_exit_code"] == 0


@pytest.mark.slow
@pytest.mark.parametrize("case", RUN)
def test_cells_ran_the_pinned_releases(suite_run, case):
    variants = next(c for c in CASES.cases if c.id == case).variants
    ran = [c for c in suite_run["cells"] if c["case"] == case and c["status"] not in ("skipped", "infra-error")]
    assert ran
    for cell in ran:
        imported = {canonicalize_name(name): version for name, version in cell["imported"].items()}
        pinned = {}
        for text in variants[cell["variant"]].requires:
            requirement = Requirement(text)
            pins = [s.version for s in requirement.specifier if s.operator == "=="]
            if pins:
                pinned[canonicalize_name(requirement.name)] = pins[0]
        checked = [name for name in pinned if name in imported]
        for name in checked:
            assert imported[name].split("+")[0] == pinned[name], (cell["variant"], cell["lane"], name, imported[name])
        assert "torch" in checked, cell
        if len(pinned) > 1:
            assert len(checked) > 1, f"{cell['variant']}: no pinned library besides torch was imported: {pinned}"
