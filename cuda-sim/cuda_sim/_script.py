"""TorchScript under the simulation: calls of compiled code (``torch.jit.script``, ``trace``, ``load``).

The interpreter is C++: it reads a tensor's real device, the CPU, where the program reads
``x.device``, ``x.is_cuda``, ``b.to(a)`` or ``b.type_as(a)``. Each call of a ``ScriptFunction`` or
``ScriptMethod`` therefore goes through ``call`` here, which looks at the callee's graph once:

- a device read that only feeds a ``device=`` argument (``torch.zeros(n, device=x.device)``,
  ``b.to(a)``, ``b.to(a.device)``): the tensor C++ makes or moves "to the CPU" is a guess that takes
  the device of the first known tensor it meets, as the factories C++ calls are
  (``cuda_sim._dispatch``). A copy to the CPU in code that reads no device is a real one. Where
  ``b.to(a)`` keeps b's dtype, C++ returns b itself (no operator to guess from): a device mix the
  simulation raises in such a call is ``NotSimulatedError`` naming the conversion, not a false error.
- any other read (``x.is_cuda``, ``x.device.type == "cuda"``, a device returned or compared) takes a
  branch real CUDA would not: with a simulated CUDA tensor in the call it raises
  ``NotSimulatedError`` naming the read and its line.

The interpreter also drops the message of an error a Python dispatch mode raises in it (the
``python_error`` it catches was never given its text: "RuntimeError: " and nothing after it; a CPU
kernel's own error inside the mode too, on CPU tensors), so the last error the dispatch mode raised
(``local.error``) is put back in the interpreter's message; a ``NotSimulatedError`` is raised as itself.
Only code with device reads gets the extra mode (its cost: one more Python dispatch per operator).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode, _pop_mode, _push_mode

from cuda_sim._errors import EMULATED, NotSimulatedError
from cuda_sim._numbers import as_tensors
from cuda_sim._patch import Patcher
from cuda_sim._placement import CPU, device_of, is_guess, place_guess
from cuda_sim._state import local

_TO_COPY = torch.ops.aten._to_copy.default
_NoTorchFunction = torch._C.DisableTorchFunction  # read before the session replaces it
# what C++ says where it reaches the real CUDA backend: a CPU build, a CUDA build on a host without a GPU
_NO_CUDA = ("PyTorch is not linked with support for cuda devices", "CUDA driver version is insufficient",
            "Found no NVIDIA driver", "no CUDA GPUs are available", "Torch not compiled with CUDA enabled")


@dataclass(frozen=True)
class Reads:
    """What a compiled function reads of its tensors' devices."""

    guessed: bool  # device reads that only feed device= arguments
    unsupported: str | None  # the first read that changes what the program does, with its line
    converts: str | None = None  # the first ``b.to(a)``-like conversion to another tensor's device, with its line


def patch(p: Patcher) -> None:
    for cls in (torch._C.ScriptFunction, torch._C.ScriptMethod):
        p.set(cls, "__call__", _calling(cls.__call__))


def _calling(original: Callable[..., Any]) -> Callable[..., Any]:
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        return run(original, self, args, kwargs)

    return call


