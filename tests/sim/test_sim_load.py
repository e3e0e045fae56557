"""torch.save / torch.load of simulated CUDA tensors, with every kind of map_location."""

from __future__ import annotations

import io

import pytest
import torch
from cuda_sim import NotSimulatedError, simulate


def _checkpoint() -> io.BytesIO:
    model = torch.nn.Linear(3, 2).cuda()
    buffer = io.BytesIO()
    torch.save({"model": model.state_dict(), "cpu": torch.arange(3)}, buffer)
    buffer.seek(0)
    return buffer


def _devices(loaded: dict) -> set[str]:
    return {str(v.device) for v in loaded["model"].values()}


@pytest.mark.parametrize(("map_location", "expected"), [
    (None, {"cuda:0"}),  # saved from cuda: loads back on cuda, as on a GPU host
    ("cpu", {"cpu"}),
    ("cuda", {"cuda:0"}),
    ("cuda:0", {"cuda:0"}),
    (torch.device("cpu"), {"cpu"}),
    (torch.device("cuda"), {"cuda:0"}),
    ({"cuda:0": "cpu"}, {"cpu"}),
    (lambda storage, location: storage, {"cpu"}),  # the storage is deserialized on the CPU first
    (lambda storage, location: storage.cuda(), {"cuda:0"}),
])
def test_map_location(sim, map_location, expected):
    loaded = torch.load(_checkpoint(), map_location=map_location)
    assert _devices(loaded) == expected
    assert loaded["cpu"].device.type == ("cuda" if map_location in ("cuda", "cuda:0") or (
        isinstance(map_location, torch.device) and map_location.type == "cuda") else "cpu") or callable(map_location)


def test_cpu_tensors_stay_cpu_without_map_location(sim):
    loaded = torch.load(_checkpoint())
    assert loaded["cpu"].device.type == "cpu"


def test_values_survive_the_round_trip(sim):
    model = torch.nn.Linear(3, 2).cuda()
    buffer = io.BytesIO()
    torch.save(model.state_dict(), buffer)
    buffer.seek(0)
    loaded = torch.load(buffer, weights_only=True)
    assert torch.equal(loaded["weight"].cpu(), model.weight.detach().cpu())


def test_second_gpu_location_is_not_simulated(sim):
    with pytest.raises(NotSimulatedError):
        torch.load(_checkpoint(), map_location="cuda:1")


def test_checkpoint_written_under_the_simulation_loads_on_cpu_outside_it(tmp_path):
    path = tmp_path / "ckpt.pt"
    with simulate():
        torch.save(torch.ones(2, device="cuda"), path)
    assert torch.load(path, map_location="cpu").device.type == "cpu"


def test_storage_moves(sim):
    storage = torch.ones(2).untyped_storage()
    assert storage.device.type == "cpu" and not storage.is_cuda
    moved = storage.cuda()
    assert moved.device == torch.device("cuda", 0) and moved.is_cuda
    assert moved.cpu().device.type == "cpu"
    assert moved.clone().device.type == "cuda"


def test_pickle_and_deepcopy_keep_placement(sim):
    import copy
    import pickle

    t = torch.arange(3.0, device="cuda")
    assert pickle.loads(pickle.dumps(t)).device.type == "cuda"
    assert copy.deepcopy(t).device.type == "cuda"
    assert copy.deepcopy(torch.nn.Linear(2, 2).cuda()).weight.device.type == "cuda"
