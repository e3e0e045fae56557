"""Benchmark: what cuda-sim costs per torch operation, plain CPU and simulated side by side.

Each representative operation (elementwise, matmul, indexing, reductions, in-place, views,
factories, moves, autograd backward, an optimizer step, printing a tensor, a sparse product) runs on small
tensors, once on the plain CPU and once under ``cuda_sim.simulate()`` on ``cuda``, in the
same process, with the two interleaved over several rounds. It prints, per operation, the
median process CPU time per call in both and their ratio, then the median of the ratios.

    python benchmarks/sim_ops.py                      # every operation, 5 rounds
    python benchmarks/sim_ops.py --only matmul --only repr --rounds 9
    python benchmarks/sim_ops.py --profile repr       # cProfile of the simulated run of one op
    python benchmarks/sim_ops.py --floor elementwise  # plain / two no-op Python modes / simulated
    python benchmarks/sim_ops.py --design both        # plain / tagged storage (default) / wrapper prototype

``--design both`` compares the default design (a tagged CPU tensor) with the wrapper-tensor prototype
(``cuda_sim._wrapper_proto``, docs/cuda-sim.md "Design comparison"): each operation runs in a child
process measuring plain, tagged and wrapper interleaved; where the wrapper side kills the process
(autograd on a cuda-device tensor aborts a CPU build of torch) the child reruns without it and the
row says ``abort``.

One thread (``torch.set_num_threads(1)``), process time (``time.process_time``): on a shared
host the wall clock measures the neighbours. A benchmark, not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
import types as types_module
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "cuda-sim"))

import cuda_sim
import torch
from cuda_sim._function import _reenterable
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

Op = Callable[[], object]
Setup = Callable[[str], Op]


def _elementwise(device: str) -> Op:
    x, y = torch.randn(64, 64, device=device), torch.randn(64, 64, device=device)
    return lambda: x * y + 1


def _matmul(device: str) -> Op:
    x = torch.randn(64, 64, device=device)
    return lambda: x @ x + 1


def _indexing(device: str) -> Op:
    x = torch.randn(64, 64, device=device)
    index = torch.tensor([1, 5, 9], device=device)
    mask = torch.rand(64, device=device) > 0.5

    def op() -> object:
        return x[index], x[:, 1:3], x[mask]

    return op


def _index_put(device: str) -> Op:
    x = torch.zeros(64, 64, device=device)
    index = torch.tensor([1, 5, 9], device=device)

    def op() -> object:
        x[index] = 1.0
        x[0, 3] = 2.0
        return x

    return op


def _reductions(device: str) -> Op:
    x = torch.randn(64, 64, device=device)
    return lambda: (x.sum(dim=0), x.mean(), x.max(dim=1), x.norm())


def _inplace(device: str) -> Op:
    x = torch.zeros(64, 64, device=device)
    y = torch.ones(64, 64, device=device)

    def op() -> object:
        x.add_(y, alpha=0.5).mul_(0.5).clamp_(max=4.0)
        return x

    return op


def _views(device: str) -> Op:
    x = torch.randn(8, 16, 32, device=device)
    return lambda: (x.view(-1), x.transpose(0, 1), x.reshape(16, -1), x[0], x.unsqueeze(0).squeeze(0))


def _scalar_mix(device: str) -> Op:
    x = torch.randn(64, device=device)
    scalar = torch.tensor(2.0)  # a CPU 0-dim tensor: CUDA kernels accept it
    return lambda: x * scalar


def _factories(device: str) -> Op:
    return lambda: (torch.zeros(16, device=device), torch.ones(4, 4, device=device), torch.arange(8, device=device))


def _move(device: str) -> Op:
    x = torch.randn(16, 16)
    return lambda: x.to(device).float().cpu()


def _attributes(device: str) -> Op:
    x = torch.randn(4, device=device)
    return lambda: (x.device, x.is_cuda, x.shape, x.dtype, x.item() if x.numel() == 1 else x[0].item())


def _backward(device: str) -> Op:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(device)
    batch = torch.randn(16, 32, device=device)

    def op() -> object:
        model.zero_grad(set_to_none=True)
        loss = model(batch).pow(2).mean()
        loss.backward()
        return loss

    return op


def _optimizer_step(device: str) -> Op:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1)).to(device)
    for p in model.parameters():
        p.grad = torch.randn_like(p)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, foreach=True)
    return optimizer.step


def _train_step(device: str) -> Op:
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.LayerNorm(64), torch.nn.GELU(),
                                torch.nn.Linear(64, 10)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    batch = torch.randn(16, 32, device=device)
    target = torch.randint(0, 10, (16,), device=device)

    def op() -> object:
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(batch), target)
        loss.backward()
        optimizer.step()
        return loss

    return op


def _repr(device: str) -> Op:
    state = torch.get_rng_state()
    x = torch.randn(3, 4, device=device)
    return lambda: (repr(state), str(x), f"{x[0, 0]:.3f}")


def _sparse(device: str) -> Op:
    indices = torch.tensor([[0, 1, 2], [1, 2, 0]])
    s = torch.sparse_coo_tensor(indices, torch.ones(3), (3, 3), device=device).coalesce()
    d = torch.randn(3, 4, device=device)
    return lambda: (torch.sparse.mm(s, d), s + s)


OPS: dict[str, Setup] = {
    "elementwise": _elementwise, "matmul": _matmul, "indexing": _indexing, "index_put": _index_put,
    "reductions": _reductions, "inplace": _inplace, "views": _views, "cpu_scalar_mix": _scalar_mix,
    "factories": _factories, "move": _move, "attributes": _attributes, "backward": _backward,
    "optimizer_step": _optimizer_step, "train_step": _train_step, "repr": _repr, "sparse": _sparse,
}


def _calls_for(op: Op, budget: float) -> int:
    """Calls that take about ``budget`` seconds of CPU time (after a warm-up: a first call that
    loads something once would otherwise leave a handful of calls per round, each round then
    dominated by what its first call costs)."""
    for _ in range(_WARM_UP):
        op()
    calls = 1
    while True:
        start = time.process_time()
        for _ in range(calls):
            op()
        spent = time.process_time() - start
        if spent >= budget / 4 or calls >= 1 << 20:
            return max(1, int(calls * budget / max(spent, 1e-9)))
        calls *= 4


_WARM_UP = 20


def _per_call(op: Op, calls: int) -> float:
    start = time.process_time()
    for _ in range(calls):
        op()
    return (time.process_time() - start) / calls


def measure(name: str, rounds: int, budget: float) -> tuple[float, float]:
    setup = OPS[name]
    plain_op = setup("cpu")
    with cuda_sim.simulate():
        sim_op = setup("cuda")
        sim_calls = _calls_for(sim_op, budget)
    plain_calls = _calls_for(plain_op, budget)
    plain: list[float] = []
    simulated: list[float] = []
    for round_ in range(rounds):
        order = ("plain", "sim") if round_ % 2 == 0 else ("sim", "plain")
        for which in order:
            if which == "plain":
                plain.append(_per_call(plain_op, plain_calls))
            else:
                with cuda_sim.simulate():
                    simulated.append(_per_call(sim_op, sim_calls))
    return statistics.median(plain), statistics.median(simulated)


def _design(name: str) -> Callable[[], AbstractContextManager[None]]:
    if name == "plain":
        return contextlib.nullcontext
    if name == "tagged":
        return cuda_sim.simulate
    from cuda_sim._wrapper_proto import simulate_wrapped

    return simulate_wrapped


def measure_designs(name: str, rounds: int, budget: float, designs: list[str]) -> dict[str, float]:
    """Per-call CPU time of ``name`` plain and under each design, interleaved round by round."""
    ops: dict[str, Op] = {}
    calls: dict[str, int] = {}
    for design in ["plain", *designs]:
        with _design(design)():
            ops[design] = OPS[name]("cpu" if design == "plain" else "cuda")
            calls[design] = _calls_for(ops[design], budget)
    times: dict[str, list[float]] = {design: [] for design in ops}
    for round_ in range(rounds):
        order = list(ops) if round_ % 2 == 0 else list(reversed(ops))
        for design in order:
            with _design(design)():
                times[design].append(_per_call(ops[design], calls[design]))
    return {design: statistics.median(values) for design, values in times.items()}


def compare_designs(names: list[str], rounds: int, budget: float) -> None:
    print(f"{'operation':<16} {'plain us':>10} {'tagged us':>10} {'ratio':>7} {'wrapper us':>11} {'ratio':>7}")
    ratios: dict[str, list[float]] = {"tagged": [], "wrapper": []}
    for name in names:
        figures, failure = _child_measure(name, rounds, budget, ["tagged", "wrapper"])
        wrapper = failure
        if figures is None:
            figures, _ = _child_measure(name, rounds, budget, ["tagged"])
        else:
            ratios["wrapper"].append(figures["wrapper"] / figures["plain"])
            wrapper = f"{figures['wrapper'] * 1e6:>11.1f} {figures['wrapper'] / figures['plain']:>6.2f}x"
        if figures is None:
            print(f"{name:<16} (the tagged design failed too)")
            continue
        ratios["tagged"].append(figures["tagged"] / figures["plain"])
        print(f"{name:<16} {figures['plain'] * 1e6:>10.1f} {figures['tagged'] * 1e6:>10.1f} "
              f"{figures['tagged'] / figures['plain']:>6.2f}x {wrapper:>19}", flush=True)
    medians = {d: f"{statistics.median(r):.2f}x" if r else "n/a" for d, r in ratios.items()}
    print(f"{'median':<16} {'':>10} {'':>10} {medians['tagged']:>7} {'':>11} {medians['wrapper']:>7} "
          f"(wrapper: of the {len(ratios['wrapper'])} operations it ran)")


def _child_measure(name: str, rounds: int, budget: float,
                   designs: list[str]) -> tuple[dict[str, float] | None, str]:
    """The figures, or None and why: ``abort`` (killed by a signal) or the exception's type."""
    command = [sys.executable, __file__, "--child-measure", name, "--rounds", str(rounds), "--budget", str(budget),
               *[arg for design in designs for arg in ("--design", design)]]
    proc = subprocess.run(command, capture_output=True, text=True, check=False)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if proc.returncode == 0 and lines:
        return json.loads(lines[-1]), ""
    if proc.returncode < 0:
        return None, "abort"
    last = (proc.stderr.strip().splitlines() or ["error"])[-1]
    return None, last.split(":")[0][:19]


