"""transformers #30223: batched long-form Whisper generation stacks a CPU tensor with GPU sequences.

``WhisperGenerationMixin.generate`` transcribes long audio window by window and collects each clip's
segments; at the end ``_pad_to_max_length`` pads every clip's token sequence and ``torch.stack``s them.
A clip that produced no segment at all (an empty or fully padded clip, or one skipped by no-speech
detection) gets ``torch.tensor([])``, created on the CPU, while the others' tokens are on the model's
device, so the stack raises on a GPU. The empty-clip branch came with #29065 (4.39.0); PR #30787 passes
the device to ``_pad_to_max_length`` (first released in 4.42.0).

The script builds a tiny WhisperForConditionalGeneration and its timestamp GenerationConfig from
configs (no downloads), and transcribes a batch of two clips the long-form way (input features longer
than one 2 x max_source_positions window, an attention_mask, return_timestamps=True): the first clip
has 40 frames of features, the second none (its attention_mask row is all zeros, as the feature
extractor pads an empty clip), so it never gets a segment.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import torch

VOCAB = 64
NO_TIMESTAMPS = 40  # <|notimestamps|>; the timestamp tokens are 41..63
MEL_BINS = 8
FRAMES = 40  # long-form: more than one window of 2 * max_source_positions = 16 frames


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def tiny_whisper():
    from transformers import GenerationConfig, WhisperConfig, WhisperForConditionalGeneration

    config = WhisperConfig(vocab_size=VOCAB, num_mel_bins=MEL_BINS, d_model=16, encoder_layers=1, decoder_layers=1,
                           encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
                           decoder_ffn_dim=16, max_source_positions=8, max_target_positions=32, pad_token_id=1,
                           bos_token_id=2, eos_token_id=2, decoder_start_token_id=3, begin_suppress_tokens=None,
                           suppress_tokens=None)
    model = WhisperForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=3, eos_token_id=2, pad_token_id=1, bos_token_id=2, prev_sot_token_id=4,
        no_timestamps_token_id=NO_TIMESTAMPS, max_initial_timestamp_index=5, is_multilingual=False, max_length=32)
    return model


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers

    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} transformers={transformers.__version__}")
    torch.manual_seed(0)
    model = tiny_whisper().to(device).eval()
    features = torch.randn(2, MEL_BINS, FRAMES)
    attention_mask = torch.ones(2, FRAMES, dtype=torch.long)
    attention_mask[1] = 0  # the second clip is empty: all padding
    sequences = model.generate(features.to(device), attention_mask=attention_mask.to(device),
                               return_timestamps=True, max_new_tokens=6)
    print(f"long-form batch transcribed: sequences {tuple(sequences.shape)} on {sequences.device}")
    if sequences.device.type != device.type:
        raise AssertionError(f"sequences on {sequences.device}, expected {device}")


if __name__ == "__main__":
    main(sys.argv[1:])
