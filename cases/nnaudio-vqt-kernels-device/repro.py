"""nnAudio #117: VQT on CUDA convolves the GPU waveform with kernels it just built on the CPU.

A small nnAudio.features.VQT (8 kHz, 24 bins from 110 Hz, gamma 5) moved to ``--device`` transforms a batch
of two random waveforms. nnAudio 0.3.1 builds each octave's kernels in forward with torch.tensor(...) (CPU);
0.3.2 (commit dc222b4) registers them as buffers in __init__.
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
    from nnAudio.features import VQT

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} nnAudio={version('nnAudio')}")
    torch.manual_seed(0)
    layer = VQT(sr=8000, hop_length=256, fmin=110, n_bins=24, bins_per_octave=12, gamma=5, verbose=False)
    layer = layer.to(args.device)
    waveforms = torch.randn(2, 4096, device=args.device)
    spec = layer(waveforms)
    if spec.shape[:2] != (2, 24) or not bool(torch.isfinite(spec).all()):
        raise AssertionError(f"unexpected VQT output {tuple(spec.shape)}")
    print(f"VQT {tuple(spec.shape)} on {spec.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
