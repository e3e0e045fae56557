"""VAR #127: resuming a fused-AdamW run from ar-ckpt-last.pth loaded with map_location='cpu'.

Run 1 trains a tiny model on the device with torch.optim.AdamW(fused=True) and saves
ar-ckpt-last.pth in the working folder, as VAR's train.py does each epoch. Run 2 starts fresh,
auto-resumes like VAR's utils/misc.py::auto_resume (newest ar-ckpt*.pth, torch.load with
map_location='cpu'), loads the optimizer state as AmpOptimizer.load_state_dict does, and steps.
Where Optimizer.load_state_dict leaves state['step'] on the CPU (torch < 2.1), the fused CUDA
kernel rejects the CPU state_steps.
"""

from __future__ import annotations

import argparse
import glob
import os
import sys
from functools import partial

import torch
from torch import nn

CKPT_PATTERN = "ar-ckpt*.pth"
STEPS_PER_EPOCH = 3


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--variant", required=True)
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--map-location", choices=["cpu", "device"], default="cpu",
                        help="torch.load map_location in auto_resume (VAR hard-codes 'cpu')")
    parser.add_argument("--step-to-param-device", action="store_true",
                        help="after loading, move every state['step'] to its parameter's device")
    parser.add_argument("--unfused", action="store_true", help="AdamW(fused=False), VAR's --afuse False")
    return parser.parse_args(argv)


def build(device: str, fused: bool) -> tuple[nn.Module, torch.optim.Optimizer]:
    model = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4)).to(device)
    decay = [p for n, p in model.named_parameters() if p.ndim > 1]
    no_decay = [p for n, p in model.named_parameters() if p.ndim <= 1]
    groups = [{"params": decay, "weight_decay": 0.05}, {"params": no_decay, "weight_decay": 0.0}]
    # train.py: partial(torch.optim.AdamW, betas=(0.9, 0.95), fused=args.afuse), lr=tlr, weight_decay=0
    opt_clz = partial(torch.optim.AdamW, betas=(0.9, 0.95), fused=fused)
    return model, opt_clz(params=groups, lr=1e-3, weight_decay=0)


def train_steps(model: nn.Module, optimizer: torch.optim.Optimizer, device: str, steps: int) -> float:
    loss = torch.zeros(())
    for _ in range(steps):
        x = torch.randn(4, 8, device=device)
        loss = model(x).square().mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
    return float(loss.detach())


def auto_resume(map_location: str) -> tuple[int, dict]:
    all_ckpt = sorted(glob.glob(CKPT_PATTERN), key=os.path.getmtime, reverse=True)
    if not all_ckpt:
        print(f"[auto_resume] no ckpt found @ {CKPT_PATTERN}")
        return 0, {}
    print(f"[auto_resume] load ckpt from @ {all_ckpt[0]} (map_location={map_location!r})")
    ckpt = torch.load(all_ckpt[0], map_location=map_location)
    return ckpt["epoch"], ckpt["trainer"]


def run(args: argparse.Namespace, run_no: int) -> None:
    map_location = args.device if args.map_location == "device" else "cpu"
    start_ep, trainer_state = auto_resume(map_location)
    model, optimizer = build(args.device, fused=not args.unfused)
    if trainer_state:
        model.load_state_dict(trainer_state["var_wo_ddp"])
        optimizer.load_state_dict(trainer_state["var_opt"]["optimizer"])
        if args.step_to_param_device:
            for param, state in optimizer.state.items():
                state["step"] = state["step"].to(param.device)
        steps = {str(s["step"].device) for s in optimizer.state.values()}
        print(f"[run {run_no}] resumed from ep{start_ep}; state['step'] devices: {sorted(steps)}")
    loss = train_steps(model, optimizer, args.device, STEPS_PER_EPOCH)
    print(f"[run {run_no}] ep{start_ep} loss {loss:.4f}")
    trainer = {"var_wo_ddp": model.state_dict(), "var_opt": {"optimizer": optimizer.state_dict()}}
    torch.save({"epoch": start_ep + 1, "iter": 0, "trainer": trainer, "args": {}}, "ar-ckpt-last.pth")
    print(f"[run {run_no}] saved ar-ckpt-last.pth")


def main(argv: list[str]) -> None:
    args = parse_args(argv)
    torch.manual_seed(0)
    print(f"variant={args.variant} device={args.device} torch={torch.__version__} "
          f"fused={not args.unfused} map_location={args.map_location}")
    for stale in glob.glob(CKPT_PATTERN):
        os.remove(stale)
    run(args, 1)
    run(args, 2)
    print("resume finished")


if __name__ == "__main__":
    main(sys.argv[1:])
