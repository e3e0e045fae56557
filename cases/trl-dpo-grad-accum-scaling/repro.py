"""transformers #35856 / TRL PR #2615: DPOTrainer's loss is not divided by gradient_accumulation_steps.

transformers 4.48 (PR #35651) divides the loss by ``gradient_accumulation_steps`` in
``Trainer.training_step`` only when ``not self.model_accepts_loss_kwargs`` (and no
``compute_loss_func``): a model whose forward takes ``**kwargs`` is trusted to normalise by
``num_items_in_batch`` itself. DPOTrainer computes its own loss and never sees ``num_items_in_batch``,
but a LlamaForCausalLM accepts loss kwargs, so with TRL <= 0.13 every micro-batch's DPO loss was
back-propagated unscaled: with N accumulation steps the update (and the logged loss) is N times the
one of a single batch of the same size. TRL 0.14.0 sets ``self.model_accepts_loss_kwargs = False`` in
DPOTrainer (the same fix went to the other TRL trainers, tracking issue #2617).

The script runs DPOTrainer twice on the same two preference pairs from the same seed, a tiny
LlamaForCausalLM built from a config and a word-level tokenizer built in memory (no downloads):
once with per_device_train_batch_size=2, once with batch size 1 and gradient_accumulation_steps=2.
One SGD step, constant LR, no gradient clipping, so the two parameter updates must be equal (the DPO
loss is a batch mean). It raises if the accumulated update differs from the single-batch one.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import warnings

import torch

WORDS = ["the", "a", "cat", "dog", "sat", "ran", "on", "mat", "fast", "slow", "yes", "no", "good", "bad"]
TOLERANCE = 1e-3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    return parser.parse_args(argv)


def tokenizer():
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {"<pad>": 0, "<s>": 1, "</s>": 2, "<unk>": 3, **{w: i + 4 for i, w in enumerate(WORDS)}}
    backend = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=backend, pad_token="<pad>", bos_token="<s>",
                                   eos_token="</s>", unk_token="<unk>")


def update_norm(device: str, batch_size: int, accumulation: int) -> tuple[float, float]:
    """Train one DPO step; return the norm of the parameter update and the logged train loss."""
    from datasets import Dataset
    from transformers import LlamaConfig, LlamaForCausalLM
    from trl import DPOConfig, DPOTrainer

    pairs = Dataset.from_dict({"prompt": ["the cat sat on", "a dog ran"],
                               "chosen": [" the mat", " fast yes good"],
                               "rejected": [" a dog ran fast", " no"]})
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(WORDS) + 4, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=32,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2)
    model = LlamaForCausalLM(config)
    before = {name: param.detach().clone() for name, param in model.named_parameters()}
    args = DPOConfig(output_dir=tempfile.mkdtemp(prefix="dpo-ga-"), per_device_train_batch_size=batch_size,
                     gradient_accumulation_steps=accumulation, max_steps=1, learning_rate=1e-2, optim="sgd",
                     lr_scheduler_type="constant", max_grad_norm=0.0, beta=0.1, seed=0, report_to=[],
                     save_strategy="no", logging_steps=1, disable_tqdm=True, use_cpu=device == "cpu")
    trainer = DPOTrainer(model=model, args=args, train_dataset=pairs, processing_class=tokenizer())
    result = trainer.train()
    if model.device.type != device:
        raise AssertionError(f"DPOTrainer trained on {model.device}, expected {device}")
    squared = sum((param.detach() - before[name].to(param.device)).pow(2).sum().item()
                  for name, param in model.named_parameters())
    return squared ** 0.5, result.training_loss


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    warnings.filterwarnings("ignore")
    import transformers
    import trl

    print(f"variant={args.variant} device={args.device} torch={torch.__version__} trl={trl.__version__} "
          f"transformers={transformers.__version__}")
    single, single_loss = update_norm(args.device, batch_size=2, accumulation=1)
    accumulated, accumulated_loss = update_norm(args.device, batch_size=1, accumulation=2)
    ratio = accumulated / single
    print(f"update norm: one batch of 2 = {single:.6g} (loss {single_loss:.4f}), "
          f"2 accumulated batches of 1 = {accumulated:.6g} (loss {accumulated_loss:.4f}), ratio {ratio:.3f}")
    if abs(ratio - 1.0) > TOLERANCE:
        raise AssertionError(f"DPO update with gradient_accumulation_steps=2 is {ratio:.3f}x the update of one "
                             f"batch of the same size: the loss is not divided by the accumulation steps")


if __name__ == "__main__":
    main(sys.argv[1:])
