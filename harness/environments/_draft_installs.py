"""validate: a filled-in draft whose variant cannot be installed (a release the index does not have, a name the index
knows as no project or as another one's, pins that conflict). `new` guesses distribution names from a report (an
import path, a repository's name); an author fills in a version for each; whether that pin installs is known only
from the package index. So each variant of a case whose repro still carries `new`'s header (a draft not yet run) is
resolved by uv (``uv pip compile``: metadata only, no install), sealed as a pin read is (_direct_pins.py). Cases
written by hand, or confirmed, are checked by their first build instead: the catalogue is not resolved on every
validate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness._exceptions import CaseFileError
from harness.cases._placeholders import SKELETON_HEADER
from harness.environments._direct_pins import sealed_compile, source_line

RESOLVE_TIMEOUT_S = 300.0
# (requires) -> "" when uv resolves them, else uv's reason
Resolver = Callable[[Sequence[str]], str]


@dataclass(frozen=True)
class Unresolved:
    case_id: str
    source: Path
    variant: str
    why: str


def drafted(cases: Iterable[Any]) -> list[Any]:
    """The cases whose repro still carries `new`'s header."""
    return [case for case in cases if _carries_header(case.script)]


def _carries_header(script: Path) -> bool:
    try:
        with script.open(encoding="utf-8", errors="replace") as handle:
            return SKELETON_HEADER in handle.read(4096)
    except OSError:
        return False


def unresolved(cases: Iterable[Any], resolver: Resolver | None = None,
               progress: Callable[[str], None] | None = None) -> list[Unresolved]:
    """Each variant whose requires uv cannot resolve; variants with the same requires are resolved once."""
    resolve = resolver or sealed_resolver()
    answers: dict[tuple[str, ...], str] = {}
    found = []
    for case in cases:
        for variant in case.variants.values():
            key = tuple(variant.requires)
            if key not in answers:
                if progress:
                    progress(f"resolving {case.id} variant {variant.name!r} ({len(key)} pins)")
                answers[key] = resolve(key)
            if answers[key]:
                found.append(Unresolved(case.id, case.source, variant.name, answers[key]))
    return found


def sealed_resolver(timeout_s: float = RESOLVE_TIMEOUT_S) -> Resolver:
    def resolve(requires: Sequence[str]) -> str:
        compiled, why = sealed_compile(requires, ["--no-annotate"], timeout_s)
        return "" if compiled is not None else why
    return resolve


def refusals(found: Iterable[Unresolved]) -> list[CaseFileError]:
    return [CaseFileError(
        item.source, f"variant {item.variant!r} cannot be installed: uv cannot resolve its requires ({item.why})",
        fix="pin releases the package index has (a name `new` drafted may be no project, or another project, on the "
            "index: check it there), or pass --static to skip this check (the case's first build then fails the same "
            "way)", line=source_line(item.source, ["variants", item.variant], key=True)) for item in found]
