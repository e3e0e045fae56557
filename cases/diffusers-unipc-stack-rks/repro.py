"""diffusers PR #13356 regression: UniPCMultistepScheduler stacks CPU rks with a device tensor.

The upstream path is the denoising loop of WanPipeline (and every pipeline using UniPC): a transformer on
the device predicts, ``scheduler.step(noise_pred, t, latents)`` updates the latents. ``set_timesteps``
keeps ``self.sigmas`` on the CPU on purpose; PR #13356 (commit b114620d85, on main from 2026-04-03) replaced
``torch.tensor(rks, device=device)`` by ``torch.stack(rks)`` after appending ``torch.ones((), device=device)``,
so from the first multistep update on, ``torch.stack`` gets 0-dim CPU ratios and a CUDA one. PR #13489
(2026-04-30) moves each sigma to the sample's device; 0.38.0 shipped both, so no release has the bug and the
buggy variant is 0.37.1 + the scheduler hunks of b114620d85. A tiny WanTransformer3DModel built from a
config denoises a 1-frame 8x8 latent for 6 steps with the Wan scheduler settings (flow sigmas, flow
prediction, shift 3).
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch

STEPS = 6


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def tiny_wan_transformer() -> torch.nn.Module:
    from diffusers import WanTransformer3DModel

    return WanTransformer3DModel(
        patch_size=(1, 2, 2), num_attention_heads=2, attention_head_dim=8, in_channels=4, out_channels=4,
        text_dim=16, freq_dim=16, ffn_dim=32, num_layers=1, rope_max_seq_len=32,
    )


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from diffusers import UniPCMultistepScheduler

    print(f"variant={args.variant} device={args.device} diffusers={version('diffusers')}")
    torch.manual_seed(0)
    transformer = tiny_wan_transformer().to(args.device).eval()
    # WanPipeline's scheduler config (Wan 2.1/2.2 model repos): flow sigmas, flow prediction, shift 3.
    scheduler = UniPCMultistepScheduler(prediction_type="flow_prediction", use_flow_sigmas=True, flow_shift=3.0,
                                        num_train_timesteps=1000, solver_order=2)
    scheduler.set_timesteps(STEPS, device=args.device)
    latents = torch.randn(1, 4, 1, 8, 8).to(args.device)
    prompt_embeds = torch.randn(1, 5, 16).to(args.device)
    with torch.no_grad():
        for step, t in enumerate(scheduler.timesteps):
            noise_pred = transformer(hidden_states=latents, timestep=t.expand(latents.shape[0]),
                                     encoder_hidden_states=prompt_embeds, return_dict=False)[0]
            # step 1 on: multistep_uni_c_bh_update / _p_bh_update, torch.stack(rks) mixes cpu and cuda
            latents = scheduler.step(noise_pred, t, latents, return_dict=False)[0]
            print(f"step {step}: t={int(t)} latents on {latents.device}")
    if not torch.isfinite(latents).all():
        raise AssertionError("denoising produced non-finite latents")
    print(f"denoised {STEPS} steps, mean |latent| {float(latents.abs().mean()):.4f}")


if __name__ == "__main__":
    main(sys.argv[1:])
