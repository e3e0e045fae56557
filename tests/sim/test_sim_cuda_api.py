"""The torch.cuda surface of the simulated one-GPU host, and its placement API."""

from __future__ import annotations

import copy
import gc
import re
import threading

import pytest
import torch
from cuda_sim import NotSimulatedError


def test_device_queries(sim):
    assert torch.cuda.is_available()
    assert torch.cuda.is_initialized()
    assert torch.cuda.device_count() == 1
    assert torch.cuda.current_device() == 0
    assert "simulated" in torch.cuda.get_device_name()
    assert "simulated" in torch.cuda.get_device_name(0)
    assert torch.cuda.get_device_capability() == (8, 0)
    props = torch.cuda.get_device_properties(0)
    assert props.major == 8 and props.total_memory > 0 and "simulated" in props.name
    assert torch.cuda.is_bf16_supported()
    assert torch.backends.cudnn.is_available()
    assert isinstance(torch.version.cuda, str)


def test_harmless_runtime_calls(sim):
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    torch.cuda.set_device(0)
    gc.collect()  # earlier tests' cyclic garbage (cuda storages) would be freed at a random moment
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated(0) == torch.cuda.memory_allocated() >= 0
    assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated()
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.all.current"] == torch.cuda.memory_allocated() and stats["num_ooms"] == 0
    assert "Allocated memory" in torch.cuda.memory_summary()
    free, total = torch.cuda.mem_get_info()
    assert 0 < free <= total
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_pop()
    with torch.cuda.nvtx.range("block"), torch.cuda.device(0):
        pass


def test_streams_and_events(sim):
    stream = torch.cuda.Stream()
    assert isinstance(stream, torch.Stream)  # record_stream's argument parser needs a real torch.Stream
    assert stream.device == torch.device("cuda", 0)
    assert torch.cuda.current_stream() == torch.cuda.default_stream()
    with torch.cuda.stream(stream):
        assert torch.cuda.current_stream() is stream
        t = torch.ones(3, device="cuda")
        t.record_stream(torch.cuda.current_stream())
    stream.wait_stream(torch.cuda.default_stream())
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    end.record()
    end.synchronize()
    assert start.elapsed_time(end) >= 0.0
    assert stream.query() and end.query()


def test_rng_is_a_separate_stream(sim):
    torch.manual_seed(0)
    cpu_first = torch.randn(3)
    torch.manual_seed(0)
    torch.randn(3, device="cuda")  # draws from the simulated GPU's generator
    assert torch.equal(torch.randn(3), cpu_first)
    torch.cuda.manual_seed(7)
    a = torch.randn(4, device="cuda")
    torch.cuda.manual_seed_all(7)
    b = torch.randn(4, device="cuda")
    assert torch.equal(a.cpu(), b.cpu())
    state = torch.cuda.get_rng_state()
    c = torch.rand(2, device="cuda")
    torch.cuda.set_rng_state(state)
    assert torch.equal(torch.rand(2, device="cuda").cpu(), c.cpu())
    generator = torch.Generator(device="cuda").manual_seed(3)
    assert generator.device == torch.device("cuda", 0)
    assert isinstance(generator, torch.Generator)


def test_dropout_on_cuda_uses_the_cuda_generator(sim):
    torch.cuda.manual_seed(1)
    first = torch.nn.functional.dropout(torch.ones(64, device="cuda"), 0.5)
    torch.cuda.manual_seed(1)
    second = torch.nn.functional.dropout(torch.ones(64, device="cuda"), 0.5)
    assert first.device.type == "cuda"
    assert torch.equal(first.cpu(), second.cpu())


