"""captum #316: a per-example target given as a Python list gathers CUDA outputs with a CPU index (captum 0.2.0).

Saliency (any gradient attribution goes through the same target selection) on a small classifier on
``--device`` with ``target=[2, 0, 1]``, one class per example, as the issue does after switching from a target
tensor to a list. captum 0.2.0's _select_targets builds ``torch.tensor(target)`` on the CPU and calls
``torch.gather(output, 1, index)``; 0.3.0 creates the index on the output's device.
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
    from captum.attr import Saliency

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} captum={version('captum')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.Tanh(), nn.Linear(8, 3)).to(args.device).eval()
    inputs = torch.randn(3, 6, device=args.device, requires_grad=True)
    targets = [2, 0, 1]  # one class per example, as a list (a tensor of targets works in 0.2.0)
    grads = Saliency(model).attribute(inputs, target=targets)  # 0.2.0: gather(cuda output, cpu index)
    expected = Saliency(model).attribute(inputs, target=torch.tensor(targets, device=args.device))
    if not torch.allclose(grads, expected):
        raise AssertionError("list target and tensor target give different saliency maps")
    print(f"saliency {tuple(grads.shape)} on {grads.device}, equal to the tensor-target result")


if __name__ == "__main__":
    main(sys.argv[1:])
