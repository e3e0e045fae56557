"""What real CUDA does with an ATen operator, read from the installed torch's own op registry.

torch wheels ship ``torchgen/packaged/ATen/native/native_functions.yaml``, the file the CUDA
kernels' wrappers were generated from. For each operator it says whether the generated CUDA
wrapper checks that all tensor arguments share one device (``device_check``), whether the op has
a CUDA kernel or a device-generic composite one, and whether it is a TensorIterator op. Reading
that file (with a small line parser: pyyaml may be absent from a variant's environment) keeps the
rules in step with whatever torch version the simulation runs under.
"""

from __future__ import annotations

import functools
import importlib.util
import mmap
import os
from dataclasses import dataclass
from typing import cast

import torch


@dataclass(frozen=True)
class OpInfo:
    """The facts about one ``aten::name.overload`` that decide its device semantics."""

    device_check: bool  # the CUDA wrapper runs c10::impl::check_and_update_common_device
    cuda_kernel: bool  # registered for the CUDA key (directly or through a structured delegate)
    composite: bool  # only a device-generic CompositeExplicitAutograd kernel
    structured: bool  # wrapper named after the native (structured) signature
    tensor_iterator: bool  # builds a TensorIterator, so TensorIterator's device rules apply


def _yaml_path() -> str | None:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(spec.submodule_search_locations[0], "packaged", "ATen", "native",
                        "native_functions.yaml")
    return path if os.path.exists(path) else None


def _parse(path: str) -> dict[str, dict[str, object]]:
    entries: dict[str, dict[str, object]] = {}
    current: dict[str, object] | None = None
    in_dispatch = False
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("- func:"):
                schema = line[len("- func:"):].strip()
                current = {"keys": set()}
                entries[schema.split("(", 1)[0].strip()] = current
                in_dispatch = False
                continue
            if current is None or not line.startswith("  ") or line.lstrip().startswith("#"):
                continue
            if line.startswith("    "):
                if in_dispatch and ":" in line:
                    keys = line.split(":", 1)[0]
                    cast("set[str]", current["keys"]).update(k.strip() for k in keys.split(","))
                continue
            key, _, value = line.strip().partition(":")
            in_dispatch = key == "dispatch"
            current[key] = value.strip()
            if key == "autogen":
                # generated out= variants: device-generic wrappers around the functional op
                for name in value.split(","):
                    entries.setdefault(name.strip(), {"keys": {"CompositeExplicitAutogradNonFunctional"},
                                                      "device_check": "NoCheck"})
    return entries


@functools.cache
def _table() -> dict[str, dict[str, object]]:
    path = _yaml_path()
    return _parse(path) if path else {}


def table() -> dict[str, dict[str, object]]:
    """Every operator's entry (``name.overload`` without namespace)."""
    return _table()


def _lookup(name: str) -> dict[str, object] | None:
    return _table().get(name)


@functools.cache
def op_info(name: str) -> OpInfo | None:
    """``name`` is ``add.Tensor`` / ``index_select`` (no namespace); None when unknown."""
    entry = _lookup(name)
    if entry is None:
        return None
    check_line = str(entry.get("device_check", ""))
    delegate = _lookup(str(entry["structured_delegate"])) if "structured_delegate" in entry else None
    keys = set(entry["keys"])  # type: ignore[call-overload]
    if delegate is not None:
        keys |= set(delegate["keys"])  # type: ignore[call-overload]
    inherits = str(entry.get("structured_inherits", "")) or (
        str(delegate.get("structured_inherits", "")) if delegate is not None else "")
    # ufunc-generated structured kernels have CPU and CUDA loops without a dispatch entry
    cuda = "CUDA" in keys or "ufunc_inner_loop" in entry or (
        delegate is not None and "ufunc_inner_loop" in delegate)
    return OpInfo(
        device_check=not check_line.startswith("NoCheck"),
        cuda_kernel=cuda,
        composite=not cuda and bool(keys & {"CompositeExplicitAutograd",
                                            "CompositeExplicitAutogradNonFunctional"}),
        structured=str(entry.get("structured", "")) == "True" or delegate is not None,
        tensor_iterator="TensorIterator" in check_line or inherits == "TensorIteratorBase",
    )


def wrapper_name(func: torch._ops.OpOverload, structured: bool) -> str:
    """The generated CUDA wrapper's name, as the codegen device check reports it (torchgen
    ``RegisterDispatchKey``: native signature name for structured ops, else
    ``wrapper_CUDA_<overload>_<dispatcher name>``)."""
    schema = func._schema
    base = schema.name.split("::", 1)[-1]
    is_out = any(arg.is_out for arg in schema.arguments)
    overload = schema.overload_name
    if structured:
        name = base + ("_out" if is_out else "") + (f"_{overload}" if overload else "")
        return "wrapper_CUDA_" + name
    return f"wrapper_CUDA_{overload}_{base}" + ("_out" if is_out else "")


@functools.cache
def new_device_check_message() -> bool:
    """Whether this torch's codegen check says "but got X is on D, different from other tensors
    on C" (newer) rather than "found at least two devices, C and D!" (older). Read from the
    installed library itself so the message matches the version in use."""
    lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    for name in ("libtorch_cpu.so", "libtorch_cpu.dylib", "torch_cpu.dll"):
        path = os.path.join(lib, name)
        if os.path.exists(path):
            with open(path, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as m:
                return m.find(b", different from other tensors on ") >= 0
    return tuple(int(p) for p in torch.__version__.split(".")[:2] if p.isdigit()) >= (2, 8)


def device_check_message(arg: str, device: torch.device, common: torch.device, method: str) -> str:
    if new_device_check_message():
        return (f"Expected all tensors to be on the same device, but got {arg} is on {device}, "
                f"different from other tensors on {common} (when checking argument in method {method})")
    return (f"Expected all tensors to be on the same device, but found at least two devices, {common} "
            f"and {device}! (when checking argument for argument {arg} in method {method})")


def tensor_iterator_message(common: torch.device, device: torch.device) -> str:
    return ("Expected all tensors to be on the same device, but found at least two devices, "
            f"{common} and {device}!")
