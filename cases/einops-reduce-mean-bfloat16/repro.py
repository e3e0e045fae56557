"""einops #206: mean reduction refuses bfloat16 tensors, so an einops pooling layer fails under bf16 autocast.

A small conv net whose global average pooling is einops' ``Reduce("b c h w -> b c", "mean")`` layer trains
on ``--device`` for two steps under torch.autocast(bfloat16), where the convolution's output (the layer's
input) is bfloat16. einops 0.4.1's torch backend lists only float16/32/64 as floating types and raises
NotImplementedError for the mean; 0.5.0 adds bfloat16. The script also checks the functional
``einops.reduce`` result against torch's mean, and that the loss is finite.
"""

from __future__ import annotations

import argparse
import math
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
    from einops import reduce
    from einops.layers.torch import Reduce

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} einops={version('einops')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), Reduce("b c h w -> b c", "mean"), nn.Linear(8, 4))
    model = model.to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(2):
        images = torch.randn(4, 3, 8, 8, device=args.device)
        targets = torch.randint(0, 4, (4,), device=args.device)
        with torch.autocast(device_type=args.device, dtype=torch.bfloat16):
            loss = nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not math.isfinite(loss.item()):
            raise AssertionError(f"loss is not finite at step {step}")
        print(f"step {step}: loss {loss.item():.4f}")
    features = torch.randn(2, 3, 4, device=args.device).to(torch.bfloat16)
    pooled = reduce(features, "b c n -> b c", "mean")
    if pooled.dtype != torch.bfloat16 or not torch.allclose(pooled.float(), features.mean(-1).float(), atol=1e-2):
        raise AssertionError("einops mean differs from torch's mean on bfloat16")
    print(f"einops mean of bfloat16 {tuple(features.shape)} -> {tuple(pooled.shape)} matches torch")


if __name__ == "__main__":
    main(sys.argv[1:])
