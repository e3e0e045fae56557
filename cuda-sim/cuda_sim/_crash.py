"""Telling a crash of the simulator's own code from what the simulated program did.

Standard library only (the child runner and the pytest plugin call it). Errors pass through the
simulator's frames all the time and are the program's: the device errors it raises on purpose
(``raise`` statements emulating torch), NotSimulatedError, and torch's own errors from the
kernels and argument parsers it calls. A crash is an error the simulator's code did not mean:
its innermost frame is in ``cuda_sim/`` and the failing instruction is not a ``raise`` (an
``assert`` is), and when it is a call into C code, the error is of a type that only a
programming mistake gives (an AttributeError, a KeyError, ...), never one torch raises for bad input.
"""

from __future__ import annotations

import os
from types import CodeType, TracebackType

from cuda_sim._errors import EMULATED, NotSimulatedError

_SIM_DIR = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_SIM_DIR)  # sites read "cuda_sim/_rules.py:120 in resolve"
_MISTAKES = (AttributeError, KeyError, NameError, AssertionError, RecursionError, ZeroDivisionError)
_RAISES = {"RAISE_VARARGS", "RERAISE"}


def internal_error(error: BaseException) -> str | None:
    """``"cuda_sim/_methods.py:102 in _type"`` when ``error`` (or an error it was raised
    ``from``) is a crash of the simulator's own code, else None."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        site = _crash_site(current)
        if site is not None:
            return site
        current = current.__cause__
    return None


def simulator_site(error: BaseException) -> str | None:
    """Where the simulator raised ``error``: ``"emulated CUDA error"`` for a device error it
    makes on purpose (their tracebacks end at the user's call), else its innermost frame when
    that frame is the simulator's code (``"cuda_sim/_rules.py:120 in resolve"``); None for
    errors the program or torch raised."""
    if isinstance(error, NotSimulatedError):
        return None
    if getattr(error, EMULATED, False):
        return "emulated CUDA error"
    if error.__traceback__ is None:
        return None
    code = _innermost(error.__traceback__).tb_frame.f_code
    if not os.path.abspath(code.co_filename).startswith(_SIM_DIR + os.sep):
        return None
    last = _innermost(error.__traceback__)
    return f"{os.path.relpath(code.co_filename, _ROOT)}:{last.tb_lineno} in {code.co_name}"


def _crash_site(error: BaseException) -> str | None:
    if isinstance(error, NotSimulatedError) or error.__traceback__ is None:
        return None
    last = _innermost(error.__traceback__)
    code = last.tb_frame.f_code
    if not os.path.abspath(code.co_filename).startswith(_SIM_DIR + os.sep):
        return None
    op = _opname(code, last.tb_lasti)
    if op in _RAISES and not isinstance(error, AssertionError):
        return None  # an error the simulator raises on purpose (an emulated torch or CUDA error)
    if (op is None or op.startswith("CALL")) and not isinstance(error, _MISTAKES):
        return None  # raised by what it called: torch's kernels and argument checks
    return f"{os.path.relpath(code.co_filename, _ROOT)}:{last.tb_lineno} in {code.co_name}"


def _innermost(tb: TracebackType) -> TracebackType:
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb


def _opname(code: CodeType, offset: int) -> str | None:
    import dis  # only when an error is classified: the pytest plugin imports this module in every session

    for instruction in dis.get_instructions(code):
        if instruction.offset == offset:
            return instruction.opname
    return None
