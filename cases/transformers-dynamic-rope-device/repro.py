"""transformers PR #35608: dynamic RoPE falls back to an ``original_inv_freq`` left on the CPU.

Since the RoPE refactor of 4.43.0, ``LlamaRotaryEmbedding`` (and the Mistral, Qwen2, Gemma, ... copies)
keeps ``self.original_inv_freq = self.inv_freq`` as a plain attribute. ``model.to("cuda")`` moves the
``inv_freq`` buffer but not that attribute. With ``rope_scaling={"rope_type": "dynamic"}`` a sequence
longer than ``max_position_embeddings`` recomputes ``inv_freq`` on the device (growth); the next
sequence shorter than the original length resets ``inv_freq`` to ``original_inv_freq``, the CPU tensor,
and the rotary ``inv_freq @ position_ids`` mixes devices. 4.48.3 moves ``original_inv_freq`` to the
input's device before the reset.

The script builds a tiny LlamaForCausalLM with dynamic NTK scaling from a config on the CPU, moves it
to ``--device`` and generates twice as a chat or eval loop would: first from a prompt longer than
``max_position_embeddings`` (16), then from a short prompt.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import torch

MAX_POSITIONS = 16


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers
    from transformers import LlamaConfig, LlamaForCausalLM

    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} transformers={transformers.__version__}")
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=MAX_POSITIONS,
                         rope_scaling={"rope_type": "dynamic", "factor": 2.0}, pad_token_id=0, bos_token_id=1,
                         eos_token_id=2)
    model = LlamaForCausalLM(config).to(device).eval()
    rotary = model.model.rotary_emb
    generator = torch.Generator().manual_seed(0)
    for name, length in (("long prompt", MAX_POSITIONS + 8), ("short prompt", 6)):
        prompt = torch.randint(3, 64, (1, length), generator=generator).to(device)
        output = model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=3, do_sample=False)
        print(f"{name} ({length} tokens): generated {tuple(output.shape)} on {output.device}; "
              f"inv_freq on {rotary.inv_freq.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
