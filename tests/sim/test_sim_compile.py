"""torch.compile under the simulation (cuda_sim/_compile.py): compiled callables, fullgraph=True
included, run eagerly while a simulation is active, so both modes see every operator; outside it
dynamo compiles as usual, and torch.device is untouched (dynamo's rules, isinstance, pickling).

Real CUDA (torch 2.13): fullgraph=True compiles one graph; a device mix raises TorchRuntimeError
("Tensor device mismatch ... Expected all tensors to be on the same device, but found at least two
devices, cuda:0 and cpu!", torch/_dynamo/utils.py FakeTensorDeviceMismatchError), whose text contains
the eager message the simulation raises."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap

import pytest
import torch
from cuda_sim import simulate

from tests.checkout import SOURCE_PATH

TI = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _counting_backend() -> tuple[list[int], object]:
    graphs: list[int] = []

    def backend(gm: torch.fx.GraphModule, example_inputs: list[torch.Tensor]) -> object:
        graphs.append(len(gm.graph.nodes))
        return gm.forward

    return graphs, backend


def test_fullgraph_compiled_function_runs_on_simulated_cuda(sim):
    graphs, backend = _counting_backend()
    f = torch.compile(lambda x: x.float() * 2, fullgraph=True, backend=backend)
    x = torch.ones(3, dtype=torch.bfloat16, device="cuda")
    out = f(x)
    assert out.device == torch.device("cuda", 0) and out.dtype == torch.float32
    assert torch.equal(out.cpu(), torch.full((3,), 2.0))
    assert graphs == []  # run eagerly: both simulation modes saw each operator


def test_compiled_device_mix_raises_the_device_error(sim):
    f = torch.compile(lambda x, y: x + y, fullgraph=True)
    with pytest.raises(RuntimeError, match=TI.replace("!", "")):
        f(torch.ones(2, device="cuda"), torch.ones(2))


def test_compiled_module_trains_on_simulated_cuda(sim):
    model = torch.nn.Sequential(torch.nn.Linear(4, 4), torch.nn.ReLU(), torch.nn.Linear(4, 1)).cuda()
    compiled = torch.compile(model, fullgraph=True)
    loss = compiled(torch.randn(8, 4, device="cuda")).sum()
    loss.backward()
    assert loss.device.type == "cuda" and all(p.grad.device.type == "cuda" for p in model.parameters())
    with pytest.raises(RuntimeError, match="same device"):
        compiled(torch.randn(8, 4))


def test_torch_device_index_inside_compiled_code(sim):
    f = torch.compile(lambda x: x.to(torch.device(0)) + torch.ones(1, device=torch.device(0)), fullgraph=True)
    assert f(torch.ones(2)).device == torch.device("cuda", 0)


def test_outside_the_simulation_dynamo_compiles_and_torch_device_is_untouched():
    device_type = torch.device
    with simulate():
        assert torch.device(0) == torch.device("cuda", 0)
    assert torch.device is device_type and isinstance(torch.device("cpu", 0), torch.device)
    assert pickle.loads(pickle.dumps(torch.device("cuda", 0))) == torch.device("cuda", 0)
    graphs, backend = _counting_backend()

    def f(x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.device("cpu")) * 2 + torch.ones(1, device=torch.device("cpu"))

    compiled = torch.compile(f, fullgraph=True, backend=backend)
    assert torch.equal(compiled(torch.ones(2)), torch.full((2,), 3.0))
    assert len(graphs) == 1  # a real graph: torch.device calls traced with dynamo's own rules
    import torch._dynamo.eval_frame as eval_frame

    assert eval_frame._stance.stance == "default"


def test_a_stance_the_program_sets_is_left_alone():
    import torch._dynamo.eval_frame as eval_frame

    with simulate():
        assert eval_frame._stance.stance == "force_eager"
        torch.compiler.set_stance("eager_on_recompile")
    try:
        assert eval_frame._stance.stance == "eager_on_recompile"
    finally:
        torch.compiler.set_stance("default")


def test_dynamo_imported_after_the_simulation_started():
    """The simulation never imports torch._dynamo: the stance is set when the program imports it."""
    script = textwrap.dedent("""
        import sys
        import cuda_sim
        cuda_sim.install()
        import torch
        assert "torch._dynamo" not in sys.modules
        f = torch.compile(lambda x, y: x * y, fullgraph=True)
        out = f(torch.ones(2, device="cuda"), torch.ones(2, device="cuda"))
        assert out.device == torch.device("cuda", 0), out.device
        try:
            f(torch.ones(2, device="cuda"), torch.ones(2))
        except RuntimeError as error:
            print("raised:", error)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": SOURCE_PATH}, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"raised: {TI}" in done.stdout
