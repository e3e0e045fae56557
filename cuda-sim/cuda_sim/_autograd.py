"""Gradients land on their input's device, as the real autograd engine guarantees.

Autograd formulas run on real CPU tensors, so an op that legitimately mixed devices in the
forward pass (``x.to("cuda")``, ``cuda_t.copy_(cpu_t)``, ``cuda_t * cpu_scalar``) would get
its gradients placed by the propagation rules instead of by the forward input's device. Real
CUDA's engine (``validate_outputs`` in torch/csrc/autograd/engine.cpp) moves a 0-dim gradient to
the input's device and the formulas produce the right device for the rest. The simulation
reproduces the result with a post-hook on such nodes that re-places each gradient on the device
its forward input had.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import torch

from cuda_sim._errors import cuda_error
from cuda_sim._placement import device_of, place

_HOOKED = "cuda_sim_device_hook"
_NoTorchFunction = torch._C.DisableTorchFunction  # the real one (the session patches the name)


def fix_devices(result: object, args: Sequence[object], kwargs: dict[str, object]) -> None:
    """After a torch function that mixed devices: hook the autograd nodes it produced."""
    _hook_outputs(result, args, kwargs, strict=False)


def _hook_outputs(result: object, args: Sequence[object], kwargs: dict[str, object], *, strict: bool) -> None:
    if not torch.is_grad_enabled():
        return
    with _NoTorchFunction():
        inputs = [(t, device_of(t)) for t in _tensors((args, kwargs))]
        for out in _tensors(result):
            if out.grad_fn is not None:
                hook_node(out.grad_fn, inputs, strict=strict)


def _tensors(value: object) -> list[torch.Tensor]:
    found: list[torch.Tensor] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, torch.Tensor):
            found.append(item)
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return found


def check_custom_function(result: object, args: Sequence[object], kwargs: dict[str, object]) -> None:
    """After ``MyFunction.apply``: its backward is user code, so a gradient on the wrong device
    is a real bug, reported as the engine's ``validate_outputs`` reports it."""
    _hook_outputs(result, args, kwargs, strict=True)


def hook_node(node: torch.autograd.graph.Node, inputs: list[tuple[torch.Tensor, torch.device]],
              strict: bool = False) -> None:
    metadata: dict[Any, Any] = node.metadata  # type: ignore[assignment]  # a property; the stub says a method
    if metadata.get(_HOOKED):
        return
    expected: list[torch.device | None] = []
    for edge, _ in node.next_functions:
        expected.append(_input_device(edge, inputs))
    if all(device is None for device in expected):
        return
    metadata[_HOOKED] = True
    node.register_hook(_make_hook(expected, node.name() if strict else None))


def _input_device(edge: object, inputs: list[tuple[torch.Tensor, torch.device]]) -> torch.device | None:
    if edge is None:
        return None
    variable = getattr(edge, "variable", None)
    for tensor, device in inputs:
        if tensor is variable or (variable is None and tensor.grad_fn is edge):
            return device
    return None


def _make_hook(expected: list[torch.device | None], strict_name: str | None
               ) -> Callable[[tuple[torch.Tensor | None, ...], object], tuple[object, ...] | None]:
    def hook(grad_inputs: tuple[torch.Tensor | None, ...], grad_outputs: object) -> tuple[object, ...] | None:
        with _NoTorchFunction():
            fixed = list(grad_inputs)
            changed = False
            for i, (grad, device) in enumerate(zip(grad_inputs, expected, strict=False)):
                if grad is not None and device is not None and device_of(grad) != device:
                    if strict_name is not None and grad.dim() != 0:
                        raise cuda_error(f"Function {strict_name} returned an invalid gradient at index {i} - "
                                         f"expected device {device} but got {device_of(grad)}")
                    copy = grad.clone()
                    place(copy, device)
                    fixed[i] = copy
                    changed = True
            return tuple(fixed) if changed else None

    return hook
