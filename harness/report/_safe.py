"""Confinement: read a file only from inside its run folder, write only inside the site.

Run folders come from CI artifacts and pull requests, and a repro can plant files in its own run folder, so
every name read from them is opened component by component with O_NOFOLLOW (``Confined``): a symlink anywhere
on the way, ``logs -> /`` as much as ``logs/x.log -> /etc/passwd``, is refused. It must be a regular file (a
FIFO would block, a device never ends) with a single link (a hard link can carry another file's contents).
Every path the site writes is checked to resolve inside ``--output`` before it is written.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path, PurePosixPath
from typing import BinaryIO

from harness._exceptions import ReportWriteError


class UnsafePath(Exception):
    """A name from a run folder that must not be read (the message says why); ``missing`` when it is absent."""

    def __init__(self, message: str, *, missing: bool = False) -> None:
        super().__init__(message)
        self.missing = missing


def split_relative(name: str) -> tuple[str, ...]:
    """The parts of a relative path, refusing anything that could leave the folder it is relative to."""
    if not name or "\\" in name or "\x00" in name or name.startswith("/"):
        raise UnsafePath(f"{name!r} is not a relative path")
    parts = PurePosixPath(name).parts
    if any(part in ("", ".", "..") for part in parts) or "/".join(parts) != name:
        raise UnsafePath(f"{name!r} is not a plain relative path (no '.', '..' or empty parts)")
    return parts


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC  # NONBLOCK: a FIFO must not block open
_MAX_OPEN_DIRS = 64


class Confined:
    """One run folder, read without ever leaving it: each file is opened relative to descriptors of its folders,
    every component with O_NOFOLLOW. Folder descriptors are kept (at most 64) for the next file of the folder.

    ``root`` itself is opened normally: it is the folder the caller chose (an --input, a site's runs/<id>).
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self._dirs: dict[tuple[str, ...], int] = {}

    def __enter__(self) -> Confined:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        for fd in self._dirs.values():
            os.close(fd)
        self._dirs.clear()

    @contextlib.contextmanager
    def open(self, name: str, *, allow_links: bool = False) -> Iterator[int]:
        """A read-only descriptor of the regular file ``root/name``; UnsafePath when it is anything else.

        Only opening is checked here: an error in the caller's body (writing a copy, say) stays what it is.
        """
        fd = self._open(name, allow_links=allow_links)
        try:
            yield fd
        finally:
            os.close(fd)

    def _open(self, name: str, *, allow_links: bool = False) -> int:
        parts = split_relative(name)
        fd = -1
        try:
            fd = os.open(parts[-1], _FILE_FLAGS, dir_fd=self._folder(parts[:-1]))
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                raise UnsafePath(f"{name} is not a regular file")
            if info.st_nlink != 1 and not allow_links:
                raise UnsafePath(f"{name} has {info.st_nlink} hard links (it may be another file's contents)")
            return fd
        except OSError as error:
            if fd >= 0:
                os.close(fd)
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                raise UnsafePath(f"{name}: a symlink on the way (symlinks are never followed)") from error
            raise UnsafePath(f"{name}: {error.strerror or error}", missing=error.errno == errno.ENOENT) from error
        except UnsafePath:
            os.close(fd)
            raise

    def _folder(self, parts: tuple[str, ...]) -> int:
        fd = self._dirs.get(parts)
        if fd is not None:
            return fd
        if not parts:
            fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        else:
            fd = os.open(parts[-1], _DIR_FLAGS, dir_fd=self._folder(parts[:-1]))
        if len(self._dirs) >= _MAX_OPEN_DIRS:
            self.close()  # logs come folder by folder: a cold cache costs a few opens, never a descriptor leak
        self._dirs[parts] = fd
        return fd

    def read(self, name: str, *, limit: int, allow_links: bool = False) -> bytes:
        """The whole file, refusing one larger than ``limit`` bytes before reading it; ``allow_links`` for a file
        that is parsed and checked rather than published as it is."""
        with self.open(name, allow_links=allow_links) as fd:
            size = os.fstat(fd).st_size
            if size > limit:
                raise UnsafePath(f"{name} is {size / 2**20:.1f} MB, above the {limit / 2**20:.0f} MB limit")
            return _read(fd, limit + 1)

    def read_tail(self, name: str, *, max_bytes: int) -> tuple[bytes, int]:
        """The last ``max_bytes`` of the file and its size."""
        with self.open(name) as fd:
            size = os.fstat(fd).st_size
            os.lseek(fd, max(0, size - max_bytes), os.SEEK_SET)
            return _read(fd, max_bytes), size

    def copy(self, name: str, dest: Path, *, head: int, tail: int) -> None:
        """Copy the file to ``dest`` (a new file, mode 0644); a file above head + tail bytes keeps its first
        ``head`` and last ``tail`` bytes with a marker in between, as the harness's own log cap does."""
        with self.open(name) as fd:
            size = os.fstat(fd).st_size
            out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
            with os.fdopen(out, "wb") as handle:
                os.fchmod(out, 0o644)  # whatever the umask
                if size <= head + tail:
                    _pump(fd, handle, size)
                else:
                    _pump(fd, handle, head)
                    handle.write(f"\n[repro-matrix report: {size - head - tail} bytes not published here]\n".encode())
                    os.lseek(fd, size - tail, os.SEEK_SET)
                    _pump(fd, handle, tail)


def read_inside(root: Path, name: str, *, limit: int, allow_links: bool = False) -> bytes:
    """``Confined(root).read(name, limit=limit)``: one file, bounded, never through a symlink."""
    with Confined(root) as folder:
        return folder.read(name, limit=limit, allow_links=allow_links)


def _read(fd: int, limit: int) -> bytes:
    chunks, total = [], 0
    while total < limit:
        chunk = os.read(fd, min(1 << 20, limit - total))
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def _pump(fd: int, handle: BinaryIO, count: int) -> None:
    while count > 0:
        chunk = os.read(fd, min(1 << 20, count))
        if not chunk:
            return
        handle.write(chunk)
        count -= len(chunk)


def inside(output: Path, path: Path) -> Path:
    """``path`` when it resolves inside ``output``; ReportWriteError otherwise (a name that slipped past the
    checks on reading, or a symlink in the output folder)."""
    root = output.resolve()
    resolved = path.resolve()
    if resolved != root and root not in resolved.parents:
        raise ReportWriteError(f"refusing to write {path}: it resolves outside the site folder {root}")
    return path
