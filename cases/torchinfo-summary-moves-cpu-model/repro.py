"""torchinfo #227 / PR #236: summary(model, input_data=...) moves a CPU model to the GPU (torchinfo 1.7.2).

A model that is meant to train on the CPU (``--device cpu`` of the training code, whatever the host has)
is summarised with a real CPU batch, ``summary(model, input_data=batch)``, then trained on CPU batches.
torchinfo 1.7.2's get_device() picks "cuda" whenever CUDA is available and the model's first parameter
is not on it, and summary() runs ``model.to(device)``: the caller's model now lives on the GPU and the
next CPU training step fails in the first Linear ("... cpu and cuda:0! ... mat1 ..."). 1.8.0 leaves model
and data where they are when input_data is given.

``--device`` is the GPU the host offers: ``cuda`` on the cuda and cuda-sim lanes (CUDA available, the
model still kept on the CPU), ``cpu`` where no GPU is visible (the script hides any before torch
starts), where the summary has nowhere else to put the model.
"""

from __future__ import annotations

import argparse
import os
import sys

STEPS = 3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--summary-device", default=None,
                        help="pass device= to summary (the documented workaround)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the cpu lane: no GPU visible to the training script
    from importlib.metadata import version

    import torch
    from torch import nn
    from torchinfo import summary

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} torchinfo={version('torchinfo')} "
          f"cuda available={torch.cuda.is_available()}")
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))  # trained on the CPU on purpose
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    batch = torch.randn(4, 8)
    stats = summary(model, input_data=batch, device=args.summary_device, verbose=0)
    print(f"summary: {stats.total_params} parameters; model now on {next(model.parameters()).device}")
    for _ in range(STEPS):
        x = torch.randn(4, 8)
        loss = (model(x) - x.sum(dim=1, keepdim=True)).square().mean()  # 1.7.2: CPU x, cuda:0 weights
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    print(f"trained {STEPS} CPU steps, loss {float(loss):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
