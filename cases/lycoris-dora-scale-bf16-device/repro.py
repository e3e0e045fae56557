"""LyCORIS issue #189: DoRA (``dora_wd=True``) over half-precision base weights leaves ``dora_scale`` on the CPU.

In lycoris-lora 2.2.0.post3 ``LoConModule.__init__`` stores the DoRA magnitude as
``nn.Parameter(torch.norm(org_weight, ...)).float()``. For a bf16/fp16 base weight ``.float()`` returns a new plain
tensor, so ``dora_scale`` is not registered on the module: ``network.to("cuda")`` (or ``accelerator.prepare``) does
not move it (nor hands it to the optimizer), and the first training forward on the GPU fails in
``apply_weight_decompose``: ``self.dora_scale / weight_norm`` mixes cpu and cuda:0. 3.0.0 computes the norm on a
float32 copy (commit b6f64a2, so ``dora_scale`` stays a registered float32 Parameter) and moves it to the weight's
device in ``apply_weight_decompose`` (commit 5a89d3e).

The script builds a two-layer MLP with bf16 weights on the CPU, wraps both Linear layers with a LyCORIS LoRA+DoRA
network (``create_lycoris(..., algo="lora", dora_wd=True)``, ``apply_to()``), moves model and network to
``--device`` as a trainer does, and runs one training step under bf16 autocast.
"""

from __future__ import annotations

import argparse
import math
import sys

import torch
from torch import nn


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(16, 32)
        self.out = nn.Linear(32, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.proj(x)))


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import lycoris
    from lycoris import LycorisNetwork, create_lycoris

    device = torch.device(args.device)
    version = getattr(lycoris, "__version__", "?")
    print(f"variant={args.variant} device={device} torch={torch.__version__} lycoris={version}")
    torch.manual_seed(0)
    net = Net().to(torch.bfloat16)  # the frozen base model in the training precision, still on the CPU
    net.requires_grad_(False)
    LycorisNetwork.apply_preset({"target_name": ["proj", "out"]})
    network = create_lycoris(net, 1.0, linear_dim=4, linear_alpha=2.0, algo="lora", dora_wd=True)
    network.apply_to()
    net.to(device)
    network.to(device)
    optimizer = torch.optim.AdamW(network.parameters(), lr=1e-3)
    inputs = torch.randn(4, 16, generator=torch.Generator().manual_seed(0)).to(device)
    with torch.autocast(device.type, dtype=torch.bfloat16):
        loss = net(inputs).float().pow(2).mean()
    loss.backward()
    optimizer.step()
    print(f"loss {loss.item():.4f} on {loss.device}")
    if not math.isfinite(loss.item()):
        raise AssertionError("the DoRA training step gave a non-finite loss")


if __name__ == "__main__":
    main(sys.argv[1:])
