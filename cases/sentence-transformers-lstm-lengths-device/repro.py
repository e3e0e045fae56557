"""sentence-transformers PR #1420 (#933): models.LSTM packs with ``sentence_lengths`` on the GPU.

``models.WordEmbeddings`` returns ``sentence_lengths`` as a tensor with the other features, and
``SentenceTransformer.encode`` / ``fit`` move every feature to the model's device. ``models.LSTM.forward``
then calls ``nn.utils.rnn.pack_padded_sequence(token_embeddings, sentence_lengths, ...)``; since torch 1.7
the lengths must be a CPU int64 tensor, so on a GPU every word-embedding + LSTM model fails at its first
encode ("'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor"). 2.3.0
passes ``sentence_lengths.cpu()``.

The script builds the model of sentence-transformers' BiLSTM example (training_stsbenchmark_bilstm.py)
without downloads: WordEmbeddings over a 17-word whitespace vocabulary with random vectors, LSTM
(bidirectional), mean Pooling, on ``--device``, and encodes three sentences.
"""

from __future__ import annotations

import argparse
import sys

import torch

WORDS = ["a", "the", "cat", "dog", "sat", "on", "mat", "ran", "fast", "slow", "red", "blue", "big", "small",
         "house", "car", "tree"]
DIM = 8


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import numpy as np
    import sentence_transformers
    from sentence_transformers import SentenceTransformer, models
    from sentence_transformers.models.tokenizer import WhitespaceTokenizer

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"sentence-transformers={sentence_transformers.__version__}")
    torch.manual_seed(0)
    vectors = np.random.default_rng(0).standard_normal((len(WORDS) + 1, DIM)).astype(np.float32)
    embeddings = models.WordEmbeddings(tokenizer=WhitespaceTokenizer(vocab=WORDS), embedding_weights=vectors,
                                       update_embeddings=False)
    lstm = models.LSTM(word_embedding_dimension=DIM, hidden_dim=DIM)
    pooling = models.Pooling(lstm.get_word_embedding_dimension())
    model = SentenceTransformer(modules=[embeddings, lstm, pooling], device=args.device)
    encoded = model.encode(["the cat sat on the mat", "a dog ran fast", "red car"], convert_to_tensor=True)
    print(f"encoded {tuple(encoded.shape)} on {encoded.device}")
    if encoded.device.type != args.device:
        raise AssertionError(f"embeddings on {encoded.device}, expected {args.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
