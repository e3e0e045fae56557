"""transformers-interpret PR #57: building an explainer moves the caller's CPU model to the GPU (0.5.1).

A tiny DistilBERT sentiment classifier (config + a generated vocabulary, no download) is kept on the CPU on
purpose, explained with SequenceClassificationExplainer(model, tokenizer)("i love you, i like you"), then run
by the caller on the tokenized sentence on the CPU. transformers-interpret 0.5.1's explainer constructor runs
``model.to("cuda")`` whenever CUDA is available, so that CPU forward fails in the embedding lookup; 0.5.2 uses
``model.device``.

``--device`` is the GPU the host offers: ``cuda`` on the cuda and cuda-sim lanes (CUDA available, the model
still kept on the CPU), ``cpu`` where no GPU is visible (the script hides any before torch starts).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "i", "love", "like", "you", ","]
TEXT = "i love you, i like you"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = ""  # the cpu lane: no GPU visible to the script
    from importlib.metadata import version

    import torch
    from transformers import DistilBertConfig, DistilBertForSequenceClassification, DistilBertTokenizer
    from transformers_interpret import SequenceClassificationExplainer

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"transformers-interpret={version('transformers-interpret')} cuda available={torch.cuda.is_available()}")
    vocab = Path("vocab.txt")
    vocab.write_text("\n".join(WORDS) + "\n")
    tokenizer = DistilBertTokenizer(vocab_file=str(vocab))
    torch.manual_seed(0)
    config = DistilBertConfig(vocab_size=len(WORDS), dim=32, n_layers=1, n_heads=2, hidden_dim=64,
                              max_position_embeddings=64, num_labels=2)
    model = DistilBertForSequenceClassification(config).eval()  # kept on the CPU on purpose
    explainer = SequenceClassificationExplainer(model, tokenizer)
    attributions = explainer(TEXT)
    print(f"{len(attributions)} word attributions; model now on {next(model.parameters()).device}")
    inputs = tokenizer(TEXT, return_tensors="pt")
    with torch.no_grad():
        logits = model(**inputs).logits  # 0.5.1: CPU input ids, cuda:0 embedding weights
    print(f"CPU forward after the explanation: logits {tuple(logits.shape)}")


if __name__ == "__main__":
    main(sys.argv[1:])
