"""TorchScript under the simulation: torch.jit.trace (with its trace check) and torch.jit.script.

Real CUDA and plain CPU trace a module that adds a Python float (pytorch-ignite's traced
create_supervised_* tests): the tracer records the scalar as a wrapped-number tensor, which a Python
dispatch mode receives as a Python number (cuda_sim/_numbers.py); the simulation must still run
the operator (gap G5: "Expected a value of type 'Tensor' ... found type 'float'" in aten::view and
aten::_local_scalar_dense of the trace check).

A device mix inside TorchScript raises RuntimeError as on a GPU. TorchScript's interpreter drops the
message of an error raised by any Python dispatch mode (plain torch does the same with its own modes);
the simulation puts it back (cuda_sim/_script.py). Device reads in scripted code: the same module."""

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


def _script(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        warnings.simplefilter("ignore", FutureWarning)
        return torch.jit.script(fn)


def _divide_by_other(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a / b.to(a)


def _add_type_as(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b.type_as(a)


def _to_device_of(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a * b.to(device=a.device, dtype=a.dtype)


@pytest.mark.parametrize("fn", [_divide_by_other, _add_type_as, _to_device_of])
def test_scripted_code_takes_the_device_of_another_tensor(sim, fn):
    # torchkbnufft: grid_size.to(omega) in scripted code stayed on the CPU (C++ reads omega's real
    # device), and the next operator failed with an empty "RuntimeError:"
    scripted = _script(fn)
    a, b = torch.randn(3, device="cuda"), torch.tensor([1, 2, 3])
    out = scripted(a, b)
    assert out.device == torch.device("cuda", 0) and out.dtype == torch.float32
    assert torch.equal(out.cpu(), fn(a.cpu(), b))
    assert scripted(a.cpu(), b).device == torch.device("cpu")


def _to_device(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a - b.to(a.device)


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
@pytest.mark.parametrize("fn", [_divide_by_other, _add_type_as, _to_device_of, _to_device])
def test_scripted_conversion_to_the_device_of_a_same_dtype_tensor_is_not_simulated(sim, fn, dtype):
    # a GPU moves b; C++ reads a's real device, the CPU, and returns b itself: no _to_copy to guess
    # from, and the next operator met cuda and cpu (a false device error before)
    from cuda_sim import NotSimulatedError

    scripted = _script(fn)
    a, b = torch.ones(3, dtype=dtype, device="cuda"), torch.tensor([1, 2, 3], dtype=dtype)
    with pytest.raises(NotSimulatedError, match=r"TorchScript \S+ converts a tensor to another tensor's device "
                                                r"\(.*line \d+\): where the dtype does not change"):
        scripted(a, b)


def _mixed_devices(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b.to(a) * 2


@pytest.mark.parametrize("dtype", [torch.float32, torch.int64])
def test_a_scripted_conversion_on_cpu_tensors_is_plain_torchscript(dtype):
    import cuda_sim

    scripted = _script(_mixed_devices)
    a, b = torch.ones(3, dtype=dtype), torch.tensor([1, 2, 3], dtype=dtype)
    bad = torch.ones(2, dtype=dtype)
    plain = scripted(a, b)
    with pytest.raises(RuntimeError) as plain_error:
        scripted(a, bad)
    with cuda_sim.simulate():
        simulated = scripted(a, b)
        with pytest.raises(RuntimeError) as simulated_error:
            scripted(a, bad)
    assert simulated.device == plain.device and simulated.dtype == plain.dtype and torch.equal(simulated, plain)
    assert type(simulated_error.value) is type(plain_error.value)
    assert str(simulated_error.value) == str(plain_error.value)


def _is_cuda(x: torch.Tensor) -> bool:
    return x.is_cuda


def _device_type(x: torch.Tensor) -> str:
    return x.device.type


def _to_the_cpu(x: torch.Tensor) -> torch.Tensor:
    return x.cpu()


def _cuda(x: torch.Tensor) -> torch.Tensor:
    return x.cuda()


@pytest.mark.parametrize(("fn", "reason"), [
    (_is_cuda, r"TorchScript \S*_is_cuda reads x.is_cuda \(.*\): the interpreter reads the tensor's real device, the CPU"),
    (_device_type, r"TorchScript \S*_device_type uses x.device in prim::type .*the interpreter reads"),
    (_to_the_cpu, r"TorchScript \S*_to_the_cpu moves a tensor to the CPU .*returns it, not a copy on the CPU"),
])
def test_scripted_device_reads_the_simulation_cannot_follow_are_not_simulated(sim, fn, reason):
    from cuda_sim import NotSimulatedError

    scripted = _script(fn)
    with pytest.raises(NotSimulatedError, match=reason):
        scripted(torch.ones(2, device="cuda"))
    assert str(scripted(torch.ones(2))) == str(fn(torch.ones(2)))  # CPU tensors: plain TorchScript


def test_scripted_cuda_placement_is_not_simulated(sim):
    from cuda_sim import NotSimulatedError

    with pytest.raises(NotSimulatedError, match=r"places a tensor on cuda itself"):
        _script(_cuda)(torch.ones(2))


@pytest.mark.parametrize("where", ["interpreter", "dispatch mode"])
def test_cuda_placement_is_not_simulated_whichever_path_raised_it(where):
    # Whether C++ raises "no driver" itself (its text in the interpreter's message) or through the simulation's
    # dispatch mode (the interpreter drops the text; only the mode's error keeps it) depends on what ran before
    # in the process: both must give the same NotSimulatedError.
    from cuda_sim import NotSimulatedError
    from cuda_sim._script import _restored

    no_driver = RuntimeError("Found no NVIDIA driver on your system.")
    interpreter = "The following operation failed in the TorchScript interpreter.\nRuntimeError: "
    if where == "interpreter":
        error, raised = RuntimeError(interpreter + str(no_driver)), None
    else:
        error, raised = RuntimeError(interpreter), no_driver
    restored = _restored(error, raised, _script(_cuda))
    assert isinstance(restored, NotSimulatedError)
    assert "places a tensor on cuda itself" in str(restored)


def _add(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a + b


def test_a_device_mix_in_scripted_code_keeps_its_message(sim):
    # the interpreter drops the text of an error a Python mode raises ("RuntimeError: " and nothing)
    with pytest.raises(RuntimeError) as raised:
        _script(_add)(torch.ones(2, device="cuda"), torch.ones(2))
    text = str(raised.value)
    assert text.startswith("The following operation failed in the TorchScript interpreter.")
    assert text.rstrip().endswith("RuntimeError: Expected all tensors to be on the same device, but found at least "
                                  "two devices, cuda:0 and cpu!")


class ChecksItsWeight(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = torch.nn.Linear(2, 2)

    def forward(self, n: int) -> torch.Tensor:
        if self.inner.weight.is_cuda:
            return torch.ones(n)
        return torch.zeros(n)


def test_a_scripted_module_reading_its_own_cuda_parameters_is_not_simulated(sim):
    from cuda_sim import NotSimulatedError

    module = _script(ChecksItsWeight())
    assert module(2).sum() == 0  # on the CPU: plain TorchScript
    module.cuda()
    with pytest.raises(NotSimulatedError, match=r"reads x\.is_cuda"):
        module(2)


def _interp_like(image: torch.Tensor, omega: torch.Tensor) -> torch.Tensor:
    # torchkbnufft _nufft/interp.py table_interp_one_batch: tensors made on image.device, converted with .to(omega)
    grid_size = torch.tensor(image.shape[2:], dtype=torch.long, device=image.device)
    tm = omega / (2 * 3.14159 / grid_size.to(omega).unsqueeze(-1))
    k = torch.zeros(image.shape[0], tm.shape[-1], dtype=image.dtype, device=image.device)
    return k + tm.sum(0)


def test_what_scripted_code_computes_from_guesses_is_a_guess_too(sim):
    scripted = _script(_interp_like)
    image, omega = torch.randn(1, 1, 4, 4), torch.randn(2, 5)
    expected = _interp_like(image, omega)
    out = scripted(image.cuda(), omega.cuda())
    assert out.device == torch.device("cuda", 0) and torch.allclose(out.cpu(), expected)
    assert scripted(image, omega).device == torch.device("cpu")  # after a cuda call, CPU inputs stay on the CPU
