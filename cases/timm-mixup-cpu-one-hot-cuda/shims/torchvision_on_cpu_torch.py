"""Import-compatibility shim: let torchvision's Python parts import next to the CPU build of torch.

timm imports torchvision (transforms, ops.misc.FrozenBatchNorm2d). The torchvision release for torch 2.13 on
the package index is a CUDA build whose compiled ops (_C.so) need libc10_cuda.so, absent from a CPU torch;
torchvision then skips its ops, but its _meta_registrations still registers fake kernels for
``torchvision::nms`` and ``torchvision::qnms``, which fails with "operator torchvision::nms does not exist".
Only when _C.so cannot load, this declares those two operator schemas (as torchvision's C++ does) so the import
completes. No torchvision operator is implemented or used by the repro; where _C.so loads (a CUDA torch),
nothing is done.
"""

import importlib.util
from pathlib import Path

import torch

_SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)


def _torchvision_ops_load() -> bool:
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return True
    for library in Path(spec.origin).parent.glob("_C*.so"):
        try:
            torch.ops.load_library(str(library))
        except OSError:
            return False
    return True


if not _torchvision_ops_load():
    _library = torch.library.Library("torchvision", "DEF")
    for schema in _SCHEMAS:
        _library.define(schema)
    # A Library deregisters its operators when collected: keep it for the life of the process.
    torch.library._repro_matrix_torchvision_schemas = _library  # type: ignore[attr-defined]
