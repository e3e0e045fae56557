"""Which torch releases cuda-sim is tested with, and what it says when it meets another one.

Standard library only: the pytest plugin and the ``cuda-sim`` command import this before torch.
The simulation follows torch internals (mode stacks, the generated device checks, the storage
API), so a release it was never run with gets a warning, and one it cannot load under an error,
each naming the tested range and the version found.
"""

from __future__ import annotations

import functools
import re
import sys
import warnings

__version__ = "0.1.0"  # this distribution's own version (hatch reads it from here)
# Minor releases the simulation is measured with: its tests run under torch 2.13 (the CPU build) and
# 2.14 (PyPI's CUDA build on a host without a GPU); docs/cuda-sim.md, "Supported torch versions",
# says what was run with each.
TESTED = ((2, 13), (2, 14))
TESTED_TEXT = "torch 2.13 and 2.14"


class UnsupportedTorchError(RuntimeError):
    """torch is missing, or the simulation cannot load under the installed release."""


class TorchVersionWarning(UserWarning):
    """The installed torch is outside the releases the simulation is tested with."""


def release(version: str) -> tuple[int, int] | None:
    """``"2.13.0+cpu"`` -> ``(2, 13)``; None when the text does not start with a release number."""
    match = re.match(r"(\d+)\.(\d+)", version)
    return (int(match[1]), int(match[2])) if match else None


def torch_version() -> str:
    """The importable torch's version; :class:`UnsupportedTorchError` when there is none."""
    try:
        import torch
    except ImportError as error:
        raise UnsupportedTorchError(
            f"cuda-sim needs torch (tested with {TESTED_TEXT}), but this Python ({sys.executable}) cannot "
            f"import it: {error}. Install torch in this environment next to cuda-sim."
        ) from error
    return str(torch.__version__)


@functools.cache
def check_torch() -> str:
    """Return the torch version, warning (once) when it is outside the tested releases."""
    version = torch_version()
    if release(version) not in TESTED:
        warnings.warn(TorchVersionWarning(
            f"cuda-sim is tested with {TESTED_TEXT}; this is torch {version}: device checks may differ "
            "from that release's CUDA, or the simulation may fail to start"), stacklevel=2)
    return version


def unsupported(version: str, error: BaseException) -> UnsupportedTorchError:
    """The error for a simulation that failed to start under ``version``, a release it is not tested with."""
    return UnsupportedTorchError(f"cuda-sim cannot start under torch {version} (it is tested with {TESTED_TEXT}): "
                                 f"{type(error).__name__}: {error}")
