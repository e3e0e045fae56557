"""madgrad #4 / PR #5: MADGRAD allocates its state in __init__, before the model moves to the GPU (madgrad 1.0).

A small MLP is built on the CPU, MADGRAD(model.parameters(), lr=1e-2) is created, then the model is moved to
``--device`` (the order fastai's learner uses) and trained for three steps. madgrad 1.0's constructor creates
grad_sum_sq/s/x0 with zeros_like/clone of the CPU parameters; the parameters move, the state does not, and
the first step mixes devices. 1.1 creates the state lazily inside step().
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch
from torch import nn

STEPS = 3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from madgrad import MADGRAD

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} madgrad={version('madgrad')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    optimizer = MADGRAD(model.parameters(), lr=1e-2)  # built while the parameters are still on the CPU
    model.to(args.device)  # same Parameter objects, now on the device
    x = torch.randn(32, 8, device=args.device)
    y = x.sum(dim=1, keepdim=True)
    for _ in range(STEPS):
        loss = (model(x) - y).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    if not math.isfinite(float(loss)):
        raise AssertionError(f"loss {float(loss)}")
    print(f"trained {STEPS} steps on {next(model.parameters()).device}, loss {float(loss):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
