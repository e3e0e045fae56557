"""open_clip: CoCa.generate on CUDA passes a plain int eos_token_id to transformers' MinLengthLogitsProcessor.

A CoCa model from open_clip's coca_ViT-B-32 config shrunk to one 32-wide layer per tower (32 px images, no
pretrained weights) is moved to ``--device`` and captions one image with top-p sampling (one: 2.24.0 also
truth-tests the per-row stopping-criteria tensor of transformers >= 4.39, which fails for a batch: #847).
In open_clip 2.24.0, generate() hands the int 49407 to MinLengthLogitsProcessor, which transformers 4.42
turns into a tensor on its `device` argument, "cpu" by default, and compares with a vocabulary tensor on
the scores' device (torch.isin). open_clip 2.26.1 makes the sot/eos ids tensors on the image's device first.
The script checks the captions' shape and that each starts with the start-of-text token.
"""

from __future__ import annotations

import argparse
import sys
from importlib.metadata import version

import torch

SEQ_LEN = 8
SOT = 49406


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def tiny_coca_config() -> dict:
    import open_clip

    config = open_clip.get_model_config("coca_ViT-B-32")
    config["embed_dim"] = 32
    config["vision_cfg"].update(image_size=32, patch_size=16, layers=1, width=32, head_width=16, attn_pooler_heads=2)
    for tower in ("text_cfg", "multimodal_cfg"):
        config[tower].update(context_length=16, width=32, heads=2, layers=1)
    config["multimodal_cfg"].update(attn_pooler_heads=2)
    config.pop("custom_text", None)
    return config


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from open_clip import CoCa

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"open_clip={version('open_clip_torch')} transformers={version('transformers')}")
    torch.manual_seed(0)
    model = CoCa(**tiny_coca_config()).to(args.device).eval()
    images = torch.randn(1, 3, 32, 32, device=args.device)
    captions = model.generate(images, generation_type="top_p", seq_len=SEQ_LEN, min_seq_len=3,
                              fixed_output_length=True)
    if captions.shape != (1, SEQ_LEN) or not bool((captions[:, 0] == SOT).all()):
        raise AssertionError(f"unexpected captions: {captions.tolist()}")
    print(f"captions {tuple(captions.shape)} on {captions.device}: {captions.tolist()}")


if __name__ == "__main__":
    main(sys.argv[1:])
