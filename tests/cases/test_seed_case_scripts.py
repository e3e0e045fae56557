"""Script-level checks of the seed cases that carry a patch: in each case's own environments (built
by the venv backend exactly as a run builds them), the buggy variant's interpreter really runs the
upstream change and the fix variants' interpreters do not.

A CPU-only host has no second real device; the ``meta`` device stands in here, because each
patched function decides placement from the device it is given. The cuda-sim lane and the
generic case tests check the full scripts.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from harness.cases._load import Case, load_cases
from harness.environments._venv import VenvBackend
from harness.run._lanes import LANE_TABLE
from harness.run._plan import Cell

REPO = Path(__file__).resolve().parents[2]
CASES = {case.id: case for case in load_cases([REPO / "cases"]).cases}

pytestmark = pytest.mark.slow


def python_for(case: Case, variant: str) -> str:
    cell = Cell(case, case.variants[variant], LANE_TABLE["cpu"])
    return VenvBackend().prepare(cell.env_spec(), progress=lambda _line: None).python_path


def probe(python: str, code: str) -> dict:
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


STEP_DEVICE_AFTER_LOAD = """
import json, torch
model = torch.nn.Linear(2, 2)
opt = torch.optim.AdamW(model.parameters(), fused=True)
model(torch.randn(1, 2)).sum().backward()
opt.step()
saved = opt.state_dict()  # what torch.load(map_location='cpu') hands back: every tensor on the CPU
params = [torch.nn.Parameter(torch.empty(2, 2, device="meta")), torch.nn.Parameter(torch.empty(2, device="meta"))]
resumed = torch.optim.AdamW(params, fused=True)
resumed.load_state_dict(saved)
print(json.dumps({"step": sorted({str(s["step"].device) for s in resumed.state.values()}),
                  "exp_avg": sorted({str(s["exp_avg"].device) for s in resumed.state.values()})}))
"""


@pytest.mark.parametrize(("variant", "step_device"), [("buggy", "cpu"), ("torch-2.1+", "meta")])
def test_var_resume_patch_leaves_fused_step_where_torch_load_put_it(variant, step_device):
    seen = probe(python_for(CASES["var-resume"], variant), STEP_DEVICE_AFTER_LOAD)
    assert seen == {"step": [step_device], "exp_avg": ["meta"]}


FLUX_IDS_ON_DEVICE = """
import json, torch
from diffusers import FluxPipeline
try:
    ids = FluxPipeline._prepare_latent_image_ids(1, 4, 4, torch.device("meta"), torch.float32)
    print(json.dumps({"device": str(ids.device), "dtype": str(ids.dtype)}))
except RuntimeError as error:
    print(json.dumps({"error": str(error)}))
"""


def test_flux_ids_patch_mixes_the_device_zeros_with_a_cpu_arange():
    seen = probe(python_for(CASES["ai-toolkit-flux-ids"], "buggy"), FLUX_IDS_ON_DEVICE)
    assert "cpu" in seen.get("error", "") and "meta" in seen["error"], seen


@pytest.mark.parametrize("variant", ["diffusers-0.31.0", "diffusers-0.32.0", "latest"])
def test_flux_ids_fixes_build_on_the_cpu_and_move_once(variant):
    seen = probe(python_for(CASES["ai-toolkit-flux-ids"], variant), FLUX_IDS_ON_DEVICE)
    assert seen == {"device": "meta", "dtype": "torch.float32"}
