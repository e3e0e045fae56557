"""torchmetrics #455: BootStrapper on GPU tensors indexes them with CPU bootstrap indices.

The upstream path: ``BootStrapper(base_metric, num_bootstraps=N)`` moved to the device with ``.to()``,
``update(preds, target)`` with device tensors, ``compute()`` for mean and std, as in the report (a
regression metric wrapped for confidence intervals). In 0.5.0 ``BootStrapper.update`` draws
``sample_idx = _bootstrap_sampler(size, ...)`` on the CPU and calls ``torch.index_select(arg, 0, sample_idx)``
on every tensor argument, so CUDA inputs meet a CPU index. 0.5.1 (PR #462) moves the indices to the
metric's device.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch

BOOTSTRAPS, BATCHES, BATCH = 5, 3, 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from torchmetrics import BootStrapper, MeanSquaredError

    print(f"variant={args.variant} device={args.device} torchmetrics={version('torchmetrics')}")
    torch.manual_seed(0)  # the bootstrap sampler draws from the global generator
    generator = torch.Generator().manual_seed(0)
    bootstrap = BootStrapper(MeanSquaredError(), num_bootstraps=BOOTSTRAPS).to(args.device)
    for _ in range(BATCHES):
        preds = torch.randn(BATCH, generator=generator)
        target = preds + 0.5 * torch.randn(BATCH, generator=generator)
        bootstrap.update(preds.to(args.device), target.to(args.device))  # 0.5.0: index_select(cuda, cpu idx)
    result = bootstrap.compute()
    mean, std = float(result["mean"]), float(result["std"])
    if not (0.0 < mean < 1.0 and std >= 0.0):
        raise AssertionError(f"implausible bootstrapped MSE: mean {mean}, std {std}")
    print(f"bootstrapped MSE mean {mean:.4f} std {std:.4f} on {result['mean'].device}")


if __name__ == "__main__":
    main(sys.argv[1:])