def profile(name: str, budget: float) -> None:
    with cuda_sim.simulate():
        op = OPS[name]("cuda")
        calls = _calls_for(op, budget)
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            op()
        profiler.disable()
    print(f"{name}: {calls} calls under the simulation")
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


class _NoOpFunctionMode(TorchFunctionMode):
    """What any TorchFunctionMode costs: re-enter and run the function (as the simulation does;
    the hand-written builtins that ignore the skip-one-hop flag run with the mode off)."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        if not isinstance(func, (types_module.FunctionType, types_module.MethodType)) and not _reenterable(func):
            return func(*args, **(kwargs or {}))
        torch._C._push_on_torch_function_stack(self)
        try:
            return torch._C._skip_one_hop_torch_function(func, types, args, kwargs or {})
        finally:
            torch._C._pop_torch_function_stack()


class _NoOpDispatchMode(TorchDispatchMode):
    """What any TorchDispatchMode costs: run the operator (torch functions off, as the simulation)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        with torch._C.DisableTorchFunction():
            return func._op(*args, **(kwargs or {}))


def floor(name: str, rounds: int, budget: float) -> None:
    """The operation plain, under two no-op modes of the simulation's two kinds, and simulated:
    the part of the cost any pair of Python modes has, and the part that is the simulation's."""
    plain_op = OPS[name]("cpu")
    with cuda_sim.simulate():
        sim_op = OPS[name]("cuda")
    sides: dict[str, list[float]] = {"plain": [], "no-op modes": [], "simulated": []}
    calls = _calls_for(plain_op, budget)
    with cuda_sim.simulate():
        sim_calls = _calls_for(sim_op, budget)
    for _ in range(rounds):
        sides["plain"].append(_per_call(plain_op, calls))
        with _NoOpFunctionMode(), _NoOpDispatchMode():
            sides["no-op modes"].append(_per_call(plain_op, sim_calls))
        with cuda_sim.simulate():
            sides["simulated"].append(_per_call(sim_op, sim_calls))
    plain = statistics.median(sides["plain"])
    for side, values in sides.items():
        value = statistics.median(values)
        print(f"{name:<16} {side:<12} {value * 1e6:>10.1f} us {value / plain:>6.2f}x")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", choices=sorted(OPS), help="this operation only (repeatable)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved plain/simulated rounds (default 5)")
    parser.add_argument("--budget", type=float, default=0.2,
                        help="CPU seconds per round and side (default 0.2)")
    parser.add_argument("--profile", choices=sorted(OPS), help="print a cProfile of the simulated run instead")
    parser.add_argument("--floor", choices=sorted(OPS),
                        help="compare with two no-op modes instead (what any Python mode pair costs)")
    parser.add_argument("--design", action="append", choices=("tagged", "wrapper", "both"),
                        help="both: plain / tagged storage (default design) / wrapper-tensor prototype side by side")
    parser.add_argument("--child-measure", choices=sorted(OPS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    if args.child_measure:
        figures = measure_designs(args.child_measure, args.rounds, args.budget, args.design or ["tagged"])
        print(json.dumps(figures), flush=True)
        return 0
    if args.design and args.design != ["tagged"]:
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(f"torch {torch.__version__}, 1 thread, {args.rounds} rounds, load average {load:.1f} at start")
        compare_designs(args.only or list(OPS), args.rounds, args.budget)
        if hasattr(os, "getloadavg"):
            print(f"load average {os.getloadavg()[0]:.1f} at end")
        return 0
    if args.profile:
        profile(args.profile, args.budget * 5)
        return 0
    if args.floor:
        floor(args.floor, args.rounds, args.budget)
        return 0
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"torch {torch.__version__}, 1 thread, {args.rounds} rounds, load average {load:.1f} at start")
    print(f"{'operation':<16} {'plain us':>10} {'sim us':>10} {'ratio':>7}")
    ratios = []
    for name in args.only or OPS:
        plain, simulated = measure(name, args.rounds, args.budget)
        ratios.append(simulated / plain)
        print(f"{name:<16} {plain * 1e6:>10.1f} {simulated * 1e6:>10.1f} {simulated / plain:>6.2f}x", flush=True)
    print(f"{'median':<16} {'':>10} {'':>10} {statistics.median(ratios):>6.2f}x")
    if hasattr(os, "getloadavg"):
        print(f"load average {os.getloadavg()[0]:.1f} at end")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
