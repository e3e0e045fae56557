"""Lightning #20307: a model built under ``Trainer.init_module()`` reports ``model.device == cpu`` on a GPU.

The upstream path: ``trainer = Trainer(accelerator="gpu", devices=1)``, ``with trainer.init_module():
model = LitModel()`` (the documented way to create a model directly on the device), then code that places
inputs with ``model.device`` -- here a sanity forward of ``example_input_array`` before training, as
scripts do. ``init_module`` enters ``torch.device(root_device)``, so the parameters are created on the GPU,
but ``_DeviceDtypeModuleMixin.__init__`` hard-coded ``self._device = torch.device("cpu")`` and nothing
updates it until a ``.to()``: the inputs go to the CPU, the weights are on the GPU. Lightning 2.6.0
(PR #21164) initialises ``_device`` from ``torch.get_default_device()``.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch
from torch import nn


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--explicit-to", action="store_true",
                        help="workaround: build the model normally and call model.to(device) (updates model.device)")
    return parser.parse_args(argv)


def define_module() -> type:
    import pytorch_lightning as pl

    class Regressor(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 2))
            self.example_input_array = torch.randn(4, 8)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.net(x)

    return Regressor


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import pytorch_lightning as pl

    print(f"variant={args.variant} device={args.device} pytorch-lightning={version('pytorch-lightning')}")
    torch.manual_seed(0)
    module_cls = define_module()
    trainer = pl.Trainer(accelerator="gpu" if args.device == "cuda" else "cpu", devices=1, logger=False,
                         enable_progress_bar=False, enable_model_summary=False, enable_checkpointing=False)
    if args.explicit_to:
        model = module_cls().to(args.device)
    else:
        with trainer.init_module():
            model = module_cls()
    weights = next(model.parameters()).device
    print(f"parameters on {weights}, model.device reports {model.device}")
    if weights.type != args.device:
        raise RuntimeError(f"repro precondition: the parameters are on {weights}, not on the {args.device} device")
    with torch.no_grad():
        out = model(model.example_input_array.to(model.device))  # <= 2.5.x on a GPU: CPU inputs, CUDA weights
    print(f"sanity forward {tuple(out.shape)} on {out.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
