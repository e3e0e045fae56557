"""validate: a filled-in draft whose variant cannot be installed (a release the index does not have, a name the index
knows as no project or as another one's, pins that conflict). `new` guesses distribution names from a report (an
import path, a repository's name); an author fills in a version for each; whether that pin installs is known only
from the package index. So each variant of a case whose repro still carries `new`'s header (a draft not yet run) is
resolved by uv (``uv pip compile``: metadata only, no install), sealed as a pin read is (_direct_pins.py). Cases
written by hand, or confirmed, are checked by their first build instead: the catalogue is not resolved on every
validate.

A variant that resolves may still not install what its repro imports: the index's project of a name `new` took from
an import may be another one with a module of the same name (graded39: the index's `castle` is castle-python, whose
`castle` has no `castle.algorithms`; the report ran gcastle). So each variant's environment is then built as the run
builds it (the run reuses it) and every module the repro imports at module level, which runs in every lane, is looked
up in it (harness/environments/_module_probe.py: by the import system's finders, running none of its code).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from harness._exceptions import CaseFileError, EnvBuildError
from harness.cases._placeholders import SKELETON_HEADER
from harness.environments._direct_pins import sealed_compile, source_line
from harness.environments._draft_identity import another_project
from harness.environments._spec import EnvSpec

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


@dataclass(frozen=True)
class Unprovided:
    """A module the repro imports that the variant's environment does not install (``part``: the first part of it not
    found), or, with ``why``, an environment that does not build."""

    case_id: str
    source: Path
    script: Path
    variant: str
    module: str = ""
    part: str = ""
    why: str = ""
    other: tuple[str, ...] = ()  # (distribution, why, its URLs...): another project than the report's, by its metadata


def repro_imports(script: Path) -> list[str]:
    """The modules the repro imports at module level (absolute imports; ``from a.b import c``: ``a.b``), in order.
    Imports in a function, a branch or a ``try`` are left out: a variant may import what only it installs."""
    try:
        tree = ast.parse(script.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return []
    names: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module and node.module != "__future__":
            names.append(node.module)
    return list(dict.fromkeys(names))


def unprovided(cases: Iterable[Any], backend: Any, progress: Callable[[str], None]) -> list[Unprovided]:
    """Build each variant's environment (``backend``: the run's) and look up the repro's imports in it. A variant
    with a shim is left out: a shim runs before the repro and may provide modules."""
    found = []
    for case in cases:
        modules = repro_imports(case.script)
        for variant in case.variants.values():
            if not modules or variant.shims:
                continue
            where = Unprovided(case.id, case.source, case.script, variant.name)
            try:
                env = backend.prepare(EnvSpec(requires=variant.requires, patches=variant.patches), progress)
                progress(f"looking up {case.id}'s imports in the environment of variant {variant.name!r}")
                missing = backend.missing_modules(env, modules, [case.script.parent])
            except EnvBuildError as error:
                found.append(replace(where, why=str(error)))
                continue
            found += [replace(where, module=module, part=part) for module, part in missing]
            if other := another_project(case, variant.requires, Path(env.python_path).parent.parent):
                found.append(replace(where, other=(other[0], other[1], *other[2])))
    return found


def module_refusals(found: Iterable[Unprovided]) -> list[CaseFileError]:
    errors = []
    for item in found:
        line = source_line(item.source, ["variants", item.variant], key=True)
        if item.why:
            errors.append(CaseFileError(
                item.source, f"the environment of variant {item.variant!r} does not build: {item.why}", line=line,
                fix="pin releases that install here (the build log says what failed), or pass --static to skip this "
                    "check"))
            continue
        if item.other:
            errors.append(_other_project(item, line))
            continue
        what = f"{item.part!r}" + (f" (the repro imports {item.module!r})" if item.part != item.module else "")
        errors.append(CaseFileError(
            item.source, f"the environment of variant {item.variant!r} installs no module {what}, yet "
                         f"{item.script.name} imports it at module level: the import fails in every lane", line=line,
            fix=f"pin the project whose release installs {item.part.split('.')[0]!r} as the report ran it (a name "
                "`new` took from an import may be another project of the same module name on the index: check the "
                "project's own install instructions), or import what the pinned releases install"))
    return errors


def _other_project(item: Unprovided, line: int | None) -> CaseFileError:
    dist, why, *urls = item.other
    return CaseFileError(
        item.source, f"variant {item.variant!r} pins {dist}, but the index's {dist} is another project than the "
                     f"report's: its metadata names {', '.join(urls[:3])}, {why}", line=line,
        fix=f"pin the report's project under its name on the index (its install instructions say it; `new` took "
            f"{dist!r} from the report), or a commit of its repository, and name the case after it")
