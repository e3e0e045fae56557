"""torchmetrics #1453: SSIM on a mixed-precision model's output raises TypeError against float32 targets.

A small conv net on ``--device`` runs under torch.autocast(bfloat16), so its output is bfloat16 while the
targets stay float32, and a StructuralSimilarityIndexMeasure moved to the device is updated with both, as a
validation loop does. torchmetrics 0.11.0's _ssim_check_inputs raises "Expected `preds` and `target` to have
the same data type"; 0.11.1 (PR #1454) casts the target to the predictions' dtype.
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
    from torchmetrics import StructuralSimilarityIndexMeasure

    tm_version = version("torchmetrics")
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} torchmetrics={tm_version}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.Conv2d(8, 3, 3, padding=1), nn.Sigmoid())
    model = model.to(args.device).eval()
    metric = StructuralSimilarityIndexMeasure(data_range=1.0).to(args.device)
    for _ in range(3):
        targets = torch.rand(2, 3, 32, 32, device=args.device)
        with torch.no_grad(), torch.autocast(device_type=args.device, dtype=torch.bfloat16):
            outputs = model(targets)
        print(f"outputs {outputs.dtype}, targets {targets.dtype}")
        metric.update(outputs, targets)
    value = float(metric.compute())
    if not math.isfinite(value) or not -1.0 <= value <= 1.0:
        raise AssertionError(f"SSIM out of range: {value}")
    print(f"SSIM {value:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
