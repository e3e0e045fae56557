"""opacus PR #633: per-sample gradients of a dilated Conv3d on CUDA go through tensor.numpy().

A tiny Conv3d(1, 2, kernel_size=2, dilation=2) + Linear model on ``--device`` wrapped in opacus'
GradSampleModule; forward and backward on a batch of 3. opacus 1.4.1's unfold3d -> filter_dilated_rows
converts the unfolded GPU activations with ``tensor.numpy()``; 1.5 selects the rows with torch.index_select.
"""

from __future__ import annotations

import argparse
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
    from opacus import GradSampleModule

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} opacus={version('opacus')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv3d(1, 2, kernel_size=2, dilation=2), nn.Flatten(), nn.Linear(2 * 3 * 3 * 3, 2))
    model = GradSampleModule(model.to(args.device), loss_reduction="sum")
    inputs = torch.randn(3, 1, 5, 5, 5, device=args.device)
    targets = torch.tensor([0, 1, 0], device=args.device)
    loss = nn.functional.cross_entropy(model(inputs), targets, reduction="sum")
    loss.backward()
    for name, param in model.named_parameters():
        if param.grad_sample is None or param.grad_sample.shape[0] != 3:
            raise AssertionError(f"{name}: no per-sample gradient of batch 3")
        summed = param.grad_sample.sum(dim=0).to(param.grad.device)
        if not torch.allclose(summed, param.grad, atol=1e-4):
            raise AssertionError(f"{name}: per-sample gradients do not sum to .grad")
    print(f"per-sample gradients match .grad for {len(list(model.parameters()))} parameters on {args.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
