"""torch-optimizer #349: Lookahead has no ``defaults``, so OneCycleLR cannot schedule it (0.1.0).

A small linear regression on ``--device`` is trained for a few steps with
torch_optimizer.Lookahead(torch.optim.AdamW(...), k=2) under torch.optim.lr_scheduler.OneCycleLR, which reads
``optimizer.defaults`` to find the momentum/betas to cycle. torch-optimizer 0.1.0's Lookahead never sets
``defaults``; 0.2.0 (PR #350) builds it from k, alpha and the inner optimizer's defaults.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

STEPS = 6


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import torch_optimizer

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"torch-optimizer={version('torch-optimizer')}")
    torch.manual_seed(0)
    model = nn.Linear(4, 1).to(args.device)
    optimizer = torch_optimizer.Lookahead(torch.optim.AdamW(model.parameters(), lr=1e-2), k=2, alpha=0.5)
    scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=5e-2, total_steps=STEPS)
    x = torch.randn(16, 4, device=args.device)
    y = x.sum(dim=1, keepdim=True)
    for _ in range(STEPS):
        loss = (model(x) - y).square().mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        scheduler.step()
    print(f"trained {STEPS} steps, loss {float(loss):.4f}, last lr {scheduler.get_last_lr()[0]:.5f}")


if __name__ == "__main__":
    main(sys.argv[1:])
