"""transformers issue #34631: Trainer cannot resume from its own checkpoint on torch >= 2.6 (weights_only RNG state).

Every Trainer checkpoint holds ``rng_state.pth``: the Python, NumPy, CPU and CUDA generator states, the NumPy one a
tuple holding a NumPy array. torch 2.6 made ``weights_only=True`` the default of ``torch.load``, and up to 4.46.x
``Trainer._load_rng_state`` calls ``torch.load(rng_file)`` as it is, so ``train(resume_from_checkpoint=...)``
dies with ``UnpicklingError: Weights only load failed ... Unsupported global: GLOBAL
numpy._core.multiarray._reconstruct``. PR #34632 loads the file inside ``torch.serialization.safe_globals`` with the
NumPy globals the state needs (first released in 4.47.0).

The script trains a tiny LlamaForCausalLM built from a config with Trainer on ``--device`` for 2 steps, saving a
checkpoint at step 2, then resumes a new Trainer from that checkpoint to step 4, the path of any interrupted run
restarted with ``resume_from_checkpoint``. Not a placement bug: it fails on every device.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import warnings
from typing import Any

import torch


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def trainer(output_dir: str, max_steps: int, device: str) -> Any:  # a transformers.Trainer (imported late)
    from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(vocab_size=64, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32))
    generator = torch.Generator().manual_seed(0)
    data = [{"input_ids": ids, "labels": ids} for ids in torch.randint(1, 64, (8, 8), generator=generator)]
    args = TrainingArguments(output_dir=output_dir, per_device_train_batch_size=2, max_steps=max_steps, save_steps=2,
                             learning_rate=1e-3, seed=0, report_to=[], logging_strategy="no", disable_tqdm=True,
                             use_cpu=device == "cpu")
    return Trainer(model=model, args=args, train_dataset=data)


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"transformers={transformers.__version__}")
    output_dir = tempfile.mkdtemp(prefix="resume-", dir=os.getcwd())
    trainer(output_dir, max_steps=2, device=args.device).train()
    checkpoint = os.path.join(output_dir, "checkpoint-2")
    print(f"saved {sorted(os.listdir(checkpoint))}")
    resumed = trainer(output_dir, max_steps=4, device=args.device)
    resumed.train(resume_from_checkpoint=checkpoint)
    device = next(resumed.model.parameters()).device
    print(f"resumed from step 2 to step {resumed.state.global_step} on {device}")
    if resumed.state.global_step != 4 or device.type != args.device:
        raise AssertionError(f"resume ended at step {resumed.state.global_step} on {device}, expected 4 on "
                             f"{args.device}")


if __name__ == "__main__":
    main(sys.argv[1:])
