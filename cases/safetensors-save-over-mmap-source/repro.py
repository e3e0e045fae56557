"""safetensors #762: ``save_file(load_file(path) + edits, path)`` writes a zero-filled checkpoint.

The upstream path is the in-place checkpoint edit (renaming or dropping keys, adding a tensor to a LoRA or
model file, then saving it back where it came from): ``tensors = load_file(path)``, edit the dict,
``save_file(tensors, path)``. ``load_file`` returns CPU tensors backed by a memory map of ``path``; in
safetensors 0.8.0rc0 ``save_file`` opened ``path`` with ``O_TRUNC`` and ``set_len`` before writing, which
discarded the mapped pages, so the tensors it was writing read back as zeros and the file on disk lost
every value (no error). The fix (PR #764, in 0.8.0rc1 and 0.8.0) writes to a temporary file and renames
it over ``path``. The script saves a small checkpoint, edits it in place and compares the reloaded file
with copies taken before the save; the tensors are loaded on the CPU on every lane, as such edits are.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

import torch


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--save-elsewhere", action="store_true",
                        help="workaround: save the edited dict to a new file, then replace the original")
    return parser.parse_args(argv)


def original_checkpoint() -> dict[str, torch.Tensor]:
    generator = torch.Generator().manual_seed(0)
    return {
        "lora_unet_down.lora_down.weight": torch.randn(4, 64, generator=generator),
        "lora_unet_down.lora_up.weight": torch.randn(64, 4, generator=generator),
        "lora_unet_down.alpha": torch.tensor(4.0),
        "lora_te_proj.weight": torch.randn(32, 32, generator=generator).to(torch.float16),
    }


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    from safetensors.torch import load_file, save_file

    print(f"variant={args.variant} device={args.device} safetensors={version('safetensors')}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "lora.safetensors"
        save_file(original_checkpoint(), str(path), metadata={"format": "pt"})

        tensors = load_file(str(path))  # CPU tensors over a memory map of `path`
        tensors.pop("lora_te_proj.weight")  # the edit: drop the text-encoder part, add a scale
        tensors["lora_unet_down.scale"] = torch.tensor([0.75])
        expected = {name: tensor.clone() for name, tensor in tensors.items()}
        if args.save_elsewhere:
            staging = path.with_suffix(".tmp")
            save_file(tensors, str(staging), metadata={"format": "pt"})
            staging.replace(path)
        else:
            save_file(tensors, str(path), metadata={"format": "pt"})  # 0.8.0rc0: truncates the mapped source

        reloaded = load_file(str(path))
        if sorted(reloaded) != sorted(expected):
            raise AssertionError(f"keys after the in-place save: {sorted(reloaded)}, expected {sorted(expected)}")
        lost = [name for name in sorted(expected) if not torch.equal(reloaded[name], expected[name])]
        if lost:
            zeroed = [name for name in lost if not reloaded[name].any()]
            raise AssertionError(f"checkpoint saved over its own memory-mapped source lost data: {len(lost)} of "
                                 f"{len(expected)} tensors differ after reload, {len(zeroed)} are all zeros "
                                 f"({', '.join(lost)})")
        print(f"in-place edit kept all {len(expected)} tensors")


if __name__ == "__main__":
    main(sys.argv[1:])
