"""The conformance data: one small YAML file per library under ``libraries/`` (which sdist, which pins, which
tests, how the suite picks CUDA, and the triage of every test that passes on plain CPU but not under
cuda-sim). Each file is checked by hand: unknown keys are refused with a suggestion, so a typo never silently
drops a library or a triage entry. A bad file costs only its own library: ``load_libraries`` returns the
others and the problem (file, what, fix) for each bad one.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._exceptions import CaseFileError
from harness._io import load_plain_data, read_case_text
from harness.conformance._errors import ConformanceFileError

HERE = Path(__file__).resolve().parent
LIBRARIES_DIR = HERE / "libraries"

# simulator-gap: real CUDA accepts it (the library's GPU CI passes it): the simulator must be fixed.
# cuda-only: values, dtypes or errors only CUDA kernels give. not-simulated: a NotSimulatedError, by design.
# environment: the test cannot pass here for a reason that is neither CUDA's nor the simulator's
#   (e.g. it needs a second process group or a GPU memory size); each one says which.
TRIAGE_CLASSES = ("simulator-gap", "cuda-only", "not-simulated", "environment")

_REQUIRED = ("sdist", "version", "sha256", "tests", "cuda")
_OPTIONAL = ("about", "requires", "env", "pytest_args", "subset", "ci", "timeout", "triage")
_KEYS = {*_REQUIRED, *_OPTIONAL}
_CUDA_KEYS = {"args", "env"}
_EXAMPLE = "harness/conformance/libraries/ignite.yaml"


@dataclass(frozen=True)
class Cuda:
    """How the suite comes to test on CUDA. ``automatic``: it asks ``torch.cuda.is_available()`` (the simulated
    pass answers yes). Otherwise ``args`` (e.g. ``[--device, cuda]``) and/or ``env`` are given to the simulated
    pass only, on top of the simulation itself."""

    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def automatic(self) -> bool:
        return not self.args and not self.env

    def describe(self) -> str:
        if self.automatic:
            return "automatic (torch.cuda.is_available())"
        parts = [" ".join(self.args)] if self.args else []
        parts += [f"{k}={v}" for k, v in self.env.items()]
        return ", ".join(parts)


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
class Library:
    name: str
    sdist: str  # the distribution's name on the package index
    version: str
    sha256: str  # of the sdist file, so a re-uploaded or tampered archive is refused
    requires: tuple[str, ...]  # the library and its test dependencies, every one pinned (torch is added)
    tests: tuple[str, ...]  # paths or node ids inside the unpacked sdist, in run order
    subset: tuple[str, ...]  # a few minutes of CPU; what `--subset` runs
    pytest_args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    timeout: int = 3600  # seconds for one pytest run of the whole selection
    about: str = ""
    cuda: Cuda = field(default_factory=Cuda)
    ci: bool = False  # part of the tests session's CI subset (tests/sim/test_conformance_suites.py)
    triage: tuple[TriageEntry, ...] = ()
    path: Path | None = None  # the file it came from


@dataclass(frozen=True)
class Triage:
    entries: Mapping[str, tuple[TriageEntry, ...]]  # library -> entries

    def lookup(self, library: str, node_id: str) -> TriageEntry | None:
        for entry in self.entries.get(library, ()):
            if entry.matches(node_id):
                return entry
        return None

    @classmethod
    def of(cls, libraries: Iterable[Library]) -> Triage:
        return cls({lib.name: lib.triage for lib in libraries})


@dataclass(frozen=True)
class Loaded:
    libraries: dict[str, Library]
    problems: tuple[ConformanceFileError, ...]  # one per file that was skipped


def _load_yaml(path: Path) -> Any:
    """The harness's one bounded YAML loader (harness/_io.py: size, nesting, aliases, duplicate keys, line numbers)."""
    try:
        return load_plain_data(path, read_case_text(path))
    except OSError as error:
        raise ConformanceFileError(path, f"cannot be read: {error.strerror or error}") from None
    except CaseFileError as error:
        raise ConformanceFileError(path, error.problem, fix=error.fix, line=error.line) from None


def _unknown(path: Path, where: str, keys: set[str], allowed: set[str]) -> None:
    for key in sorted(keys - allowed, key=str):
        near = difflib.get_close_matches(str(key), sorted(allowed), n=1)
        fix = f"did you mean '{near[0]}'?" if near else f"allowed keys: {', '.join(sorted(allowed))}"
        raise ConformanceFileError(path, f"{where}: unknown key '{key}'", fix=fix)


