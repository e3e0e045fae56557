"""torchmetrics PR #1303: SpearmanCorrCoef rejects half-precision predictions from an autocast forward.

The upstream path: a regression model evaluated under mixed precision (``torch.autocast``, what Lightning's
``precision="16-mixed"`` / ``"bf16-mixed"`` and HF Trainer ``fp16=True`` do), its predictions fed to
``SpearmanCorrCoef.update(preds, target)`` with float32 labels -- STS-B-style evaluation. torchmetrics
0.10.0/0.10.1's ``_spearman_corrcoef_update`` demanded ``preds.dtype == target.dtype`` and raised
``TypeError`` for float16/bfloat16 predictions against float32 targets; 0.10.2 (PR #1303) only requires
both to be floating point. Not a placement bug: it fails on every device. The autocast dtype follows the
device's usual AMP dtype (float16 on CUDA, bfloat16 on the CPU).
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

BATCHES, BATCH = 3, 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--float-preds", action="store_true",
                        help="workaround: cast the predictions to float32 before update()")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from torchmetrics import SpearmanCorrCoef

    print(f"variant={args.variant} device={args.device} torchmetrics={version('torchmetrics')}")
    amp_dtype = torch.float16 if args.device == "cuda" else torch.bfloat16
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(args.device).eval()
    spearman = SpearmanCorrCoef().to(args.device)
    for _ in range(BATCHES):
        features = torch.randn(BATCH, 8)
        labels = features.sum(dim=1)  # float32 similarity scores
        with torch.no_grad(), torch.autocast(device_type=args.device, dtype=amp_dtype):
            preds = model(features.to(args.device)).squeeze(1)
        if preds.dtype != amp_dtype:
            raise RuntimeError(f"repro precondition: autocast produced {preds.dtype}, expected {amp_dtype}")
        if args.float_preds:
            preds = preds.float()
        spearman.update(preds, labels.to(args.device))  # 0.10.0/0.10.1: TypeError, dtypes differ
    rho = float(spearman.compute())
    if not -1.0 <= rho <= 1.0:
        raise AssertionError(f"Spearman correlation out of range: {rho}")
    print(f"Spearman rho {rho:.4f} ({amp_dtype} predictions, float32 labels)")


if __name__ == "__main__":
    main(sys.argv[1:])
