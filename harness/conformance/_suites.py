"""The conformance data: which libraries, at which sdist, which tests (``suites.yaml``), and the triage of
every test that passes on plain CPU but not under cuda-sim (``triage.yaml``). Both are checked by hand here:
unknown keys are refused with a suggestion, so a typo never silently drops a library or a triage entry."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from harness.conformance._errors import ConformanceFileError

HERE = Path(__file__).resolve().parent
SUITES_FILE = HERE / "suites.yaml"
TRIAGE_FILE = HERE / "triage.yaml"

# simulator-gap: real CUDA accepts it (the library's GPU CI passes it): the simulator must be fixed.
# cuda-only: values, dtypes or errors only CUDA kernels give. not-simulated: a NotSimulatedError, by design.
# environment: the test cannot pass here for a reason that is neither CUDA's nor the simulator's
#   (e.g. it needs a second process group or a GPU memory size); each one says which.
TRIAGE_CLASSES = ("simulator-gap", "cuda-only", "not-simulated", "environment")

_LIBRARY_KEYS = {"sdist", "version", "sha256", "requires", "env", "pytest_args", "tests", "subset", "timeout", "about"}


@dataclass(frozen=True)
class Library:
    name: str
    sdist: str  # the distribution's name on the package index
    version: str
    sha256: str  # of the sdist file, so a re-uploaded or tampered archive is refused
    requires: tuple[str, ...]  # the library and its test dependencies, every one pinned (torch is added)
    tests: tuple[str, ...]  # paths or node ids inside the unpacked sdist, in run order
    subset: tuple[str, ...]  # the CI subset: a few minutes of CPU
    pytest_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: int = 3600  # seconds for one pytest run of the whole selection
    about: str = ""


@dataclass(frozen=True)
class TriageEntry:
    test: str  # a node id, or a prefix ending in '*'
    kind: str
    reason: str

    def matches(self, node_id: str) -> bool:
        if self.test.endswith("*"):
            return node_id.startswith(self.test[:-1])
        return node_id == self.test


@dataclass(frozen=True)
class Triage:
    entries: Mapping[str, tuple[TriageEntry, ...]]  # library -> entries

    def lookup(self, library: str, node_id: str) -> TriageEntry | None:
        for entry in self.entries.get(library, ()):
            if entry.matches(node_id):
                return entry
        return None


def _load_yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConformanceFileError(path, f"cannot be read: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise ConformanceFileError(path, f"is not valid YAML: {error}", line=line) from None


def _unknown(path: Path, where: str, keys: set[str], allowed: set[str]) -> None:
    for key in sorted(keys - allowed, key=str):
        near = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        fix = f"did you mean '{near[0]}'?" if near else f"allowed keys: {', '.join(sorted(allowed))}"
        raise ConformanceFileError(path, f"{where}: unknown key '{key}'", fix=fix)


def _strings(path: Path, where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConformanceFileError(path, f"{where} must be a list of non-empty strings")
    return tuple(value)


def _library(path: Path, name: str, raw: object) -> Library:
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, f"library '{name}' must be a mapping")
    _unknown(path, f"library '{name}'", set(raw), _LIBRARY_KEYS)
    for key in ("sdist", "version", "sha256"):
        if not isinstance(raw.get(key), str) or not raw[key]:
            raise ConformanceFileError(path, f"library '{name}': '{key}' is required (a string)")
    requires = _strings(path, f"library '{name}': requires", raw.get("requires", []))
    loose = [r for r in requires if "==" not in r]
    if loose:
        raise ConformanceFileError(path, f"library '{name}': unpinned requirement(s) {loose}",
                                   fix="pin every test dependency with '==' so the numbers reproduce")
    if any(r.split("==")[0].strip().lower() == "torch" for r in requires):
        raise ConformanceFileError(path, f"library '{name}': torch is pinned by the runner", fix="remove it")
    tests = _strings(path, f"library '{name}': tests", raw.get("tests"))
    subset = _strings(path, f"library '{name}': subset", raw.get("subset", []))
    env = raw.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise ConformanceFileError(path, f"library '{name}': env must map names to strings (quote numbers)")
    timeout = raw.get("timeout", 3600)
    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout <= 0:
        raise ConformanceFileError(path, f"library '{name}': timeout must be a positive number of seconds")
    return Library(name=name, sdist=raw["sdist"], version=raw["version"], sha256=raw["sha256"].lower(),
                   requires=requires, tests=tests, subset=subset,
                   pytest_args=_strings(path, f"library '{name}': pytest_args", raw.get("pytest_args", [])),
                   env=dict(env), timeout=timeout, about=str(raw.get("about", "")))


def load_libraries(path: Path = SUITES_FILE) -> dict[str, Library]:
    raw = _load_yaml(path)
    if not isinstance(raw, dict) or not isinstance(raw.get("libraries"), dict) or not raw["libraries"]:
        raise ConformanceFileError(path, "must have a non-empty 'libraries:' mapping")
    _unknown(path, "top level", set(raw), {"version", "libraries"})
    return {str(name): _library(path, str(name), body) for name, body in raw["libraries"].items()}


def _entry(path: Path, library: str, test: str, raw: object) -> TriageEntry:
    where = f"{library}: '{test}'"
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, f"{where} must map to {{class: ..., reason: ...}}")
    _unknown(path, where, set(raw), {"class", "reason"})
    kind, reason = raw.get("class"), raw.get("reason")
    if kind not in TRIAGE_CLASSES:
        raise ConformanceFileError(path, f"{where}: class {kind!r} is not one of {', '.join(TRIAGE_CLASSES)}")
    if not isinstance(reason, str) or not reason.strip():
        raise ConformanceFileError(path, f"{where}: a reason is required", fix="say why, in one line")
    return TriageEntry(test=test, kind=kind, reason=" ".join(reason.split()))


def load_triage(path: Path = TRIAGE_FILE, libraries: Mapping[str, Library] | None = None) -> Triage:
    raw = _load_yaml(path) or {}
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, "must map library names to {test id: {class, reason}}")
    entries: dict[str, tuple[TriageEntry, ...]] = {}
    for library, tests in raw.items():
        if libraries is not None and library not in libraries:
            near = difflib.get_close_matches(str(library), sorted(libraries), n=1)
            raise ConformanceFileError(path, f"unknown library '{library}'",
                                       fix=f"did you mean '{near[0]}'?" if near else "see suites.yaml")
        if not isinstance(tests, dict):
            raise ConformanceFileError(path, f"'{library}' must map test ids to {{class, reason}}")
        entries[str(library)] = tuple(_entry(path, str(library), str(t), body) for t, body in tests.items())
    return Triage(entries)
