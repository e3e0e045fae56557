"""diffusers #11833: ``pipe.set_lora_device`` with two LoRA adapters that target different layers.

The upstream path is the multi-adapter offloading recipe of the LoRA docs: load two adapters with
``pipe.load_lora_weights(..., adapter_name=...)``, offload the inactive one with
``pipe.set_lora_device([name], "cpu")``, sample with the other, bring the first back with
``set_lora_device([name], device)`` and sample with both. diffusers 0.34.0's ``LoraBaseMixin.set_lora_device``
walks every PEFT ``BaseTunerLayer`` and indexes ``module.lora_A[adapter_name]`` for each requested
adapter, so a layer that only the other adapter targets raises ``KeyError``: the bug needs no GPU (every
lane fails the same way). 0.35.0 (PR #11844) skips layers that do not hold the adapter. A tiny
FluxPipeline (FluxTransformer2DModel and AutoencoderKL from configs, no text encoders: sampling from
prompt embeddings) stands in for the real one; the two adapters are peft-format LoRA state dicts on
``to_q`` and ``to_k`` of the first block.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch

JOINT_DIM, TEXT_TOKENS, RANK = 16, 4, 2


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def build_pipeline() -> torch.nn.Module:
    from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxPipeline, FluxTransformer2DModel

    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=8,
        num_attention_heads=2, joint_attention_dim=JOINT_DIM, pooled_projection_dim=JOINT_DIM,
        axes_dims_rope=[2, 2, 4],
    )
    vae = AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=(4,), layers_per_block=1,
        latent_channels=1, norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False,
    )
    return FluxPipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=None, tokenizer=None,
                        text_encoder_2=None, tokenizer_2=None, transformer=transformer)


def lora_state_dict(pipe: torch.nn.Module, target: str, seed: int) -> dict[str, torch.Tensor]:
    """A peft-format LoRA for one projection of block 0, as saved by diffusers' LoRA training scripts."""
    layer = dict(pipe.transformer.named_modules())[f"transformer_blocks.0.attn.{target}"]
    generator = torch.Generator().manual_seed(seed)
    prefix = f"transformer.transformer_blocks.0.attn.{target}"
    return {f"{prefix}.lora_A.weight": 0.01 * torch.randn(RANK, layer.in_features, generator=generator),
            f"{prefix}.lora_B.weight": 0.01 * torch.randn(layer.out_features, RANK, generator=generator)}


def sample(pipe: torch.nn.Module, device: str) -> torch.Tensor:
    generator = torch.Generator().manual_seed(0)
    prompt_embeds = torch.randn(1, TEXT_TOKENS, JOINT_DIM, generator=generator).to(device)
    pooled = torch.randn(1, JOINT_DIM, generator=generator).to(device)
    return pipe(prompt_embeds=prompt_embeds, pooled_prompt_embeds=pooled, height=16, width=16,
                num_inference_steps=1, generator=generator, output_type="latent").images


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    print(f"variant={args.variant} device={args.device} diffusers={version('diffusers')} peft={version('peft')}")
    torch.manual_seed(0)
    pipe = build_pipeline().to(args.device)
    pipe.set_progress_bar_config(disable=True)
    pipe.load_lora_weights(lora_state_dict(pipe, "to_q", seed=1), adapter_name="style")
    pipe.load_lora_weights(lora_state_dict(pipe, "to_k", seed=2), adapter_name="character")
    print(f"adapters: {pipe.get_list_adapters()}")

    pipe.set_lora_device(["style"], "cpu")  # 0.34.0: KeyError 'style' on the to_k layer
    pipe.set_adapters(["character"])
    print(f"character only: latents {tuple(sample(pipe, args.device).shape)}")
    pipe.set_lora_device(["style"], args.device)
    pipe.set_adapters(["style", "character"])
    latents = sample(pipe, args.device)
    print(f"style + character: latents {tuple(latents.shape)} on {latents.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
