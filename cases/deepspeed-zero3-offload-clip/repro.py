"""DeepSpeed #5538 / MiniCPM-V #246: ZeRO-3 + offload_optimizer cpu + active gradient clipping.

One process, world size 1, as the ``deepspeed`` launcher would start it on a one-GPU node. A tiny
``Sequential`` trained with a torch ``AdamW`` client optimizer (``zero_force_ds_cpu_optimizer: false``,
so no C++ optimizer op is built) under ZeRO stage 3 with the optimizer offloaded to the CPU, and a
``gradient_clipping`` small enough that clipping fires on every step. 0.14.1/0.14.2 compute the
global grad norm as a 0-dim accelerator tensor (PR #5256) and ``unscale_and_clip_grads`` multiplies
the CPU fp32 grad partition by it in place: on CUDA that raises "Expected all tensors to be on the
same device, but found at least two devices, cuda:0 and cpu!".
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from importlib.metadata import version

import torch
from torch import nn

STEPS = 3
MICRO_BATCH = 8
CLIP = 1e-3  # far below the grad norm of this model (about 0.5-2), so clip > 1 on every step


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--steps", type=int, default=STEPS)
    return parser.parse_args(argv)


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def single_process_launch_env() -> None:
    """What the ``deepspeed`` launcher exports for the only worker of a one-device node."""
    os.environ.update({"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "LOCAL_SIZE": "1",
                       "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_loopback_port())})


def ds_config() -> dict:
    return {
        "train_micro_batch_size_per_gpu": MICRO_BATCH,
        "gradient_accumulation_steps": 1,
        "gradient_clipping": CLIP,
        "zero_force_ds_cpu_optimizer": False,
        "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}},
        "steps_per_print": 1_000_000,
    }


def check_accelerator(device: str) -> None:
    """Refuse to 'pass' on the wrong device: a cuda run that fell back to the CPU accelerator proves nothing."""
    from deepspeed.accelerator import get_accelerator

    name = get_accelerator().device_name()
    print(f"deepspeed accelerator: {name}, process group backend {torch.distributed.get_backend()}")
    if name != device:
        raise RuntimeError(f"repro precondition: --device {device} but DeepSpeed selected the {name!r} accelerator")


def train(engine: object, device: str, steps: int) -> None:
    data = torch.randn(steps, MICRO_BATCH, 16, generator=torch.Generator().manual_seed(1))
    target = torch.randn(steps, MICRO_BATCH, 4, generator=torch.Generator().manual_seed(2))
    for step in range(steps):
        x, y = data[step].to(device), target[step].to(device)
        loss = nn.functional.mse_loss(engine(x), y)
        engine.backward(loss)
        engine.step()  # 0.14.1/0.14.2 raise here, in stage3.unscale_and_clip_grads
        norm = float(engine.get_global_grad_norm())
        print(f"step {step}: loss {loss.item():.4f} grad norm {norm:.4f} (clip {CLIP})")
        if not norm > CLIP:
            raise RuntimeError(f"repro precondition: grad norm {norm} <= gradient_clipping {CLIP}, no clipping")


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    single_process_launch_env()
    import deepspeed

    print(f"variant={args.variant} device={args.device} deepspeed={version('deepspeed')} torch={torch.__version__}")
    deepspeed.init_distributed(dist_backend="gloo")
    check_accelerator(args.device)
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    engine, _, _, _ = deepspeed.initialize(model=model, optimizer=optimizer, config=ds_config())
    print(f"zero stage {engine.zero_optimization_stage()}, optimizer {type(engine.optimizer).__name__} "
          f"wrapping {type(engine.optimizer.optimizer).__name__}, offload_optimizer cpu")
    train(engine, args.device, args.steps)
    print("trained clean")


if __name__ == "__main__":
    main(sys.argv[1:])
