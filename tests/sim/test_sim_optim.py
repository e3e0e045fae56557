"""Optimizers: state created lazily on the parameter's device, resumes, gradient clipping."""

from __future__ import annotations

import io

import pytest
import torch


def _trained(fused: bool):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), fused=fused)
    model(torch.randn(3, 4, device="cuda")).sum().backward()
    optimizer.step()
    return model, optimizer


@pytest.mark.parametrize("fused", [False, True])
def test_state_follows_the_parameters(sim, fused):
    model, optimizer = _trained(fused)
    state = optimizer.state[model.weight]
    assert state["exp_avg"].device.type == "cuda" and state["exp_avg_sq"].device.type == "cuda"
    # torch/optim/adam.py: fused/capturable keep `step` on the parameter's device, others on the CPU
    assert state["step"].device.type == ("cuda" if fused else "cpu")


def test_resume_moves_fused_step_to_the_param_device(sim):
    # torch >= 2.1 Optimizer.load_state_dict (_process_value_according_to_param_policy, PR #102619)
    model, optimizer = _trained(True)
    buffer = io.BytesIO()
    torch.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    resumed = torch.optim.AdamW(model.parameters(), fused=True)
    resumed.load_state_dict(torch.load(buffer, map_location="cpu"))
    assert resumed.state[model.weight]["step"].device.type == "cuda"
    model(torch.randn(3, 4, device="cuda")).sum().backward()
    resumed.step()


def test_non_fused_resume_keeps_step_on_cpu(sim):
    model, optimizer = _trained(False)
    buffer = io.BytesIO()
    torch.save(optimizer.state_dict(), buffer)
    buffer.seek(0)
    resumed = torch.optim.AdamW(model.parameters())
    resumed.load_state_dict(torch.load(buffer, map_location="cpu"))
    state = resumed.state[model.weight]
    assert state["step"].device.type == "cpu" and state["exp_avg"].device.type == "cuda"
    model(torch.randn(3, 4, device="cuda")).sum().backward()
    resumed.step()


@pytest.mark.parametrize("foreach", [False, True])
def test_sgd_momentum_and_clipping(sim, foreach):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, foreach=foreach)
    model(torch.randn(3, 4, device="cuda")).pow(2).sum().backward()
    norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1e-3)
    assert norm.device.type == "cuda"
    optimizer.step()
    assert optimizer.state[model.weight]["momentum_buffer"].device.type == "cuda"


def test_grad_scaler(sim):
    model = torch.nn.Linear(4, 2).cuda()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scaler = torch.amp.GradScaler("cuda")
    scaler.scale(model(torch.randn(3, 4, device="cuda")).sum()).backward()
    scaler.step(optimizer)
    scaler.update()
    assert scaler.get_scale() > 0
