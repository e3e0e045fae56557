"""Backward runs simulated: gradients land on their parameter's device, hooks stay simulated."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def test_gradients_on_the_parameter_device(sim):
    model = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.LayerNorm(8),
                                torch.nn.Linear(8, 3)).cuda()
    logits = model(torch.randn(5, 4, device="cuda"))
    F.cross_entropy(logits, torch.tensor([0, 1, 2, 0, 1], device="cuda")).backward()
    assert {p.grad.device.type for p in model.parameters()} == {"cuda"}


def test_mixed_precision_backward(sim):
    x = torch.randn(3, 4, device="cuda", requires_grad=True)
    for dtype in (torch.bfloat16, torch.float16):
        (x.to(dtype) * 2).float().sum().backward()
    assert x.grad.device.type == "cuda"


def test_gradient_flows_back_across_a_move(sim):
    leaf = torch.randn(3, requires_grad=True)
    (leaf.to("cuda") * 2).sum().backward()
    assert leaf.grad.device.type == "cpu"
    leaf_cuda = torch.randn(3, device="cuda", requires_grad=True)
    (leaf_cuda.cpu() * 2).sum().backward()
    assert leaf_cuda.grad.device.type == "cuda"


def test_cpu_scalar_parameter_gets_a_cpu_gradient(sim):
    # engine.cpp validate_outputs moves a 0-dim gradient to its input's device
    scale = torch.tensor(2.0, requires_grad=True)
    (torch.ones(3, device="cuda") * scale).sum().backward()
    assert scale.grad.device.type == "cpu"


def test_undefined_output_gradients(sim):
    weight = torch.randn(4, 3, device="cuda", requires_grad=True)
    first, _ = weight.chunk(2)  # the unused half gets zeros the engine creates in C++
    first.sum().backward()
    assert weight.grad.device.type == "cuda"


def test_embedding_and_attention_backward(sim):
    embedding = torch.nn.Embedding(10, 8).cuda()
    layer = torch.nn.TransformerEncoderLayer(8, 2, 16, batch_first=True, dropout=0.0).cuda()
    out = layer(embedding(torch.tensor([[1, 2, 3]], device="cuda")))
    out.pow(2).mean().backward()
    assert embedding.weight.grad.device.type == "cuda"
    assert {p.grad.device.type for p in layer.parameters()} == {"cuda"}


def test_hooks_in_backward_run_simulated(sim):
    seen = []
    x = torch.randn(3, device="cuda", requires_grad=True)
    x.register_hook(lambda grad: seen.append((grad.device.type, torch.zeros(1, device="cuda").device.type)))
    (x * 3).sum().backward()
    assert seen == [("cuda", "cuda")]


def test_custom_autograd_function(sim):
    class Double(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.device = x.device
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            assert grad.device == ctx.device
            return grad * 2

    x = torch.randn(3, device="cuda", requires_grad=True)
    Double.apply(x).sum().backward()
    assert x.grad.device.type == "cuda"


def test_checkpointed_block(sim):
    from torch.utils.checkpoint import checkpoint

    block = torch.nn.Linear(4, 4).cuda()
    x = torch.randn(2, 4, device="cuda", requires_grad=True)
    checkpoint(block, x, use_reentrant=False).sum().backward()
    assert x.grad.device.type == "cuda" and block.weight.grad.device.type == "cuda"


def test_custom_function_returning_a_gradient_on_the_wrong_device(sim):
    import pytest

    class Leaky(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad.cpu() * 2  # engine.cpp validate_outputs rejects this on a real GPU

    x = torch.randn(3, device="cuda", requires_grad=True)
    with pytest.raises(RuntimeError) as raised:
        Leaky.apply(x).sum().backward()
    assert str(raised.value) == ("Function LeakyBackward returned an invalid gradient at index 0 - expected device "
                                 "cuda:0 but got cpu")
