"""timm PR #913: timm.data.Mixup on a CPU batch builds its one-hot targets on 'cuda'.

A small conv net trains on ``--device`` for three steps with timm's Mixup (mixup_alpha=1, label smoothing
0.1, batch mode) and SoftTargetCrossEntropy, as timm's train.py does without the prefetcher. In timm
0.4.12, Mixup.__call__ calls mixup_target without a device, so one_hot uses its default device='cuda'
whatever the batch's device; 0.5.4 passes x.device. The script checks every mixed target row sums to 1 and
lies on the batch's device, and that the loss is finite.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch
from torch import nn

NUM_CLASSES = 4


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from timm.data import Mixup
    from timm.loss import SoftTargetCrossEntropy

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} timm={version('timm')}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(3, 8, 3), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
                          nn.Linear(8, NUM_CLASSES)).to(args.device)
    mixup = Mixup(mixup_alpha=1.0, cutmix_alpha=0.0, prob=1.0, mode="batch", label_smoothing=0.1,
                  num_classes=NUM_CLASSES)
    criterion = SoftTargetCrossEntropy()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(3):
        images = torch.randn(4, 3, 8, 8, device=args.device)
        labels = torch.randint(0, NUM_CLASSES, (4,), device=args.device)
        images, targets = mixup(images, labels)
        loss = criterion(model(images), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if targets.device != images.device:
            raise AssertionError(f"mixed targets on {targets.device}, the batch on {images.device}")
        if not torch.allclose(targets.sum(dim=1), torch.ones(4, device=targets.device)):
            raise AssertionError("mixed target rows do not sum to 1")
        if not math.isfinite(loss.item()):
            raise AssertionError(f"loss is not finite at step {step}")
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
