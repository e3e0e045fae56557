"""markup2im #2 / diffusers PR #648: DDPMScheduler.add_noise with GPU timesteps in a training step.

A tiny UNet2DModel is built from a config on ``--device`` and trained two DDPM steps: timesteps are drawn on
the device, noisy = scheduler.add_noise(clean, noise, timesteps), the UNet predicts the noise, MSE, AdamW.
diffusers 0.3.0 indexes its CPU alphas_cumprod with the device timesteps; 0.4.0 (PR #648) moves both to the
samples' device first.
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
    from diffusers import DDPMScheduler, UNet2DModel

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} diffusers={version('diffusers')}")
    torch.manual_seed(0)
    model = UNet2DModel(
        sample_size=8,
        in_channels=3,
        out_channels=3,
        layers_per_block=1,
        block_out_channels=(32, 32),  # 0.3.0's mid block ignores norm_num_groups (32 groups)
        down_block_types=("DownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "UpBlock2D"),
    ).to(args.device)
    scheduler = DDPMScheduler(num_train_timesteps=100)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for _ in range(2):
        clean = torch.rand(2, 3, 8, 8, device=args.device) * 2 - 1
        noise = torch.randn_like(clean)
        timesteps = torch.randint(0, 100, (2,), device=args.device).long()
        noisy = scheduler.add_noise(clean, noise, timesteps)
        out = model(noisy, timesteps)
        pred = out.sample if hasattr(out, "sample") else out["sample"]
        loss = torch.nn.functional.mse_loss(pred, noise)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if not math.isfinite(loss.item()):
        raise AssertionError(f"loss is not finite: {loss.item()}")
    print(f"two DDPM steps on {args.device}; loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
