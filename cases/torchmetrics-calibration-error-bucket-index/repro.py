"""torchmetrics #1744: BinaryCalibrationError fails when a prediction is exactly 0 (bucket index -1).

A BinaryCalibrationError(n_bins=15, norm="l1") moved to ``--device`` is updated, as a validation loop does,
with batches of probabilities that include hard 0.0 and 1.0 predictions (the issue's perfectly calibrated
[0, 1, 0, 1] among them) and computed. torchmetrics 0.11.4 bins with torch.bucketize(..., right=False) - 1, so
a confidence of exactly 0 gets bucket -1 and scatter_add_ fails; 1.0.0 (PR #1648) bucketizes with right=True.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from torchmetrics.classification import BinaryCalibrationError

    tm_version = version("torchmetrics")
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} torchmetrics={tm_version}")
    torch.manual_seed(0)
    metric = BinaryCalibrationError(n_bins=15, norm="l1").to(args.device)
    batches = [
        (torch.rand(8), torch.randint(0, 2, (8,))),
        (torch.tensor([0.0, 1.0, 0.0, 1.0]), torch.tensor([0, 1, 0, 1])),  # the data
    ]
    for preds, target in batches:
        metric.update(preds.to(args.device), target.to(args.device))
    ece = float(metric.compute())
    if not math.isfinite(ece) or not 0.0 <= ece <= 1.0:
        raise AssertionError(f"ECE out of range: {ece}")
    print(f"ECE {ece:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
