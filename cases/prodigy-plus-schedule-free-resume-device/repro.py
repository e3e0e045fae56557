"""prodigy-plus-schedule-free #11: resuming ProdigyPlusScheduleFree from a state saved on the GPU fails.

The upstream path (sd-scripts / accelerate LoRA training): train with ``ProdigyPlusScheduleFree``, save the
optimizer state, restart, ``torch.load(..., map_location="cpu")`` (accelerate's ``load_state`` default)
and ``optimizer.load_state_dict``, then step. ``Optimizer.load_state_dict`` moves per-parameter ``state``
to each parameter's device but leaves param-group entries as loaded; 1.8.x keeps its running Prodigy sums
(``running_d_numerator`` / ``running_d_denom``) as tensors in the param group, so after the resume they
are CPU tensors and ``update_prodigy``'s in-place ``running_d_numerator.add_(x0_dot)`` gets a CUDA dot
product. 1.9.0 moves the running values to the parameter's device when it reads them.
"""

from __future__ import annotations

import argparse
import io
import sys
from importlib.metadata import version

import torch
from torch import nn

STEPS_BEFORE, STEPS_AFTER = 3, 2


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--map-location", choices=["cpu", "device"], default="cpu",
                        help="where torch.load puts the resumed state (accelerate's load_state uses 'cpu')")
    return parser.parse_args(argv)


def build(device: str) -> tuple[nn.Module, torch.optim.Optimizer]:
    from prodigyplus import ProdigyPlusScheduleFree

    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1)).to(device)
    return model, ProdigyPlusScheduleFree(model.parameters(), lr=1.0)


def train(model: nn.Module, optimizer: torch.optim.Optimizer, device: str, steps: int) -> float:
    optimizer.train()  # schedule-free optimizers must be put in train mode
    loss = torch.zeros(())
    for _ in range(steps):
        x = torch.randn(4, 8).to(device)
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()  # 1.8.x after a CPU-mapped resume: running_d_numerator (cpu).add_(cuda dot)
        optimizer.zero_grad(set_to_none=True)
    return float(loss.detach())


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    print(f"variant={args.variant} device={args.device} "
          f"prodigy-plus-schedule-free={version('prodigy-plus-schedule-free')}")
    torch.manual_seed(0)
    model, optimizer = build(args.device)
    print(f"run 1: loss {train(model, optimizer, args.device, STEPS_BEFORE):.4f}")
    checkpoint = io.BytesIO()
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, checkpoint)
    checkpoint.seek(0)

    map_location = "cpu" if args.map_location == "cpu" else args.device
    state = torch.load(checkpoint, map_location=map_location)
    model, optimizer = build(args.device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    running = optimizer.param_groups[0].get("running_d_numerator")
    print(f"resumed with map_location={map_location!r}; running_d_numerator on "
          f"{running.device if torch.is_tensor(running) else type(running).__name__}")
    print(f"run 2: loss {train(model, optimizer, args.device, STEPS_AFTER):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
