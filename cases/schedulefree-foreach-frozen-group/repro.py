"""schedule_free #18: AdamWScheduleFree.step fails on a param group whose parameters all have no gradient (1.2.2).

A small network with a frozen part, as in the report: the backbone is frozen (requires_grad=False) and
sits in its own param group with a lower learning rate, the head trains. schedulefree 1.2.2 made the
foreach path the default and built it with ``zip(*[... for p in group['params'] if p.grad is not None])``,
which unpacks nothing for the frozen group ("not enough values to unpack (expected 4, got 0)"). 1.2.5
(PR #19) skips groups without active parameters; ``foreach=False`` avoids the path on 1.2.2.
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
    parser.add_argument("--no-foreach", action="store_true", help="AdamWScheduleFree(foreach=False)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import schedulefree

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"schedulefree={version('schedulefree')}")
    torch.manual_seed(0)
    backbone = nn.Sequential(nn.Linear(8, 16), nn.ReLU()).to(args.device)
    head = nn.Linear(16, 1).to(args.device)
    backbone.requires_grad_(False)  # the frozen part
    groups = [{"params": backbone.parameters(), "lr": 1e-4}, {"params": head.parameters()}]
    extra = {"foreach": False} if args.no_foreach else {}
    optimizer = schedulefree.AdamWScheduleFree(groups, lr=1e-2, **extra)
    optimizer.train()
    before = head.weight.detach().clone()
    for _ in range(STEPS):
        x = torch.randn(32, 8, device=args.device)
        loss = (head(backbone(x)) - x.sum(dim=1, keepdim=True)).square().mean()
        loss.backward()
        optimizer.step()  # 1.2.2: zip(*[]) for the frozen group
        optimizer.zero_grad(set_to_none=True)
    if torch.equal(before, head.weight.detach()):
        raise AssertionError("the head did not train")
    print(f"{STEPS} steps with a frozen param group, last loss {float(loss):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
