"""Device checks that composite operators make in C++ before they decompose.

A CompositeImplicitAutograd kernel (an operator with no ``dispatch:`` entry in
native_functions.yaml) runs above the dispatcher's Python key: the dispatch mode only sees the
operators it decomposes into. A device check it makes first (``TORCH_CHECK(window.device() ==
self.device(), ...)``) would be lost, and the user would get an inner operator's message instead,
or none at all (an ``out=`` copy accepts any device). These checks run where the placement mode
sees the call, with the text of the torch release this runs under (tests/sim/test_sim_kernels.py
reads every fragment back from libtorch). Where the kernel checks something else first (a dtype,
a shape), the check steps aside and the CPU run raises that error, as CUDA would.

Found by listing the composite operators of native_functions.yaml whose kernels' messages in
libtorch_cpu speak of devices, then reading each kernel (aten/src/ATen/native/): take_along_dim
(TensorAdvancedIndexing.cpp ``checkDevice``), quantile / nanquantile (Sorting.cpp
``quantile_checks``), stft / istft (SpectralOps.cpp), linalg_multi_dot / chain_matmul
(LinearAlgebra.cpp ``multi_dot_impl``), tensordot (LinearAlgebra.cpp ``tensordot_out``),
meshgrid (TensorShape.cpp), gradient (ReduceOps.cpp ``gradient_helper``), grid_sampler
(GridSamplerUtils.h ``check_grid_sampler_common``), _weight_norm (WeightNorm.cpp), cdist
(Distance.cpp ``cdist_impl`` on its matrix-multiplication path), scaled_dot_product_attention
(transformers/sdp_utils_cpp.h ``validate_sdpa_input``).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import torch

from cuda_sim._errors import cuda_error
from cuda_sim._placement import device_of
from cuda_sim._prerun import raise_earlier_call_error, shadow_out

Check = Callable[[Callable[..., Any], Sequence[object], dict[str, object]], None]


def _bind(names: tuple[str, ...], args: Sequence[object], kwargs: dict[str, object]) -> dict[str, object]:
    """Python arguments by schema name (torch functions call ``self`` ``input``)."""
    bound: dict[str, object] = dict(zip(names, args, strict=False))
    for key, value in kwargs.items():
        bound["self" if key == "input" else key] = value
    return bound


def _tensor(value: object) -> torch.Tensor | None:
    return value if isinstance(value, torch.Tensor) else None


def _take_along_dim(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("self", "indices", "dim"), args, kwargs)
    self_ = bound["self"]
    assert isinstance(self_, torch.Tensor)
    expected = device_of(self_)
    for value in (self_, bound.get("indices"), bound.get("out")):
        tensor = _tensor(value)
        if tensor is not None and device_of(tensor) != expected:
            raise cuda_error(f"Expected tensor to have {expected} Device, but got tensor with {device_of(tensor)} "
                             "Device (while checking arguments for torch.take_along_dim():)")


def _quantile(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("self", "q", "dim", "keepdim"), args, kwargs)
    self_, q = bound["self"], _tensor(bound.get("q"))
    assert isinstance(self_, torch.Tensor)
    floating = self_.dtype in (torch.float32, torch.float64)
    if self_.numel() == 0 or not floating:
        return
    if q is not None:
        if q.dim() > 1 or q.dtype != self_.dtype:
            return
        if device_of(q) != device_of(self_):
            raise cuda_error("quantile() q tensor must be on the same device as the input tensor")
    out = _tensor(bound.get("out"))
    if out is not None and out.dtype == self_.dtype and device_of(out) != device_of(self_):
        raise cuda_error("quantile() out tensor must be on the same device as the input tensor")


def _window(label: str) -> Check:
    def check(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
        bound = _bind(("self", "n_fft", "hop_length", "win_length", "window"), args, kwargs)
        self_, window = bound["self"], _tensor(bound.get("window"))
        assert isinstance(self_, torch.Tensor)
        if window is not None and device_of(window) != device_of(self_):
            raise cuda_error(f"{label} input and window must be on the same device but got self on {device_of(self_)} "
                             f"and window on {device_of(window)}")

    return check


def _multi_dot(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("tensors",), args, kwargs)
    tensors = list(bound.get("tensors") or bound.get("matrices") or ())  # type: ignore[call-overload]
    if len(tensors) < 2 or not all(isinstance(t, torch.Tensor) for t in tensors):
        return
    if tensors[0].dim() not in (1, 2) or tensors[-1].dim() not in (1, 2) or any(t.dim() != 2 for t in tensors[1:-1]):
        return
    shaped = [tensors[0].unsqueeze(0) if tensors[0].dim() == 1 else tensors[0], *tensors[1:-1],
              tensors[-1].unsqueeze(-1) if tensors[-1].dim() == 1 else tensors[-1]]
    dtype, device = tensors[0].dtype, device_of(tensors[0])
    for i in range(1, len(tensors)):
        if tensors[i].dtype != dtype:
            return
        if device_of(tensors[i]) != device:
            raise cuda_error(f"multi_dot(): all tensors must be on the same device but tensor 0 is on {device} and "
                             f"tensor {i} on {device_of(tensors[i])}")
        if shaped[i - 1].size(-1) != shaped[i].size(0):
            return
    out = _tensor(bound.get("out"))
    if out is not None and out.dtype == dtype and device_of(out) != device:
        raise cuda_error(f"multi_dot(): expected out tensor to be on device {device} but got {device_of(out)}")


def _tensordot(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("self", "other", "dims_self", "dims_other"), args, kwargs)
    a, b, out = _tensor(bound.get("self")), _tensor(bound.get("other")), _tensor(bound.get("out"))
    if a is None or b is None or out is None or device_of(a) != device_of(b) or device_of(out) == device_of(a):
        return  # inputs on two devices: the product itself fails first
    raise_earlier_call_error(func, args, shadow_out(kwargs))
    raise cuda_error("tensordot: Expected the output and input tensors to be on the same device, but got the output "
                     f"tensor on {device_of(out)}, input tensor a on {device_of(a)}, and input tensor b on "
                     f"{device_of(b)}")


def _meshgrid(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    tensors = list(_bind(("tensors",), args, kwargs).get("tensors") or ())  # type: ignore[call-overload]
    for first, second in itertools.pairwise(tensors):
        if first.dtype != second.dtype:
            return
        if device_of(first) != device_of(second):
            raise cuda_error("meshgrid expects all tensors to have the same device")


def _gradient(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("self",), args, kwargs)
    self_, spacing = bound["self"], bound.get("spacing")
    assert isinstance(self_, torch.Tensor)
    if not isinstance(spacing, (list, tuple)):
        return
    for coordinate in spacing:
        if isinstance(coordinate, torch.Tensor) and device_of(coordinate) != device_of(self_):
            raise_earlier_call_error(func, args, kwargs)  # pre_check_gradient runs first
            raise cuda_error("torch.gradient expected each tensor to be on the same device, but got devices "
                             f"{device_of(self_)} and {device_of(coordinate)}!")


def _grid_sampler(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("self", "grid"), args, kwargs)
    source, grid = _tensor(bound.get("self")), _tensor(bound.get("grid"))
    if source is not None and grid is not None and device_of(source) != device_of(grid):
        raise cuda_error("grid_sampler(): expected input and grid to be on same device, but input is on "
                         f"{device_of(source)} and grid is on {device_of(grid)}")


def _weight_norm(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("v", "g", "dim"), args, kwargs)
    v, g = _tensor(bound.get("v")), _tensor(bound.get("g"))
    if v is not None and g is not None and device_of(v) != device_of(g):
        raise cuda_error(f"weight_norm: expected v_in and g_in to be on the same device, but v_in is on {device_of(v)} "
                         f"and g_in is on {device_of(g)}")


def _cdist(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    """Only the matrix-multiplication path checks here; ``_cdist_forward`` has the generated check."""
    bound = _bind(("x1", "x2", "p", "compute_mode"), args, kwargs)
    x1, x2 = _tensor(bound.get("x1")), _tensor(bound.get("x2"))
    p = float(bound.get("p", 2.0))  # type: ignore[arg-type]
    mode = bound.get("compute_mode") or 0
    if x1 is None or x2 is None or x1.dim() < 2 or x2.dim() < 2 or x1.size(-1) != x2.size(-1):
        return
    if x1.numel() == 0 or x2.numel() == 0:
        return
    mm_path = p == 2 and (mode == 1 or (mode == 0 and (x1.size(-2) > 25 or x2.size(-2) > 25)))
    if not mm_path or not (x1.is_floating_point() and x2.is_floating_point()):
        return
    first, second = device_of(x1).type, device_of(x2).type
    if first != second:
        raise cuda_error(f"X1 and X2 must have the same device type. X1: {first} X2: {second}")


def _attention(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    bound = _bind(("query", "key", "value"), args, kwargs)
    query, key, value = (_tensor(bound.get(name)) for name in ("query", "key", "value"))
    if query is None or key is None or value is None or not query.dtype == key.dtype == value.dtype:
        return
    devices = [device_of(t) for t in (query, key, value)]
    if len(set(devices)) > 1:
        raise cuda_error("Expected query, key, and value to have the same device type, but got query.device: "
                         f"{devices[0]} key.device: {devices[1]} and value.device: {devices[2]} instead.")


def _lstsq_driver(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object]) -> None:
    """BatchLinearAlgebra.cpp ``get_and_check_lstsq_driver``: on a CUDA input only ``gels`` (after the
    shape and dtype checks, which the CPU run with the default driver makes). CUDA-only text: a CUDA build's
    libtorch_cpu has it (test_sim_kernels reads it there), a CPU build does not."""
    bound = _bind(("self", "b", "rcond"), args, kwargs)
    source, driver = _tensor(bound.get("self")), bound.get("driver")
    if source is None or driver is None or driver == "gels" or device_of(source).type != "cuda":
        return
    raise_earlier_call_error(func, args, {**kwargs, "driver": None})
    raise cuda_error("torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA")


_BY_NAME: dict[str, Check] = {
    "take_along_dim": _take_along_dim, "quantile": _quantile, "nanquantile": _quantile,
    "stft": _window("stft"), "istft": _window("istft"), "linalg_multi_dot": _multi_dot, "chain_matmul": _multi_dot,
    "tensordot": _tensordot, "meshgrid": _meshgrid, "gradient": _gradient, "grid_sampler": _grid_sampler,
    "_weight_norm": _weight_norm, "cdist": _cdist, "scaled_dot_product_attention": _attention,
    "linalg_lstsq": _lstsq_driver,
}


def _namespaces() -> list[object]:
    return [m for m in (torch._C._VariableFunctions, torch._C.TensorBase, torch._C._nn,
                        getattr(torch._C, "_linalg", None), getattr(torch._C, "_fft", None),
                        getattr(torch._C, "_special", None)) if m is not None]


CHECKS: dict[object, Check] = {getattr(space, name): check for name, check in _BY_NAME.items()
                               for space in _namespaces() if hasattr(space, name)}
