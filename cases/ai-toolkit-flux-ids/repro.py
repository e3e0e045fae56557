"""ai-toolkit #212: Flux sampling on diffusers main between PR #9817 and its revert (PR #9896).

PR #9817 made FluxPipeline._prepare_latent_image_ids build its zeros on `device` but kept adding a
CPU torch.arange, so on a GPU it adds cuda and cpu tensors. The script first samples the way
ai-toolkit's StableDiffusion.generate_images does for Flux (a FluxPipeline called with precomputed
prompt_embeds / pooled_prompt_embeds), here with a tiny FluxTransformer2DModel and AutoencoderKL built
from configs, one step, latent output; then it calls the static helper directly as in the report's
traceback: FluxPipeline._prepare_latent_image_ids(1, 4, 4, device, torch.float32).
"""

from __future__ import annotations

import argparse
import sys

import torch
from diffusers import AutoencoderKL, FlowMatchEulerDiscreteScheduler, FluxPipeline, FluxTransformer2DModel

JOINT_DIM = 32
TEXT_TOKENS = 8


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def build_pipeline() -> FluxPipeline:
    transformer = FluxTransformer2DModel(
        patch_size=1, in_channels=4, num_layers=1, num_single_layers=1, attention_head_dim=16,
        num_attention_heads=2, joint_attention_dim=JOINT_DIM, pooled_projection_dim=JOINT_DIM,
        axes_dims_rope=[4, 4, 8],
    )
    vae = AutoencoderKL(
        sample_size=32, in_channels=3, out_channels=3, block_out_channels=(4,), layers_per_block=1,
        latent_channels=1, norm_num_groups=1, use_quant_conv=False, use_post_quant_conv=False,
        shift_factor=0.0609, scaling_factor=1.5035,
    )
    # ai-toolkit passes its own text encoders/tokenizers; sampling from prompt_embeds never calls them
    return FluxPipeline(scheduler=FlowMatchEulerDiscreteScheduler(), vae=vae, text_encoder=None, tokenizer=None,
                        text_encoder_2=None, tokenizer_2=None, transformer=transformer)


def sample(pipe: FluxPipeline, device: torch.device) -> torch.Tensor:
    prompt_embeds = torch.randn(1, TEXT_TOKENS, JOINT_DIM).to(device)
    pooled_prompt_embeds = torch.randn(1, JOINT_DIM).to(device)
    out = pipe(prompt_embeds=prompt_embeds, pooled_prompt_embeds=pooled_prompt_embeds, height=16, width=16,
               num_inference_steps=1, guidance_scale=3.5, generator=torch.Generator().manual_seed(0),
               output_type="latent")
    return out.images


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    import diffusers

    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} diffusers={diffusers.__version__}")
    pipe = build_pipeline().to(device)
    pipe.set_progress_bar_config(disable=True)
    latents = sample(pipe, device)
    print(f"FluxPipeline sample: latents {tuple(latents.shape)} on {latents.device}")
    ids = FluxPipeline._prepare_latent_image_ids(1, 4, 4, device, torch.float32)
    print(f"_prepare_latent_image_ids: {tuple(ids.shape)} {ids.dtype} on {ids.device}")
    if ids.device.type != device.type:
        raise AssertionError(f"latent image ids on {ids.device}, expected {device}")


if __name__ == "__main__":
    main(sys.argv[1:])
