"""torch's messages as reporters shorten or paraphrase them, without a class ("error: all tensors on two devices,
cuda:0 and cpu!", "Expected all tensors to be on the same..."): the family a distinctive fragment names, rebuilt to
the words torch prints (so the signature matches a real run) with torch's class for it; a head cut short keeps the
report's words."""

from __future__ import annotations

import re

from harness.authoring._cut_message import completed_class

_DEVICE = r"(?:cuda|xpu|npu|hpu|mps|meta)(?::\d+)?|cpu"
# Two devices named as a pair ("cuda:0 and cpu", "cpu and cuda:1") in a sentence about tensors or devices.
_DEVICE_PAIR = re.compile(rf"\b(?:tensors?|devices?)\b.{{0,80}}?\b(?P<a>{_DEVICE}) (?:and|&|vs\.?) (?P<b>{_DEVICE})\b",
                          re.IGNORECASE)
_DTYPE = r"(?:BFloat16|Half|Float|Double|Long|Int|Short|Bool|Byte|Char|ComplexFloat|ComplexDouble)"
# "expected dtype Half but got Float": torch's own words are "expected scalar type Half but found Float".
_DTYPE_PAIR = re.compile(rf"\b[Ee]xpected (?:dtype |type )?(?P<a>{_DTYPE}) but got (?:dtype |type )?(?P<b>{_DTYPE})\b")


def _device(name: str) -> str:
    """A device as torch prints it in this message: with its index (torch writes "cuda:0", never "cuda")."""
    name = name.lower()
    return name if name == "cpu" or ":" in name else f"{name}:0"


def paraphrased(message: str) -> tuple[str, str, str] | None:
    """(torch's wording, or the cut head as written, its class, how it was read) for a message in a known family's
    short or paraphrased form; None for any other message (torch's own wording is read elsewhere)."""
    text = message.strip()
    if (pair := _DEVICE_PAIR.search(text)) is not None and _device(pair["a"]) != _device(pair["b"]):
        rebuilt = (f"Expected all tensors to be on the same device, but found at least two devices, "
                   f"{_device(pair['a'])} and {_device(pair['b'])}!")
        return rebuilt, "RuntimeError", "a device mismatch in the report's words, rebuilt to torch's"
    if (pair := _DTYPE_PAIR.search(text)) is not None and pair["a"] != pair["b"]:
        return (f"expected scalar type {pair['a']} but found {pair['b']}", "RuntimeError",
                "a dtype mismatch in the report's words, rebuilt to torch's")
    # a head cut short keeps the report's words (a signature's search still finds them in torch's), its "..." dropped
    if (whole := completed_class(text)) is not None:
        return text.rstrip(".\u2026 "), whole[1], "the head of torch's message, cut short"
    return None
