"""PEFT #541: AdaLoRA's ``ranknum`` stays on the CPU when the base model is already on the GPU.

``get_peft_model`` on a model that was moved to the GPU first (the usual order: load on the device,
then wrap) replaces each target Linear by an AdaLoRA ``SVDLinear`` built on the CPU, and
``LoraModel._replace_module`` moved only the submodules whose name contains ``lora_`` to the old
weight's device. ``ranknum`` (a ParameterDict holding the rank used to scale the update) kept its CPU
tensor, so the first forward divides a cuda:0 activation by a CPU parameter. PEFT PR #583 also moves
``ranknum``; first released in 0.4.0. Wrapping the model before moving it (``get_peft_model(model).to
("cuda")``) moves everything and is the workaround.

The script builds a tiny OPTForCausalLM from a config, moves it to ``--device``, wraps it with
AdaLoraConfig(r=4, init_r=4, target_r=2, q_proj/v_proj) and runs one forward/backward with labels.
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
    parser.add_argument("--wrap-before-move", action="store_true",
                        help="call get_peft_model on the CPU model and move the PeftModel (workaround)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import peft
    import transformers
    from peft import AdaLoraConfig, get_peft_model
    from transformers import OPTConfig, OPTForCausalLM

    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} peft={peft.__version__} "
          f"transformers={transformers.__version__}")
    torch.manual_seed(0)
    model = OPTForCausalLM(OPTConfig(vocab_size=64, hidden_size=16, num_hidden_layers=2, ffn_dim=32,
                                     num_attention_heads=2, max_position_embeddings=32, word_embed_proj_dim=16))
    config = AdaLoraConfig(r=4, init_r=4, target_r=2, total_step=10, lora_alpha=8, lora_dropout=0.1,
                           target_modules=["q_proj", "v_proj"])
    if args.wrap_before_move:
        peft_model = get_peft_model(model, config).to(device)
    else:
        peft_model = get_peft_model(model.to(device), config)
    layer = peft_model.base_model.model.model.decoder.layers[0].self_attn.q_proj
    print(f"q_proj weight on {layer.weight.device}, lora_A on {layer.lora_A['default'].device}, "
          f"ranknum on {layer.ranknum['default'].device}")
    input_ids = torch.randint(0, 64, (2, 6), generator=torch.Generator().manual_seed(0)).to(device)
    loss = peft_model(input_ids=input_ids, labels=input_ids).loss
    loss.backward()
    print(f"AdaLoRA forward/backward: loss {loss.item():.4f} on {loss.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
