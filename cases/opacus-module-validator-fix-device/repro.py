"""opacus #339: ModuleValidator.fix on a CUDA model puts the replacement GroupNorm on the CPU.

A tiny Conv2d-BatchNorm2d-ReLU-Linear classifier on ``--device`` goes through ModuleValidator.fix (BatchNorm ->
GroupNorm), then a forward and backward pass on a batch on the device. opacus 1.1.0 creates replacement modules
on the CPU; 1.1.1 (PR #356) moves them to the replaced module's device.
"""

from __future__ import annotations

import argparse
import os
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
    # ModuleValidator.fix deep-copies the model with torch.save/torch.load of a whole nn.Module, which torch >= 2.6
    # refuses under weights_only=True; the old default, for this in-memory copy of our own model.
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    from opacus.validators import ModuleValidator

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} opacus={version('opacus')}")
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, kernel_size=3), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 2)
    ).to(args.device)
    model = ModuleValidator.fix(model)
    errors = ModuleValidator.validate(model, strict=False)
    if errors:
        raise AssertionError(f"model still invalid after fix: {errors}")
    inputs = torch.randn(4, 3, 8, 8, device=args.device)
    targets = torch.tensor([0, 1, 1, 0], device=args.device)
    loss = nn.functional.cross_entropy(model(inputs), targets)
    loss.backward()
    norm = type(model[1]).__name__
    print(f"fixed model ({norm}) on {next(model.parameters()).device}: loss {float(loss):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
