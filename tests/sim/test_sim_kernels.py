"""The kernels' own device checks (cuda_sim/_composite.py, _kernels.py) say what the installed
torch says: every constant fragment of their messages is read back from libtorch."""

from __future__ import annotations

import mmap
import os

import pytest
import torch
from cuda_sim import _composite, _kernels, _out

FRAGMENTS = (
    # _composite.py
    " Device, but got tensor with ", "torch.take_along_dim():",
    "quantile() q tensor must be on the same device as the input tensor",
    "quantile() out tensor must be on the same device as the input tensor",
    "stft input and window must be on the same device but got self on ", " and window on ",
    "istft input and window must be on the same device but got self on ",
    "multi_dot(): all tensors must be on the same device but tensor 0 is on ",
    "multi_dot(): expected out tensor to be on device ",
    "tensordot: Expected the output and input tensors to be on the same device, but got the output tensor on ",
    ", input tensor a on ", ", and input tensor b on ",
    "meshgrid expects all tensors to have the same device",
    "torch.gradient expected each tensor to be on the same device, but got devices ",
    "grid_sampler(): expected input and grid to be on same device, but input is on ", " and grid is on ",
    "weight_norm: expected v_in and g_in to be on the same device, but v_in is on ", " and g_in is on ",
    "X1 and X2 must have the same device type. X1: ", " X2: ",
    "Expected query, key, and value to have the same device type, but got query.device: ", " key.device: ",
    " and value.device: ",
    # _kernels.py
    "torch.block_diag: input tensors must all be on the same device.", " Input 0 is on device ",
    "expected device '", "' but got '", "' for values output", "' for indices output",
    "dot: Expected the output and input tensors to be on the same device, but got the output tensor on ",
    "vdot: Expected the output and input tensors to be on the same device, but got the output tensor on ",
    ", the 'input' tensor on ", ", and the 'other' tensor on ",
    "Expected self.device() == out.device() to be true, but got false.",
    "Expected out tensor to have device ", "Expected scalars to be on CPU, got ",
    "'lengths' argument should be a 1D CPU int64 tensor, but got ",
    "Attempted to set the storage of a tensor on device \"", "\" to a storage on different device \"",
    # _out.py (LinearAlgebraUtils.h checkSameDevice)
    ": Expected ", " and input tensors to be on the same device, but got ", " and input on ",
)


@pytest.mark.parametrize("name", sorted(_out.SAME_DEVICE_NAMES.values()))
def test_same_device_check_name_is_in_libtorch(libtorch: bytes, name: str):
    assert name.encode() + b"\0" in libtorch


@pytest.fixture(scope="module")
def libtorch() -> bytes:
    path = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    if not os.path.exists(path):
        pytest.skip("no libtorch_cpu.so to read")
    with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        return data.read()


@pytest.mark.parametrize("fragment", FRAGMENTS)
def test_message_fragment_is_in_libtorch(libtorch: bytes, fragment: str):
    assert fragment.encode() in libtorch


def test_structured_out_operators_are_read_from_the_op_table():
    ops = _kernels.structured_out_ops()
    assert {"sum.IntList_out", "mean.out", "cumsum.out", "max.dim_max"} <= ops
    assert "add.out" not in ops  # a TensorIterator meta function: TensorIterator's message


def test_every_composite_check_names_a_torch_function():
    names = {getattr(func, "__name__", "") for func in _composite.CHECKS}
    assert {"take_along_dim", "quantile", "stft", "linalg_multi_dot", "scaled_dot_product_attention"} <= names


def test_cuda_only_messages_are_in_a_cuda_build():
    # a CPU build does not carry them; a CUDA build (torch 2.14.1 from PyPI) has them in libtorch_cpu
    if torch.version.cuda is None:
        pytest.skip("a CPU build: CUDA-only messages cannot be read back here")
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    found = False
    for name in sorted(os.listdir(lib)):
        if name.startswith("libtorch") and name.endswith(".so"):
            with open(os.path.join(lib, name), "rb") as handle, mmap.mmap(handle.fileno(), 0,
                                                                          access=mmap.ACCESS_READ) as data:
                found = found or data.find(b"torch.linalg.lstsq: `driver` other than `gels` is not supported on "
                                           b"CUDA") >= 0
    assert found
