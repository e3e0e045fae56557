"""sentence-transformers PR #3525: SentenceTransformerTrainer ignores ``use_cpu=True`` on a GPU host.

SentenceTransformerTrainer.__init__ builds a throw-away ``SentenceTransformerTrainingArguments(output_dir=
"unused")`` (to list, for the model card, which arguments the user changed) before it calls
transformers' Trainer.__init__. Building TrainingArguments resets accelerate's global state
(``_setup_devices`` calls ``AcceleratorState._reset_state`` unless ``use_configured_state``), so the
user's ``use_cpu=True`` state is replaced by the default one: the best device, ``cuda`` on a GPU
host. The user's arguments keep their cached ``device == cpu``, the model stays on the CPU, but the
Trainer's Accelerator now prepares the train DataLoader for ``cuda`` and every batch arrives on the GPU:
the first forward fails in BertEmbeddings (index_select of CUDA token ids into CPU weights).

The script trains the way a user pins training to the CPU on a GPU machine: a tiny BERT (built from a
config and saved with a word-level vocab to a temp folder, no downloads) wrapped in
models.Transformer + models.Pooling, SentenceTransformer(device="cpu"), MultipleNegativesRankingLoss,
SentenceTransformerTrainingArguments(use_cpu=True), trainer.train() for two steps. ``--device`` says
what the host has (the lane), not where training runs: on ``cuda`` the host must expose a GPU.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import torch

WORDS = ["a", "the", "cat", "dog", "sat", "on", "mat", "ran", "fast", "slow", "red", "blue", "big", "small",
         "house", "car", "tree"]
HIDDEN = 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True,
                        help="what the host offers; training itself is pinned to the CPU with use_cpu=True")
    return parser.parse_args(argv)


def save_tiny_bert(folder: Path) -> None:
    from transformers import BertConfig, BertModel, BertTokenizerFast

    folder.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS]
    (folder / "vocab.txt").write_text("\n".join(vocab))
    BertTokenizerFast(str(folder / "vocab.txt")).save_pretrained(folder)
    config = BertConfig(vocab_size=len(vocab), hidden_size=HIDDEN, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=64)
    BertModel(config).save_pretrained(folder)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device cuda: this host has no CUDA device, so the bug's precondition is missing")
    torch.manual_seed(0)
    import sentence_transformers
    import transformers
    from datasets import Dataset
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
        models,
    )

    print(f"variant={args.variant} host={args.device} torch={torch.__version__} "
          f"sentence-transformers={sentence_transformers.__version__} transformers={transformers.__version__}")
    work = Path(tempfile.mkdtemp(prefix="st-use-cpu-"))
    save_tiny_bert(work / "bert")
    model = SentenceTransformer(modules=[models.Transformer(str(work / "bert")), models.Pooling(HIDDEN)], device="cpu")
    train = Dataset.from_dict({"anchor": ["a cat sat", "the dog ran", "red car", "big house"],
                               "positive": ["cat on mat", "dog ran fast", "blue car", "small house"]})
    training_args = SentenceTransformerTrainingArguments(
        output_dir=str(work / "out"), use_cpu=True, max_steps=2, per_device_train_batch_size=2,
        report_to=[], save_strategy="no", logging_steps=1, disable_tqdm=True)
    trainer = SentenceTransformerTrainer(model=model, args=training_args, train_dataset=train,
                                         loss=losses.MultipleNegativesRankingLoss(model))
    print(f"args.device={training_args.device} accelerator.device={trainer.accelerator.device} "
          f"model.device={model.device}")
    result = trainer.train()
    print(f"trained {result.global_step} steps on {model.device}, loss {result.training_loss:.4f}")
    if model.device.type != "cpu":
        raise AssertionError(f"use_cpu=True, but the model trained on {model.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
