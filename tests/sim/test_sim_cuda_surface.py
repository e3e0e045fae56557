"""Every name of the torch.cuda surface either works as on a one-GPU host or raises
NotSimulatedError: never a raw AttributeError, "not compiled with CUDA" or a dummy class."""

from __future__ import annotations

import contextlib
import importlib
import inspect
import types
import warnings
from collections.abc import Callable

import pytest
import torch
from cuda_sim import NotSimulatedError, _cuda_c, simulate
from torch.utils.checkpoint import checkpoint

_MODULES = ("torch.cuda", "torch.backends.cuda", "torch.cuda.memory", "torch.cuda.random", "torch.cuda.streams",
            "torch.cuda.graphs", "torch.cuda.jiterator", "torch.cuda.nvtx", "torch.cuda.tunable", "torch.cuda.profiler",
            "torch.cuda.comm", "torch.cuda.nccl", "torch.cuda.gds", "torch.cuda.amp")


def _zero_argument_functions() -> list[tuple[str, Callable[[], object]]]:
    found = []
    for module_name in _MODULES:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        for name in getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]:
            found.append((f"{module_name}.{name}", module, name))
    return found  # type: ignore[return-value]


def _required(func: object) -> int:
    try:
        parameters = inspect.signature(func).parameters.values()  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in parameters if p.default is p.empty and p.kind in (p.POSITIONAL_ONLY,
                                                                              p.POSITIONAL_OR_KEYWORD))


def test_every_public_function_works_or_is_refused():
    failures = {}
    with simulate(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for qualified, module, name in _zero_argument_functions():  # type: ignore[misc]
            try:
                value = getattr(module, name)
            except Exception as error:
                failures[qualified] = f"getattr: {type(error).__name__}: {error}"
                continue
            if isinstance(value, types.ModuleType) or inspect.isclass(value) or not callable(value):
                continue
            if _required(value):
                continue
            try:
                value()
            except NotSimulatedError:
                pass
            except Exception as error:
                failures[qualified] = f"{type(error).__name__}: {error}"
    assert failures == {}


def test_every_cuda_c_binding_exists_and_answers():
    names = _cuda_c.names()
    assert len(names) > 60 and "_cuda_setStream" in names
    native = hasattr(torch._C, "_cuda_setStream")  # a CUDA build (torch 2.14.1 from PyPI) has them itself
    with simulate():
        for name in names:
            func = getattr(torch._C, name)
            if _required(func):
                continue
            with contextlib.suppress(NotSimulatedError):
                func()
    assert hasattr(torch._C, "_cuda_setStream") == native  # restored: a CPU build has none again


def test_streams_through_the_c_layer(sim):
    stream = torch.cuda.Stream()
    torch._C._cuda_setStream(stream_id=stream.stream_id, device_index=stream.device_index,
                             device_type=stream.device_type)
    assert torch.cuda.current_stream() == stream
    assert torch._C._cuda_getCurrentStream(0) == (stream.stream_id, 0, 1)
    torch.cuda.set_stream(torch.cuda.default_stream())
    assert torch.cuda.current_stream().cuda_stream == 0 and torch._C._cuda_getDefaultStream(0)[0] == 0
    assert torch.cuda.streams.Stream(stream_id=stream.stream_id, device_index=0, device_type=1) is stream


def test_host_facts_of_a_cuda_build(sim):
    assert torch.backends.cuda.is_built() and torch.cuda.has_magma and torch.cuda.has_half
    assert torch.cuda._is_compiled() and torch.cuda.get_arch_list() == ["sm_80", "sm_90"]
    assert torch.cuda.cudart().cudaProfilerStart() == 0
    with torch.cuda.profiler.profile():
        torch.cuda.nvtx.range_push("step")
        torch.cuda.nvtx.range_pop()
    free, total = torch.cuda.memory.mem_get_info()
    assert 0 < free <= total
    assert torch.cuda.memory.memory_allocated() >= 0 and torch.cuda.random.get_rng_state().dtype == torch.uint8
    assert isinstance(torch.cuda.get_device_properties(0), torch._C._CudaDeviceProperties)
    cache = torch.backends.cuda.cufft_plan_cache
    cache.max_size = 10
    assert cache.size == 0 and cache.max_size == 10
    cache.clear()


@pytest.mark.parametrize("call", [
    lambda: torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return -x; }")(
        torch.ones(2, device="cuda")),
    lambda: torch.cuda.graph_pool_handle(),
    lambda: torch.cuda.graphs.CUDAGraph(),
    lambda: torch.cuda.memory._record_memory_history(),
    lambda: torch.cuda.utilization(),
    lambda: torch.cuda.nccl.version(),
], ids=["jiterator", "graph pools", "graphs.CUDAGraph", "memory history", "NVML", "NCCL"])
def test_gpu_machinery_is_refused(sim, call):
    with pytest.raises(NotSimulatedError, match=r"^not simulated: "):
        call()


