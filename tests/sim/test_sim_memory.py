"""Device memory statistics of the simulated GPU, against CUDA's caching allocator
(c10/cuda/CUDACachingAllocator.cpp): each allocation is rounded up to 512 bytes (kMinBlockSize),
memory is allocated while a storage lives and freed with it; reserved memory (2 MiB segments) stays
until empty_cache(); mem_get_info's free memory excludes what the allocator reserved.
Patterns from library suites that run on a GPU: accelerate's test_release_memory (a model moved to
cuda raises memory_allocated, releasing it lowers it) and activation-offload tests (peak memory
with saved tensors on the host is below the plain peak)."""

from __future__ import annotations

import gc

import pytest
import torch


def _allocated() -> int:
    gc.collect()
    return torch.cuda.memory_allocated()


def test_a_model_on_cuda_raises_memory_allocated_and_freeing_lowers_it(sim):
    before = _allocated()
    model = torch.nn.Linear(1000, 1000).cuda()
    # weight 4,000,000 bytes -> 4,000,256 (512-byte blocks); bias 4,000 -> 4,096
    assert _allocated() - before == 4_000_256 + 4_096
    assert torch.cuda.memory_stats()["allocation.all.current"] >= 2
    del model
    assert _allocated() == before


def test_cpu_tensors_and_moves_back_to_the_cpu_are_not_counted(sim):
    before = _allocated()
    host = torch.ones(1024)
    assert _allocated() == before
    on_gpu = host.cuda()
    assert _allocated() == before + 4096
    back = on_gpu.cpu()
    del on_gpu
    assert _allocated() == before and back.device.type == "cpu"


def test_small_allocations_round_up_to_512_bytes_and_empty_ones_allocate_nothing(sim):
    before = _allocated()
    one = torch.zeros(1, device="cuda")
    assert _allocated() - before == 512
    empty = torch.empty(0, device="cuda")
    assert _allocated() - before == 512
    del one, empty


def test_outputs_views_and_resizes(sim):
    x = torch.ones(256, device="cuda")
    before = _allocated()
    y = x * 2  # a fresh output on cuda
    view = y.view(16, 16)  # shares y's storage: no new allocation
    assert _allocated() - before == 1024
    del y
    assert _allocated() - before == 1024  # the view keeps the storage alive
    view.resize_(64, 64)  # the storage grows in place: 16 KiB
    assert _allocated() - before == 16384
    del view
    assert _allocated() == before


def test_peak_reset_and_accumulated_counters(sim):
    base = _allocated()  # collects earlier tests' garbage first: nothing is freed behind the peak's back
    torch.cuda.reset_peak_memory_stats()
    big = torch.empty(1 << 20, device="cuda")  # 4 MiB: the large pool
    del big
    assert torch.cuda.max_memory_allocated() - base == 4 << 20
    stats = torch.cuda.memory_stats()
    assert stats["allocated_bytes.large_pool.peak"] >= 4 << 20 and stats["allocated_bytes.all.freed"] >= 4 << 20
    now = _allocated()
    torch.cuda.reset_peak_memory_stats()
    assert torch.cuda.max_memory_allocated() == now == torch.cuda.memory_allocated()
    torch.cuda.reset_accumulated_memory_stats()
    assert torch.cuda.memory_stats()["allocated_bytes.all.freed"] == 0


def test_reserved_memory_is_cached_until_empty_cache_and_not_free(sim):
    torch.cuda.empty_cache()
    free_before, total = torch.cuda.mem_get_info()
    assert total == torch.cuda.get_device_properties(0).total_memory
    x = torch.empty(3 << 20, dtype=torch.uint8, device="cuda")  # 3 MiB -> two 2 MiB segments
    assert torch.cuda.memory_reserved() >= torch.cuda.memory_allocated() >= 3 << 20
    free_during, _ = torch.cuda.mem_get_info()
    assert free_before - free_during >= 3 << 20
    reserved = torch.cuda.memory_reserved()
    del x
    gc.collect()
    assert torch.cuda.memory_reserved() == reserved  # the caching allocator keeps it
    torch.cuda.empty_cache()
    assert torch.cuda.memory_reserved() < reserved
    assert torch.cuda.mem_get_info()[0] == free_before


def test_the_summary_and_torch_accelerator_read_the_same_counters(sim):
    x = torch.ones(1000, device="cuda")
    assert torch.accelerator.memory_allocated() == torch.cuda.memory_allocated()
    assert torch.accelerator.memory_stats()["allocated_bytes.all.current"] == torch.cuda.memory_allocated()
    assert torch.accelerator.get_memory_info() == torch.cuda.mem_get_info()
    assert "Allocated memory" in torch.cuda.memory_summary()
    del x


def test_checkpoint_loads_and_storages_are_counted(sim, tmp_path):
    path = tmp_path / "w.pt"
    torch.save({"w": torch.ones(1024)}, path)
    before = _allocated()
    loaded = torch.load(path, map_location="cuda")
    assert _allocated() - before == 4096
    storage = torch.UntypedStorage(2048, device="cuda")
    assert _allocated() - before == 4096 + 2048
    del loaded, storage
    assert _allocated() == before


def test_saved_activations_offloaded_to_the_host_lower_the_peak(sim):
    """accelerate's test_saved_activations_move_to_host pattern: saved tensors packed to the CPU."""
    model = torch.nn.Sequential(*[torch.nn.Linear(256, 256) for _ in range(8)]).cuda()
    x = torch.randn(512, 256, device="cuda")

    def peak(offload: bool) -> int:
        gc.collect()
        torch.cuda.reset_peak_memory_stats()
        start = torch.cuda.memory_allocated()
        if offload:
            with torch.autograd.graph.save_on_cpu():
                loss = model(x).sum()
        else:
            loss = model(x).sum()
        held = torch.cuda.max_memory_allocated() - start
        loss.backward()
        return held

    plain, offloaded = peak(False), peak(True)
    assert plain > 512 * 256 * 4 * 8 > offloaded > 0


def test_a_second_device_is_not_simulated(sim):
    from cuda_sim import NotSimulatedError

    with pytest.raises(NotSimulatedError):
        torch.cuda.memory_allocated(1)
    with pytest.raises(NotSimulatedError):
        torch.cuda.reset_peak_memory_stats("cuda:1")