def test_tensor_looks_like_cuda(sim):
    t = torch.arange(3.0).cuda()
    assert t.device == torch.device("cuda", 0) and t.is_cuda and not t.is_cpu
    assert t.get_device() == 0 and torch.ones(1).get_device() == -1
    assert "device='cuda:0'" in repr(t)
    assert t.type() == "torch.cuda.FloatTensor"
    assert isinstance(t, torch.cuda.FloatTensor) and not isinstance(t, torch.cuda.LongTensor)
    assert t.tolist() == [0.0, 1.0, 2.0] and t.sum().item() == 3.0
    assert t.cpu().numpy().tolist() == [0.0, 1.0, 2.0]
    assert torch.cuda.FloatTensor([1.0, 2.0]).device.type == "cuda"
    assert torch.ones(2).type(torch.cuda.HalfTensor).dtype == torch.float16
    view = t[1:]
    assert view.device.type == "cuda"  # views share the storage, so the placement


def test_module_parameters_and_state_dict(sim):
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)).cuda()
    assert all(p.device.type == "cuda" for p in model.parameters())
    assert all(b.device.type == "cuda" for b in model.buffers())
    assert {v.device.type for v in model.state_dict().values()} == {"cuda"}
    param = model[0].weight
    param.data = torch.zeros(4, 3)
    assert param.device.type == "cpu"  # param.data = x takes x's storage, so its placement
    model.to(torch.device("cpu"))
    assert {p.device.type for p in model.parameters()} == {"cpu"}
    assert next(copy.deepcopy(model.cuda()).parameters()).device.type == "cuda"
    wrapped = torch.nn.Parameter(torch.ones(2, device="cuda"))
    assert wrapped.device.type == "cuda" and "device='cuda:0'" in repr(wrapped)


def test_pinned_memory(sim):
    pinned = torch.ones(2).pin_memory()
    assert pinned.is_pinned() and not torch.ones(2).is_pinned()
    assert torch.empty(2, pin_memory=True).is_pinned()
    with pytest.raises(RuntimeError, match=re.escape("cannot pin 'torch.cuda.FloatTensor' only dense CPU tensors "
                                                     "can be pinned")):
        torch.ones(2, device="cuda").pin_memory()


def test_new_threads_are_simulated(sim):
    seen = {}

    def work():
        seen["device"] = torch.ones(1, device="cuda").device

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen["device"] == torch.device("cuda", 0)


def test_accelerator_api(sim):
    if not hasattr(torch, "accelerator"):
        pytest.skip("torch.accelerator is newer than this torch")
    assert torch.accelerator.is_available()
    assert torch.accelerator.current_accelerator() == torch.device("cuda")
    assert torch.accelerator.device_count() == 1
    # the C layer under it, which a CPU build answers "no accelerator" (torch.device(<int>) asks it too)
    assert torch._C._get_accelerator() == torch.device("cuda")
    assert torch.get_device_module() is torch.cuda
    assert torch.accelerator.current_device_index() == 0
    assert torch.accelerator.get_device_capability() == {"major": 8, "minor": 0}
    with pytest.raises(NotSimulatedError):
        torch.accelerator.set_device_index(1)


def test_optimizer_grouping_by_device(sim):
    a, b = torch.ones(2, device="cuda"), torch.ones(2)
    groups = torch.utils._foreach_utils._group_tensors_by_device_and_dtype([[a, b], [a.clone(), b.clone()]])
    assert set(groups) == {(torch.device("cuda", 0), torch.float32), (torch.device("cpu"), torch.float32)}


def test_second_gpu_is_not_simulated(sim):
    with pytest.raises(NotSimulatedError, match=r"^not simulated: device cuda:1"):
        torch.zeros(1, device="cuda:1")
    with pytest.raises(NotSimulatedError):
        torch.ones(1).to("cuda:1")
    with pytest.raises(NotSimulatedError):
        torch.cuda.set_device(1)


def test_cuda_autocast_casts(sim):
    model = torch.nn.Linear(4, 4).cuda()
    with torch.autocast("cuda", dtype=torch.bfloat16):
        out = model(torch.randn(2, 4, device="cuda"))
        with torch.autocast("cuda", enabled=False):
            full = model(torch.randn(2, 4, device="cuda"))
    assert out.dtype == torch.bfloat16 and out.device.type == "cuda"
    assert full.dtype == torch.float32
    assert not torch.is_autocast_enabled("cpu")


