"""Errors a kernel raises before its device check, found by running it on the CPU values.

Many kernels check shapes, dtypes or overlap before devices (``TensorIteratorBase::build``
computes shapes before types; ``resize_out`` compares the dtype before the device). The CPU
kernel runs the same checks, so where the simulation finds a device mix it first runs the
operator on copies of the arguments it writes, with the simulation's modes off, and raises
what that run raises: the error real CUDA would have raised first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch
from torch.utils._python_dispatch import _disable_current_modes

from cuda_sim._errors import cuda_error

_NoTorchFunction = torch._C.DisableTorchFunction  # the real one (the session patches the name)


def raise_earlier_error(func: torch._ops.OpOverload, args: Sequence[object], kwargs: dict[str, object],
                        allowed: Callable[[BaseException], bool] | None = None) -> None:
    """For an ATen operator: its written (``a!``) arguments are shadowed."""
    names = [arg.name for arg in func._schema.arguments]
    written = {arg.name for arg in func._schema.arguments if arg.alias_info is not None and arg.alias_info.is_write}
    shadowed = [_copy(value) if i < len(names) and names[i] in written else value for i, value in enumerate(args)]
    raise_earlier_call_error(func, shadowed, {k: _copy(v) if k in written else v for k, v in kwargs.items()},
                             allowed)


def raise_earlier_call_error(func: Callable[..., Any], args: Sequence[object], kwargs: dict[str, object],
                             allowed: Callable[[BaseException], bool] | None = None) -> None:
    """For any callable whose written arguments the caller has shadowed already (``out=``)."""
    try:
        with _disable_current_modes(), _NoTorchFunction():
            func(*args, **kwargs)
    except RuntimeError as error:
        if allowed is not None and allowed(error):
            return
        if "device" not in str(error):
            raise marked(error) from None
    except (IndexError, ValueError, TypeError) as error:
        raise marked(error) from None


def marked(error: Exception) -> Exception:
    """The same error, marked as the simulated CUDA's (its traceback ends at the user's call)."""
    copy = cuda_error(str(error), type(error))
    copy.args = error.args
    return copy


def shadow_out(kwargs: dict[str, object]) -> dict[str, object]:
    return {**kwargs, "out": _copy(kwargs["out"])} if kwargs.get("out") is not None else kwargs


def _copy(value: object) -> object:
    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, (list, tuple)):
        return type(value)(_copy(v) for v in value)
    return value