def _strings(path: Path, where: str, value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise ConformanceFileError(path, f"{where} must be a list of non-empty strings")
    return tuple(value)


def _string_map(path: Path, where: str, value: object) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        raise ConformanceFileError(path, f"{where} must map names to strings", fix="quote numbers: VAR: '1'")
    return dict(value)


def _cuda(path: Path, raw: object) -> Cuda:
    fix = "write 'cuda: automatic', or 'cuda: {args: [--device, cuda]}', or 'cuda: {env: {VAR: cuda}}'"
    if raw == "automatic":
        return Cuda()
    if not isinstance(raw, dict) or not raw:
        raise ConformanceFileError(path, f"'cuda' must say how the suite picks CUDA, not {raw!r}", fix=fix)
    _unknown(path, "cuda", set(raw), _CUDA_KEYS)
    return Cuda(args=_strings(path, "cuda: args", raw.get("args", [])),
                env=_string_map(path, "cuda: env", raw.get("env", {})))


def _requires(path: Path, raw: object) -> tuple[str, ...]:
    requires = _strings(path, "requires", raw)
    loose = [r for r in requires if "==" not in r]
    if loose:
        raise ConformanceFileError(path, f"unpinned requirement(s) {loose}",
                                   fix="pin every test dependency with '==' (the resolved set): the numbers reproduce")
    if any(r.split("==")[0].strip().lower() == "torch" for r in requires):
        raise ConformanceFileError(path, "torch is pinned by the runner", fix="remove torch from 'requires'")
    return requires


def _entry(path: Path, test: str, raw: object) -> TriageEntry:
    where = f"triage: '{test}'"
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, f"{where} must map to {{class: ..., reason: ...}}")
    _unknown(path, where, set(raw), {"class", "reason"})
    kind, reason = raw.get("class"), raw.get("reason")
    if kind not in TRIAGE_CLASSES:
        raise ConformanceFileError(path, f"{where}: class {kind!r} is not one of {', '.join(TRIAGE_CLASSES)}")
    if not isinstance(reason, str) or not reason.strip():
        raise ConformanceFileError(path, f"{where}: a reason is required", fix="say why, in one line")
    return TriageEntry(test=test, kind=kind, reason=" ".join(reason.split()))


def _triage(path: Path, raw: object) -> tuple[TriageEntry, ...]:
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, "triage must map test ids to {class, reason}")
    return tuple(_entry(path, str(test), body) for test, body in raw.items())


def _timeout(path: Path, raw: object) -> int:
    if not isinstance(raw, int) or isinstance(raw, bool) or raw <= 0:
        raise ConformanceFileError(path, "timeout must be a positive number of seconds")
    return raw


def load_library(path: Path) -> Library:
    """One library file; its name is the file's stem. Raises ConformanceFileError naming the file and the fix."""
    raw = _load_yaml(path)
    if not isinstance(raw, dict):
        raise ConformanceFileError(path, "must be a mapping of library settings", fix=f"see {_EXAMPLE}")
    _unknown(path, "top level", set(raw), _KEYS)
    for key in _REQUIRED:
        if key not in raw:
            raise ConformanceFileError(path, f"'{key}' is required", fix=f"see {_EXAMPLE}")
    for key in ("sdist", "version", "sha256"):
        if not isinstance(raw[key], str) or not raw[key]:
            raise ConformanceFileError(path, f"'{key}' must be a non-empty string (quote versions: '1.0')")
    if len(raw["sha256"]) != 64:
        raise ConformanceFileError(path, "'sha256' must be the 64 hex digits of the sdist archive",
                                   fix="sha256sum the file `pip download --no-deps --no-binary :all:` fetched")
    ci = raw.get("ci", False)
    if not isinstance(ci, bool):
        raise ConformanceFileError(path, "'ci' must be true or false")
    return Library(name=path.stem, sdist=raw["sdist"], version=raw["version"], sha256=raw["sha256"].lower(),
                   requires=_requires(path, raw.get("requires", [])), tests=_strings(path, "tests", raw["tests"]),
                   subset=_strings(path, "subset", raw.get("subset", [])),
                   pytest_args=_strings(path, "pytest_args", raw.get("pytest_args", [])),
                   env=_string_map(path, "env", raw.get("env", {})), timeout=_timeout(path, raw.get("timeout", 3600)),
                   about=str(raw.get("about", "")), cuda=_cuda(path, raw["cuda"]), ci=ci,
                   triage=_triage(path, raw.get("triage") or {}), path=path)


def load_libraries(folder: Path = LIBRARIES_DIR, extra: Iterable[Path] = ()) -> Loaded:
    """Every ``*.yaml`` of ``folder`` plus the ``extra`` files (a maintainer's own, anywhere). A file that cannot
    be used is reported in ``problems`` and skipped; the others load."""
    paths = sorted(folder.glob("*.yaml")) if folder.is_dir() else []
    libraries: dict[str, Library] = {}
    problems: list[ConformanceFileError] = []
    for path in dict.fromkeys(p.resolve() for p in [*paths, *extra]):  # a built-in file named again is itself
        try:
            library = load_library(path)
        except ConformanceFileError as error:
            problems.append(error)
            continue
        if library.name in libraries:
            problems.append(ConformanceFileError(path, f"library '{library.name}' is already defined by "
                                                 f"{libraries[library.name].path}", fix="rename the file"))
            continue
        libraries[library.name] = library
    if not paths and not list(extra):
        problems.append(ConformanceFileError(folder, "holds no library file (*.yaml)", fix=f"see {_EXAMPLE}"))
    return Loaded(libraries, tuple(problems))
