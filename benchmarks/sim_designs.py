"""Compare cuda-sim's two placement designs on the conformance scenarios and the C++-visible classes.

Designs: ``tagged`` (the default: a simulated cuda tensor is a CPU tensor with a tag on its storage,
``cuda_sim.simulate()``) and ``wrapper`` (the prototype: a wrapper subclass whose device is cuda:0
for C++ too, ``cuda_sim._wrapper_proto.simulate_wrapped()``).

Part (a) replays every scenario of tests/sim/test_conformance.py (SCENARIOS: what real CUDA does,
recorded per scenario; WITHOUT_CUDA: programs that never touch cuda, whose outcome must equal plain
torch's) under each design. Part (b) runs the known C++-visible failure classes (PROBES below, with
real CUDA's outcome). Each design runs in child processes: a scenario that aborts the process
(std::terminate in C++) is recorded as ``abort`` and the next child resumes after it.

    python benchmarks/sim_designs.py                    # both designs, both parts, a table per part
    python benchmarks/sim_designs.py --design wrapper -v # one design, every outcome printed
    python benchmarks/sim_designs.py --design wrapper+guard  # the prototype plus a compiled no-op CUDA guard

A measurement, not a test: nothing is asserted (tests/sim/test_wrapper_proto.py pins the prototype).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import io
import json
import os
import pickle
import subprocess
import sys
import warnings
from collections import Counter
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "cuda-sim"))

DESIGNS = ("tagged", "wrapper", "wrapper+guard")

# what a compiled component would add: a no-op CUDA DeviceGuardImpl (torch's own FakeGuardImpl) in the
# CUDA slot of c10's registry, which no Python API can fill on a CPU build (only PrivateUse1 has one).
# Built with torch.utils.cpp_extension (a C++ compiler, about a minute) for the "wrapper+guard" design
_GUARD_SOURCE = """
#include <torch/extension.h>
#include <c10/core/impl/FakeGuardImpl.h>
static c10::impl::FakeGuardImpl<c10::DeviceType::CUDA> guard;
void register_guard() {
  c10::impl::device_guard_impl_registry[static_cast<size_t>(c10::DeviceType::CUDA)].store(&guard);
}
PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("register_guard", &register_guard); }
"""


def _register_fake_cuda_guard() -> None:
    import tempfile

    from torch.utils import cpp_extension

    build = Path(tempfile.gettempdir()) / "cuda_sim_fake_guard"
    build.mkdir(exist_ok=True)
    module = cpp_extension.load_inline("cuda_sim_fake_guard", cpp_sources=[_GUARD_SOURCE], build_directory=str(build))
    module.register_guard()
_DEVICE_ERROR_WORDS = ("same device", "device type", "on device", "expected device", "to be on")


def design_context(design: str) -> Callable[[], AbstractContextManager[None]]:
    if design == "tagged":
        import cuda_sim

        return cuda_sim.simulate
    if design == "wrapper+guard":
        _register_fake_cuda_guard()
    from cuda_sim._wrapper_proto import simulate_wrapped

    return simulate_wrapped


@functools.cache
def _conformance() -> Any:
    spec = importlib.util.spec_from_file_location("_conformance_table", ROOT / "tests" / "sim" / "test_conformance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module


# --- part (b): the C++-visible classes, each with real CUDA's outcome (a device string, or a value)

def _script(fn: Callable[..., Any]) -> Callable[..., Any]:
    import torch

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return torch.jit.script(fn)  # type: ignore[no-any-return]


def _probes() -> dict[str, tuple[Callable[[], Any], object]]:
    import torch

    def zeros_like_device(x: torch.Tensor) -> torch.Tensor:
        return x @ torch.zeros(x.shape[1], 2, device=x.device)

    def divide_by_to_other(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return a / b.to(a)

    def scripted_is_cuda(x: torch.Tensor) -> bool:
        return x.is_cuda

    zeros_s, divide_s, is_cuda_s = _script(zeros_like_device), _script(divide_by_to_other), _script(scripted_is_cuda)

    class Index(torch.Tensor):
        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            with torch._C.DisableTorchFunction():
                return func(*args, **(kwargs or {}))

    def cuda(*shape: int) -> torch.Tensor:
        return torch.ones(*shape, device="cuda")

    def subclass_index() -> torch.Tensor:
        idx = torch.tensor([0, 1], device="cuda").as_subclass(Index)
        return cuda(4)[idx]

    def train_step() -> torch.Tensor:
        model = torch.nn.Linear(3, 2).cuda()
        optimizer = torch.optim.AdamW(model.parameters())
        model(cuda(4, 3)).sum().backward()
        optimizer.step()
        assert model.weight.grad is not None
        return model.weight.grad

    def saved() -> torch.Tensor:
        buffer = io.BytesIO()
        torch.save(cuda(2), buffer)
        buffer.seek(0)
        return torch.load(buffer)  # type: ignore[no-any-return]

    return {
        "TorchScript zeros(device=x.device)": (lambda: zeros_s(cuda(3, 3)), "cuda:0"),
        "TorchScript a / b.to(a) (aten::to.other, corpus C3)":
            (lambda: divide_s(cuda(3), torch.tensor([1.0, 2.0, 3.0])), "cuda:0"),
        "TorchScript x.is_cuda": (lambda: is_cuda_s(cuda(1)), True),
        "subclass with __torch_function__ indexing cuda": (subclass_index, "cuda:0"),
        "cpu.type_as(cuda)": (lambda: torch.ones(2).type_as(cuda(1)), "cuda:0"),
        "cuda.is_shared()": (lambda: cuda(2).is_shared(), True),
        "cuda.untyped_storage().tolist()": (lambda: cuda(2).untyped_storage().tolist(), [0, 0, 128, 63, 0, 0, 128, 63]),
        "C++ is_cuda check: cuda.pin_memory()": (lambda: cuda(2).pin_memory(),
                                                 "RuntimeError: cannot pin 'torch.cuda.FloatTensor' only dense CPU "
                                                 "tensors can be pinned"),
        "C++ device check: cuda.numpy()": (lambda: cuda(2).numpy(),
                                          "TypeError: can't convert cuda:0 device type tensor to numpy. Use "
                                          "Tensor.cpu() to copy the tensor to host memory first."),
        "autograd: Linear + AdamW step": (train_step, "cuda:0"),
        "torch.compile(backend='eager')": (lambda: torch.compile(lambda a: a * 2 + 1, backend="eager")(cuda(2)),
                                           "cuda:0"),
        "pickle round trip": (lambda: pickle.loads(pickle.dumps(cuda(2))), "cuda:0"),
        "torch.save / torch.load": (saved, "cuda:0"),
        "str(cuda tensor)": (lambda: "device='cuda:0'" in str(cuda(2)), True),
    }


def _summary(value: object) -> object:
    import torch

    if isinstance(value, torch.Tensor):
        return str(value.device)
    if isinstance(value, (bool, int, float, str)) or value is None:
        return value
    if isinstance(value, list):
        return value
    return repr(value)


def _outcome(run: Callable[[], object]) -> dict[str, object]:
    try:
        return {"ok": _summary(run())}
    except Exception as error:
        return {"error": type(error).__name__, "message": str(error).split("\n")[0][:300]}


def _items(part: str) -> list[str]:
    if part == "probes":
        return list(_probes())
    table = _conformance()
    if part == "scenarios":
        return [s.id for s in table.SCENARIOS]
    return list(table.WITHOUT_CUDA)


def _child(design: str, part: str, start: int) -> None:
    """Run items ``start...`` of ``part`` under ``design``, one JSON line each, flushed."""
    import torch

    torch.set_num_threads(1)
    context = design_context(design)
    warnings.simplefilter("ignore")
    names = _items(part)
    if part == "probes":
        probes = _probes()
        runs: list[Callable[[], object]] = [probes[name][0] for name in names]
    elif part == "scenarios":
        runs = [s.run for s in _conformance().SCENARIOS]
    else:
        runs = list(_conformance().WITHOUT_CUDA.values())
    for index in range(start, len(names)):
        print(json.dumps({"index": index, "phase": "start"}), flush=True)
        plain = _outcome(runs[index]) if part == "without_cuda" else None
        with context():
            simulated = _outcome(runs[index])
        print(json.dumps({"index": index, "phase": "done", "plain": plain, "simulated": simulated}), flush=True)


def run_part(design: str, part: str) -> list[dict[str, Any]]:
    names = _items(part)
    results: list[dict[str, Any]] = [{} for _ in names]
    start = 0
    while start < len(names):
        proc = subprocess.run([sys.executable, __file__, "--child", design, part, str(start)], capture_output=True,
                              text=True, cwd=ROOT, check=False)
        last = start
        crashed_at = None
        for line in proc.stdout.splitlines():
            if not line.startswith("{"):
                continue
            record = json.loads(line)
            if record["phase"] == "start":
                crashed_at = record["index"]
            else:
                results[record["index"]] = record
                last = record["index"] + 1
                crashed_at = None
        if crashed_at is None and last >= len(names):
            break
        index = crashed_at if crashed_at is not None else last
        tail = (proc.stderr.strip().splitlines() or ["(no output)"])
        reason = next((line for line in tail if "what():" in line or "Error" in line), tail[-1])
        results[index] = {"simulated": {"error": "abort", "message": f"exit {proc.returncode}: {reason.strip()}"}}
        start = index + 1
    for name, record in zip(names, results, strict=True):
        record["name"] = name
    return results


def classify_scenario(scenario: Any, outcome: dict[str, object]) -> str:
    """agree / false-device-error / missed-error / wrong-error / wrong-device / gap."""
    error = outcome.get("error")
    if scenario.error is not None:
        if error is None:
            return "missed-error"
        if error == scenario.error.__name__ and outcome["message"] == scenario.message.split("\n")[0][:300]:
            return "agree"
        return "gap" if error in ("NotSimulatedError", "abort") else "wrong-error"
    if error is not None:
        message = str(outcome.get("message", "")).lower()
        if error == "RuntimeError" and any(word in message for word in _DEVICE_ERROR_WORDS):
            return "false-device-error"
        return "gap"
    if scenario.device is not None and outcome.get("ok") != scenario.device:
        return "wrong-device"
    return "agree"


def classify_probe(expected: object, outcome: dict[str, object]) -> str:
    if "error" in outcome:
        text = f"{outcome['error']}: {outcome['message']}"
        if text == expected:
            return "agree"
        return "abort" if outcome["error"] == "abort" else "fails"
    return "agree" if outcome["ok"] == expected else "wrong"


def _scenario_rows(design: str, verbose: bool) -> Counter[str]:
    table = _conformance()
    counts: Counter[str] = Counter()
    for scenario, record in zip(table.SCENARIOS, run_part(design, "scenarios"), strict=True):
        verdict = classify_scenario(scenario, record["simulated"])
        counts[verdict] += 1
        if verbose and verdict != "agree":
            print(f"  [{design}] {verdict}: {scenario.id}: {record['simulated']}")
    changed = 0
    for record in run_part(design, "without_cuda"):
        if record.get("plain") != record["simulated"]:
            changed += 1
            if verbose:
                print(f"  [{design}] changed plain behaviour: {record['name']}: {record}")
    counts["changed-plain-cpu"] = changed
    return counts


def _probe_rows(design: str) -> dict[str, str]:
    expected = {name: value for name, (_, value) in _probes().items()}
    rows = {}
    for record in run_part(design, "probes"):
        outcome = record["simulated"]
        verdict = classify_probe(expected[record["name"]], outcome)
        if verdict != "agree":
            detail = outcome.get("message", outcome.get("ok"))
            verdict += f" ({outcome.get('error', 'result')}: {str(detail)[:90]})"
        rows[record["name"]] = verdict
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--design", action="append", choices=DESIGNS, help="this design only (repeatable)")
    parser.add_argument("--part", action="append", choices=("scenarios", "probes"), help="this part only")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every disagreement")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        _child(args.child[0], args.child[1], int(args.child[2]))
        return 0
    designs = args.design or ["tagged", "wrapper"]
    parts = args.part or ["scenarios", "probes"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    import torch

    print(f"torch {torch.__version__}, load average {load:.1f} at start")
    if "scenarios" in parts:
        columns = ("agree", "false-device-error", "missed-error", "wrong-error", "wrong-device", "gap",
                   "changed-plain-cpu")
        counts = {design: _scenario_rows(design, args.verbose) for design in designs}
        print(f"{'design':<14} " + " ".join(f"{c:>18}" for c in columns))
        for design in designs:
            print(f"{design:<14} " + " ".join(f"{counts[design][c]:>18}" for c in columns))
    if "probes" in parts:
        rows = {design: _probe_rows(design) for design in designs}
        for name in _probes():
            print(f"{name:<52} " + " | ".join(f"{design}: {rows[design][name]}" for design in designs))
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.1f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
