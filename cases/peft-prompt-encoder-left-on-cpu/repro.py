"""peft PR #683: get_peft_model(model_on_gpu, PromptTuningConfig) leaves the prompt encoder on the CPU.

A tiny GPT-2 is built from a config on ``--device`` and wrapped for prompt tuning (random init) with
get_peft_model, then trained two steps. peft 0.3.0 builds the PromptEmbedding on the CPU and never moves it,
while the virtual-token ids go to the model's device, so the first forward indexes a CPU embedding with device
ids. 0.4.0 (PR #683) moves the prompt encoder to the model's device when the adapter is added.
``--wrap-before-move`` is the workaround: wrap the CPU model, then move the PeftModel.
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
    parser.add_argument("--wrap-before-move", action="store_true")
    return parser.parse_args(argv)


def build(device: str, wrap_before_move: bool) -> torch.nn.Module:
    from peft import PromptTuningConfig, TaskType, get_peft_model
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(vocab_size=32, n_positions=32, n_embd=16, n_layer=1, n_head=2)
    peft_config = PromptTuningConfig(task_type=TaskType.CAUSAL_LM, num_virtual_tokens=4)
    model = GPT2LMHeadModel(config)
    if wrap_before_move:
        return get_peft_model(model, peft_config).to(device)
    return get_peft_model(model.to(device), peft_config)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} peft={version('peft')}")
    torch.manual_seed(0)
    peft_model = build(args.device, args.wrap_before_move)
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):
        input_ids = torch.randint(0, 32, (2, 6), device=args.device)
        loss = peft_model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if not math.isfinite(loss.item()):
        raise AssertionError(f"loss is not finite: {loss.item()}")
    print(f"prompt tuning two steps on {args.device}; loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
