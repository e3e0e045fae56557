"""piq #362: MultiScaleSSIMLoss().to('cuda') leaves its default scale weights on the CPU.

A tiny conv net on ``--device`` is trained for two steps against MultiScaleSSIMLoss(data_range=1.0) moved to
the same device. piq 0.7.1 keeps the MS-SSIM scale weights in a plain CPU attribute, so _multi_scale_ssim's
``mcs_ssim ** scale_weights`` mixes devices; piq 0.8.0 (PR #364) registers them as a buffer.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch
from torch import nn


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import piq

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} piq={version('piq')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())
    model = model.to(args.device)
    criterion = piq.MultiScaleSSIMLoss(data_range=1.0).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    targets = torch.rand(1, 3, 168, 168, device=args.device)  # five MS-SSIM scales need >= 161 pixels a side
    for step in range(2):
        loss = criterion(model(targets), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        value = float(loss)
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise AssertionError(f"step {step}: MS-SSIM loss out of range: {value}")
        print(f"step {step}: MS-SSIM loss {value:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
