"""torchmetrics PR #542: a metric that is a child module keeps device == cpu after parent.to("cuda").

A small nn.Module holding BootStrapper(MeanSquaredError(), num_bootstraps=5) is moved with the parent's
``.to(device)`` (as a LightningModule's metrics are); three batches on ``--device`` are fed to the child.
torchmetrics 0.5.1 updates Metric.device only in its own to()/cuda()/cpu(), so BootStrapper moves its
resampling indices to the CPU and index_selects the CUDA inputs with them; 0.6.0 updates it in _apply.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

BOOTSTRAPS = 5
BATCHES = 3
BATCH = 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


class Regressor(nn.Module):
    def __init__(self, metric: nn.Module) -> None:
        super().__init__()
        self.head = nn.Linear(4, 1)
        self.metric = metric


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from torchmetrics import BootStrapper, MeanSquaredError

    print(f"variant={args.variant} device={args.device} torchmetrics={version('torchmetrics')}")
    torch.manual_seed(0)  # the bootstrap sampler draws from the global generator
    generator = torch.Generator().manual_seed(0)
    model = Regressor(BootStrapper(MeanSquaredError(), num_bootstraps=BOOTSTRAPS)).to(args.device)
    print(f"parent on {model.head.weight.device}; child metric.device = {model.metric.device}")
    for _ in range(BATCHES):
        preds = torch.randn(BATCH, generator=generator)
        target = preds + 0.5 * torch.randn(BATCH, generator=generator)
        model.metric.update(preds.to(args.device), target.to(args.device))  # 0.5.1: CPU indices
    result = model.metric.compute()
    mean, std = float(result["mean"]), float(result["std"])
    if not (0.0 < mean < 1.0 and std >= 0.0):
        raise AssertionError(f"implausible bootstrapped MSE: mean {mean}, std {std}")
    print(f"bootstrapped MSE mean {mean:.4f} std {std:.4f} on {result['mean'].device}")


if __name__ == "__main__":
    main(sys.argv[1:])