def test_sync_debug_mode(sim):
    x = torch.ones(3, device="cuda")
    torch.cuda.set_sync_debug_mode("warn")
    try:
        assert torch.cuda.get_sync_debug_mode() == 1
        with pytest.warns(UserWarning, match="called a synchronizing CUDA operation"):
            x.sum().item()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            _ = x + 1  # asynchronous on a GPU: no warning
            _ = torch.ones(2).cuda()
        torch.cuda.set_sync_debug_mode("error")
        for synchronizing in (lambda: x.cpu(), lambda: x.nonzero(), lambda: x[x > 0]):
            with pytest.raises(RuntimeError, match=r"^called a synchronizing CUDA operation$"):
                synchronizing()
        with pytest.raises(RuntimeError, match="invalid value of debug_mode"):
            torch.cuda.set_sync_debug_mode("loud")
    finally:
        torch.cuda.set_sync_debug_mode(0)
    assert x.sum().item() == 3.0


@pytest.mark.parametrize("reentrant", [True, False])
def test_checkpoint_recompute_replays_the_cuda_rng(sim, reentrant):
    torch.cuda.manual_seed(0)
    x = torch.ones(256, device="cuda", requires_grad=True)
    out = checkpoint(lambda t: torch.nn.functional.dropout(t, 0.5, training=True) * 2, x,
                     use_reentrant=reentrant, preserve_rng_state=True)
    out.sum().backward()
    assert torch.equal((out != 0).cpu(), (x.grad != 0).cpu())  # the recomputed mask is the forward's


def _cuda_names_torch_imports() -> set[str]:
    """Every ``_cuda*`` name torch's own Python imports from ``torch._C`` (guarded by
    ``torch.backends.cuda.is_built()`` or ``is_available()``, which the simulation makes true)."""
    import ast
    import pathlib

    found: set[str] = set()
    for path in pathlib.Path(torch.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8", errors="replace")
        if "from torch._C import" not in text or "_cuda" not in text:
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.ImportFrom) and node.module == "torch._C":
                found.update(alias.name for alias in node.names if alias.name.startswith("_cuda"))
    return found


def test_every_cuda_name_torch_imports_from_its_c_module_exists(sim):
    names = _cuda_names_torch_imports()
    assert "_cuda_CUDAAllocator_AllocatorState" in names  # torch._inductor.cudagraph_trees
    assert sorted(name for name in names if not hasattr(torch._C, name)) == []
    if getattr(torch._C._cuda_CUDAAllocator_AllocatorState, "cuda_sim", False):  # the simulator's, on a CPU build
        with pytest.raises(NotSimulatedError):
            torch._C._cuda_CUDAAllocator_AllocatorState()


@pytest.mark.filterwarnings("ignore:`torch.jit.script_method` is deprecated:DeprecationWarning")  # torch's own, on import
def test_dynamo_reset_under_the_simulation(sim):
    import torch._dynamo

    torch._dynamo.reset()  # imports torch._inductor.cudagraph_trees when cuda "is available"
