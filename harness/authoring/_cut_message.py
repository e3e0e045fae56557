"""A message the report cut short ("Expected all tensors to be on the same": an excerpt, a log cut at its end) read
as the torch message it starts: its class (a cut head with no class of its own, _torch_paraphrase.py), and the lanes
and the device-placement tag of a device check, which do not depend on the words the cut dropped. The signature keeps
the report's words; only the class and the lanes are read from the whole message. The one table of torch's messages
that a cut head is recognised by."""

from __future__ import annotations

import re

# torch's messages whose family (a device check, a host without CUDA, ...) a prefix decides, each as one version
# words it, beside the messages of another family that start with the same words (dtype checks): a prefix two
# families share decides nothing. Each is a RuntimeError but those in _CLASSES.
_KNOWN = (
    ("device", "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"),
    ("device", "Expected all tensors to be on the same device, but got index is on cpu, different from other tensors "
               "on cuda:0 (when checking argument in method wrapper_CUDA__index_select)"),
    ("device", "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_mm"),
    ("device", "Expected object of backend CUDA but got backend CPU for argument #2 'mat2'"),
    ("device", "Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 'weight'; "
               "but device 0 does not equal -1 (while checking arguments for cudnn_convolution)"),
    ("device", "Tensor for argument #2 'mat1' is on CPU, but expected it to be on GPU (while checking arguments for "
               "addmm)"),
    ("device", "indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
    ("generator", "Expected a 'cuda' device type for generator but found 'cpu'"),
    ("pin-memory", "Caught RuntimeError in pin memory thread for device 0."),
    ("no-cuda", "Attempting to deserialize object on a CUDA device but torch.cuda.is_available() is False. If you are "
                "running on a CPU-only machine, please use torch.load with map_location=torch.device('cpu') to map "
                "your storages to the CPU."),
    ("device-index", "Attempting to deserialize object on CUDA device 1 but torch.cuda.device_count() is 1. Please use "
                     "torch.load with map_location to map your storages to an existing device."),
    ("no-cuda", "Torch not compiled with CUDA enabled"),
    ("dtype", "Expected object of scalar type Float but got scalar type Double for argument #2 'mat2'"),
    ("dtype", "Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
              "torch.cuda.FloatTensor instead (while checking arguments for embedding)"),
    ("dtype", "Expected tensor for argument #1 'input' to have the same type as tensor for argument #2 'weight'; but "
              "type torch.cuda.HalfTensor does not equal torch.cuda.FloatTensor (while checking arguments for "
              "cudnn_convolution)"),
)
_CLASSES = {"Torch not compiled with CUDA enabled": "AssertionError"}
_MIN_WORDS = 5  # "Expected all tensors to be": fewer words say too little to tell a family
_CUT_MARK = re.compile(r"\s*(?:\.\.\.|…)\s*$")


def completed_class(message: str) -> tuple[str, str] | None:
    """(the whole message, its class) for a cut ``message`` (:func:`completed`), else None."""
    whole = completed(message)
    return (whole, _CLASSES.get(whole, "RuntimeError")) if whole else None


def completed(message: str) -> str:
    """The whole torch message a cut ``message`` is the start of (cut at a word boundary, at least five words, the
    start of messages of one family only), else ""."""
    cut = _CUT_MARK.sub("", message.strip())
    if "\n" in cut or len(cut.split()) < _MIN_WORDS:
        return ""
    folded = cut.casefold()
    starts = [(family, whole) for family, whole in _KNOWN if len(whole) > len(cut)
              and whole.casefold().startswith(folded) and not (whole[len(cut)].isalnum() and cut[-1].isalnum())]
    return starts[0][1] if starts and len({family for family, _ in starts}) == 1 else ""
