"""torchmetrics #1148: StructuralSimilarityIndexMeasure(gaussian_kernel=False) on GPU images.

The upstream path: the SSIM metric module moved to the device (``.to(device)``), called on image batches
on that device, as an image-restoration validation loop does. With ``gaussian_kernel=False`` (the uniform
window), torchmetrics 0.9.2's ``_ssim_compute`` builds the window with ``torch.ones(...)`` and no device,
so ``F.conv2d`` gets CUDA images and a CPU weight. 0.9.3 (PR #1149) creates the window on the images'
device (and with one row per channel). The images are single-channel (depth maps, grayscale): 0.9.2's
window has one input channel, so RGB would fail on the CPU too, for a different reason.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from importlib.metadata import version

import torch

BATCHES, BATCH, SIZE = 3, 4, 32


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--gaussian-kernel", action="store_true",
                        help="the default gaussian window (its kernel was always built on the images' device)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=".*will save all targets and predictions in buffer.*")
    from torchmetrics import StructuralSimilarityIndexMeasure

    print(f"variant={args.variant} device={args.device} torchmetrics={version('torchmetrics')}")
    generator = torch.Generator().manual_seed(0)
    ssim = StructuralSimilarityIndexMeasure(gaussian_kernel=args.gaussian_kernel, kernel_size=7, data_range=1.0)
    ssim = ssim.to(args.device)
    for _ in range(BATCHES):  # a validation loop: update per batch, compute at the end
        target = torch.rand(BATCH, 1, SIZE, SIZE, generator=generator)
        noisy = (target + 0.05 * torch.randn(target.shape, generator=generator)).clamp(0, 1)
        ssim.update(noisy.to(args.device), target.to(args.device))
    score = ssim.compute()  # 0.9.2 on a GPU: F.conv2d(cuda images, cpu uniform window)
    if not 0.5 < float(score) <= 1.0:
        raise AssertionError(f"implausible SSIM {float(score)} for images with 5% noise")
    print(f"SSIM {float(score):.4f} on {score.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
