"""The PlacementMode's handlers: the tensor methods and torch functions whose device the
simulation decides itself (``.to`` / ``.cuda()`` / ``.cpu()`` / ``.type``, ``.numpy()``,
pinning, ``.get_device()``, the RNN and CTC inputs CUDA kernels take on the host, ``repr``),
and ``move``: a tensor copied to another simulated device, as CUDA does it. ``_function``
maps each torch callable to its handler (``_METHODS``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import torch

from cuda_sim import _autograd
from cuda_sim._errors import NotSimulatedError, cuda_error
from cuda_sim._placement import (
    CPU,
    cuda_device,
    device_of,
    is_pinned,
    mark_pinned,
    parse_device,
    place,
    real_device,
)
from cuda_sim._state import local

if TYPE_CHECKING:  # _function imports this module
    from cuda_sim._function import PlacementMode, _Handler

_Base = torch._C.TensorBase


def move(t: torch.Tensor, target: torch.device, dtype: torch.dtype | None = None, non_blocking: bool = False,
         copy: bool = False, memory_format: torch.memory_format = torch.preserve_format) -> torch.Tensor:
    """``t.to(target, dtype)`` as CUDA does it: a fresh tensor when the device changes."""
    source = device_of(t)
    if target == source:
        return _Base.to(t, dtype=dtype, non_blocking=non_blocking, copy=copy, memory_format=memory_format)
    saved = local.explicit
    local.explicit = target
    # a wrapper subclass's own __torch_dispatch__ reads the target device (optimum-quanto converts its weight
    # layout when the device type changes): it is given the simulated one; its inner tensors come back here
    device = target if type(t) not in _PLAIN_TYPES and _wrapper_dispatch(type(t)) else real_device(target)
    try:
        out = _Base.to(t, device=device, dtype=dtype, non_blocking=non_blocking, copy=True,
                       memory_format=memory_format)
    finally:
        local.explicit = saved
    place(out, target)
    if out.grad_fn is not None:
        _autograd.hook_node(out.grad_fn, [(t, source)])
    return out


def _split_to_args(args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[object, dict[str, object]]:
    """Tensor.to(device?, dtype?, non_blocking, copy) / to(dtype, ...) / to(other, ...)."""
    rest = list(args)
    device: object = kwargs.get("device")
    opts: dict[str, object] = {k: v for k, v in kwargs.items() if k != "device"}
    if rest and isinstance(rest[0], torch.Tensor):
        other = rest.pop(0)
        device = device_of(other)
        opts.setdefault("dtype", other.dtype)
    elif rest and not isinstance(rest[0], torch.dtype) and rest[0] is not None and not isinstance(rest[0], bool):
        device = rest.pop(0)
    elif rest and rest[0] is None:
        rest.pop(0)
    if rest and (isinstance(rest[0], torch.dtype) or rest[0] is None):
        opts.setdefault("dtype", rest.pop(0))
    for name, value in zip(("non_blocking", "copy"), rest, strict=False):
        opts[name] = value
    return device, opts


def _to(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    t = args[0]
    device, opts = _split_to_args(args[1:], kwargs)
    if device is not None and not isinstance(device, (str, int, torch.device)):
        return _Base.to(*args, **kwargs)  # no device named: torch's own parser decides (or refuses)
    target = parse_device(device) if device is not None else device_of(t)
    return move(t, target, **opts)  # type: ignore[arg-type]


def _cuda(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    device = args[1] if len(args) > 1 else kwargs.get("device")
    if device is None:
        target = cuda_device(None)
    else:
        target = parse_device(device)
        if target.type != "cuda":
            raise cuda_error(f"Invalid device, must be cuda device, but got: {device}")
    return move(args[0], target, non_blocking=bool(kwargs.get("non_blocking", False)),
                memory_format=kwargs.get("memory_format", torch.preserve_format))


def _cpu(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    return move(args[0], CPU, memory_format=kwargs.get("memory_format", torch.preserve_format))


def _type(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """``Tensor.type(dtype=None, non_blocking=False, *, memory_format=None)`` as the CUDA build's
    ``THPVariable_type`` does it: a ``torch.dtype`` keeps the device; a type name (a string, a
    legacy tensor type, ``torch.Tensor``) also names the device type."""
    t = args[0]
    wanted = args[1] if len(args) > 1 else kwargs.get("dtype")
    non_blocking = bool(args[2] if len(args) > 2 else kwargs.get("non_blocking", kwargs.get("async", False)))
    memory_format = kwargs.get("memory_format") or torch.preserve_format
    source = device_of(t)
    if wanted is None:
        name = _Base.type(t)
        return name.replace("torch.", "torch.cuda.", 1) if source.type == "cuda" else name
    if isinstance(wanted, torch.dtype):
        return move(t, source, dtype=wanted, non_blocking=non_blocking,
                    memory_format=memory_format)
    name = _type_name(wanted)
    on_cuda = name.startswith("torch.cuda.")
    host_name = name.replace("torch.cuda.", "torch.", 1) if on_cuda else name
    try:
        # the C binding takes memory_format; torch's stub does not list it
        converted = _Base.type(t, host_name, non_blocking, memory_format=memory_format)  # type: ignore[call-overload]
    except ValueError:
        raise ValueError(f"invalid type: '{name}'") from None
    target = (source if source.type == "cuda" else cuda_device(None)) if on_cuda else (
        source if source.type != "cuda" else CPU)
    return converted if target == source else move(converted, target, non_blocking=non_blocking)


def _type_as(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """native ``type_as``: ``self.to(other.options())``, so the other's device and dtype (C++
    reads the other's real device: the CPU)."""
    other = args[1] if len(args) > 1 else kwargs.get("other")
    if len(args) + len(kwargs) != 2 or not isinstance(args[0], torch.Tensor) or not isinstance(other, torch.Tensor):
        return _Base.type_as(*args, **kwargs)  # torch's own argument error
    return move(args[0], device_of(other), dtype=other.dtype)


