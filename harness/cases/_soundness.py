"""Checks that a case which loads can also work: what ``validate`` refuses beyond the schema.

A draft from ``new`` can be filled in into a case that loads yet can never give its verdicts: a fix variant that
runs exactly what the buggy one runs (the same release pinned twice), or a variant that pins nothing but torch
while its repro imports a library (the import fails in every lane). Each is a :class:`CaseFileError` naming the
variant, the line and the fix.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness._exceptions import CaseFileError
from harness.cases._distributions import DISTRIBUTIONS, OTHER_PROJECTS
from harness.cases._pinnames import misnamed_commit_pin
from harness.cases._placeholders import IMPORT_DISTRIBUTION, SKELETON_HEADER, SKELETON_IMPORT

# What a torch-only environment imports besides the standard library: torch, its own modules, its dependencies.
_WITH_TORCH = frozenset({"torch", "torchgen", "functorch", "filelock", "typing_extensions", "sympy", "networkx",
                         "jinja2", "fsspec", "setuptools", "pkg_resources", "triton", "mpmath", "markupsafe",
                         "_distutils_hack"})
_MAX_SCRIPT = 2**20


class _Variant(Protocol):
    name: str
    role: str
    requires: tuple[str, ...]
    args: tuple[str, ...]
    env: Mapping[str, str]
    patches: tuple[Any, ...]
    shims: tuple[Path, ...]


def check_variants(path: Path, script: Path, variants: Mapping[str, Any],
                   line_of: Callable[[list[Any]], int | None], case: Mapping[str, Any] | None = None) -> None:
    buggy = [v for v in variants.values() if v.role == "buggy"]
    told_apart = _script_text(script)
    for fix in (v for v in variants.values() if v.role == "fix"):
        if f'"{fix.name}"' in told_apart or f"'{fix.name}'" in told_apart:
            continue  # the repro tells the variants apart itself (it is given --variant NAME)
        for twin in (b for b in buggy if _runs(b) == _runs(fix)):
            pins = ", ".join(r for r in twin.requires if not r.startswith("torch==")) or "torch only"
            raise CaseFileError(path, f"fix variant {fix.name!r} runs exactly what buggy variant {twin.name!r} runs "
                                      f"({pins}; no patch, args or env of its own): it cannot pass where that fails",
                                fix="pin the first fixed release in the fix variant (or give it the workaround's "
                                    "args, env or patch)", line=line_of(["variants", fix.name, "requires"]))
    _refuse_misnamed_pin(path, case or {}, line_of)
    _refuse_floating_pin(path, case or {}, line_of)
    missing = _imports_missing(script, variants.values())
    if missing:
        variant, module = missing
        raise CaseFileError(path, f"variant {variant!r} pins no library besides torch, yet {script.name} imports "
                                  f"{module!r}: the import fails in every lane",
                            fix=f"pin the release of {module} the variant runs (the buggy variant: the one the report "
                                "ran), e.g. in its requires", line=line_of(["variants", variant, "requires"]))
    unrun = _library_unpinned(list(variants.values()), case or {})
    if unrun:
        variant, library, told = unrun
        raise CaseFileError(path, f"buggy variant {variant!r} pins no library besides torch, yet the case's library "
                                  f"is {library} ({told}): the buggy variant cannot run the bug",
                            fix=f"pin the release (or commit) of {library} the report ran in the buggy variant's "
                                "requires", line=line_of(["variants", variant, "requires"]))
    unpinned = _skeleton_import_unpinned(script, variants.values())
    if unpinned:
        variant, module, dist = unpinned
        raise CaseFileError(path, f"variant {variant!r} does not pin {dist}, yet {script.name} imports {module!r} "
                                  "(an import `new` took from the report's traceback): the import fails in every lane",
                            fix=f"pin the release of {dist} the variant runs (the buggy variant: the one the report "
                                "ran), or remove the import", line=line_of(["variants", variant, "requires"]))
    foreign = _module_not_provided(script, variants.values())
    if foreign:
        variant, module, dist, provided = foreign
        if not provided:  # PyPI's distribution of that name is another project
            raise CaseFileError(path, f"variant {variant!r} pins {dist}, yet PyPI's {dist} is another project than the "
                                      f"one whose module {module!r} {script.name} imports",
                                fix=f"pin {' or '.join(DISTRIBUTIONS[module])}, which installs {module!r}",
                                line=line_of(["variants", variant, "requires"]))
        raise CaseFileError(path, f"{script.name} imports {module!r}, but {dist} (pinned by variant {variant!r}) "
                                  f"installs the module {' / '.join(repr(m) for m in provided)}, not {module!r}: the "
                                  "import fails in every lane",
                            fix=f"import {provided[0]} (the import name of {dist})",
                            line=line_of(["variants", variant, "requires"]))
    unowned = _project_unpinned(list(variants.values()), case or {}) \
        if SKELETON_HEADER in told_apart and not copied_code(script) else None
    if unowned:
        variant, project = unowned
        raise CaseFileError(path, f"buggy variant {variant!r} pins neither {project} nor a commit of its repository, "
                                  f"yet the title, a tag and the upstream issue name {project} as the case's library: "
                                  "the buggy variant runs other projects' code only",
                            fix=f"pin the release of {project} the report ran, or `{project} @ git+https://github.com/"
                                "OWNER/REPO@COMMIT` for a project run from a source checkout, or copy the code the "
                                "repro needs into the case folder beside the repro (a module or a package of it)",
                            line=line_of(["variants", variant, "requires"]))


def _refuse_misnamed_pin(path: Path, case: Mapping[str, Any], line_of: Callable[[list[Any]], int | None]) -> None:
    if misnamed := misnamed_commit_pin(case):
        variant, requirement, right = misnamed
        where = f"variant {variant!r}" if variant else "the case"
        raise CaseFileError(path, f"{where} requires {requirement!r}, but that project is named {right}: pip refuses "
                                  "a direct reference whose name is not the project the commit builds",
                            fix=f"name it {right} @ {requirement.partition(' @ ')[2]}",
                            line=line_of(["variants", variant, "requires"] if variant else ["requires"]))


def _refuse_floating_pin(path: Path, case: Mapping[str, Any], line_of: Callable[[list[Any]], int | None]) -> None:
    bare = _bare_pin(case)
    if bare:
        variant, requirement = bare
        raise CaseFileError(path, f"variant {variant!r} requires {requirement!r} with no version and no commit: "
                                  "every install resolves it to whatever release is newest that day, so the "
                                  "variant does not run a fixed release of it",
                            fix=f"pin it, e.g. '{requirement}==X.Y.Z' (the release the report ran for a buggy "
                                f"variant, the first fixed one for a fix variant) or '{requirement} @ "
                                "git+https://github.com/OWNER/REPO@COMMIT'",
                            line=line_of(["variants", variant, "requires"]))


def _bare_pin(case: Mapping[str, Any]) -> tuple[str, str] | None:
    """(variant, requirement) for a buggy or fix variant's own requirement that names a distribution with neither
    a version specifier nor a URL. Case-level helpers (an undeclared dependency such as einops) may float, and so
    may a fix variant's distribution that the case or another fix variant pins (a `latest` variant beside the first
    fixed release); a buggy variant's own requirement may not, nor a fix's distribution pinned nowhere else."""
    variants = case.get("variants")
    raws = {str(name): raw for name, raw in (variants.items() if isinstance(variants, Mapping) else ())
            if isinstance(raw, Mapping) and raw.get("role") in ("buggy", "fix")}
    pinned = {_name(text) for raw in [case, *(r for r in raws.values() if r["role"] == "fix")]
              for text in _own(raw) if not _floating(text)}
    for name, raw in raws.items():
        for text in _own(raw):
            if _floating(text) and (raw["role"] == "buggy" or _name(text) not in pinned):
                return name, text.strip()
    return None


def _own(raw: Mapping[str, Any]) -> list[str]:
    requires = raw.get("requires")
    return [str(text) for text in requires] if isinstance(requires, list) else []


def _floating(text: str) -> bool:
    try:
        parsed = Requirement(text)
    except InvalidRequirement:
        return False  # merge_requirements reports it
    return not parsed.specifier and not parsed.url


def _script_text(script: Path) -> str:
    try:
        return script.read_text(errors="replace") if script.stat().st_size <= _MAX_SCRIPT else ""
    except OSError:
        return ""


def _runs(variant: _Variant) -> tuple[Any, ...]:
    return (tuple(sorted(_normal(r) for r in variant.requires)), tuple(p.sha256 for p in variant.patches),
            tuple(variant.shims), tuple(variant.args), tuple(sorted(variant.env.items())))


def _normal(requirement: str) -> str:
    try:
        parsed = Requirement(requirement)
    except InvalidRequirement:
        return requirement
    # a direct reference (`pkg @ git+https://...@COMMIT`) is what it points at: two commits are two runs
    return (f"{canonicalize_name(parsed.name)}{sorted(parsed.extras)}{parsed.specifier}{parsed.marker or ''}"
            f"{'@' + parsed.url if parsed.url else ''}")


_SKELETON_IMPORT = re.compile(rf"^import (?P<module>[\w.]+)\s+{re.escape(SKELETON_IMPORT)} \({IMPORT_DISTRIBUTION} "
                              r"(?P<dist>[\w.-]+)\)", re.MULTILINE)


def _skeleton_import_unpinned(script: Path, variants: Any) -> tuple[str, str, str] | None:
    """(variant, module, distribution) for a variant that does not pin the distribution of an import `new`'s
    skeleton took from the traceback, when none of its pins can install that module either: each is torch's or one
    the import-name table knows installs other modules. `new`'s name for a distribution is a guess (gcastle installs
    `castle`), so a variant pinning a project the table does not know is left to validate's build, which looks the
    import up in the environment (harness/environments/_draft_installs.py). A variant with a patch or a shim may bring
    the module otherwise."""
    provided = _provided()
    for match in _SKELETON_IMPORT.finditer(_script_text(script)):
        dist = str(canonicalize_name(match["dist"]))
        top = match["module"].split(".")[0]
        for variant in variants:
            pinned = {_name(r) for r in variant.requires}
            if variant.patches or variant.shims or dist in pinned:
                continue
            if all(name in provided and top not in provided[name] for name in pinned - {"", "torch"}):
                return variant.name, match["module"], dist
    return None


def _provided() -> dict[str, tuple[str, ...]]:
    """Distribution -> the import packages the table says it installs (clean-fid -> cleanfid)."""
    provided: dict[str, tuple[str, ...]] = {}
    for module, dists in DISTRIBUTIONS.items():
        for dist in dists:
            provided[dist] = (*provided.get(dist, ()), module)
    return provided


def _module_not_provided(script: Path, variants: Any) -> tuple[str, str, str, tuple[str, ...]] | None:
    """(variant, module, distribution, its modules) for an import spelled as a pinned distribution's name
    (``import clean_fid`` with clean-fid pinned) where the table says that distribution installs other modules
    (``cleanfid``), or an import whose same-named distribution on PyPI is another project (``import nemo`` with
    nemo pinned: NeMo is nemo-toolkit; provided is then empty). A distribution named as its module is otherwise never
    flagged (torch, lightning)."""
    provided = _provided()
    for module in _imported(script):
        dist = str(canonicalize_name(module))
        if dist in OTHER_PROJECTS and (variant := _pinning(variants, dist)):  # `import nemo` with nemo pinned
            return variant, module, dist, ()
        if module in DISTRIBUTIONS or module == dist or dist not in provided or module in provided[dist]:
            continue
        if variant := _pinning(variants, dist):
            return variant, module, dist, provided[dist]
    return None


def _pinning(variants: Any, dist: str) -> str:
    """The first variant (without a patch or shim that may bring the code otherwise) that pins ``dist``, else ""."""
    return next((variant.name for variant in variants if not variant.patches and not variant.shims
                 and dist in {_name(r) for r in variant.requires}), "")


def _torch_alone(variant: _Variant) -> bool:
    return not variant.patches and not variant.shims and all(_name(r) in ("torch", "") for r in variant.requires)


def _library_unpinned(variants: list[Any], case: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """(buggy variant, library, how the case tells it) for a buggy variant with torch alone in a case whose library
    is not torch: a fix variant pins another library, or (no fix variant changing torch, which makes it a torch bug)
    the title's first word is a tag and the upstream issue's repository. A repro importing torch alone (a draft from
    a report that shows no frame of the project) would otherwise pass while it cannot show the bug."""
    fixes = [v for v in variants if v.role == "fix"]
    for buggy in (v for v in variants if v.role == "buggy" and _torch_alone(v)):
        for fix in fixes:
            others = [name for name in map(_name, fix.requires) if name not in ("torch", "")]
            if others:
                return buggy.name, others[0], f"fix variant {fix.name!r} pins it"
        torch = {r for r in buggy.requires if _name(r) == "torch"}
        named = _named_project(case)
        if named and all({r for r in fix.requires if _name(r) == "torch"} == torch for fix in fixes):
            return buggy.name, named, "the title, a tag and the upstream issue name it"
    return None


def copied_code(script: Path) -> bool:
    """Whether the case folder holds Python code besides the repro: the project's code copied in (what `new` offers
    for a repository with no release and no packaging), which the repro imports from its own folder."""
    for root, folders, files in os.walk(script.parent):  # links to folders are not followed
        folders[:] = [name for name in folders if name != "__pycache__"]
        if any(name.endswith(".py") and Path(root, name) != script for name in files):
            return True
    return False


def _project_unpinned(variants: list[Any], case: Mapping[str, Any]) -> tuple[str, str] | None:
    """(buggy variant, project) for a filled-in draft of `new` whose buggy variant pins other libraries but not the
    case's own project, by name or by a URL into its repository (a project run from a source checkout: the skeleton
    imports torch alone, so no import check sees it); a variant with a patch or a shim may bring the project's code
    otherwise; torch alone is _library_unpinned's (a torch bug may pin it alone). Hand-written cases (OneTrainer's
    flow rebuilt around its libraries) are not asked."""
    project = _named_project(case)
    upstream = case.get("upstream")
    issue = re.match(r"https?://github\.com/([^/]+/[^/#?]+)", str(upstream.get("issue", ""))) \
        if isinstance(upstream, Mapping) else None
    if project is None or issue is None:
        return None
    repository = f"github.com/{issue[1]}".lower()
    for buggy in (v for v in variants if v.role == "buggy" and not v.patches and not v.shims and not _torch_alone(v)):
        if not any(names_project(_name(r), project) for r in buggy.requires) \
                and not any(repository in r.lower() for r in buggy.requires):
            return buggy.name, project
    return None


def names_project(dist: str, project: str) -> bool:
    """Whether a distribution's name is the project's, or carries it whole among its words: the index often lists a
    repository's project under a longer name (remora as ont-remora, neural-renderer as neural-renderer-pytorch).
    Whether it is that project, validate's build reads from its metadata (harness/environments/_draft_identity.py)."""
    return dist == project or f"-{project}-" in f"-{dist}-"