def run(original: Callable[..., Any], fn: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    reads = reads_of(fn)
    if reads.unsupported is not None and _holds_cuda(fn, args, kwargs):
        raise NotSimulatedError(f"TorchScript {_name(fn)} {reads.unsupported}")
    state = local
    saved = state.call, state.python, state.explicit
    state.call, state.python, state.explicit = None, None, None  # what runs now is C++, not a Python call
    state.error = None
    # with CPU tensors alone the devices C++ reads are right: no guesses to make, no extra mode to pay for
    guessing = reads.guessed and _holds_cuda(fn, args, kwargs)
    if guessing:
        _push_mode(_ScriptMode())  # type: ignore[no-untyped-call]  # TorchDispatchMode.__init__: unannotated
    try:
        return original(fn, *args, **kwargs)
    except RuntimeError as error:
        if guessing and reads.converts is not None and _device_mix(state.error):
            raise NotSimulatedError(f"TorchScript {_name(fn)} {reads.converts}") from None
        raise _restored(error, state.error, fn) from None
    finally:
        if guessing:
            _pop_mode()
        state.call, state.python, state.explicit = saved


class _ScriptMode(TorchDispatchMode):
    """On top of the simulation's DeviceMode while compiled code that reads devices runs: what C++
    moved "to the CPU" or computed from guesses alone is a guess."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # as DeviceMode: no dynamo import at the first operator

    def __torch_dispatch__(self, func: torch._ops.OpOverload, types: Sequence[type], args: Sequence[Any] = (),
                           kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        try:
            result = _call(func, args, kwargs)
        except Exception as error:
            local.error = error  # also what the binding refused before DeviceMode saw it
            raise
        with _NoTorchFunction():  # the placement helpers read real attributes (cuda_sim._placement)
            self._correct(func, args, kwargs, result)
        return result

    def _correct(self, func: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any], result: Any) -> None:
        if func is _TO_COPY:
            device = kwargs.get("device")
            if isinstance(device, torch.device) and device.type == "cpu" and isinstance(result, torch.Tensor):
                place_guess(result, CPU)  # a device C++ read from a simulated tensor
                return
        _spread_guesses(args, kwargs, result)


def _spread_guesses(args: Sequence[Any], kwargs: dict[str, Any], result: Any) -> None:
    """What is computed from guesses alone is a guess too (``2 * pi / grid_size.to(omega)``): it takes
    its device where it first meets a known tensor (a known input would have settled it already)."""
    inputs = [t for t in _tensors((*args, *kwargs.values())) if isinstance(t, torch.Tensor)]
    if not any(is_guess(t) for t in inputs):
        return
    for out in _tensors((result,)):
        if all(out is not t for t in inputs) and device_of(out) == CPU and not is_guess(out):
            place_guess(out, CPU)


def _tensors(values: Sequence[Any]) -> Iterator[torch.Tensor]:
    for value in values:
        if isinstance(value, torch.Tensor):
            yield value
        elif isinstance(value, (list, tuple)):
            yield from _tensors(value)


def _call(func: torch._ops.OpOverload, args: Sequence[Any], kwargs: dict[str, Any]) -> Any:
    with _NoTorchFunction():  # an operator, as DeviceMode sees them: not a Python-level call
        try:
            return func(*args, **kwargs)
        except RuntimeError as error:
            unwrapped = as_tensors(func, args, kwargs, error)  # the tracer's wrapped numbers (cuda_sim._numbers)
            if unwrapped is None:
                raise
            return func(*unwrapped[0], **unwrapped[1])


def _device_mix(raised: Exception | None) -> bool:
    """A device error the simulation raised for CUDA (not a CPU kernel's own error)."""
    return raised is not None and bool(getattr(raised, EMULATED, False)) and "device" in str(raised)


def _restored(error: RuntimeError, raised: Exception | None, fn: Any) -> Exception:
    text = str(error)
    # the sign is in the interpreter's text where C++ raised it, only in ``raised`` where it came through the
    # dispatch mode (the interpreter then drops the text): which path runs depends on what ran before
    if any(sign in text or sign in str(raised or "") for sign in _NO_CUDA):
        return NotSimulatedError(f"TorchScript {_name(fn)} places a tensor on cuda itself (``.cuda()``, "
                                 "``device='cuda'``): C++ needs a real CUDA backend for that")
    if raised is None or str(raised) in text:
        return error
    if isinstance(raised, NotSimulatedError):
        return raised
    restored = type(error)(text.rstrip("\n") + str(raised) + "\n")
    if getattr(raised, EMULATED, False):
        setattr(restored, EMULATED, True)
    return restored


_READS: dict[str, Reads] = {}
_lock = threading.Lock()
_CONVERTS = ("converts a tensor to another tensor's device ({}): where the dtype does not change, C++ reads the "
             "other's real device, the CPU, and returns the tensor itself, unmoved, where a GPU moves it")
_REAL_DEVICE = (": the interpreter reads the tensor's real device, the CPU, and would take the path a CPU tensor "
                "takes")


def reads_of(fn: Any) -> Reads:
    key = _key(fn)
    found = _READS.get(key) if key is not None else None
    if found is None:
        found = _analyse(fn.inlined_graph)
        if key is not None:
            with _lock:
                _READS[key] = found
    return found


def _key(fn: Any) -> str | None:
    try:
        if isinstance(fn, torch._C.ScriptMethod):
            return f"{fn.owner._type().qualified_name()}.{fn.name}"
        return str(fn.qualified_name)
    except (AttributeError, RuntimeError):
        return None


def _analyse(graph: torch._C.Graph) -> Reads:
    guessed, converts = False, None
    for node in _nodes(graph):
        kind = node.kind()
        if kind == "prim::is_cuda":
            return Reads(guessed, f"reads x.is_cuda ({_where(node)}){_REAL_DEVICE}", converts)
        if kind == "aten::cpu" or (kind == "aten::to" and _to_the_cpu(node)):
            # C++ finds the tensor on the CPU already and returns it, not a copy
            return Reads(guessed, f"moves a tensor to the CPU ({_where(node)}): C++ finds a simulated CUDA tensor "
                                  "there already and returns it, not a copy on the CPU", converts)
        if kind in ("aten::type_as", "aten::to") and _reads_other(node):
            guessed = True
            converts = converts or _CONVERTS.format(_where(node))
        elif kind == "prim::device":
            for use in node.output().uses():
                if not _is_device_argument(use.user, use.offset):
                    return Reads(guessed, f"uses x.device in {use.user.kind()} ({_where(use.user)}){_REAL_DEVICE}",
                                 converts)
                if use.user.kind() == "aten::to":
                    converts = converts or _CONVERTS.format(_where(use.user))
            guessed = True
    return Reads(guessed, None, converts)


def _nodes(graph: torch._C.Graph) -> Iterator[torch._C.Node]:
    pending: list[Any] = [graph]  # the graph, then the blocks of its if/loop nodes
    while pending:
        for node in pending.pop().nodes():
            yield node
            pending.extend(node.blocks())


def _reads_other(node: torch._C.Node) -> bool:
    """``b.to(a)`` / ``b.type_as(a)``: options from another tensor."""
    inputs = list(node.inputs())
    return len(inputs) > 1 and isinstance(inputs[1].type(), torch._C.TensorType)


def _to_the_cpu(node: torch._C.Node) -> bool:
    for value in node.inputs():
        if value.node().kind() == "prim::Constant" and isinstance(value.type(), torch._C.DeviceObjType):
            device = value.toIValue()
            return isinstance(device, torch.device) and device.type == "cpu"
    return False


def _is_device_argument(user: torch._C.Node, offset: int) -> bool:
    if not user.kind().startswith("aten::"):
        return False
    try:
        schema = torch._C.parse_schema(user.schema())
    except RuntimeError:
        return False
    return offset < len(schema.arguments) and schema.arguments[offset].name == "device"


def _where(node: torch._C.Node) -> str:
    source = str(node.sourceRange()).strip().splitlines()
    return source[0].strip() if source else "no source line"


def _name(fn: Any) -> str:
    return str(getattr(fn, "qualified_name", None) or getattr(fn, "name", "function"))


def _holds_cuda(fn: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    with _NoTorchFunction():
        return _touches_cuda(fn, args, kwargs)


def _touches_cuda(fn: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> bool:
    values: list[Any] = [*args, *kwargs.values()]
    owner = getattr(fn, "owner", None)
    if owner is not None:
        values.append(owner)
    seen: set[int] = set()
    while values:
        value = values.pop()
        if isinstance(value, torch.Tensor):
            if device_of(value).type == "cuda":
                return True
        elif isinstance(value, (list, tuple)):
            values.extend(value)
        elif isinstance(value, dict):
            values.extend(value.values())
        elif isinstance(value, torch._C.ScriptObject) and id(value) not in seen and hasattr(value, "_type"):
            seen.add(id(value))
            values.extend(_module_state(value))
    return False


def _module_state(module: Any) -> list[Any]:
    try:
        dicts: list[Any] = [torch._C.ParameterDict(module), torch._C.BufferDict(module), torch._C.ModuleDict(module)]
        return [value for d in dicts for _, value in d.items()]
    except (RuntimeError, TypeError):
        return []
