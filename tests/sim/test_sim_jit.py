"""TorchScript under the simulation: torch.jit.trace (with its trace check) and torch.jit.script.

Real CUDA and plain CPU trace a module that adds a Python float (pytorch-ignite's traced
create_supervised_* tests): the tracer records the scalar as a wrapped-number tensor, which a Python
dispatch mode receives as a Python number (cuda_sim/_numbers.py); the simulation must still run
the operator (gap G5: "Expected a value of type 'Tensor' ... found type 'float'" in aten::view and
aten::_local_scalar_dense of the trace check).

A device mix inside TorchScript raises RuntimeError as on a GPU, but TorchScript's interpreter drops
the message of an error raised by any Python dispatch mode (plain torch does the same with its own
modes), so only the type is checked there."""

from __future__ import annotations

import warnings

import pytest
import torch

pytestmark = pytest.mark.filterwarnings(r"ignore:`torch\.jit\.\w+` is deprecated:DeprecationWarning")


class AddsAFloat(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(1, 1, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x) + 0.0


def _trace(module: torch.nn.Module, example: torch.Tensor) -> torch.jit.ScriptModule:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", torch.jit.TracerWarning)
        return torch.jit.trace(module, example)  # check_trace=True: re-runs the graph and compares


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_trace_a_module_adding_a_python_float(sim, device):
    model = AddsAFloat().to(device)
    traced = _trace(model, torch.randn(1, device=device))
    x = torch.randn(4, 1, device=device)
    out = traced(x)
    assert out.device == (torch.device("cuda", 0) if device == "cuda" else torch.device("cpu"))
    assert torch.allclose(out.cpu(), model(x).cpu())


def test_traced_graph_keeps_constants_on_the_cpu_and_outputs_on_cuda(sim):
    def f(x: torch.Tensor) -> torch.Tensor:
        return (x * 2.5 + 1).view(-1)

    traced = torch.jit.trace(f, torch.ones(2, 2, device="cuda"))
    out = traced(torch.ones(3, 2, device="cuda"))
    assert out.device == torch.device("cuda", 0) and torch.equal(out.cpu(), torch.full((6,), 3.5))


def test_traced_module_refuses_a_device_mix(sim):
    traced = _trace(AddsAFloat().cuda(), torch.randn(1, device="cuda"))
    with pytest.raises(RuntimeError):
        traced(torch.randn(2, 1))  # CPU input, cuda weight


def test_script_function_and_module_on_simulated_cuda(sim):
    @torch.jit.script
    def scaled_sum(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * 2.0 + y

    out = scaled_sum(torch.ones(2, device="cuda"), torch.ones(2, device="cuda"))
    assert out.device == torch.device("cuda", 0) and torch.equal(out.cpu(), torch.full((2,), 3.0))
    with pytest.raises(RuntimeError):
        scaled_sum(torch.ones(2, device="cuda"), torch.ones(2))
    scripted = torch.jit.script(torch.nn.Linear(2, 3).cuda())
    assert scripted(torch.ones(1, 2, device="cuda")).device == torch.device("cuda", 0)
    assert all(p.device.type == "cuda" for p in scripted.parameters())


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_trace_records_the_parts_of_a_convolution(sim, device):
    # einops' test_torch_layer: tracing a CPU model with a Conv2d failed under the simulation with
    # "Cannot insert a Tensor that requires grad as a constant" (the tracer never saw _convolution)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ConvTranspose2d(2, 1, 2)).to(device)
    traced = _trace(model, torch.randn(1, 1, 5, 5, device=device))
    kinds = [node.kind() for node in traced.inlined_graph.nodes() if node.kind().startswith("aten::")]
    assert kinds == ["aten::_convolution", "aten::_convolution"]
    x = torch.randn(2, 1, 5, 5, device=device)
    out = traced(x)
    assert out.device == x.device and torch.allclose(out.cpu(), model(x).cpu())
    out.sum().backward()
    assert model[0].weight.grad is not None and model[0].weight.grad.device == x.device
