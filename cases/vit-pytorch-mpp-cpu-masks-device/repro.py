"""vit-pytorch PR #118: MPP pre-training of a ViT on CUDA mixes CPU masks and bins with CUDA patches (0.18.3).

A tiny ViT (16x16 images, 4x4 patches, dim = patch area so the [mask] token fits a patch) wrapped in
vit_pytorch.mpp.MPP on ``--device``; two Adam steps on random images, as the README's training loop does.
0.18.3's prob_mask_like and MPPLoss make their masks and bucketize bins on the CPU; 0.18.4 moves them.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from vit_pytorch import ViT
    from vit_pytorch.mpp import MPP

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} vit-pytorch={version('vit-pytorch')}")
    torch.manual_seed(0)
    model = ViT(image_size=16, patch_size=4, num_classes=2, dim=16, depth=1, heads=2, mlp_dim=32).to(args.device)
    mpp_trainer = MPP(
        transformer=model, patch_size=4, dim=16, mask_prob=0.5, random_patch_prob=0.3, replace_prob=0.5
    ).to(args.device)
    optimizer = torch.optim.Adam(mpp_trainer.parameters(), lr=3e-4)
    for step in range(2):
        images = torch.rand(4, 3, 16, 16, device=args.device)
        loss = mpp_trainer(images)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not math.isfinite(float(loss)):
            raise AssertionError(f"step {step}: MPP loss {float(loss)}")
        print(f"step {step}: MPP loss {float(loss):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
