"""timm #2549: an EVA ViT with rotary position embeddings and patch dropout fails in training mode.

A tiny EVA-02 (timm's eva02_tiny_patch14_224 config shrunk: 32 px images, 8 px patches, one block of three
heads, no pretrained weights) with ``patch_drop_rate=0.5`` trains on ``--device`` for two steps on batches
of two. In training mode PatchDropout keeps a random subset of tokens per sample and gathers the rotary
embedding to match, giving it a batch dimension; timm 1.0.17's attention applies it to queries/keys shaped
(batch, heads, tokens, dim) without a heads dimension, so batch and heads are broadcast against each other.
1.0.18 inserts the heads dimension. The script checks the loss is finite and that eval mode (no dropout)
gives finite logits of the right shape.
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
    import timm

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} timm={version('timm')}")
    torch.manual_seed(0)
    model = timm.create_model("eva02_tiny_patch14_224", pretrained=False, img_size=32, patch_size=8, embed_dim=48,
                              depth=1, num_heads=3, num_classes=4, patch_drop_rate=0.5).to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model.train()
    for step in range(2):
        images = torch.randn(2, 3, 32, 32, device=args.device)
        targets = torch.randint(0, 4, (2,), device=args.device)
        loss = nn.functional.cross_entropy(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not math.isfinite(loss.item()):
            raise AssertionError(f"loss is not finite at step {step}")
        print(f"step {step}: loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        logits = model(torch.randn(2, 3, 32, 32, device=args.device))
    if logits.shape != (2, 4) or not torch.isfinite(logits).all():
        raise AssertionError(f"unexpected eval logits: {tuple(logits.shape)}")


if __name__ == "__main__":
    main(sys.argv[1:])
