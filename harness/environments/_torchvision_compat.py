"""Let torchvision's Python parts import beside a CPU build of torch whose process cannot load its ops.

Copied into an environment by the harness (``harness/environments/_compat.py``), never by a case, and only
where the build's probe found a CPU torch and a torchvision whose compiled ops (``_C.so``) cannot load: the
one torchvision on the index for a torch release can be a CUDA build, whose ``_C.so`` needs
``libc10_cuda.so``. torchvision then skips its ops, but its ``_meta_registrations`` still registers fake
kernels for ``torchvision::nms`` and ``torchvision::qnms``, and the import fails with "operator
torchvision::nms does not exist". This declares those two schemas (as torchvision's C++ does) so the import
completes; no operator is implemented, so a repro that calls one still fails, as it would on that host.

Standard library only until torchvision is looked up, and then torch only. Imported from a ``.pth`` at
interpreter start, it adds an import hook and nothing else: the first lookup of torchvision (an import, or
``importlib.util.find_spec``) imports torch, never earlier, and declares the schemas only if ``_C.so``
still fails to load then. Run by path with ``--probe`` it prints, as JSON, what the decision is made on;
with ``--apply SITE`` it is the one build step every backend runs in the environment it builds (the venv
backend in its sealed build, the docker images in a Dockerfile step): probe, decide, copy itself and the
``.pth`` into SITE where called for, check that torchvision imports, say so on stderr (the build log) and
print the record (JSON, ``{"compat": [...]}``) on stdout.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import ModuleType
from typing import Any

NAME = "torchvision-ops-on-cpu-torch"
MODULE = "_repro_matrix_torchvision_compat"  # its name once copied into site-packages
PTH_NAME = f"{MODULE}.pth"
PTH_LINE = f"import {MODULE}; {MODULE}.install()\n"
SCHEMAS = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)
_KEPT: list[object] = []  # a torch.library.Library removes its operators when collected: kept for the process


def ops_error() -> str | None:
    """Why torchvision's compiled ops cannot load beside this torch; "" when they load (or it ships none),
    None when torchvision is not installed. Imports torch only when torchvision is there."""
    spec = importlib.util.find_spec("torchvision")
    if spec is None or spec.origin is None:
        return None
    import torch

    for library in sorted(Path(spec.origin).parent.glob("_C*.so")):
        try:
            torch.ops.load_library(str(library))  # type: ignore[no-untyped-call]
        except OSError as error:  # torch's message names the file; the loader's (its cause) says why
            return str(error.__cause__ or error)
    return ""


def declare_schemas() -> None:
    import torch

    library = torch.library.Library("torchvision", "DEF")  # type: ignore[no-untyped-call]
    for schema in SCHEMAS:
        library.define(schema)  # type: ignore[no-untyped-call]
    _KEPT.append(library)


class BeforeTorchvision:
    """A ``sys.meta_path`` entry that finds nothing: on the first import of torchvision it steps aside and,
    when the ops cannot load, declares the schemas; the regular finders then import torchvision."""

    @classmethod
    def find_spec(cls, name: str, path: Sequence[str] | None = None,
                  target: ModuleType | None = None) -> ModuleSpec | None:
        if name == "torchvision":
            sys.meta_path.remove(cls)
            if ops_error():
                declare_schemas()
        return None


def install() -> None:
    """What the environment's ``.pth`` line calls at interpreter start."""
    if BeforeTorchvision not in sys.meta_path and "torchvision" not in sys.modules:
        sys.meta_path.insert(0, BeforeTorchvision)


def probe() -> dict[str, Any]:
    """torch's version and CUDA build, torchvision's version and why its ops cannot load (see ops_error)."""
    error = ops_error()
    if error is None:
        return {"torchvision": None}
    import torch

    try:
        found = version("torchvision")
    except PackageNotFoundError:  # a torchvision on sys.path without its metadata
        found = "(version unknown)"
    return {"torchvision": found, "torch": torch.__version__, "torch_cuda": torch.version.cuda,
            "ops_error": error}


def reason_to_apply(found: dict[str, Any]) -> str | None:
    """Why an environment whose probe found ``found`` needs this module, or None: only a CPU build of torch
    (a CUDA torch, the real-GPU lane, is left alone) beside a torchvision whose ops cannot load."""
    if not found.get("torchvision") or not found.get("ops_error") or found.get("torch_cuda"):
        return None
    error = str(found["ops_error"]).strip().splitlines()[0][:200]
    return (f"torch {found.get('torch')} is a CPU build and torchvision {found['torchvision']}'s compiled ops "
            f"cannot load beside it ({error})")


def apply(site: Path) -> list[str]:
    """The build step: the fix where the probe calls for it, then proof that torchvision imports; the
    record's ``compat`` lines (empty: nothing applied). Raises RuntimeError when the import still fails."""
    reason = reason_to_apply(probe())
    if reason is None:
        return []
    module, pth = site / f"{MODULE}.py", site / PTH_NAME
    module.write_bytes(Path(__file__).read_bytes())
    pth.write_text(PTH_LINE)
    print(f"[repro-matrix: compat {NAME}: {reason}; wrote {module.name}, {pth.name} into {site}]", file=sys.stderr)
    import subprocess  # here, not at the top: the .pth imports this module in every interpreter

    # -I: the sys.path a cell starts with; a fresh interpreter, so the .pth just written is read.
    check = subprocess.run([sys.executable, "-I", "-B", "-c", "import torchvision"], capture_output=True,
                           text=True, check=False)
    if check.returncode != 0:
        raise RuntimeError(f"torchvision does not import even with {pth} ({NAME}):\n{check.stderr.strip()}")
    return [f"{NAME}: {reason}"]


def _main(argv: list[str]) -> int:
    if argv == ["--probe"]:
        print(json.dumps(probe()))
        return 0
    if len(argv) == 2 and argv[0] == "--apply":
        try:
            print(json.dumps({"compat": apply(Path(argv[1]))}))
        except RuntimeError as error:
            print(error, file=sys.stderr)
            return 1
        return 0
    print(f"usage: {Path(__file__).name} --probe | --apply SITE_PACKAGES", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
