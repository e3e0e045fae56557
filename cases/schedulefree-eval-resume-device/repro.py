"""OneTrainer #645 / schedule_free PR #42: AdamWScheduleFree.eval() after a resume, state['z'] on another device.

Run 1 trains a tiny MLP on ``--device`` with schedulefree.AdamWScheduleFree and saves model and optimizer
state. Run 2 resumes the way many training scripts do: the model is built on the CPU, the optimizer state is
loaded (torch moves state['z'] to the parameters' device, the CPU), the model is then moved to ``--device``,
and optimizer.eval() is called before evaluating, as OneTrainer's backup does. Up to 1.2.7 eval() lerps the
parameters towards state['z'] where it lies; 1.3 moves it to the parameter's device first.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn

STEPS = 3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def build() -> nn.Module:
    return nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 1))


def batch(generator: torch.Generator, device: str) -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.randn(32, 8, generator=generator)
    return x.to(device), x.sum(dim=1, keepdim=True).to(device)


def train_and_save(device: str, path: str, generator: torch.Generator) -> None:
    import schedulefree

    model = build().to(device)
    optimizer = schedulefree.AdamWScheduleFree(model.parameters(), lr=1e-2, warmup_steps=1)
    model.train()
    optimizer.train()
    for _ in range(STEPS):
        x, y = batch(generator, device)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict()}, path)
    print(f"[run 1] trained {STEPS} steps on {device}, last loss {float(loss):.4f}, saved {path}")


def resume_and_evaluate(device: str, path: str, generator: torch.Generator) -> float:
    import schedulefree

    checkpoint = torch.load(path, map_location="cpu")
    model = build()
    model.load_state_dict(checkpoint["model"])
    optimizer = schedulefree.AdamWScheduleFree(model.parameters(), lr=1e-2, warmup_steps=1)
    optimizer.load_state_dict(checkpoint["optimizer"])
    model.to(device)
    z_devices = sorted({str(s["z"].device) for s in optimizer.state.values()})
    print(f"[run 2] resumed: parameters on {device}, state['z'] on {z_devices}")
    model.eval()
    optimizer.eval()  # <= 1.2.7: p.data.lerp_(end=state['z'], ...) across devices
    with torch.no_grad():
        x, y = batch(generator, device)
        return float(nn.functional.mse_loss(model(x), y))


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"schedulefree={version('schedulefree')}")
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    train_and_save(args.device, "sf-ckpt.pt", generator)
    loss = resume_and_evaluate(args.device, "sf-ckpt.pt", generator)
    if not loss == loss:  # NaN
        raise AssertionError("evaluation loss is NaN")
    print(f"[run 2] eval loss {loss:.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
