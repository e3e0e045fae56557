"""Classes of failures the conformance corpus found on libraries' own suites (docs/conformance.md, "Results:
the 16-library corpus"), each checked as a class, against what real CUDA does."""

from __future__ import annotations

import pytest
import torch
from cuda_sim import NotSimulatedError

_LIBRARY = torch.library.Library("cuda_sim_corpus", "DEF")
_LIBRARY.define("scale(Tensor x, float s) -> Tensor")
_LIBRARY.define("cuda_only(Tensor x) -> Tensor")


@torch.library.impl("cuda_sim_corpus::scale", "default")  # CompositeExplicitAutograd: every backend
def _scale(x: torch.Tensor, s: float) -> torch.Tensor:
    return x * s


_LIBRARY.impl("cuda_only", lambda x: x, "CUDA")  # a CUDA kernel (an extension's): not simulated
_LIBRARY.impl("cuda_only", lambda x: x, "CPU")
_LIBRARY.define("cpu_only(Tensor x) -> Tensor")
_LIBRARY.impl("cpu_only", lambda x: x, "CPU")  # a GPU refuses it: "Could not run ... from the 'CUDA' backend"


@torch.library.custom_op("cuda_sim_corpus::twice", mutates_args=())  # no device_types: device-generic
def _twice(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@_twice.register_fake
def _(x: torch.Tensor) -> torch.Tensor:
    return torch.empty_like(x)


# C4. torch/library.py: impl(..., "default") registers CompositeExplicitAutograd, a kernel the dispatcher runs
# for cuda tensors too (custom_op without device_types does the same); optimum-quanto's quantize ops are such.
@pytest.mark.parametrize("call", [lambda x: torch.ops.cuda_sim_corpus.scale(x, 2.0), _twice],
                         ids=["library.impl default", "custom_op"])
def test_a_device_generic_custom_operator_runs_on_simulated_cuda(sim, call):
    out = call(torch.ones(2, device="cuda"))
    assert out.device == torch.device("cuda:0") and out.cpu().tolist() == [2.0, 2.0]
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        out + torch.ones(2)  # its output is a cuda tensor like any other
    assert call(torch.ones(2)).device == torch.device("cpu")


def test_a_custom_operator_with_a_cuda_kernel_is_still_not_simulated(sim):
    with pytest.raises(NotSimulatedError, match=r"the CUDA kernel of custom operator cuda_sim_corpus::cuda_only \(its "
                       "own CUDA code"):
        torch.ops.cuda_sim_corpus.cuda_only(torch.ones(2, device="cuda"))


def test_a_custom_operator_without_a_kernel_a_gpu_could_run_says_why_it_is_not_simulated(sim):
    with pytest.raises(NotSimulatedError, match=r"custom operator cuda_sim_corpus::cpu_only on cuda:0: it has no CUDA "
                       "kernel and no device-generic one"):
        torch.ops.cuda_sim_corpus.cpu_only(torch.ones(2, device="cuda"))
    assert torch.ops.cuda_sim_corpus.cpu_only(torch.ones(2)).device == torch.device("cpu")


# C1. functorch's wrappers (GradTrackingTensor, BatchedTensor) report the device of the tensor they wrap
# (aten/src/ATen/functorch/TensorWrapper.cpp, BatchedTensorImpl.cpp): a function that builds tensors on
# x.device runs under every transform on a GPU.
def _f(x: torch.Tensor) -> torch.Tensor:
    assert x.device == torch.device("cuda:0")
    return x * torch.ones(3, device=x.device)


@pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")  # torch.func.jvp's own
@pytest.mark.parametrize("transform", [
    lambda x: torch.func.jvp(_f, (x,), (torch.ones_like(x),))[1],
    lambda x: torch.func.grad(lambda y: _f(y).sum())(x),
    lambda x: torch.func.vmap(_f)(x.unsqueeze(0)),
    lambda x: torch.func.vjp(_f, x)[0],
], ids=["jvp", "grad", "vmap", "vjp"])
def test_torch_func_transforms_see_the_simulated_device(sim, transform):
    assert transform(torch.randn(3, device="cuda")).device == torch.device("cuda:0")


# C6. torch/csrc/utils/tensor_new.cpp sparse_coo_tensor_ctor: values converted to dtype and device, indices
# copied to the values' device, then built: CPU inputs with device="cuda" make a cuda tensor (ptwt's sparse
# wavelet matrices, sparse_math.py:508).
@pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")
def test_a_sparse_factory_moves_its_cpu_inputs_to_the_device_it_is_given(sim):
    indices, values = torch.tensor([[0, 1], [1, 0]]), torch.ones(2, dtype=torch.long)
    t = torch.sparse_coo_tensor(indices, values, size=(2, 2), dtype=torch.float64, device="cuda")
    assert t.device == torch.device("cuda:0") and t.dtype == torch.float64
    assert (t.to_dense() @ torch.ones(2, 1, dtype=torch.float64, device="cuda")).cpu().flatten().tolist() == [1.0, 1.0]
    assert indices.device == torch.device("cpu")  # the caller's tensors stay where they were
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        t.to_dense() + torch.ones(2, 2, dtype=torch.float64)


# C7. An in-place sparse op reallocates the tensor's indices and values (aten/src/ATen/native/sparse/
# SparseTensorMath.cpp add_out_sparse: the result is resized and refilled): on a GPU they are new cuda
# memory, so the tensor stays on cuda (ptwt accumulates its orthogonalized rows with `result += addition`).
@pytest.mark.filterwarnings("ignore:Sparse invariant checks:UserWarning")
def test_an_in_place_sparse_op_keeps_the_tensor_on_its_device(sim):
    def point(row: int) -> torch.Tensor:
        return torch.sparse_coo_tensor(torch.tensor([[row], [0]]), torch.ones(1), size=(4, 4), device="cuda")

    result = point(0)
    result += point(1)
    result += point(2)  # the second add used to meet a tensor that had fallen back to the CPU
    assert result.device == torch.device("cuda:0")
    assert result.to_dense()[:3, 0].cpu().tolist() == [1.0, 1.0, 1.0]


# A wrapper subclass made from simulated CUDA data (optimum-quanto's QTensors: _make_wrapper_subclass(...,
# device=data.device)) held a real CUDA device in C++: the first autograd.Function over it asked the absent CUDA
# backend for a stream and the process aborted (what the C4 attempt met in quanto's qconv2d tests). Run in a
# child process: before the fix the interpreter dies.
_WRAPPER_AUTOGRAD = """
import torch, cuda_sim
cuda_sim.install()

class Wrapped(torch.Tensor):
    @staticmethod
    def __new__(cls, data):
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, strides=data.stride(), dtype=data.dtype,
                                                   device=data.device, requires_grad=data.requires_grad)

    def __init__(self, data):
        self._data = data

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        unwrap = lambda a: a._data if isinstance(a, Wrapped) else a
        return func(*[unwrap(a) for a in args], **{k: unwrap(v) for k, v in (kwargs or {}).items()})

class Double(torch.autograd.Function):
    @staticmethod
    def forward(ctx, t):
        return Wrapped(t * 2)

    @staticmethod
    def backward(ctx, grad):
        return grad * 2

x = torch.randn(3, device="cuda", requires_grad=True)
y = Double.apply(x)
assert type(y) is Wrapped and y.device == torch.device("cuda", 0) and y.is_cuda, (type(y), y.device)
assert Wrapped(torch.ones(2)).device == torch.device("cpu")
print("ok")
"""


def test_a_wrapper_subclass_of_simulated_cuda_data_survives_autograd(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    cuda_sim_root = Path(__file__).resolve().parents[2] / "cuda-sim"
    script = tmp_path / "wrapper.py"
    script.write_text(_WRAPPER_AUTOGRAD)
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                          env={**__import__("os").environ, "PYTHONPATH": str(cuda_sim_root)})
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


# C5. optimum-quanto's weight tensors (qbits.py __torch_dispatch__): `_to_copy` reads the target device from its
# kwargs and converts its layout when the device type changes; a weight wraps a PackedTensor, itself a wrapper made
# in the handler from `data.device`. On a GPU `.to("cuda")` gives the handler cuda:0 and every layer says cuda.
class _Packed(torch.Tensor):
    @staticmethod
    def __new__(cls, data: torch.Tensor) -> _Packed:
        return torch.Tensor._make_wrapper_subclass(cls, data.shape, dtype=data.dtype, device=data.device)

    def __init__(self, data: torch.Tensor) -> None:
        self._data = data

    def __tensor_flatten__(self) -> tuple[list[str], None]:
        return ["_data"], None

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = kwargs or {}
        if func is torch.ops.aten._to_copy.default:
            return _Packed(func(args[0]._data, **kwargs))
        if func is torch.ops.aten.detach.default:
            return _Packed(args[0]._data.detach())
        raise NotImplementedError(func)


_SEEN: list[str] = []


class _Weight(_Packed):

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
        kwargs = dict(kwargs or {})
        t = args[0]
        if func is torch.ops.aten._to_copy.default:
            device = kwargs.pop("device", t.device)
            _SEEN.append(f"{t.device.type}->{device.type}")
            inner = func(t._data, device=device, **kwargs)
            return _Weight(inner)
        return super().__torch_dispatch__(func, types, args, kwargs)


def test_a_wrapper_subclass_moved_to_cuda_sees_the_simulated_target_and_nests(sim):
    _SEEN.clear()
    weight = _Weight(_Packed(torch.ones(4)))
    moved = weight.to("cuda")
    assert _SEEN == ["cpu->cuda"]  # the handler is given the target a GPU would give it
    assert type(moved) is _Weight and moved.device == torch.device("cuda", 0)
    assert type(moved._data) is _Packed and moved._data.device == torch.device("cuda", 0)  # made in the handler
    assert moved._data._data.device == torch.device("cuda", 0)


# An aten operator with a CUDA kernel and none for the CPU (optimum-quanto's tinygemm packing on cuda): a GPU runs it,
# the simulation cannot; it says so instead of the CPU backend's NotImplementedError.
def test_an_aten_operator_without_a_cpu_kernel_is_not_simulated_on_cuda(sim):
    from cuda_sim import NotSimulatedError

    with pytest.raises(NotSimulatedError, match=r"_convert_weight_to_int4pack on cuda:0: it has a CUDA kernel and no "
                       "CPU one"):
        torch.ops.aten._convert_weight_to_int4pack(torch.zeros(8, 8, dtype=torch.uint8, device="cuda"), 8)
    with pytest.raises(NotImplementedError, match="from the 'CPU' backend"):  # on the CPU: torch's own error
        torch.ops.aten._convert_weight_to_int4pack(torch.zeros(8, 8, dtype=torch.uint8), 8)


def test_a_wrapper_subclass_of_simulated_cuda_data_is_not_counted_twice(sim):
    inner = torch.ones(1024, device="cuda")
    before = torch.cuda.memory_allocated()
    wrapped = _Packed(inner)
    assert wrapped.device == torch.device("cuda", 0) and torch.cuda.memory_allocated() == before
