"""Smoke test of benchmarks/harness_overhead.py on tiny inputs (it is a benchmark: no timing is asserted)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "harness_overhead.py"


def _bench_module():
    if "harness_overhead" in sys.modules:
        return sys.modules["harness_overhead"]
    spec = importlib.util.spec_from_file_location("harness_overhead", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    sys.modules["harness_overhead"] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_synthetic_suite_loads_and_plans_two_cpu_cells_per_case(tmp_path: Path):
    from harness.cases._load import load_cases
    from harness.run._lanes import LANE_TABLE
    from harness.run._plan import plan_cells

    suite = _bench_module().make_synthetic_suite(tmp_path / "cases", 3)
    loaded = load_cases([suite])
    assert not loaded.errors
    assert [c.id for c in loaded.cases] == ["syn-0001", "syn-0002", "syn-0003"]
    cells = plan_cells(loaded.cases, [LANE_TABLE["cpu"]])
    assert len(cells) == 6
    assert {c.variant.requires for c in cells} == {("torch==2.13.0",)}
    assert "import torch" not in (suite / "syn-0001" / "repro.py").read_text()


def test_bare_command_runs_shims_then_the_script_as_main(tmp_path: Path):
    bench = _bench_module()
    shim = tmp_path / "shim.py"
    shim.write_text("import builtins\nbuiltins.SHIMMED = True\n")
    script = tmp_path / "repro.py"
    script.write_text("import builtins, sys\nassert __name__ == '__main__'\nassert builtins.SHIMMED\n"
                      "print('argv', sys.argv[1:])\n")
    cell = bench.BareCell(key="x/v", python=Path(sys.executable), script=script, argv=("--variant", "v"),
                          shims=(shim,), env={}, imported=(), env_id="e")
    out = subprocess.run(cell.command(), capture_output=True, text=True, cwd=tmp_path, check=True).stdout
    assert out.strip() == "argv ['--variant', 'v']"


@pytest.mark.slow
def test_quick_run_on_a_tiny_synthetic_suite_prints_every_figure(tmp_path: Path):
    bench = _bench_module()
    cases = bench.make_synthetic_suite(tmp_path / "cases", 2)
    figures_path = tmp_path / "figures.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--quick", "--cases-dir", str(cases), "--env-root", str(tmp_path / "envs"),
         "--scale", "2,4", "--cold-requires", "torch==2.13.0", "--json", str(figures_path)],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "host" in proc.stdout and "goal" in proc.stdout
    figures = json.loads(figures_path.read_text())
    suite = figures["suite"]
    assert suite["cells"] == 2 and suite["reps"] == 1  # --quick: the one cheapest case, both variants
    assert suite["ratio_serial"] > 0 and suite["ratio_parallel"] > 0
    assert figures["cold"]["ratio"] > 0
    sizes = figures["scale"]["sizes"]
    assert sizes["2"]["cells"] == 4 and sizes["4"]["cells"] == 8
    assert sizes["4"]["confirmed"] == 8  # the synthetic cases really ran: buggy raised, fix passed
    assert figures["scale"]["startup"]["cases"] == 4
