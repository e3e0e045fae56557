"""transformers issue #39947: Idefics3/SmolVLM vision embeddings bucketize GPU patch coordinates with CPU boundaries.

PR #39614 (first released in 4.55.0) vectorised the position ids of ``Idefics3VisionEmbeddings`` (and of the
Idefics2 and SmolVLM copies): the fractional patch coordinates are now built on ``pixel_values.device``, but the
``boundaries`` they are bucketized against still come from a bare ``torch.arange`` on the CPU, so every forward
pass of the vision tower on a GPU fails in ``torch.bucketize``. PR #39975 builds ``boundaries`` and the position ids
on the pixels' device (first released in 4.55.1).

The script builds a tiny ``Idefics3ForConditionalGeneration`` (a 1-layer SigLIP-style vision tower and a 1-layer
Llama text model) from configs on ``--device`` and runs one fine-tuning step on an image-and-text batch, the path of
a SmolVLM/Idefics3 SFT run: ``model(input_ids, pixel_values, labels)`` -> ``get_image_features`` -> vision
embeddings, then backward and an optimizer step.
"""

from __future__ import annotations

import argparse
import math
import sys
import warnings

import torch

IMAGE_SIZE, PATCH_SIZE, SCALE_FACTOR, IMAGE_TOKEN = 32, 8, 2, 63


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def tiny_model(device: torch.device) -> torch.nn.Module:
    from transformers import Idefics3Config, Idefics3ForConditionalGeneration

    config = Idefics3Config(
        vision_config={"hidden_size": 16, "intermediate_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
                       "image_size": IMAGE_SIZE, "patch_size": PATCH_SIZE},
        text_config={"model_type": "llama", "vocab_size": 64, "hidden_size": 16, "intermediate_size": 32,
                     "num_hidden_layers": 1, "num_attention_heads": 2, "num_key_value_heads": 2,
                     "max_position_embeddings": 64, "pad_token_id": 0},
        scale_factor=SCALE_FACTOR, image_token_id=IMAGE_TOKEN)
    return Idefics3ForConditionalGeneration(config).to(device)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers

    device = torch.device(args.device)
    print(f"variant={args.variant} device={device} torch={torch.__version__} transformers={transformers.__version__}")
    torch.manual_seed(0)
    model = tiny_model(device).train()
    # One image: (32 / 8)^2 = 16 patches, pixel-shuffled by 2 into 4 image tokens in the prompt.
    image_tokens = (IMAGE_SIZE // PATCH_SIZE) ** 2 // SCALE_FACTOR**2
    input_ids = torch.tensor([[1, 5, 6, *[IMAGE_TOKEN] * image_tokens, 7, 8, 9]], device=device)
    pixel_values = torch.rand(1, 1, 3, IMAGE_SIZE, IMAGE_SIZE, generator=torch.Generator().manual_seed(0)).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    output = model(input_ids=input_ids, attention_mask=torch.ones_like(input_ids), pixel_values=pixel_values,
                   labels=input_ids)
    output.loss.backward()
    optimizer.step()
    patch_grad = model.model.vision_model.embeddings.patch_embedding.weight.grad
    print(f"loss {output.loss.item():.4f} on {output.loss.device}; vision patch-embedding grad norm "
          f"{patch_grad.norm().item():.3g}")
    if not math.isfinite(output.loss.item()) or not patch_grad.abs().sum().item() > 0:
        raise AssertionError("the fine-tuning step did not train the vision tower")


if __name__ == "__main__":
    main(sys.argv[1:])
