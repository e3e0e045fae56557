"""LyCORIS #146: extract_diff's small-conv ("lora_mid") path subtracts a CPU tensor from a device tensor.

Mirrors tools/extract_locon.py: both models are loaded on the CPU and the extraction runs on
``extract_device``; 2.1.0.dev4-dev7 move each module to that device and then subtract the
``.cpu()`` einsum reconstruction from the device weight.
"""

from __future__ import annotations

import argparse
import copy
import sys

import torch
from torch import nn

RANK = 4  # below out_channels / 2, otherwise extract_conv returns the "full" mode


class UNetStub(nn.Module):
    """Stands in for a UNet: one 3x3 Conv2d, matched by class name like the real target modules."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(16, 16, 3, padding=1)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def build_models() -> tuple[nn.Module, nn.Module]:
    base = UNetStub()
    tuned = copy.deepcopy(base)
    with torch.no_grad():
        for param in tuned.parameters():
            param.add_(0.1 * torch.randn_like(param))
    return base, tuned


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    from importlib.metadata import version

    from lycoris.utils import extract_diff

    print(f"variant={args.variant} device={args.device} lycoris-lora={version('lycoris-lora')}")
    base, tuned = build_models()
    state = extract_diff(
        [], [], base, tuned,
        mode="fixed", linear_mode_param=RANK, conv_mode_param=RANK,
        extract_device=args.device, small_conv=True,
    )
    mid = "lora_unet_conv.lora_mid.weight"
    if mid not in state:
        raise AssertionError(f"the small-conv path was not taken; keys: {sorted(state)}")
    for key, value in sorted(state.items()):
        print(f"  {key}: {tuple(value.shape)} {value.dtype} {value.device}")
    print("extract_diff finished")


if __name__ == "__main__":
    main(sys.argv[1:])
