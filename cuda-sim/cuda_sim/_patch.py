"""Attribute replacement with an exact undo."""

from __future__ import annotations

import contextlib
from typing import Any

_MISSING = object()


class Patcher:
    """Records every attribute it replaces so ``undo`` restores the exact previous state."""

    def __init__(self) -> None:
        self._saved: list[tuple[Any, str, Any]] = []

    def set(self, owner: Any, name: str, value: Any) -> None:
        previous = owner.__dict__.get(name, _MISSING) if isinstance(owner, type) else getattr(
            owner, name, _MISSING)
        self._saved.append((owner, name, previous))
        setattr(owner, name, value)

    def undo(self) -> None:
        while self._saved:
            owner, name, previous = self._saved.pop()
            if previous is _MISSING:
                with contextlib.suppress(AttributeError):
                    delattr(owner, name)
            else:
                setattr(owner, name, previous)
