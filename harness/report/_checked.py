"""Which results.json contents already passed every check, so that a rebuild does not check them again.

A site build reads every stored run (1,000 for a nightly site); checking each one against the schema and the
name rules is most of the build's CPU time, and the same bytes always give the same answer. A run whose
results.json has the SHA-256 of contents already checked (by checks of the same version) is parsed with the
plain parser and used as it is. What the checks do not decide from the bytes alone (the confined, bounded open:
no symlink, regular file, size) is still done on every read.

The record lives in the user's cache folder (``$XDG_CACHE_HOME/repro-matrix/report-checked``, or the file that
``REPRO_MATRIX_REPORT_CACHE`` names; an empty value turns it off), never in a site or run folder: a file that
inputs could shape must not say what was checked. It holds only digests of contents that passed, one per line,
under a first line naming the version of the checks (the schema and the checking code): a change to either
starts it afresh.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from collections.abc import Iterator
from pathlib import Path

from harness._io import write_atomic

CACHE_ENV = "REPRO_MATRIX_REPORT_CACHE"
MAX_ENTRIES = 200_000  # ~13 MB; 200 nightly sites' worth of runs
_HERE = Path(__file__).resolve().parent


def cache_file() -> Path | None:
    value = os.environ.get(CACHE_ENV)
    if value is not None:
        return Path(value) if value else None
    base = os.environ.get("XDG_CACHE_HOME")
    if not base:
        try:
            base = str(Path.home() / ".cache")
        except RuntimeError:  # no home folder to be found: no record, every input checked
            return None
    return Path(base) / "repro-matrix" / "report-checked"


@functools.cache
def checks_version() -> str:
    """A digest of what decides whether contents pass: the schema and the modules that check."""
    sha = hashlib.sha256()
    for path in (_HERE.parent / "results.schema.json", _HERE / "_inputs.py", _HERE / "_common.py", Path(__file__)):
        sha.update(path.read_bytes())
    return f"repro-matrix report-checked {sha.hexdigest()}"


class Checked:
    """The digests known to pass; loaded on first use, saved by :meth:`save` when it learnt new ones."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: set[str] | None = None
        self._new: list[str] = []
        # run report folder key -> fingerprint of what that build published there (see _site._place_reports)
        self.published: dict[str, str] = {}

    def _load(self) -> set[str]:
        if self._known is None:
            self._known = set()
            with contextlib.suppress(OSError, UnicodeDecodeError):
                if self.path is not None and self.path.is_file() and self.path.stat().st_size < 32 * 2**20:
                    lines = self.path.read_text(encoding="ascii").splitlines()
                    if lines and lines[0] == checks_version():
                        self._known = {line for line in lines[1:] if len(line) == 64}
                        self.published = dict(line[2:].split(" ", 1) for line in lines[1:]
                                              if line.startswith("p ") and line.count(" ") == 2)
        return self._known

    def __contains__(self, digest: str) -> bool:
        return digest in self._load()

    def add(self, digest: str) -> None:
        known = self._load()
        if digest not in known:
            known.add(digest)
            self._new.append(digest)

    def publish(self, key: str, fingerprint: str) -> None:
        self._load()
        if self.published.get(key) != fingerprint:
            self.published[key] = fingerprint
            self._new.append("")  # something to save

    def save(self) -> None:
        """Write the record (atomically); a cache that cannot be written only costs the next build time."""
        if self.path is None or not self._new:
            return
        new = set(self._new)
        kept = [*(d for d in self._new if d), *(d for d in self._load() if d not in new)][:MAX_ENTRIES]
        kept += [f"p {key} {value}" for key, value in list(self.published.items())[-MAX_ENTRIES:]]
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, "\n".join([checks_version(), *kept]) + "\n")
        self._new.clear()


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_current: Checked | None = None


@contextlib.contextmanager
def remembered() -> Iterator[Checked]:
    """Within this block, :func:`current` is the user's record (saved at the end); outside it, none."""
    global _current
    _current = Checked(cache_file())
    try:
        yield _current
    finally:
        _current.save()
        _current = None


def current() -> Checked | None:
    return _current
