"""captum PR #1245: FeatureAblation's ablation mask stays on the feature_mask's device (captum 0.7.0).

The script follows FeatureAblation.attribute's docstring example: a small classifier over 4x4 inputs,
the inputs and the model on ``--device``, and the documented ``feature_mask = torch.tensor([[...]])``
grouping the 16 cells into 4 features, built on the CPU as the example builds it. In 0.7.0
``_construct_ablated_input`` stacks ``input_mask == j`` into ``current_mask`` on the mask's device and
multiplies the device input by it; 0.8.0 moves ``current_mask`` to the input's device first.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn


class SimpleClassifier(nn.Module):
    """The docstring's model: N x 4 x 4 inputs to N x 3 scores."""

    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(16, 8), nn.ReLU(), nn.Linear(8, 3))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


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
    net = SimpleClassifier().to(args.device).eval()
    inputs = torch.randn(2, 4, 4, device=args.device)
    feature_mask = torch.tensor([[[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]])  # as documented
    ablator = FeatureAblation(net)
    attr = ablator.attribute(inputs, target=1, feature_mask=feature_mask)  # 0.7.0: cuda input * cpu mask
    if attr.shape != inputs.shape or attr.device != inputs.device:
        raise AssertionError(f"attributions {tuple(attr.shape)} on {attr.device}, inputs on {inputs.device}")
    groups = attr[0].reshape(4, 4)
    if not torch.equal(groups[0, 0].expand(2, 2), groups[:2, :2]):
        raise AssertionError("cells of one feature group got different attributions")
    print(f"attributions {tuple(attr.shape)} on {attr.device}; group 0 of example 0: {float(groups[0, 0]):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
