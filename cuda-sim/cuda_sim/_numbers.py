"""Wrapped numbers: 0-dim CPU tensors C++ made from Python scalars (``x + 0.0``, TorchScript
constants such as a traced ``prim::Constant`` tensor).

A Python dispatch mode receives them as Python numbers (torch/csrc/jit/python/pybind_utils.h
``toPyObject`` unwraps ``is_wrapped_number()`` tensors). Calling the operator again binds a number
to a Tensor parameter only where the operator allows it (``torch._C._should_allow_numbers_as_tensors``:
add, mul, ...); elsewhere (``view``, ``_local_scalar_dense`` on a traced constant) the call fails with
"Expected a value of type 'Tensor' ... Unable to cast". The dispatch mode then makes the tensor
back, with the dtype a wrapped number has (double, long, bool, complex double), on the CPU, where
wrapped numbers always live (on a GPU host too).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

_DTYPES: tuple[tuple[type, torch.dtype], ...] = (
    (bool, torch.bool), (int, torch.int64), (float, torch.float64), (complex, torch.complex128))


_REFUSED = "Expected a value of type 'Tensor'"  # the binding error; any other error is the kernel's own


def as_tensors(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
               error: RuntimeError) -> tuple[tuple[object, ...], dict[str, object]] | None:
    """``args, kwargs`` with Python numbers in Tensor parameters made tensors, if ``error`` is the
    refusal to bind a number there; None otherwise (the error stands)."""
    if _REFUSED not in str(error):
        return None
    converted = False
    new_args = list(args)
    new_kwargs = dict(kwargs)
    for index, argument in enumerate(func._schema.arguments):
        if not _takes_tensor(argument.type):
            continue
        if index < len(new_args) and not argument.kwarg_only:
            tensor = _tensor(new_args[index])
            if tensor is not None:
                new_args[index], converted = tensor, True
        elif argument.name in new_kwargs:
            tensor = _tensor(new_kwargs[argument.name])
            if tensor is not None:
                new_kwargs[argument.name], converted = tensor, True
    return (tuple(new_args), new_kwargs) if converted else None


def _takes_tensor(kind: torch._C.JitType) -> bool:
    if isinstance(kind, torch._C.OptionalType):
        kind = kind.getElementType()
    return isinstance(kind, torch._C.TensorType)


def _tensor(value: object) -> torch.Tensor | None:
    for python_type, dtype in _DTYPES:
        if type(value) is python_type:
            return torch.tensor(value, dtype=dtype)
    return None
