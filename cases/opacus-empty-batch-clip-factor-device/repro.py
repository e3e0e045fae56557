"""opacus #612 / PR #631: an empty Poisson batch makes DPOptimizer clip with a CPU factor (opacus 1.4.1).

A tiny classifier on ``--device`` is made private with PrivacyEngine.make_private (Poisson sampling, the
default). With 16 examples and batch_size 2 (sample rate 1/8), each batch is empty with probability
(7/8)^16 ~ 12%; the script trains one epoch after another until an empty batch has been stepped. On an
empty batch opacus 1.4.1's clip_and_accumulate sets ``per_sample_clip_factor = torch.zeros((0,))`` on the
CPU and contracts it with the (empty) device grad samples; 1.5 creates it on the grad samples' device.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from importlib.metadata import version

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

EXAMPLES, BATCH, MAX_EPOCHS = 16, 2, 20


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from opacus import PrivacyEngine

    warnings.filterwarnings("ignore", category=UserWarning)  # secure_mode / accountant chatter
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} opacus={version('opacus')}")
    torch.manual_seed(0)
    data = TensorDataset(torch.randn(EXAMPLES, 4), torch.randint(0, 2, (EXAMPLES,)))
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    engine = PrivacyEngine()
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=optimizer, data_loader=DataLoader(data, batch_size=BATCH),
        noise_multiplier=1.0, max_grad_norm=1.0)
    criterion = nn.CrossEntropyLoss(reduction="sum")
    steps = empty_steps = 0
    for _ in range(MAX_EPOCHS):
        for x, y in loader:
            x, y = x.to(args.device), y.to(args.device)
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()  # 1.4.1, empty batch: contract(cpu clip factor, device grad samples)
            steps += 1
            empty_steps += len(x) == 0
        if empty_steps:
            break
    if not empty_steps:
        raise AssertionError(f"no empty Poisson batch in {steps} steps: the repro did not reach its path")
    finite = all(torch.isfinite(p).all() for p in model.parameters())
    print(f"{steps} private steps, {empty_steps} on empty batches; epsilon {engine.get_epsilon(1e-5):.2f}; "
          f"parameters finite: {finite}")
    if not finite:
        raise AssertionError("non-finite parameters after private steps")


if __name__ == "__main__":
    main(sys.argv[1:])
