"""Compiled bytecode shared between environments: each source file compiled once, not once per environment.

An environment's files are hardlinks of uv's cache, so torch's 5,000 modules are on disk once; their bytecode
was compiled into every environment again (about 17 s of CPU and 124 MB per environment with torch, issue 21).
The store (``<environment root>/.bytecode-store``) keeps each ``.pyc`` the harness compiled, named by what it
is compiled from: the interpreter's cache tag and the source's SHA-256, size and mtime (the ``.pyc`` header
holds the last two, so a lent file is valid exactly where its key matches). Before compiling an environment
the harness hardlinks the store's files into its ``__pycache__`` folders; ``compileall`` then compiles only
what is missing, and only those fresh files go into the store: never one that was there before the compile
step (a wheel's or a source build's own ``.pyc``), so nothing an install planted reaches another environment.
Only the harness writes the store; cells see environments read-only, so no cell can change a shared file.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
from collections.abc import Iterator
from pathlib import Path

STORE = ".bytecode-store"
_VERSION = re.compile(r"^version_info\s*=\s*(\d+)\.(\d+)", re.MULTILINE)
_IMPLEMENTATION = re.compile(r"^implementation\s*=\s*(\S+)", re.MULTILINE)


def cache_tag(environment: Path) -> str | None:
    """The environment interpreter's bytecode tag (``cpython-311``) from its ``pyvenv.cfg``; None when that
    does not say (then nothing is shared)."""
    try:
        config = (environment / "pyvenv.cfg").read_text()
    except OSError:
        return None
    version, implementation = _VERSION.search(config), _IMPLEMENTATION.search(config)
    if version is None or implementation is None or implementation.group(1).lower() != "cpython":
        return None
    return f"cpython-{version.group(1)}{version.group(2)}"


class SharedBytecode:
    """Lend the store's bytecode to one environment before it is compiled, keep what the compile made after."""

    def __init__(self, root: Path, environment: Path) -> None:
        self.environment = environment
        self.tag = cache_tag(environment)
        self.store = root / STORE / (self.tag or "")
        self._keys: dict[Path, str] = {}  # the .pyc each source compiles to -> its key in the store
        self._before: set[Path] = set()
        self.lent = 0

    def lend(self) -> None:
        if self.tag is None:
            return
        for source in _sources(self.environment / "lib"):
            key = _key(source)
            if key is None:
                continue
            compiled = source.parent / "__pycache__" / f"{source.stem}.{self.tag}.pyc"
            self._keys[compiled] = key
            if compiled.exists():
                self._before.add(compiled)
                continue
            with contextlib.suppress(OSError):  # not in the store, or no hardlinks here: compiled as before
                compiled.parent.mkdir(exist_ok=True)
                os.link(self._stored(key), compiled)
                self._before.add(compiled)
                self.lent += 1

    def keep(self) -> int:
        """Put the ``.pyc`` files the compile step made into the store; how many were new to it."""
        kept = 0
        for compiled, key in self._keys.items():
            if compiled in self._before or compiled.is_symlink() or not compiled.is_file():
                continue
            stored = self._stored(key)
            with contextlib.suppress(OSError):
                stored.parent.mkdir(parents=True, exist_ok=True)
                os.link(compiled, stored)  # FileExistsError: another build kept the same file first
                kept += 1
        return kept

    def _stored(self, key: str) -> Path:
        return self.store / key[:2] / f"{key}.pyc"


def prune_store(root: Path, *, dry_run: bool = False) -> tuple[int, int]:
    """Remove stored bytecode no environment links to any more (its only link is the store's); (files, bytes)."""
    files = size = 0
    for stored in (root / STORE).glob("*/*/*.pyc"):
        with contextlib.suppress(OSError):
            status = stored.lstat()
            if status.st_nlink == 1:
                if not dry_run:
                    stored.unlink()
                files, size = files + 1, size + status.st_size
    return files, size


def _sources(lib: Path) -> Iterator[Path]:
    for folder, subfolders, names in os.walk(lib):  # never follows a link
        subfolders[:] = [name for name in subfolders if name != "__pycache__"]
        for name in names:
            if name.endswith(".py"):
                yield Path(folder) / name


def _key(source: Path) -> str | None:
    try:
        status = source.lstat()
        if not source.is_file() or source.is_symlink():
            return None
        with source.open("rb") as handle:
            digest = hashlib.file_digest(handle, "sha256").hexdigest()
    except OSError:
        return None
    return f"{digest}-{status.st_size}-{int(status.st_mtime)}"
