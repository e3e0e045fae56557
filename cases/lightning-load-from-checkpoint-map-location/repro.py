"""Lightning #17304: ``LightningModule.load_from_checkpoint(path, map_location="cuda")`` returns a CPU model.

The upstream path: train a LightningModule with ``Trainer.fit`` (a ModelCheckpoint callback writes the
.ckpt), then load it for inference with ``TokenClassifier.load_from_checkpoint(ckpt, map_location=device)``
and feed it token ids on that device. In pytorch-lightning <= 2.0.1, ``_load_from_checkpoint`` builds a
fresh module (on the CPU) and copies the mapped state dict into it, so ``map_location`` only decides where
torch.load puts the tensors, not where the returned model lives; the embedding lookup then mixes CPU
weights with CUDA token ids. 2.0.2 (PR #17308) moves the returned model to the device of the loaded
state dict. Training runs on the CPU in every lane (where it ran does not matter: the checkpoint is
mapped on load), so the only device decision is the one ``map_location`` makes.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import torch
from torch import nn

VOCAB, DIM, CLASSES = 64, 16, 3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--move-model", action="store_true",
                        help="the 2.0.1 workaround: model.to(device) after load_from_checkpoint")
    return parser.parse_args(argv)


def define_module() -> type:
    import pytorch_lightning as pl

    class TokenClassifier(pl.LightningModule):
        """Embedding + linear head, the shape of the model in the report (its failing op is the embedding)."""

        def __init__(self, vocab: int = VOCAB, dim: int = DIM) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.embed = nn.Embedding(vocab, dim)
            self.head = nn.Linear(dim, CLASSES)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            return self.head(self.embed(tokens).mean(dim=1))

        def training_step(self, batch: tuple[torch.Tensor, torch.Tensor], batch_idx: int) -> torch.Tensor:
            tokens, labels = batch
            return nn.functional.cross_entropy(self(tokens), labels)

        def configure_optimizers(self) -> torch.optim.Optimizer:
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return TokenClassifier


def train_and_checkpoint(module_cls: type, folder: Path) -> str:
    import pytorch_lightning as pl

    generator = torch.Generator().manual_seed(0)
    tokens = torch.randint(0, VOCAB, (16, 6), generator=generator)
    labels = torch.randint(0, CLASSES, (16,), generator=generator)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(tokens, labels), batch_size=8)
    trainer = pl.Trainer(accelerator="cpu", devices=1, max_epochs=1, default_root_dir=str(folder), logger=False,
                         enable_progress_bar=False, enable_model_summary=False)
    trainer.fit(module_cls(), loader)
    ckpt = trainer.checkpoint_callback.best_model_path
    if not ckpt or not Path(ckpt).is_file():
        raise RuntimeError(f"repro precondition: ModelCheckpoint wrote no checkpoint (best_model_path={ckpt!r})")
    return ckpt


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    print(f"variant={args.variant} device={args.device} pytorch-lightning={version('pytorch-lightning')}")
    module_cls = define_module()
    with tempfile.TemporaryDirectory() as tmp:
        ckpt = train_and_checkpoint(module_cls, Path(tmp))
        model = module_cls.load_from_checkpoint(ckpt, map_location=args.device)
        print(f"load_from_checkpoint(map_location={args.device!r}) -> parameters on {next(model.parameters()).device}")
        if args.move_model:
            model = model.to(args.device)
        model.eval()
        tokens = torch.randint(0, VOCAB, (4, 6)).to(args.device)
        with torch.no_grad():
            predictions = model(tokens).argmax(dim=1)  # <= 2.0.1 on a GPU: CPU embedding weight, CUDA ids
    placed = next(model.parameters()).device
    if placed.type != args.device:
        raise AssertionError(f"load_from_checkpoint(map_location={args.device!r}) returned a model on {placed}")
    print(f"predictions {predictions.tolist()} on {predictions.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
