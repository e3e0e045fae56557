"""Per-thread state the two modes share."""

from __future__ import annotations

import threading

import torch

from cuda_sim._placement import CPU


class _Local(threading.local):
    def __init__(self) -> None:
        # the device a Python-level call named explicitly (``device=``, ``.to(...)``)
        self.explicit: torch.device | None = None
        # arguments of the builtin torch function running now: C++ inside it creates tensors
        # with ``input.options()``, so their device is the inputs' device
        self.call: tuple[object, ...] | None = None
        # device of the last operator with tensor arguments (fallback for autograd internals)
        self.last: torch.device = CPU
        # operators that mixed devices while a builtin ran (their autograd nodes need fixing)
        self.mixed: list[tuple[list[torch.device], list[torch.Tensor]]] | None = None
        # the Python-level torch function being run (function, self) by redispatch
        self.python: tuple[object, object] | None = None
        # the out= tensors of the builtin running now, where they sit on another device than
        # its inputs (cuda_sim._out.Watch)
        self.out_watch: object = None
        # the last error the dispatch mode raised (TorchScript's interpreter drops its text: cuda_sim._script)
        self.error: Exception | None = None


local = _Local()
