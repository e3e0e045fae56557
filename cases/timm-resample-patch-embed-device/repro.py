"""timm #2024: resample_patch_embed on a patch-embedding kernel already on CUDA multiplies it by a CPU matrix.

A tiny FlexiViT (timm's flexivit_small config shrunk: 32 px images, 8 px patches, one block, no pretrained
weights) with ``dynamic_img_size=True`` is moved to ``--device``; its patch-embedding kernel is resampled to
4 x 4 with timm.layers.resample_patch_embed, as the issue does, the model's patch size set to 4 and a batch
run through it. timm 0.9.12 builds the pseudo-inverse resize matrix with torch.Tensor(...) on the CPU;
0.9.16 builds it on the kernel's device. The script checks the resampled kernel equals the one resampled
on the CPU and that the forward pass gives finite features.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

NEW_PATCH = 4


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import timm
    from timm.layers import resample_patch_embed

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} timm={version('timm')}")
    torch.manual_seed(0)
    model = timm.create_model("flexivit_small", pretrained=False, img_size=32, patch_size=8, embed_dim=48, depth=1,
                              num_heads=2, num_classes=0, dynamic_img_size=True).to(args.device).eval()
    kernel = model.patch_embed.proj.weight
    reference = resample_patch_embed(kernel.detach().cpu(), [NEW_PATCH, NEW_PATCH], interpolation="bilinear",
                                     antialias=False)
    resampled = resample_patch_embed(kernel, [NEW_PATCH, NEW_PATCH], interpolation="bilinear", antialias=False)
    if resampled.device != kernel.device:
        raise AssertionError(f"resampled kernel on {resampled.device}, the model on {kernel.device}")
    if not torch.allclose(resampled.detach().cpu(), reference, atol=1e-5):
        raise AssertionError("kernel resampled on the device differs from the one resampled on the CPU")
    model.patch_embed.proj.weight = nn.Parameter(resampled)
    model.patch_embed.proj.stride = (NEW_PATCH, NEW_PATCH)
    model.patch_embed.patch_size = (NEW_PATCH, NEW_PATCH)
    with torch.no_grad():
        features = model(torch.randn(2, 3, 32, 32, device=args.device))
    if features.shape != (2, 48) or not torch.isfinite(features).all():
        raise AssertionError(f"unexpected features: {tuple(features.shape)}")
    print(f"kernel {tuple(kernel.shape)} -> {tuple(resampled.shape)} on {resampled.device}")
    print(f"features {tuple(features.shape)}")


if __name__ == "__main__":
    main(sys.argv[1:])
