"""vector-quantize-pytorch PR #81: LFQ.indices_to_codes on a bfloat16 quantizer mixes float32 codes and bf16 weights.

LFQ(dim=16, codebook_size=256) has a 16->8 project_in and an 8->16 project_out. Moved to ``--device`` in
bfloat16 and put in eval mode, it quantizes a small batch, then decodes the indices with indices_to_codes.
1.9.14 builds the codes with ``.float()`` and feeds them to the bfloat16 project_out; 1.9.16 casts them to the
codebook buffer's dtype.
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
    from vector_quantize_pytorch import LFQ

    print(
        f"variant={args.variant} device={args.device} torch={torch.__version__} "
        f"vector-quantize-pytorch={version('vector-quantize-pytorch')}"
    )
    torch.manual_seed(0)
    quantizer = LFQ(dim=16, codebook_size=256).to(device=args.device, dtype=torch.bfloat16).eval()
    x = torch.randn(2, 32, 16, device=args.device, dtype=torch.bfloat16)
    with torch.no_grad():
        quantized, indices = quantizer(x)[:2]
        codes = quantizer.indices_to_codes(indices)
    if codes.shape != quantized.shape or not torch.equal(codes, quantized):
        raise AssertionError(f"round trip differs: codes {tuple(codes.shape)} vs quantized {tuple(quantized.shape)}")
    print(f"indices {tuple(indices.shape)} decode to {tuple(codes.shape)} {codes.dtype} on {codes.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
