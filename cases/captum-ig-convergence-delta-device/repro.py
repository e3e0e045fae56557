"""captum #163: IntegratedGradients(return_convergence_delta=True) on CUDA builds the attribution sum on the CPU.

The issue's call on a small two-layer ReLU network on ``--device``: IntegratedGradients(model).attribute(input,
baseline, target=0, return_convergence_delta=True). captum 0.1.0's Attribution.compute_convergence_delta sums
the attributions row by row into ``torch.tensor([...])`` (on the CPU) and subtracts the device-side output
difference. 0.2.0 (PR #169) stacks the sums on the attributions' device.
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
    from captum.attr import IntegratedGradients

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} captum={version('captum')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Linear(3, 2)).to(args.device).eval()
    inputs = torch.rand(2, 3, device=args.device)
    baseline = torch.zeros(2, 3, device=args.device)
    ig = IntegratedGradients(model)
    attributions, delta = ig.attribute(inputs, baseline, target=0, return_convergence_delta=True)
    if attributions.shape != inputs.shape or delta.shape != (2,):
        raise AssertionError(f"attributions {tuple(attributions.shape)}, delta {tuple(delta.shape)}")
    if float(delta.abs().max()) > 0.05:  # completeness: attributions sum to F(input) - F(baseline)
        raise AssertionError(f"convergence delta too large: {delta.tolist()}")
    print(f"attributions {tuple(attributions.shape)} on {attributions.device}; delta {delta.tolist()}")


if __name__ == "__main__":
    main(sys.argv[1:])
