"""auraloss #34: MelSTFTLoss moved with .to(device) keeps its mel filterbank on the CPU.

MelSTFTLoss(sample_rate=16000, fft_size=256, hop_size=64, win_length=256, n_mels=32) is moved to ``--device``
and evaluated on two short random waveforms on that device. auraloss 0.3.0 keeps the librosa filterbank in a
plain attribute, so .to() leaves it on the CPU and the mel projection (matmul) mixes devices; 0.4.0 (commit
4e8c4ee) registers it as a buffer.
"""

from __future__ import annotations

import argparse
import math
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
    import auraloss

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} auraloss={version('auraloss')}")
    torch.manual_seed(0)
    loss_fn = auraloss.freq.MelSTFTLoss(
        sample_rate=16000, fft_size=256, hop_size=64, win_length=256, n_mels=32
    ).to(args.device)
    pred = torch.rand(2, 1, 4096, device=args.device, requires_grad=True)
    target = torch.rand(2, 1, 4096, device=args.device)
    loss = loss_fn(pred, target)
    loss.backward()
    if not math.isfinite(float(loss)) or pred.grad is None:
        raise AssertionError(f"loss {float(loss)}, grad {pred.grad is not None}")
    print(f"mel STFT loss {float(loss):.4f} on {loss.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
