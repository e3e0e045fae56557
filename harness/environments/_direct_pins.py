"""What project a direct reference (``name @ git+https://...@COMMIT``, an archive URL) builds, read from its own
packaging metadata: ``validate`` refuses a pin whose name is not that project's (pip and uv refuse it at install).

The name a repository's packaging gives its project is known only from its ``pyproject.toml`` / ``setup.py`` at that
commit (gt4sd-core builds ``gt4sd``; openai/whisper builds ``openai-whisper``): no name rule or index lookup can
tell it. uv reads it (``uv pip compile --no-deps`` of the unnamed URL prints ``NAME @ URL``): from static metadata
when there is some, else by running the build backend's metadata hook. That runs code the pinned repository chose,
so each read is sealed like an environment's resolution step (containment/_sandbox.py): an allow-listed
environment, its own uv cache and private /tmp as the only writable folders, the network kept (the fetch needs it).
A pin that cannot be read (no network, a commit that does not exist) is said with uv's reason: validate then does
not sign the case off, since the install would fail the same way.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness._exceptions import CaseFileError
from harness._io import LOADER, write_atomic, yaml_line
from harness.containment._process import HelperProcess
from harness.containment._sandbox import BuildSandbox
from harness.environments._index import uv_index_environment
from harness.environments._venv_build import default_env_root, find_uv

READ_TIMEOUT_S = 300.0  # one fetch and metadata build: a large repository's clone over a slow link
_TAIL_LINES = 4


@dataclass(frozen=True)
class DirectPin:
    """One direct reference in a variant's requires (the case's own requires are merged into each variant's)."""

    case_id: str
    source: Path  # the case.yaml
    variant: str
    requirement: str
    name: str  # canonical
    url: str


@dataclass(frozen=True)
class PinReading:
    """What reading one pin's URL gave: the canonical name it builds, or None and why not."""

    pin: DirectPin
    built: str | None
    why: str = ""

    @property
    def misnamed(self) -> bool:
        return self.built is not None and self.built != self.pin.name


Reader = Callable[[str], "tuple[str | None, str]"]  # URL -> (built name or None, why not)


def direct_pins(cases: Iterable[Any]) -> list[DirectPin]:
    """Every direct reference of the cases' variants (URLs of a local folder or file excepted)."""
    return [pin for case in cases for variant in case.variants.values() for text in variant.requires
            if (pin := _direct(case, variant.name, text)) is not None]


def _direct(case: Any, variant: str, text: str) -> DirectPin | None:
    try:
        parsed = Requirement(text)
    except InvalidRequirement:
        return None
    if not parsed.url or parsed.url.startswith("file:"):
        return None  # a local folder or wheel: read where it is by the build, named by its own files
    return DirectPin(case_id=case.id, source=case.source, variant=variant, requirement=text,
                     name=str(canonicalize_name(parsed.name)), url=parsed.url)


def read_pins(pins: Iterable[DirectPin], reader: Reader | None = None,
              progress: Callable[[str], None] | None = None) -> list[PinReading]:
    """Read each distinct URL once (two variants pinning one commit share a reading)."""
    read = reader or sealed_reader()
    answers: dict[str, tuple[str | None, str]] = {}
    readings = []
    for pin in pins:
        if pin.url not in answers:
            if progress:
                progress(f"reading what {pin.url} builds ({pin.case_id})")
            answers[pin.url] = read(pin.url)
        built, why = answers[pin.url]
        readings.append(PinReading(pin, built, why))
    return readings


def sealed_reader(timeout_s: float = READ_TIMEOUT_S) -> Reader:
    """uv, sealed, with the package sources cells install from."""
    def read(url: str) -> tuple[str | None, str]:
        compiled, why = sealed_compile([url], ["--no-deps", "--no-annotate"], timeout_s, _local_repository(url))
        return built_name(compiled) if compiled is not None else (None, why)
    return read


