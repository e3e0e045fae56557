"""Which of a repro's imports an environment does not install: run by the environment's own interpreter (standard
library only, as ``python -I -B -c SOURCE PATHS_JSON MODULE...``), sealed, by :meth:`VenvBackend.missing_modules`.

Nothing of the environment's packages runs: each name is looked up by the import system's finders (``sys.meta_path``,
which the path finder and an editable install's finder are on) with its parent's search path, the way ``import``
finds it, but without executing the parent's ``__init__``. A part that is not found is said missing only when its
parent package's ``__init__`` does not name it either: a package may make a submodule when it is imported (a lazy
loader, a namespace extended at run time), and validate must not refuse what may work. A plain module's attributes
(``six.moves``) are not looked up. Prints one JSON list of ``[module, the part not found]``.
"""

from __future__ import annotations

import importlib.machinery
import json
import re
import sys
from pathlib import Path
from typing import Any


def _find(fullname: str, path: list[str] | None) -> Any:
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        if find is None:
            continue
        try:
            spec = find(fullname, path, None)
        except Exception:  # a finder that cannot answer is no answer
            continue
        if spec is not None:
            return spec
    return None


def _names_it(spec: Any, part: str) -> bool:
    origin = getattr(spec, "origin", None)
    if not origin or not str(origin).endswith(".py"):
        return True  # a parent with no source to read (compiled, frozen): not refused
    try:
        text = Path(origin).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return True
    return re.search(rf"\b{re.escape(part)}\b", text) is not None


def missing(name: str) -> str:
    """The first part of ``name`` the finders do not find ("" when all are found, or not looked up)."""
    parts = name.split(".")
    if parts[0] in sys.builtin_module_names or parts[0] in getattr(sys, "stdlib_module_names", ()):
        return ""
    spec = _find(parts[0], None)
    if spec is None:
        return parts[0]
    for index in range(1, len(parts)):
        locations = spec.submodule_search_locations
        if locations is None:
            return ""  # a plain module: what follows is an attribute
        fullname = ".".join(parts[: index + 1])
        found = _find(fullname, list(locations))
        if found is None:
            return "" if _names_it(spec, parts[index]) else fullname
        spec = found
    return ""


def main(argv: list[str]) -> None:
    sys.path[:0] = json.loads(argv[0])  # the case folder (the repro's own modules)
    importlib.machinery.PathFinder.invalidate_caches()
    print(json.dumps([[name, part] for name in argv[1:] if (part := missing(name))]))


if __name__ == "__main__":
    main(sys.argv[1:])
