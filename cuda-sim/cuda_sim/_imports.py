"""Run a callback once a module has been imported (standard library only).

Used where the simulation must act on a module it must not import itself: ``torch._dynamo`` (seconds
to import, so the simulation never imports it) and ``torch`` in a child interpreter (``_startup``).
A finder at the front of ``sys.meta_path`` lets the other finders locate the module, then wraps the
loader's ``exec_module`` so the callback runs right after the module's code.
"""

from __future__ import annotations

import importlib.machinery
import sys
import threading
import types
from collections.abc import Callable, Sequence


class AfterImport:
    """A ``sys.meta_path`` finder (only ``find_spec``: importlib.abc costs ~50 ms of start-up)."""

    def __init__(self, name: str, callback: Callable[[types.ModuleType], None]) -> None:
        self.name = name
        self.callback = callback
        self._lock = threading.Lock()

    def install(self) -> None:
        """Call ``callback`` now if the module is loaded already, else right after it loads."""
        module = sys.modules.get(self.name)
        if module is not None:
            self.callback(module)
            return
        sys.meta_path.insert(0, self)

    def remove(self) -> None:
        with self._lock:
            if self in sys.meta_path:
                sys.meta_path.remove(self)

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.name:
            return None
        self.remove()
        spec = _find_elsewhere(fullname, path, target)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        original = loader.exec_module
        callback = self.callback

        def exec_module(module: types.ModuleType) -> None:
            original(module)
            callback(module)

        try:
            loader.exec_module = exec_module
        except (AttributeError, TypeError):  # a loader that refuses instance attributes: not followed
            return spec
        return spec


def _find_elsewhere(fullname: str, path: Sequence[str] | None,
                    target: types.ModuleType | None) -> importlib.machinery.ModuleSpec | None:
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        if find_spec is None:
            continue
        spec: importlib.machinery.ModuleSpec | None = find_spec(fullname, path, target)
        if spec is not None:
            return spec
    return None
