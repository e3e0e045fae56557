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

Beside it (``<record>.history.json``) it keeps what the history takes from each of those contents (the run
record, hosts, environments and case descriptions that ``History.prepare`` makes of them), so that a rebuild
does not parse a thousand results.json again. That file is versioned by the checks and by the code that makes
those entries; an entry is used only for a digest the record lists, and a results.json whose bytes changed has
another digest: it is parsed and checked again.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from harness._io import write_atomic

CACHE_ENV = "REPRO_MATRIX_REPORT_CACHE"
MAX_ENTRIES = 200_000  # ~13 MB; 200 nightly sites' worth of runs
MAX_PREPARED = 10_000  # history entries kept beside it: ~7 KB each, ten sites of 1,000 runs
MAX_PREPARED_BYTES = 256 * 2**20
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


@functools.cache
def prepared_version() -> str:
    """The checks' version and a digest of the code that makes a run's history entry from checked contents."""
    sha = hashlib.sha256(checks_version().encode())
    for path in (_HERE / "_history.py", _HERE / "_bounds.py", _HERE / "_common.py", _HERE.parent / "_vocabulary.py"):
        sha.update(path.read_bytes())
    return f"repro-matrix report-prepared {sha.hexdigest()}"


class Checked:
    """The digests known to pass; loaded on first use, saved by :meth:`save` when it learnt new ones."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: set[str] | None = None
        self._new: list[str] = []
        # run report folder key -> fingerprint of what that build published there (see _site_reports._place_reports)
        self.published: dict[str, str] = {}
        # digest -> {"record", "cases"}: the history entry of contents known to pass (see History.prepare)
        self._prepared: dict[str, Any] | None = None
        self._tables: dict[str, dict[str, Any]] = {"hosts": {}, "environments": {}}
        self._prepared_new: list[str] = []

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

    def prepared(self, digest: str) -> dict[str, Any] | None:
        """What ``History.prepare`` made of the contents with this digest, if they passed and it was kept."""
        if digest not in self:
            return None
        entry = self._load_prepared().get(digest)
        if not isinstance(entry, dict) or not isinstance(entry.get("record"), dict) or not isinstance(
                entry.get("cases"), dict) or not all(isinstance(entry.get(k), list) for k in ("hosts", "environments")):
            return None  # not written by this code: prepared again from the bytes
        record, host_keys, env_keys = entry["record"], entry["hosts"], entry["environments"]
        hosts, environments = self._tables["hosts"], self._tables["environments"]
        if any(key not in hosts for key in host_keys) or any(key not in environments for key in env_keys):
            return None
        return {"record": {**record, "report": None}, "cases": entry["cases"],
                "hosts": {key: hosts[key] for key in host_keys},
                "environments": {key: environments[key] for key in env_keys}}

    def keep_prepared(self, digest: str, prepared: Mapping[str, Any]) -> None:
        """Keep a run's history entry for contents that just passed (saved with the record)."""
        if digest not in self:
            return
        entries = self._load_prepared()
        # The build goes on to set the report link of the record it holds (and changes nothing else in it).
        entries[digest] = {"record": {**prepared["record"], "report": None}, "cases": prepared["cases"],
                           "hosts": list(prepared["hosts"]), "environments": list(prepared["environments"])}
        self._tables["hosts"].update(prepared["hosts"])
        self._tables["environments"].update(prepared["environments"])
        self._prepared_new.append(digest)

    def _prepared_path(self) -> Path | None:
        return None if self.path is None else self.path.with_name(f"{self.path.name}.history.json")

    def _load_prepared(self) -> dict[str, Any]:
        if self._prepared is None:
            self._prepared = {}
            path = self._prepared_path()
            with contextlib.suppress(OSError, ValueError):
                if path is not None and path.is_file() and path.stat().st_size < MAX_PREPARED_BYTES:
                    data = json.loads(path.read_bytes())
                    if isinstance(data, dict) and data.get("version") == prepared_version() and all(
                            isinstance(data.get(key), dict) for key in ("runs", "hosts", "environments")):
                        self._prepared = data["runs"]
                        self._tables = {key: data[key] for key in ("hosts", "environments")}
        return self._prepared

    def _save_prepared(self) -> None:
        path = self._prepared_path()
        if path is None or not self._prepared_new or self._prepared is None:
            return
        known = self._load()
        order = [*reversed(self._prepared_new), *self._prepared]
        runs = {d: self._prepared[d] for d in dict.fromkeys(order) if d in known}
        runs = dict(list(runs.items())[:MAX_PREPARED])
        hosts = {key for entry in runs.values() for key in entry.get("hosts", [])}
        envs = {key for entry in runs.values() for key in entry.get("environments", [])}
        data = {"version": prepared_version(), "runs": runs,
                "hosts": {k: v for k, v in self._tables["hosts"].items() if k in hosts},
                "environments": {k: v for k, v in self._tables["environments"].items() if k in envs}}
        with contextlib.suppress(OSError):
            write_atomic(path, json.dumps(data, separators=(",", ":"), ensure_ascii=False) + "\n")
        self._prepared_new.clear()

    def save(self) -> None:
        """Write the record (atomically); a cache that cannot be written only costs the next build time."""
        if self.path is None or not self._new:
            self._save_prepared()
            return
        new = set(self._new)
        kept = [*(d for d in self._new if d), *(d for d in self._load() if d not in new)][:MAX_ENTRIES]
        kept += [f"p {key} {value}" for key, value in list(self.published.items())[-MAX_ENTRIES:]]
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, "\n".join([checks_version(), *kept]) + "\n")
        self._new.clear()
        self._save_prepared()


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
