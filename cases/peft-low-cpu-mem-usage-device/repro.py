"""PEFT PR #2113: loading a LoRA with ``low_cpu_mem_usage=True`` leaves the adapter on the state dict's device.

PEFT 0.13.0 added ``low_cpu_mem_usage``: ``inject_adapter_in_model(..., low_cpu_mem_usage=True)`` creates
the LoRA layers on the meta device and ``set_peft_model_state_dict(..., low_cpu_mem_usage=True)`` loads
the weights with ``load_state_dict(..., assign=True)``, so each lora_A/lora_B parameter becomes the
state dict's tensor as it is. A state dict read from disk is on the CPU while the base model is on the
GPU, so the adapter stays on the CPU and the first forward mixes cuda:0 activations with CPU LoRA
weights. This is the path diffusers' ``load_lora_weights(..., low_cpu_mem_usage=True)`` takes
(diffusers PR #9510 found the bug); PEFT 0.13.1 (PR #2113) moves each adapter to its base layer's
device after the assignment.

The script follows PEFT's own regression test for #2113: a tiny OPTForCausalLM built from a config,
a LoRA adapter (init_lora_weights=False, all linear layers) saved with save_pretrained and read back
with load_peft_weights(device="cpu"), then a fresh model on ``--device`` gets the adapter through
inject_adapter_in_model + set_peft_model_state_dict with low_cpu_mem_usage=True, and runs a forward.
``--no-low-cpu-mem-usage`` is the workaround (the default loading path copies into existing weights).
"""

from __future__ import annotations

import argparse
import sys
import tempfile

import torch


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--no-low-cpu-mem-usage", action="store_true",
                        help="load the adapter the default way (low_cpu_mem_usage=False)")
    return parser.parse_args(argv)


def tiny_model():
    from transformers import OPTConfig, OPTForCausalLM

    torch.manual_seed(0)
    config = OPTConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, ffn_dim=32, num_attention_heads=2,
                       max_position_embeddings=32, word_embed_proj_dim=16)
    return OPTForCausalLM(config)


def saved_adapter(folder: str):
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=4, init_lora_weights=False, target_modules="all-linear")
    get_peft_model(tiny_model(), config).save_pretrained(folder)
    return config


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    import peft
    import transformers
    from peft import inject_adapter_in_model, set_peft_model_state_dict
    from peft.utils import load_peft_weights

    low_cpu_mem_usage = not args.no_low_cpu_mem_usage
    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} peft={peft.__version__} "
          f"transformers={transformers.__version__} low_cpu_mem_usage={low_cpu_mem_usage}")
    with tempfile.TemporaryDirectory() as folder:
        config = saved_adapter(folder)
        saved = load_peft_weights(folder, device="cpu")  # as read from disk
    # keys as a plain (non-PeftModel) model names them, like diffusers' converted LoRA state dicts
    state_dict = {key.removeprefix("base_model.model."): value for key, value in saved.items()}
    model = tiny_model().to(device).eval()
    model = inject_adapter_in_model(config, model, low_cpu_mem_usage=low_cpu_mem_usage)
    result = set_peft_model_state_dict(model, state_dict, low_cpu_mem_usage=low_cpu_mem_usage)
    if result.unexpected_keys:
        raise AssertionError(f"adapter keys not loaded: {result.unexpected_keys[:3]}")
    lora = model.model.decoder.layers[0].self_attn.q_proj
    print(f"base weight on {lora.base_layer.weight.device}, lora_A on {lora.lora_A['default'].weight.device}")
    input_ids = torch.randint(0, 64, (1, 8), generator=torch.Generator().manual_seed(0)).to(device)
    with torch.no_grad():
        logits = model(input_ids=input_ids).logits
    print(f"forward with the adapter: logits {tuple(logits.shape)} on {logits.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
