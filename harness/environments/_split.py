"""Which packages of a resolution must be built from source, and moving what such a build installed.

An environment build installs what has a wheel from uv's shared cache, with ``--no-build`` (no code a case
chose runs), and builds the rest with a private cache in a venv of its own (harness/environments/_venv_build.py
``EnvBuilder._install``). These helpers read uv's resolution (a PEP 751 ``pylock.toml``) and carry the
built packages' files into the environment afterwards, as the harness.
"""

from __future__ import annotations

import os
import shutil
import stat
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from harness._exceptions import EnvBuildError
from harness.environments._hosttorch import requirement_name


@dataclass(frozen=True)
class Locked:
    name: str  # normalised
    version: str
    wheel: bool  # uv resolved a wheel for this interpreter: installing it runs no code


def read_lock(path: Path) -> list[Locked]:
    """The packages of uv's ``pylock.toml``; one without wheels (an sdist, a folder, an archive, a VCS
    checkout) has to be built."""
    try:
        data = tomllib.loads(_read_step_output(path))
        return [Locked(requirement_name(str(p["name"])), str(p.get("version", "")), _wheel(p))
                for p in data.get("packages", [])]
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError) as error:
        raise EnvBuildError(f"uv's resolution {path} could not be read: {error}") from error


def read_pins(path: Path) -> list[Locked] | None:
    """The packages of uv's resolution written as requirements, taken to have wheels (a check with
    ``--no-build`` says so before an install relies on it); None where a line is not ``name==version``
    (a ``name @ URL``: only a ``pylock.toml`` says whether that is a wheel)."""
    try:
        lines = [line.split("#", 1)[0].strip() for line in _read_step_output(path).splitlines()]
    except OSError as error:
        raise EnvBuildError(f"uv's resolution {path} could not be read: {error}") from error
    locked = []
    for line in filter(None, lines):
        try:
            requirement = Requirement(line)
        except InvalidRequirement:
            return None
        specifiers = list(requirement.specifier)
        if requirement.url or requirement.marker or len(specifiers) != 1 or specifiers[0].operator != "==":
            return None
        locked.append(Locked(requirement_name(requirement.name), specifiers[0].version, wheel=True))
    return locked


def by_name(requires: Sequence[str]) -> bool:
    """Every requirement names a release, none a URL (a wheel, an archive, a folder, a VCS checkout)."""
    try:
        return not any(Requirement(line).url for line in requires)
    except InvalidRequirement:
        return False


def _read_step_output(path: Path) -> str:
    """Written by a build step (as root, a private uid): never read through a link, nor a FIFO's wait."""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)) as handle:
        return handle.read()


def _wheel(package: dict[str, Any]) -> bool:
    """A wheel from an index, or a wheel file named directly (``name @ file:///...whl``: an ``archive``)."""
    archive = package.get("archive") or {}
    return bool(package.get("wheels")) or str(archive.get("path") or archive.get("url") or "").endswith(".whl")


def pins(locked: Sequence[Locked]) -> str:
    """The resolution as constraints: an install constrained to it cannot pick another release."""
    return "".join(f"{p.name}=={p.version}\n" for p in locked if p.version)


def requirement_lines(requires: Sequence[str], locked: Sequence[Locked]) -> str:
    """``locked`` as requirements: the case's own line where it names the package (a ``name @ URL`` stays
    one), else ``name==version``."""
    named = {requirement_name(r): r for r in requires}
    return "".join(f"{named.get(p.name) or f'{p.name}=={p.version}'}\n" for p in locked)


def snapshot(root: Path) -> set[Path]:
    """Every path under ``root`` (relative), to tell later what an install added."""
    found: set[Path] = set()
    for folder, dirs, files in os.walk(root):
        here = Path(folder).relative_to(root)
        found.update(here / name for name in (*dirs, *files))
    return found


def move_added(source: Path, target: Path, before: set[Path]) -> None:
    """Move what was added under ``source`` since ``before`` to the same place under ``target`` (folders
    merged, never a file replaced). Symlinks move as links. As root, what moves becomes root's: a build from
    source ran as a private uid, which must own nothing in the environment. A rename where both are on one
    filesystem, a copy otherwise: either way only regular files, folders and symlinks, checked before any
    moves (a FIFO would move by a rename and hang the copy)."""
    _refuse_special(source, before)
    _move_added(source, target, before)


def _refuse_special(source: Path, before: set[Path]) -> None:
    for folder, dirs, files in os.walk(source):
        here = Path(folder).relative_to(source)
        for name in (*dirs, *files):
            mode = os.lstat(Path(folder) / name).st_mode
            if here / name not in before and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
                raise EnvBuildError(f"a package built from source installs {here / name}, which is not a regular "
                                    "file, folder or symlink: a package holds only those")


def _move_added(source: Path, target: Path, before: set[Path]) -> None:
    for folder, dirs, files in os.walk(source):
        here = Path(folder).relative_to(source)
        kept = []
        if here == Path(".") and before:  # a venv's own files (uv's .lock): only its folders are the install's
            files = []
        for name in (*dirs, *files):
            relative = here / name
            if relative in before:
                if name in dirs:
                    kept.append(name)
                continue
            destination = target / relative
            if destination.is_dir() and not destination.is_symlink() and (source / relative).is_dir() \
                    and not (source / relative).is_symlink():
                _merge(source / relative, destination)
                continue
            if os.path.lexists(destination):
                raise EnvBuildError(f"a package built from source installs {relative}, which another package "
                                    "of the environment installs too")
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(source / relative, destination)  # a copy where /tmp is another filesystem
            _adopt(destination)
        dirs[:] = [d for d in dirs if d in kept]


def _adopt(path: Path) -> None:
    """As root: ``path`` and what it holds become the harness's (links themselves, never their targets)."""
    if os.geteuid() != 0:
        return
    uid, gid = os.geteuid(), os.getegid()
    os.chown(path, uid, gid, follow_symlinks=False)
    if path.is_dir() and not path.is_symlink():
        for folder, dirs, files in os.walk(path):
            for name in (*dirs, *files):
                os.chown(os.path.join(folder, name), uid, gid, follow_symlinks=False)


def _merge(source: Path, target: Path) -> None:
    _move_added(source, target, set())
