"""torchmetrics PR #606: multiclass AUROC(average="weighted") on GPU when a class never occurs in the targets.

The upstream path: a validation loop updating an ``AUROC(num_classes=3, average="weighted")`` metric that
was moved to the device, then ``compute()``. When one class has no observation (small or imbalanced
validation sets), torchmetrics 0.6.0's ``_auroc_compute`` drops that class with a boolean target matrix
built by ``torch.zeros(..., dtype=bool)`` -- on the CPU -- and fills it by indexing with the targets, which
are on the GPU: "indices should be either on cpu or on the same device as the indexed tensor (cpu)".
0.6.1 creates the matrix on ``target.device``. Every class present takes another path and runs clean,
which is why the script draws the targets from two of the three classes.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from importlib.metadata import version

import torch

CLASSES, PRESENT, BATCHES, BATCH = 3, 2, 3, 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--average", default="weighted", choices=["weighted", "macro"],
                        help="macro averaging never builds the CPU target matrix")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore", message=".*will save all targets and predictions in buffer.*")
    warnings.filterwarnings("ignore", message=".*had 0 observations.*")
    from torchmetrics import AUROC

    print(f"variant={args.variant} device={args.device} torchmetrics={version('torchmetrics')}")
    generator = torch.Generator().manual_seed(0)
    auroc = AUROC(num_classes=CLASSES, average=args.average).to(args.device)
    for _ in range(BATCHES):
        logits = torch.randn(BATCH, CLASSES, generator=generator)
        target = torch.randint(0, PRESENT, (BATCH,), generator=generator)  # class 2 never observed
        auroc.update(logits.softmax(dim=1).to(args.device), target.to(args.device))
    score = auroc.compute()  # 0.6.0 on a GPU: cpu_bool_matrix[cuda_rows, cuda_targets] = 1
    if not 0.0 <= float(score) <= 1.0:
        raise AssertionError(f"AUROC out of range: {float(score)}")
    print(f"AUROC({args.average}) {float(score):.4f} on {score.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
