"""The DeepSpeed case's compatibility shims are import-only, minimal, and inert where not needed.

Runs a probe in each variant's real environment: without its shims a 0.14.x release does not import
on torch 2.13 (so this goes red the day the shim becomes unnecessary); with them exactly the two
missing names appear, no DeepSpeed file differs from the wheel's RECORD, and the function that
carries the bug is still DeepSpeed's own.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from harness.cases._load import load_case
from harness.environments._venv import VenvBackend
from harness.run._backend import REPO_ROOT, SIM_ROOT
from harness.run._lanes import LANE_TABLE
from harness.run._plan import Cell

CASE = load_case(REPO_ROOT / "cases" / "deepspeed-zero3-offload-clip")
pytestmark = pytest.mark.slow

PROBE = r'''
import base64, hashlib, json, os, runpy, sys
from importlib import metadata
if os.environ.get("PROBE_SIM"):
    sys.path.insert(0, os.environ["PROBE_SIM"])
    import cuda_sim
    cuda_sim.install()
from torch.distributed.elastic.agent.server import api
before = {n: hasattr(api, n) for n in ("log", "_get_socket_with_port")}
for shim in sys.argv[1:]:
    runpy.run_path(shim, run_name="__repro_shim__")
out = {"added": [n for n, had in before.items() if not had and hasattr(api, n)]}
try:
    import deepspeed
except ImportError as error:
    print(json.dumps({**out, "import_error": str(error)}))
    raise SystemExit(0)
from deepspeed.runtime.zero.stage3 import DeepSpeedZeroOptimizer_Stage3 as S3
bad = []
for f in metadata.distribution("deepspeed").files:
    if f.hash and str(f).startswith("deepspeed/"):
        digest = base64.urlsafe_b64encode(hashlib.sha256(f.locate().read_bytes()).digest()).rstrip(b"=").decode()
        bad += [str(f)] if digest != f.hash.value else []
fn = S3.unscale_and_clip_grads
fn = fn.__closure__[0].cell_contents if fn.__closure__ else fn
print(json.dumps({**out, "version": deepspeed.__version__, "modified_files": bad,
                  "clip_fn_file": fn.__code__.co_filename.split("site-packages/")[-1],
                  "stand_ins": sorted(n for n in ("intel_extension_for_pytorch", "oneccl_bindings_for_pytorch")
                                      if n in sys.modules),
                  "accelerator": deepspeed.accelerator.get_accelerator().device_name()}))
'''


def probe(variant: str, shims: list[Path], *, sim: bool = False) -> dict:
    python = VenvBackend().prepare(Cell(CASE, CASE.variants[variant], LANE_TABLE["cpu"]).env_spec(),
                                   progress=lambda _line: None).python_path
    env = {**os.environ, "LOCAL_SIZE": "1", **({"PROBE_SIM": str(SIM_ROOT)} if sim else {})}
    proc = subprocess.run([python, "-c", PROBE, *map(str, shims)], capture_output=True, text=True, timeout=600,
                          env=env, cwd=REPO_ROOT)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(next(line for line in reversed(proc.stdout.splitlines()) if line.startswith("{")))


@pytest.mark.parametrize("variant", ["buggy", "pin-0.14.0", "release-0.14.3"])
def test_without_shims_the_old_release_does_not_import(variant):
    assert "cannot import name" in probe(variant, [])["import_error"]


@pytest.mark.parametrize("variant", ["buggy", "pin-0.14.0", "release-0.14.3"])
def test_shims_add_only_the_missing_names_and_touch_no_deepspeed_file(variant):
    result = probe(variant, list(CASE.variants[variant].shims))
    assert result["added"] == ["log", "_get_socket_with_port"]
    assert result["modified_files"] == []
    assert result["clip_fn_file"] == "deepspeed/runtime/zero/stage3.py"
    assert result["accelerator"] == "cpu"
    assert result["stand_ins"] == (["intel_extension_for_pytorch", "oneccl_bindings_for_pytorch"]
                                   if variant == "pin-0.14.0" else [])


def test_cpu_accelerator_shim_is_inert_under_cuda_sim():
    result = probe("pin-0.14.0", list(CASE.variants["pin-0.14.0"].shims), sim=True)
    assert result["stand_ins"] == [] and result["accelerator"] == "cuda"


def test_latest_needs_no_shim():
    result = probe("latest", [])
    assert "import_error" not in result and result["modified_files"] == []
