"""Classes of failures the conformance corpus found on libraries' own suites (docs/conformance.md, "Results:
the 15-library corpus"), each checked as a class, against what real CUDA does."""

from __future__ import annotations

import pytest
import torch


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
