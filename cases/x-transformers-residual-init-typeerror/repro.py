"""x-transformers #65: building an Encoder on 0.20.0 raises TypeError in AttentionLayers (Residual(dim)).

A TransformerWrapper around a one-layer Encoder is built from a tiny config on ``--device``, run forward on
random tokens and trained one AdamW step. 0.20.0's AttentionLayers.__init__ calls Residual(dim) on a Residual
that takes no arguments; 0.20.1 (commit 5f37fc0) calls Residual().
"""

from __future__ import annotations

import argparse
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
    from x_transformers import Encoder, TransformerWrapper

    xt_version = version("x-transformers")
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} x-transformers={xt_version}")
    torch.manual_seed(0)
    model = TransformerWrapper(num_tokens=32, max_seq_len=16, attn_layers=Encoder(dim=16, depth=1, heads=2))
    model = model.to(args.device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    tokens = torch.randint(0, 32, (2, 16), device=args.device)
    logits = model(tokens)
    if logits.shape != (2, 16, 32):
        raise AssertionError(f"logits shape {tuple(logits.shape)}")
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 32), tokens.reshape(-1))
    loss.backward()
    optimizer.step()
    print(f"logits {tuple(logits.shape)} on {logits.device}; loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