def test_error_traceback_ends_in_user_code(sim):
    import traceback

    def user_step():
        return torch.ones(2, device="cuda") + torch.ones(2)

    with pytest.raises(RuntimeError) as raised:
        user_step()
    frames = traceback.extract_tb(raised.value.__traceback__)
    inside = [f for f in frames if "cuda_sim/" in f.filename.replace("\\", "/")]
    assert frames[-2].name == "user_step" and len(inside) == 1


def test_default_device_and_new_tensors(sim):
    x = torch.ones(2, device="cuda")
    assert {t.device.type for t in (x.new_tensor([1, 2]), x.new(3), x.new_full((2,), 1.0))} == {"cuda"}
    torch.set_default_device("cuda")
    try:
        assert torch.zeros(2).device.type == "cuda"
        assert torch.nn.Linear(2, 2).weight.device.type == "cuda"
    finally:
        torch.set_default_device("cpu")
    assert torch.zeros(2).device.type == "cpu"
    with torch.device("cuda"):
        assert torch.randn(2).device.type == "cuda"
    torch.set_default_device(None)  # "cpu" leaves a DeviceContext on: torch.tensor(cuda_t) would then copy to the cpu


def test_foreach_per_index(sim):
    out = torch._foreach_mul([torch.ones(2, device="cuda"), torch.ones(2)], 2.0)
    assert [t.device.type for t in out] == ["cuda", "cpu"]
    with pytest.raises(RuntimeError, match=r"found at least two devices, cuda:0 and cpu!$"):
        torch._foreach_add_([torch.ones(2, device="cuda")], [torch.ones(2)])


class _Probe(torch.utils.data.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, index):
        return torch.tensor([float(torch.cuda.is_available()), float(torch.ones(1, device="cuda").is_cuda)])


def test_forked_dataloader_workers_inherit_the_simulation(sim):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no TypedStorage deprecation from collate's x.new(storage)
        loader = torch.utils.data.DataLoader(_Probe(), batch_size=2, num_workers=1, pin_memory=True)
        batches = [batch for batch in loader]
    assert all(batch.tolist() == [[1.0, 1.0], [1.0, 1.0]] for batch in batches)
    assert all(batch.is_pinned() for batch in batches)
    x = torch.ones(3, device="cuda")
    assert x.new(x.untyped_storage()).device.type == "cuda"


def test_data_parallel_on_the_single_gpu(sim):
    model = torch.nn.DataParallel(torch.nn.Linear(3, 2)).cuda()
    out = model(torch.randn(4, 3, device="cuda"))
    out.sum().backward()
    assert out.device.type == "cuda" and model.module.weight.grad.device.type == "cuda"
    with pytest.raises(NotSimulatedError):
        torch.nn.parallel.comm.broadcast(torch.ones(2), [0, 1])


def test_storages_made_on_the_gpu(sim):
    import warnings

    untyped = torch.UntypedStorage(8, device="cuda")
    assert untyped.device == torch.device("cuda", 0) and untyped.is_cuda and untyped.nbytes() == 8
    assert torch.UntypedStorage([1, 2], device="cuda").device.type == "cuda"
    assert torch.UntypedStorage(8, device="cpu").device.type == "cpu" and torch.UntypedStorage(8).device.type == "cpu"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # TypedStorage is deprecated
        typed = torch.TypedStorage(4, device="cuda", dtype=torch.float16)
        legacy = torch.cuda.FloatStorage(4)
    assert typed.device.type == "cuda" and typed.dtype == torch.float16 and legacy.device.type == "cuda"
    wrapped = torch.empty(0, device="cuda").set_(untyped)
    assert wrapped.device == torch.device("cuda", 0) and (wrapped.view(torch.uint8) + 1).device.type == "cuda"
    with pytest.raises(NotSimulatedError, match=r"^not simulated: device cuda:1"):
        torch.UntypedStorage(8, device="cuda:1")
