"""rotary-embedding-torch 304ee88: apply_rotary_emb mixes CPU frequencies with CUDA queries (0.1.1).

As the 0.1.1 README does, a RotaryEmbedding outside the model builds the rotations once from
``torch.arange(seq)`` (on the CPU); a one-head attention layer on ``--device`` rotates its queries and keys
with apply_rotary_emb for two training steps. 0.1.1 multiplies the device tensors by the CPU freqs' cos/sin;
0.1.2 moves freqs to the rotated tensor first.
"""

from __future__ import annotations

import argparse
import math
import sys
from importlib.metadata import version

import torch
from torch import nn

SEQ, DIM, HEAD = 16, 32, 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def attention(qkv: nn.Linear, x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    from rotary_embedding_torch import apply_rotary_emb

    q, k, v = qkv(x).chunk(3, dim=-1)
    q, k = apply_rotary_emb(freqs, q), apply_rotary_emb(freqs, k)
    weights = (q @ k.transpose(-1, -2) / math.sqrt(HEAD)).softmax(dim=-1)
    return weights @ v


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from rotary_embedding_torch import RotaryEmbedding

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"rotary-embedding-torch={version('rotary-embedding-torch')}")
    torch.manual_seed(0)
    pos_emb = RotaryEmbedding(dim=HEAD // 2)  # rotate half of each head, as the README's dim=32 of 64
    freqs = pos_emb(torch.arange(SEQ), cache_key=SEQ)[None, ...]  # the README's call: CPU positions
    qkv = nn.Linear(DIM, 3 * HEAD).to(args.device)
    head = nn.Linear(HEAD, 1).to(args.device)
    optimizer = torch.optim.SGD([*qkv.parameters(), *head.parameters()], lr=0.1)
    x = torch.randn(2, SEQ, DIM, device=args.device)
    target = torch.randn(2, SEQ, 1, device=args.device)
    for step in range(2):
        loss = nn.functional.mse_loss(head(attention(qkv, x, freqs)), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if not math.isfinite(float(loss)):
            raise AssertionError(f"step {step}: loss {float(loss)}")
        print(f"step {step}: loss {float(loss):.4f} (freqs on {freqs.device}, queries on {x.device})")


if __name__ == "__main__":
    main(sys.argv[1:])
