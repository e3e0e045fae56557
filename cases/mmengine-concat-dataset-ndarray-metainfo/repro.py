"""mmengine PR #1407: ConcatDataset of datasets with an equal (N, 3) numpy palette in metainfo raises ValueError.

Two small in-memory mmengine BaseDataset subclasses share METAINFO with a (2, 3) palette array, as segmentation
datasets do; they are concatenated with mmengine.dataset.ConcatDataset, loaded with a DataLoader and used to
train a linear model for one epoch on ``--device``. mmengine 0.9.0's metainfo check evaluates `array != array`
in a boolean context; 0.9.1 compares arrays with np.array_equal only.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version
from typing import ClassVar

import numpy as np
import torch
from torch import nn

PALETTE = np.array([[0, 0, 0], [255, 255, 255]], dtype=np.uint8)


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def make_dataset(offset: int):  # type: ignore[no-untyped-def]
    from mmengine.dataset import BaseDataset

    class ToyDataset(BaseDataset):
        METAINFO: ClassVar[dict] = {"classes": ("background", "object"), "palette": PALETTE}

        def load_data_list(self) -> list[dict]:
            rng = np.random.default_rng(offset)
            return [{"x": rng.normal(size=4).astype(np.float32), "label": (i + offset) % 2} for i in range(6)]

    return ToyDataset(ann_file="", serialize_data=False)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from mmengine.dataset import ConcatDataset, pseudo_collate

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} mmengine={version('mmengine')}")
    torch.manual_seed(0)
    dataset = ConcatDataset([make_dataset(0), make_dataset(1)])
    loader = torch.utils.data.DataLoader(dataset, batch_size=4, shuffle=True, collate_fn=pseudo_collate)
    model = nn.Linear(4, 2).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    seen = 0
    for batch in loader:
        x = torch.as_tensor(np.stack(batch["x"]), device=args.device)
        y = torch.as_tensor(batch["label"], device=args.device)
        loss = nn.functional.cross_entropy(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        seen += len(y)
    if seen != len(dataset) or len(dataset) != 12:
        raise AssertionError(f"saw {seen} samples of {len(dataset)}")
    print(f"one epoch over {seen} samples; palette kept: {dataset.metainfo['palette'].shape}")


if __name__ == "__main__":
    main(sys.argv[1:])
