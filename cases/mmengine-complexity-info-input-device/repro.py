"""mmengine #1092: get_model_complexity_info(input_shape=...) feeds a CPU dummy input to a CUDA model.

A small conv classifier is moved to ``--device`` and analysed with mmengine.analysis.get_model_complexity_info
given only ``input_shape``. mmengine 0.7.3 builds the dummy input with torch.randn on the CPU, so the traced
forward of a CUDA model fails in its first convolution; 0.7.4 (PR #1130) moves it to the model's device.
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
    from mmengine.analysis import get_model_complexity_info

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} mmengine={version('mmengine')}")
    torch.manual_seed(0)
    model = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(8, 4)
    )
    # Frozen, as for an inference FLOP count: cuda-sim's placement tracker and torch.jit tracing disagree on
    # trainable parameters ("Cannot insert a Tensor that requires grad as a constant"); real CUDA does not care.
    model = model.to(args.device).eval().requires_grad_(False)
    expected_params = sum(p.numel() for p in model.parameters())
    info = get_model_complexity_info(model, input_shape=(3, 16, 16), show_table=False, show_arch=False)
    if info["params"] != expected_params:
        raise AssertionError(f"params {info['params']} != {expected_params}")
    if not info["flops"] > 0:
        raise AssertionError(f"no FLOPs counted: {info['flops']}")
    print(f"flops={info['flops']} params={info['params']} on {args.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
