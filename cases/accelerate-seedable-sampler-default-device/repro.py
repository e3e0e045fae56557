"""accelerate PR #3420: SeedableRandomSampler draws with a CPU generator under ``torch.set_default_device``.

With ``use_seedable_sampler=True`` (transformers' Trainer turns it on by default) ``prepare_data_loader``
replaces a shuffling DataLoader's RandomSampler with accelerate's SeedableRandomSampler. When the
DataLoader was given no generator, its ``__iter__`` creates one with ``torch.Generator()``: a CPU
generator. A program that set ``torch.set_default_device("cuda")`` (or an XPU/MPS device, as in the
report) makes the sampler's ``torch.randperm(n, generator=...)`` a CUDA op, which refuses a CPU
generator: the first epoch fails before any batch. accelerate 1.5.0 creates the generator with
``device=torch.get_default_device()``.

The script trains a Linear layer for one epoch the accelerate way (Accelerator with
DataLoaderConfiguration(use_seedable_sampler=True), prepare(model, optimizer, dataloader), backward,
step) after ``torch.set_default_device(<device>)``. ``--dataloader-generator`` is the workaround:
pass the DataLoader a generator on the default device, which the seedable sampler keeps.
"""

from __future__ import annotations

import argparse
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--dataloader-generator", action="store_true",
                        help="give the DataLoader a torch.Generator on the default device (workaround)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import accelerate
    from accelerate import Accelerator
    from accelerate.utils import DataLoaderConfiguration

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} accelerate={accelerate.__version__}")
    torch.manual_seed(0)
    torch.set_default_device(args.device)
    accelerator = Accelerator(dataloader_config=DataLoaderConfiguration(use_seedable_sampler=True))
    features, targets = torch.randn(16, 4), torch.randn(16, 1)
    generator = torch.Generator(device=args.device) if args.dataloader_generator else None
    loader = DataLoader(TensorDataset(features, targets), batch_size=4, shuffle=True, generator=generator)
    model = nn.Linear(4, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    model, optimizer, loader = accelerator.prepare(model, optimizer, loader)
    print(f"accelerator.device={accelerator.device} sampler={type(loader.batch_sampler.sampler).__name__}")
    for step, (batch, target) in enumerate(loader):
        loss = nn.functional.mse_loss(model(batch), target)
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step}: loss {loss.item():.4f} on {batch.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
