"""mmengine #1401: OneCycleLR built without total_steps raises AttributeError ('end') in 0.9.0.

SGD over a small model on ``--device`` with an iteration-based OneCycleLR(eta_max=0.1, begin=0, end=20) and no
total_steps, as a config would declare it; 20 training iterations step the scheduler. mmengine 0.9.0 reads
self.end before the base class sets it; 0.9.1 (PR #1403) derives total_steps from the begin/end arguments.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

ITERS, ETA_MAX = 20, 0.1


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from mmengine.optim.scheduler import OneCycleLR

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} mmengine={version('mmengine')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    scheduler = OneCycleLR(optimizer, eta_max=ETA_MAX, pct_start=0.3, begin=0, end=ITERS, by_epoch=False)
    lrs = []
    for _ in range(ITERS):
        x = torch.randn(4, 8, device=args.device)
        loss = model(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        lrs.append(optimizer.param_groups[0]["lr"])
        scheduler.step()
    peak = max(lrs)
    if abs(peak - ETA_MAX) > 1e-3 * ETA_MAX or lrs[-1] > 0.1 * ETA_MAX:
        raise AssertionError(f"not a one-cycle schedule: peak {peak}, last {lrs[-1]}")
    print(f"lr peak {peak:.4f} at iteration {lrs.index(peak)}, last {lrs[-1]:.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
