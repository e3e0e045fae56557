"""The simulator's conformance scenarios run as a program, for the GPU check (harness/gpucheck/_check.py).

``python -m harness.gpucheck._scenarios real|sim OUT.json`` runs every scenario of tests/sim/test_conformance.py
with this interpreter's torch, either on the real device (``real``: a GPU host) or under the simulation
(``sim``), and writes each outcome: the result's device, dtype and shape, or the exception's type and
exact message. The table's own expectation is written beside it, so the check can say whether real
CUDA agrees with the table, with the simulation, or with neither.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

TABLE = Path(__file__).resolve().parents[2] / "tests" / "sim" / "test_conformance.py"


def load_table(path: Path = TABLE) -> Any:
    spec = importlib.util.spec_from_file_location("repro_matrix_conformance_table", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"cannot load the scenario table {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the table is being defined
    spec.loader.exec_module(module)
    return module


def outcome(run: Callable[[], object]) -> dict[str, Any]:
    import torch

    try:
        result = run()
        if torch.cuda.is_available() and not _simulating():
            torch.cuda.synchronize()  # an asynchronous CUDA error belongs to this scenario, not the next
    except Exception as error:
        return {"raises": type(error).__name__, "message": str(error)}
    if isinstance(result, torch.Tensor):
        return {"device": str(result.device), "dtype": str(result.dtype), "shape": list(result.shape)}
    return {"value": repr(result)[:200]}


def expected(scenario: Any) -> dict[str, Any]:
    if scenario.error is not None:
        return {"raises": scenario.error.__name__, "message": scenario.message}
    return {"device": scenario.device, "dtype": str(scenario.dtype) if scenario.dtype is not None else None}


def _simulating() -> bool:
    from cuda_sim import is_active

    return is_active()


@contextlib.contextmanager
def _mode(mode: str) -> Iterator[None]:
    if mode == "sim":
        from cuda_sim import simulate

        with simulate():
            yield
    else:
        yield


def main(argv: list[str]) -> int:
    mode, out = argv[0], Path(argv[1])
    table = load_table()
    import torch

    rows = []
    for scenario in table.SCENARIOS:
        with _mode(mode):
            got = outcome(scenario.run)
        rows.append({"id": scenario.id, "source": scenario.source, "table": expected(scenario), "outcome": got})
    out.write_text(json.dumps({"mode": mode, "torch": torch.__version__, "cuda": torch.version.cuda,
                               "scenarios": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
