"""peft: get_peft_model(PromptTuningConfig(prompt_tuning_init=TEXT)) on a model already on the GPU.

A tiny GPT-2 is built from a config on ``--device``, a tiny word-level tokenizer is written to a temporary
folder (tokenizer_name_or_path), and the model is wrapped for prompt tuning initialised from text, then trained
two steps. peft 0.6.x embeds the init text with ``torch.LongTensor(init_token_ids)`` (a CPU tensor) through the
device's word embeddings; 0.7.0 moves the ids to ``word_embeddings.weight.device`` first.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from importlib.metadata import version

import torch

WORDS = ["[PAD]", "[UNK]", "classify", "if", "the", "tweet", "is", "a", "complaint", "or", "not"]


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def write_tokenizer(folder: str) -> None:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {word: i for i, word in enumerate(WORDS)}
    backend = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=backend, unk_token="[UNK]", pad_token="[PAD]")
    tokenizer.save_pretrained(folder)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from peft import PromptTuningConfig, PromptTuningInit, TaskType, get_peft_model
    from transformers import GPT2Config, GPT2LMHeadModel

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} peft={version('peft')}")
    torch.manual_seed(0)
    config = GPT2Config(vocab_size=len(WORDS), n_positions=32, n_embd=16, n_layer=1, n_head=2)
    model = GPT2LMHeadModel(config).to(args.device)
    with tempfile.TemporaryDirectory() as folder:
        write_tokenizer(folder)
        peft_config = PromptTuningConfig(
            task_type=TaskType.CAUSAL_LM,
            prompt_tuning_init=PromptTuningInit.TEXT,
            num_virtual_tokens=4,
            prompt_tuning_init_text="classify if the tweet is a complaint or not",
            tokenizer_name_or_path=folder,
        )
        peft_model = get_peft_model(model, peft_config)
    optimizer = torch.optim.AdamW([p for p in peft_model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(2):
        input_ids = torch.randint(2, len(WORDS), (2, 6), device=args.device)
        loss = peft_model(input_ids=input_ids, labels=input_ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    if not math.isfinite(loss.item()):
        raise AssertionError(f"loss is not finite: {loss.item()}")
    print(f"prompt tuning (TEXT init) two steps on {args.device}; loss {loss.item():.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