def title_project(title: str, tags: Iterable[Any]) -> str:
    """The project a case's title names first when a tag names it too (`new` writes both), else "" (torch is none)."""
    words = title.split(maxsplit=1)
    first = str(canonicalize_name(words[0].rstrip(":"))) if words else ""
    named = first not in ("", "torch", "pytorch") and first in {str(canonicalize_name(str(tag))) for tag in tags}
    return first if named else ""


def _named_project(case: Mapping[str, Any]) -> str | None:
    first = title_project(str(case.get("title", "")), case.get("tags") or [])
    upstream = case.get("upstream")
    issue = re.match(r"https?://github\.com/[^/]+/([^/#?]+)", str(upstream.get("issue", ""))) \
        if isinstance(upstream, Mapping) else None
    if first and issue and canonicalize_name(issue[1]) == first:
        return first
    return None


def _imports_missing(script: Path, variants: Any) -> tuple[str, str] | None:
    """(variant, module) for a variant with torch alone whose script imports a library it cannot have."""
    bare = [v for v in variants if _torch_alone(v)]
    if not bare:
        return None
    local = {p.stem for p in script.parent.iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    for module in _imported(script):
        if module not in sys.stdlib_module_names and module not in _WITH_TORCH and module not in local:
            return bare[0].name, module
    return None


def _name(requirement: str) -> str:
    try:
        return str(canonicalize_name(Requirement(requirement).name))
    except InvalidRequirement:
        return ""


def _imported(script: Path) -> list[str]:
    """Top-level names of the modules the script imports (absolute imports; a script that does not parse: none)."""
    try:
        tree = ast.parse(_script_text(script))
    except (SyntaxError, ValueError, RecursionError):
        return []
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names += [alias.name.partition(".")[0] for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.append(node.module.partition(".")[0])
    return list(dict.fromkeys(names))


def newest_fix_pins(cases: Any, environ: Mapping[str, str], python: str, budget_s: float = 20.0) -> list[str]:
    """Fix variants pinning, as their fix, the newest release the package sources list: no later release exists,
    so the fix may not be released at all (the bug's code path may still be there: a patch or commit pin is then
    needed, as cases/ai-toolkit-flux-ids has). Asked of the index only when ``validate --check-index`` is given;
    each source read is bounded, the whole check by ``budget_s``, and a source that cannot be read is said."""
    import time

    from harness.environments._releases import list_releases

    deadline = time.monotonic() + budget_s
    said: list[str] = []
    for case in cases:
        for fix, package, version in _fix_pins(case):
            left = deadline - time.monotonic()
            if left <= 0:
                return [*said, f"--check-index stopped after {budget_s:g}s; the cases after {case.id} were not checked"]
            listing = list_releases(package, environ, python, timeout=min(10.0, left))
            if not listing.versions:
                why = "; ".join(listing.errors) or "no source lists it"
                said.append(f"{case.id}: could not list the releases of {package} ({why})")
            elif listing.versions[-1] == version:
                said.append(f"{case.id}: fix variant {fix!r} pins {package}=={version}, the newest release the package "
                            "sources list: if the fix is not in a release yet, pin the fix commit as a patch "
                            "(see cases/ai-toolkit-flux-ids)")
    return said


def _fix_pins(case: Any) -> list[tuple[str, str, str]]:
    """(fix variant, package, version) for each ``==`` pin a fix variant changes from its case's buggy variant."""
    buggy = {_name(r): r for v in case.variants.values() if v.role == "buggy" for r in v.requires}
    found = []
    for fix in (v for v in case.variants.values() if v.role == "fix"):
        for requirement in fix.requires:
            name = _name(requirement)
            pinned = _exact(requirement)
            if name and name != "torch" and pinned and buggy.get(name) not in (None, requirement):
                found.append((fix.name, name, pinned))
    return found


def _exact(requirement: str) -> str:
    try:
        specifiers = list(Requirement(requirement).specifier)
    except InvalidRequirement:
        return ""
    return specifiers[0].version if len(specifiers) == 1 and specifiers[0].operator == "==" else ""
