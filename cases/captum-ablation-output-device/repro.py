"""captum PR #528: FeatureAblation with a forward function whose output is on another device than the inputs.

The inputs and the model are on ``--device``; the forward function hands its scores back on the CPU, as a
wrapper that post-processes outputs on the host does (or a model whose last stage sits elsewhere). captum
0.3.0 multiplies the (CPU) output differences by the ablation mask, which lives on the inputs' device;
0.3.1 moves the output differences to the attributions' device first.
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
    from captum.attr import FeatureAblation

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} captum={version('captum')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), nn.Linear(8, 3)).to(args.device).eval()

    def scores_on_host(x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(model(x), dim=1).cpu()  # outputs collected on the CPU

    inputs = torch.randn(4, 6, device=args.device)
    attributions = FeatureAblation(scores_on_host).attribute(inputs, target=0)  # 0.3.0: cpu diff * device mask
    if attributions.shape != inputs.shape or not torch.isfinite(attributions).all():
        raise AssertionError(f"bad attributions {tuple(attributions.shape)}")
    print(f"attributions {tuple(attributions.shape)} on {attributions.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
