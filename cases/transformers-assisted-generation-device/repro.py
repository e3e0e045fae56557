"""transformers PR #33257: assisted generation with the assistant on another device than the main model.

Assisted (speculative) decoding lets a small assistant model draft tokens that the main model
verifies; keeping the assistant on the CPU or another device than a GPU-resident main model is a
supported setup (PR #27995, test ``test_assisted_decoding_in_gpu_cpu``). In 4.44 the assistant's
candidate tokens come back on the assistant's device and ``_assisted_decoding`` feeds them to the main
model as they are, so the main model's embedding lookup gets CPU token ids for its cuda:0 weights
(4.42 failed earlier, in a logits processor). PR #33257 moves the candidates to the main model's device
(first released in 4.45.0).

The script builds a two-layer main LlamaForCausalLM on ``--device`` and a one-layer assistant left on
the CPU, both from configs, and runs greedy assisted generation from a 6-token prompt.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import torch


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
    config = LlamaConfig(vocab_size=100, hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64, pad_token_id=0,
                         bos_token_id=1, eos_token_id=2)
    main_model = LlamaForCausalLM(config).to(device).eval()
    assistant = LlamaForCausalLM(LlamaConfig(**{**config.to_dict(), "num_hidden_layers": 1})).eval()  # CPU
    prompt = torch.randint(3, 100, (1, 6), generator=torch.Generator().manual_seed(0)).to(device)
    output = main_model.generate(prompt, attention_mask=torch.ones_like(prompt), assistant_model=assistant,
                                 max_new_tokens=5, do_sample=False)
    plain = main_model.generate(prompt, attention_mask=torch.ones_like(prompt), max_new_tokens=5, do_sample=False)
    print(f"assisted: {output[0, -5:].tolist()} on {output.device}; main model alone: {plain[0, -5:].tolist()}")
    if not torch.equal(output.cpu(), plain.cpu()):
        raise AssertionError("greedy assisted generation differs from the main model's own greedy output")


if __name__ == "__main__":
    main(sys.argv[1:])
