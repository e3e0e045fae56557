"""piq #362: MultiScaleSSIMLoss keeps its default scale weights as a plain CPU tensor attribute.

A small conv net restores noisy 176 x 176 images on ``--device`` and trains for two steps against an
``MultiScaleSSIMLoss().to(device)`` criterion, as issue #362 moves it with ``.cuda()``. In piq 0.7.1 the
loss's default MS-SSIM scale weights are a tensor attribute, not a buffer, so ``.to()`` leaves them on the
CPU and the weighted product of the scales mixes devices; piq 0.8.0 registers them as a buffer. The
script checks the weights followed the module and that the loss is finite and in [0, 1].
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch
from torch import nn

SIZE = 176  # MS-SSIM's five scales with an 11 x 11 kernel need at least 161 pixels


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
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for step in range(2):
        clean = torch.rand(2, 3, SIZE, SIZE, device=args.device)
        noisy = (clean + 0.1 * torch.randn_like(clean)).clamp(0, 1)
        loss = criterion(model(noisy), clean)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not math.isfinite(loss.item()) or not 0.0 <= loss.item() <= 1.0:
            raise AssertionError(f"MS-SSIM loss out of range at step {step}: {loss.item()}")
        print(f"step {step}: MS-SSIM loss {loss.item():.4f}")
    if criterion.scale_weights.device.type != args.device:
        raise AssertionError(f"scale weights on {criterion.scale_weights.device}, the loss moved to {args.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