def sealed_compile(requirements: Sequence[str], options: Sequence[str], timeout_s: float,
                   uses: Sequence[Path] = ()) -> tuple[str | None, str]:
    """``uv pip compile`` of ``requirements``, sealed like an environment build's resolution step (its own uv cache
    and scratch the only writable folders), with the package sources cells install from: its output, or None and
    uv's reason."""
    uv = find_uv()
    env = {**os.environ, **uv_index_environment(), "UV_PYTHON_DOWNLOADS": "never"}
    with BuildSandbox(env_root=default_env_root(), private=(), env=env,
                      uses=[Path(uv).resolve().parent, *uses]) as sandbox:
        listed = sandbox.sources / "requirements.in"
        write_atomic(listed, "".join(f"{line}\n" for line in requirements))
        argv = [uv, "pip", "compile", "--quiet", "--no-header", *options, "--python", sys.executable, str(listed)]
        own = {**env, "UV_CACHE_DIR": str(sandbox.own_cache)}
        result = HelperProcess(argv, env=own, timeout=timeout_s,
                               confinement=sandbox.seal(sandbox.own_cache, sandbox.sources)).result()
    if result.timed_out:
        return None, f"uv did not finish in {timeout_s:g}s"
    if result.returncode != 0:
        return None, tail(result.error or result.stderr or result.stdout)
    return result.stdout, ""


def _local_repository(url: str) -> list[Path]:
    """A ``git+file://`` repository's folder, which the sealed step must see (read-only) to fetch from it."""
    if not url.startswith("git+file:"):
        return []
    path = Path(unquote(urlsplit(url.removeprefix("git+")).path).partition("@")[0])
    return [path] if path.is_dir() else []


def built_name(compiled: str) -> tuple[str | None, str]:
    """The project name in ``uv pip compile``'s output for one unnamed URL (``NAME @ URL``)."""
    for line in compiled.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            return str(canonicalize_name(Requirement(line).name)), ""
        except InvalidRequirement:
            break
    return None, f"uv printed no requirement ({tail(compiled) or 'nothing'})"


def refusals(readings: Iterable[PinReading]) -> list[CaseFileError]:
    """One error per pin that builds another project's name, or whose URL could not be read."""
    errors = []
    for reading in readings:
        pin = reading.pin
        line = _pin_line(pin)
        if reading.misnamed:
            errors.append(CaseFileError(
                pin.source, f"variant {pin.variant!r} pins {pin.requirement}, but that URL builds the project "
                            f"{reading.built!r} (its own packaging metadata, read by uv): pip and uv refuse a direct "
                            "reference under another project's name", line=line,
                fix=f"name the pin `{reading.built} @ {pin.url}`, or, if {pin.name} is another project, pin a release "
                    f"of {pin.name} or a commit of its own repository"))
        elif reading.built is None:
            errors.append(CaseFileError(
                pin.source, f"variant {pin.variant!r} pins {pin.requirement}, and what that URL builds could not be "
                            f"read ({reading.why}): validate does not sign off a pin it cannot read (its install "
                            "fails the same way)", line=line,
                fix="check the URL and the commit (and the network), or pass --static to skip this check "
                    "(the case's first build then checks the pin)"))
    return errors


def source_line(source: Path, path: Sequence[Any], *, key: bool = False) -> int | None:
    """The line of the node at ``path`` in the case file ``source`` (harness._io.yaml_line); None if unreadable."""
    try:
        return yaml_line(source.read_text(encoding="utf-8", errors="replace"), path, key=key)
    except OSError:
        return None


def _pin_line(pin: DirectPin) -> int | None:
    """The pin's own line: in its variant's requires, else in the case's shared requires."""
    try:
        data = yaml.load(pin.source.read_text(encoding="utf-8", errors="replace"), Loader=LOADER)
    except (OSError, yaml.YAMLError):
        return None
    variant = (data.get("variants") or {}).get(pin.variant) if isinstance(data, dict) else None
    for path, listed in ((["variants", pin.variant, "requires"], variant.get("requires") if isinstance(variant, dict)
                          else None), (["requires"], data.get("requires") if isinstance(data, dict) else None)):
        if isinstance(listed, list) and pin.requirement in listed:
            return source_line(pin.source, [*path, listed.index(pin.requirement)])
    return None


def tail(text: str) -> str:
    """uv's last lines, joined: the reason a message quotes."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return " / ".join(lines[-_TAIL_LINES:])
