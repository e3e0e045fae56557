"""timm #2127: ModelEmaV3(model, device="cpu") on a CUDA model lerps CPU EMA weights toward CUDA weights.

A small conv net with BatchNorm trains on ``--device`` for three SGD steps; after each step a timm
ModelEmaV3 kept on the CPU (``device="cpu"``, as the issue sets it, to spare GPU memory) is updated from
the model. timm 0.9.16's apply_update_ calls ``ema_v.lerp_(model_v, ...)`` with the model's own (CUDA)
tensor; 1.0.3 moves it to the EMA device first. The script checks the EMA weights against an average
computed by hand on the CPU.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

DECAY = 0.9


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from timm.utils import ModelEmaV3

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} timm={version('timm')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.BatchNorm2d(8), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(8, 4)).to(args.device)
    ema = ModelEmaV3(model, decay=DECAY, device="cpu")
    expected = {name: value.detach().cpu().clone() for name, value in model.state_dict().items()}
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        inputs = torch.randn(4, 3, 8, 8, device=args.device)
        targets = torch.randint(0, 4, (4,), device=args.device)
        loss = nn.functional.cross_entropy(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        ema.update(model)
        for name, value in model.state_dict().items():
            current = value.detach().cpu()
            expected[name] = expected[name].lerp(current, 1 - DECAY) if current.is_floating_point() else current
        print(f"step {step}: loss {loss.item():.4f}")
    for name, value in ema.module.state_dict().items():
        if value.device.type != "cpu":
            raise AssertionError(f"EMA {name} left the CPU: {value.device}")
        if not torch.allclose(value.float(), expected[name].float(), atol=1e-5):
            raise AssertionError(f"EMA {name} differs from the hand-computed average")
    print(f"EMA of {len(expected)} tensors kept on the CPU matches the hand-computed average")


if __name__ == "__main__":
    main(sys.argv[1:])
