"""accelerate #2807: load_state cannot reload a save_state checkpoint of a model with tied weights.

A tiny language model whose output head shares its weight with the input embedding is prepared with AdamW
by an Accelerator on ``--device``, trained two steps and saved with Accelerator.save_state (safetensors by
default, which keeps one name per shared tensor). After the weights are perturbed, Accelerator.load_state
must restore them: accelerate 0.32 loads the file with load_file + a strict load_state_dict and fails with
"Missing key(s) in state_dict"; 0.33.0 (PR #2875) uses safetensors' load_model.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from importlib.metadata import version

import torch
from torch import nn


class TinyLM(nn.Module):
    def __init__(self, vocab: int = 16, dim: int = 8) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.body = nn.Linear(dim, dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.embed.weight  # tied, as in OPT/GPT-2

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.lm_head(torch.tanh(self.body(self.embed(ids))))


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from accelerate import Accelerator

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} accelerate={version('accelerate')}")
    # accelerate 0.33 loads its pickled RNG states with a bare torch.load, which torch >= 2.6 refuses
    # (weights_only=True by default) and 0.33 then fails on KeyError 'step': unrelated to the bug under test.
    os.environ["TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD"] = "1"
    torch.manual_seed(0)
    accelerator = Accelerator(cpu=args.device == "cpu")
    model = TinyLM()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    model, optimizer = accelerator.prepare(model, optimizer)
    ids = torch.randint(0, 16, (4, 6), device=accelerator.device)
    for _ in range(2):
        logits = model(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, 16), ids[:, 1:].reshape(-1))
        accelerator.backward(loss)
        optimizer.step()
        optimizer.zero_grad()
    saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
    with tempfile.TemporaryDirectory() as ckpt:
        accelerator.save_state(ckpt)
        with torch.no_grad():
            for p in model.parameters():
                p.add_(1.0)
        accelerator.load_state(ckpt)
    for name, value in model.state_dict().items():
        if not torch.equal(value, saved[name]):
            raise AssertionError(f"{name} was not restored by load_state")
    if model.lm_head.weight.data_ptr() != model.embed.weight.data_ptr():
        raise AssertionError("lm_head and embed are no longer tied after load_state")
    print(f"restored {len(saved)} tensors on {accelerator.device}; head still tied")


if __name__ == "__main__":
    main(sys.argv[1:])
