"""transformers PR #34191: Trainer's gradient accumulation averaged per-micro-batch token means.

Causal-LM losses are a mean over the supervised (non -100) tokens of the batch. Up to 4.45 the Trainer
back-propagated each micro-batch's own token mean divided by ``gradient_accumulation_steps``, so with
micro-batches holding different numbers of supervised tokens the accumulated gradient weights every
micro-batch equally instead of every token: ``batch_size=1, gradient_accumulation_steps=2`` is not the
same update as ``batch_size=2`` (the "gradient accumulation bug" of October 2024). 4.46.0 counts the
supervised tokens of all accumulated micro-batches (``num_items_in_batch``) and lets models that accept
``**loss_kwargs`` (Llama among them) divide their summed loss by it.

The script trains a tiny LlamaForCausalLM built from a config with Trainer for one SGD step on two
sequences (7 and 2 supervised tokens), once as one batch of 2 and once as 2 accumulated batches of 1,
from the same seed, constant LR, no gradient clipping; the two parameter updates must be equal.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings

import torch

TOLERANCE = 1e-3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


class TwoSequences(torch.utils.data.Dataset):
    """Two 8-token sequences; the second has its first 6 labels masked (-100)."""

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        input_ids = torch.arange(3, 11) + index
        labels = input_ids.clone()
        if index == 1:
            labels[:6] = -100
        return {"input_ids": input_ids, "labels": labels}


def update_norm(device: str, batch_size: int, accumulation: int) -> float:
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32))
    before = {name: param.detach().clone() for name, param in model.named_parameters()}
    args = TrainingArguments(output_dir=tempfile.mkdtemp(prefix="ga-"), per_device_train_batch_size=batch_size,
                             gradient_accumulation_steps=accumulation, max_steps=1, learning_rate=0.1, optim="sgd",
                             lr_scheduler_type="constant", max_grad_norm=0.0, seed=0, report_to=[],
                             save_strategy="no", disable_tqdm=True, use_cpu=device == "cpu")
    Trainer(model=model, args=args, train_dataset=TwoSequences()).train()
    if model.device.type != device:
        raise AssertionError(f"Trainer trained on {model.device}, expected {device}")
    squared = sum((param.detach() - before[name].to(param.device)).pow(2).sum().item()
                  for name, param in model.named_parameters())
    return squared ** 0.5


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"transformers={transformers.__version__}")
    single = update_norm(args.device, batch_size=2, accumulation=1)
    accumulated = update_norm(args.device, batch_size=1, accumulation=2)
    ratio = accumulated / single
    print(f"update norm: one batch of 2 = {single:.6g}, 2 accumulated batches of 1 = {accumulated:.6g}, "
          f"ratio {ratio:.4f}")
    if abs(ratio - 1.0) > TOLERANCE:
        raise AssertionError(f"gradient accumulation changes the update: 2 accumulated batches of 1 give {ratio:.4f}x "
                             f"the update of one batch of 2 (per-micro-batch token means are averaged)")


if __name__ == "__main__":
    main(sys.argv[1:])