def _type_name(wanted: object) -> str:
    """The name ``THPVariable_type`` parses: a string as given, a type's ``tp_name``."""
    if isinstance(wanted, str):
        return wanted
    if not isinstance(wanted, type):
        raise TypeError("dtype must be a type, str, or dtype object")
    sim_name: str | None = getattr(wanted, "_sim_type_name", None)
    if sim_name is not None:
        return sim_name
    if wanted is torch.Tensor:
        return "torch.Tensor"
    heap_type = bool(wanted.__flags__ & (1 << 9))  # Py_TPFLAGS_HEAPTYPE: tp_name is the bare name
    if heap_type or wanted.__module__ == "builtins":
        return wanted.__name__
    return f"{wanted.__module__}.{wanted.__name__}"


def _get_device(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> int:
    device = device_of(args[0])
    return device.index if device.type == "cuda" else -1


def _numpy(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    t = args[0]
    device = device_of(t)
    if device.type == "cuda":
        if not kwargs.get("force"):
            raise cuda_error(f"can't convert {device} device type tensor to numpy. Use Tensor.cpu() to copy the "
                             "tensor to host memory first.", TypeError)
        t = move(t.detach(), CPU)
    return _Base.numpy(t, **kwargs)


def _pin_memory(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> torch.Tensor:
    t = args[0]
    if device_of(t).type == "cuda":
        raise cuda_error(f"cannot pin '{_type(mode, (t,), {})}' only dense CPU tensors can be pinned")
    if is_pinned(t):
        return t  # type: ignore[no-any-return]  # a Tensor: device_of read it
    out: torch.Tensor = t.clone()
    mark_pinned(out)
    return out


def _is_pinned(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    return device_of(args[0]).type != "cuda" and is_pinned(args[0])


def _record_stream(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> None:
    if device_of(args[0]).type != "cuda":
        _Base.record_stream(*args, **kwargs)  # raises as it does for CPU tensors on a CUDA build


def _dlpack(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    if device_of(args[0]).type == "cuda":
        raise NotSimulatedError("DLPack export of a cuda tensor (its memory would be host memory)")
    return torch.Tensor.__dlpack__(*args, **kwargs)


def _parse_to(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[object, ...]:
    device, opts = _split_to_args(args, kwargs)
    target = parse_device(device) if device is not None else None
    return (target, opts.get("dtype"), bool(opts.get("non_blocking", False)), opts.get("memory_format"))


def _rnn(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any], func: Callable[..., Any]) -> object:
    """``_VF.lstm/gru/rnn_*``: RNN.cpp ``check_attributes`` compares the input's device with every
    hidden state, then every parameter, before any kernel (the CPU path cannot see it)."""
    # packed: (data, batch_sizes, hx, params, ...); lstm's hx is a tuple, the others' a tensor
    packed = len(args) > 2 and isinstance(args[1], torch.Tensor) and (
        func is torch._C._VariableFunctions.lstm or isinstance(args[2], torch.Tensor))
    hidden, params = (args[2], args[3]) if packed else (args[1], args[2])
    device = device_of(args[0])
    hiddens = hidden if isinstance(hidden, (list, tuple)) else [hidden]
    for name, group in (("hidden", hiddens), ("parameter", params)):
        for t in group:
            if isinstance(t, torch.Tensor) and device_of(t) != device:
                raise cuda_error(f"Input and {name} tensors are not at the same device, found input tensor at "
                                 f"{device} and {name} tensor at {device_of(t)}")
    return mode.call(func, (), args, kwargs, builtin=True)


def _ctc_loss(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """LossCTC.cpp ``ctc_loss``: for plain tensors it reads Tensor lengths on the host and runs
    ``_ctc_loss(log_probs, targets.to(log_probs.device(), kLong), lengths...)`` (cuDNN's path
    takes CPU targets as they are). The simulation's dispatch mode would send it down its
    tensor-subclass path instead (``areAnyTensorSubclassLike`` is true under any dispatch
    mode), and C++ moves targets to a device the simulation cannot see; so both are done here,
    and the backward pass finds the targets where CUDA has them."""
    names = ("log_probs", "targets", "input_lengths", "target_lengths")
    values = [args[i] if i < len(args) else kwargs.get(name) for i, name in enumerate(names)]
    log_probs, targets = values[0], values[1]
    if isinstance(targets, torch.Tensor) and isinstance(log_probs, torch.Tensor):
        target = device_of(log_probs)
        if device_of(targets) != target:
            values[1] = move(targets, target)
    for i in (2, 3):
        lengths = values[i]
        if isinstance(lengths, torch.Tensor) and not (lengths.is_floating_point() or lengths.is_complex()
                                                      or lengths.dtype == torch.bool):
            values[i] = _Base.tolist(lengths.reshape(-1))
    rest = {k: v for k, v in kwargs.items() if k not in names}
    return mode.call(torch._C._VariableFunctions.ctc_loss, (), (*values, *args[4:]), rest, builtin=True)


def _pad_packed_sequence(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """PackedSequence.cpp makes the lengths with ``batch_sizes.options()``: on the CPU."""
    func = torch._C._VariableFunctions._pad_packed_sequence
    padded, lengths = mode.call(func, (), tuple(args), kwargs, builtin=True)
    batch_sizes = args[1] if len(args) > 1 else kwargs.get("batch_sizes")
    place(lengths, device_of(batch_sizes))  # type: ignore[arg-type]
    return padded, lengths


def _repr(mode: PlacementMode, args: Sequence[Any], kwargs: dict[str, Any]) -> object:
    """``Tensor.__repr__`` (and ``str``, ``print``, ``format`` of a tensor with dims): the values
    are formatted with the simulation off, the rest of the text (``device='cuda:0'``, ``dtype=``,
    ``grad_fn=``) by torch's own code with the mode on, from ``tensor_contents``. A GPU formats
    the values with the same ops on the device; run through the modes, each of those small ops
    paid the simulation's per-call cost (ignite formats RNG states every iteration)."""
    t = args[0]
    if len(args) == 1 and type(t) in _PLAIN_TYPES:
        if device_of(t) == t.device:
            # not on the simulated GPU: torch's own text (Tensor.__repr__ is unannotated)
            return torch.Tensor.__repr__(t, **kwargs)  # type: ignore[no-untyped-call]
        if kwargs.get("tensor_contents") is None:
            contents = _plain_contents(t)
            if contents is not None:
                kwargs = {**kwargs, "tensor_contents": contents}
    return mode.call(torch.Tensor.__repr__, (), args, kwargs, builtin=False)


_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _wrapper_dispatch(cls: type) -> bool:
    return getattr(cls, "__torch_dispatch__", _no_dispatch) is not _no_dispatch


_no_dispatch = torch._C._disabled_torch_dispatch_impl


def _plain_contents(t: torch.Tensor) -> str | None:
    """What ``torch._tensor_str._str_intern`` makes of a dense tensor's values (this mode is off
    while its handlers run), or None where it takes another branch (sparse, quantized, nested,
    meta, empty, functorch or forward-AD wrappers, subclasses): those keep the full path."""
    tensor_str = getattr(torch._tensor_str, "_tensor_str", None)
    if tensor_str is None:
        return None
    if (t.layout != torch.strided or t.is_quantized or t.is_nested or t.is_meta or t.numel() == 0
            or torch._C._functorch.is_functorch_wrapped_tensor(t) or torch._is_functional_tensor(t)):
        return None
    if torch.autograd.forward_ad.unpack_dual(t).tangent is not None:
        return None
    with torch.no_grad(), torch.utils._python_dispatch._disable_current_modes():
        guard = torch._C._DisableFuncTorch()  # noqa: F841 - as torch._tensor_str._str holds it
        text: str = tensor_str(t, len("tensor("))
        return text


def _rnn_handler(func: Callable[..., Any]) -> _Handler:
    return lambda mode, args, kwargs: _rnn(mode, args, kwargs, func)
