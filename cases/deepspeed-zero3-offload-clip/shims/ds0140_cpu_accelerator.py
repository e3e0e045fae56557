"""Lane shim for DeepSpeed 0.14.0 on the cpu lane only: select its CPU accelerator with the gloo backend.

Does nothing when ``torch.cuda.is_available()`` (the cuda lane, and cuda-sim, whose simulation is on
before shims run). On a CPU-only host DeepSpeed 0.14.0 auto-detects the CUDA accelerator (0.14.1 added
the CPU fallback), and its CPU accelerator can only be chosen with ``DS_ACCELERATOR=cpu``, which
0.14.0 accepts only if ``intel_extension_for_pytorch`` imports, and then ``import
oneccl_bindings_for_pytorch`` runs unconditionally and the communication backend is ``ccl`` (a
oneCCL C++ op). Neither package exists for torch 2.13, and neither is used by a gloo, world-size-1
run. So: two empty stand-in modules, ``DS_ACCELERATOR=cpu``, and the ``gloo`` backend name that
0.14.1+ fall back to by themselves when oneCCL is absent. Last, 0.14.0's ZeRO-3 parameter fetch calls
``get_accelerator().current_stream().synchronize()`` unguarded while its CPU accelerator returns None
for every stream (0.14.1+ skip the call on synchronized devices): current/default stream return a
no-op stream. Only the accelerator object is changed; no DeepSpeed file or function on the ZeRO-3
optimizer / clipping path is touched. Must run after ``ds014_torch_drift.py`` (it imports deepspeed).
"""

import importlib.machinery
import importlib.util
import os
import sys
import types

import torch

_STAND_INS = ("intel_extension_for_pytorch", "oneccl_bindings_for_pytorch")


def _stand_in(name: str) -> types.ModuleType:
    module = types.ModuleType(name, f"repro-matrix stand-in: {name} is not installed; import-only")
    module.__spec__ = importlib.machinery.ModuleSpec(name, loader=None)
    return module


class _NoStream:
    """The CPU runs every op in order: nothing to wait for."""

    def synchronize(self) -> None:
        pass

    def wait_stream(self, stream: object) -> None:
        pass


_NO_STREAM = _NoStream()

if not torch.cuda.is_available():
    for _name in _STAND_INS:
        if importlib.util.find_spec(_name) is None:
            sys.modules[_name] = _stand_in(_name)
    os.environ["DS_ACCELERATOR"] = "cpu"
    from deepspeed.accelerator import get_accelerator

    _accelerator = get_accelerator()
    _accelerator._communication_backend_name = "gloo"
    _accelerator.current_stream = _accelerator.default_stream = lambda device_index=None: _NO_STREAM
