"""Load and validate case files: ``cases/<id>/case.yaml`` -> :class:`Case`.

Validation is the published JSON Schema (``harness/case.schema.json``) plus the checks a schema
cannot express (id equals folder, files exist, the signature compiles, torch is pinned). A broken
case file becomes a :class:`CaseFileError` that names the file, the line and the fix; the other
cases still load.
"""

from __future__ import annotations

import difflib
import hashlib
import math
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jsonschema
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness._exceptions import CaseFileError
from harness._io import load_plain_data, read_case_text, schema_validator, short_repr, yaml_line
from harness._vocabulary import LANES, TORCH_PIN, Role
from harness.cases._placeholders import placeholder_error, script_placeholders
from harness.cases._soundness import check_variants

SCHEMA_PATH = Path(__file__).parents[1] / "case.schema.json"
ExpectKind = Literal["reproduces", "passes", "unsupported"]


@dataclass(frozen=True)
class Expectation:
    kind: ExpectKind
    reason: str = ""

    @classmethod
    def parse(cls, text: str) -> Expectation:
        if text.startswith("unsupported:"):
            return cls("unsupported", text.partition(":")[2].strip())
        if text == "reproduces":
            return cls("reproduces")
        return cls("passes")

    def __str__(self) -> str:
        return f"unsupported: {self.reason}" if self.kind == "unsupported" else self.kind


@dataclass(frozen=True)
class PatchFile:
    """A unified diff applied (``patch -p1``) to an environment's site-packages."""

    path: Path
    sha256: str

    @classmethod
    def from_path(cls, path: Path) -> PatchFile:
        return cls(path, hashlib.sha256(path.read_bytes()).hexdigest())


@dataclass(frozen=True)
class Variant:
    name: str
    role: Role
    description: str
    requires: tuple[str, ...]
    args: tuple[str, ...]
    env: Mapping[str, str]
    patches: tuple[PatchFile, ...]
    shims: tuple[Path, ...]
    timeout: float
    expect: Mapping[str, Expectation]


@dataclass(frozen=True)
class Case:
    id: str
    title: str
    upstream: Mapping[str, Any]
    signature: re.Pattern[str]
    exception: str | None
    summary: str
    script: Path
    folder: Path
    image: str
    timeout: float
    tags: tuple[str, ...]
    status: str
    retired_reason: str
    variants: Mapping[str, Variant] = field(default_factory=dict)

    @property
    def source(self) -> Path:
        return self.folder / "case.yaml"

    def describe(self) -> dict[str, Any]:
        """The case as the reports show it."""
        return {
            "title": self.title,
            "upstream": dict(self.upstream),
            "signature": self.signature.pattern,
            "exception": self.exception,
            "summary": self.summary,
            "status": self.status,
            "tags": list(self.tags),
            "variants": {
                v.name: {"role": v.role, "description": v.description, "requires": list(v.requires),
                         "expect": {lane: str(e) for lane, e in v.expect.items()}}
                for v in self.variants.values()
            },
        }


@dataclass(frozen=True)
class CaseLoad:
    cases: tuple[Case, ...]
    errors: tuple[CaseFileError, ...]


def load_cases(roots: Iterable[Path]) -> CaseLoad:
    """Load every ``<root>/<id>/case.yaml``; collect errors instead of stopping at the first."""
    cases: list[Case] = []
    errors: list[CaseFileError] = []
    seen: dict[str, Path] = {}
    for root in dict.fromkeys(r.resolve() for r in roots):  # one folder given twice is read once
        # Symlinks too, dangling ones included: load_case refuses them by name rather than skip them unsaid.
        for folder in sorted(p for p in root.iterdir()
                             if (p.is_dir() or p.is_symlink()) and not p.name.startswith((".", "_"))):
            try:
                case = load_case(folder)
            except CaseFileError as error:
                errors.append(error)
                continue
            if case.id in seen:
                errors.append(CaseFileError(case.source, f"duplicate case id {case.id!r} (also {seen[case.id]})",
                                            fix="give each case a unique id; ids are never reused"))
                continue
            seen[case.id] = case.source
            cases.append(case)
    return CaseLoad(tuple(cases), tuple(errors))


def load_case(folder: Path) -> Case:
    path = folder / "case.yaml"
    # Confined like the files a case names: a symlink from a pull request can name any file of the machine
    # (case.yaml -> /proc/self/environ was read; a linked folder's repro is out of the cell's reach).
    if folder.is_symlink():
        dangling = "" if folder.exists() else f" to {os.readlink(folder)}, which does not exist"
        raise CaseFileError(path, f"the case folder {folder.name} is a symlink{dangling}",
                            fix=f"make {folder.name} a folder of its own under {folder.parent} (copy the case there)")
    if path.is_symlink() and not _inside(path, folder):
        raise CaseFileError(path, "case.yaml is a symlink leading out of the case folder",
                            fix="make case.yaml a file in the case folder")
    if not path.is_file():
        raise CaseFileError(path, "case folder has no case.yaml",
                            fix="add case.yaml (see harness/case.schema.json) or remove the folder")
    text = read_case_text(path)
    data = _parse_yaml(path, text)
    script = _script_placeholders(folder, data)
    if unfinished := placeholder_error(path, data, lambda trail: yaml_line(text, trail), script):
        raise unfinished  # a skeleton from `harness new`: name what is left to fill in before the schema's view
    _validate_schema(path, text, data)
    _require_finite_timeouts(path, text, data)
    return _build_case(folder, path, text, data)


def _script_placeholders(folder: Path, data: dict[str, Any]) -> list[tuple[int, str]]:
    """The repro script's placeholders, when the script is a readable file of the case folder (else the checks
    after the schema's name what is wrong with it)."""
    name = data.get("script", "repro.py")
    script = folder / name if isinstance(name, str) else None
    try:
        if script is None or not _inside(script, folder) or not script.is_file() or script.stat().st_size > 2**20:
            return []
        return script_placeholders(script.read_text(errors="replace"), name)
    except OSError:
        return []


def _parse_yaml(path: Path, text: str) -> dict[str, Any]:
    data = load_plain_data(path, text)
    if not isinstance(data, dict):
        raise CaseFileError(path, f"expected a mapping of case fields, got {type(data).__name__}",
                            fix="start the file with 'id: <case-id>' and the other fields of the schema")
    _require_text_keys(path, text, data, [])
    return data


def _require_text_keys(path: Path, text: str, node: Any, trail: list[Any]) -> None:
    """Every mapping key is text (YAML also allows ``1:``, ``true:``, ``null:`` or a bare ``?``)."""
    if isinstance(node, list):
        for index, item in enumerate(node):
            _require_text_keys(path, text, item, [*trail, index])
    elif isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str):
                where = "/".join(map(str, trail)) or "(top level)"
                raise CaseFileError(path, f"{where}: key {key!r} is a {type(key).__name__}, not text",
                                    fix=f"quote the key ('{key}':) or remove it", line=yaml_line(text, trail))
            _require_text_keys(path, text, value, [*trail, key])


def _validate_schema(path: Path, text: str, data: dict[str, Any]) -> None:
    errors = sorted(schema_validator(SCHEMA_PATH).iter_errors(data),
                    key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if not errors:
        return
    error = errors[0]
    location = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    raise CaseFileError(path, f"{location}: {_describe(error)}{more}", fix=_suggest(error),
                        line=yaml_line(text, list(error.absolute_path)))


def _require_finite_timeouts(path: Path, text: str, data: dict[str, Any]) -> None:
    """NaN passes every JSON Schema bound (each comparison with it is false); a NaN timeout never fires."""
    where = [["timeout"]] + [["variants", name, "timeout"] for name in data["variants"]]
    for trail in where:
        node: Any = data
        for key in trail:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, float) and not math.isfinite(node):
            raise CaseFileError(path, f"{'/'.join(trail)}: {node} is not a number of seconds",
                                line=yaml_line(text, trail),
                                fix="a finite number above 0 and at most 3600, e.g. 'timeout: 300'")


def _schema_of(error: jsonschema.ValidationError) -> dict[str, Any]:
    """The failing subschema (jsonschema types it loosely: a boolean schema, or unset, has no keys)."""
    return error.schema if isinstance(error.schema, dict) else {}


def _describe(error: jsonschema.ValidationError) -> str:
    instance: Any = error.instance
    value: Any = error.validator_value
    if error.validator == "additionalProperties":
        extra = sorted(set(map(str, instance)) - set(_schema_of(error).get("properties", {})))
        return f"unknown key(s) {', '.join(map(repr, extra))}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is required")
    if error.validator == "anyOf" and all(set(branch) == {"required"} for branch in value):
        keys = [key for branch in value for key in branch["required"]]
        return f"needs at least one of {', '.join(map(repr, keys))}"
    if error.validator == "maxLength" and isinstance(instance, str):
        return f"{short_repr(instance, 40)} is {len(instance)} characters long (at most {value})"
    message = str(error.message)
    return message if len(message) <= 300 else f"{message[:300]}..."


def _suggest(error: jsonschema.ValidationError) -> str:
    schema = _schema_of(error)
    instance: Any = error.instance
    if error.validator == "additionalProperties":
        known = list(schema.get("properties", {}))
        extra = sorted(set(map(str, instance)) - set(known))
        hints = [f"{k!r} -> {m[0]!r}" for k in extra if (m := difflib.get_close_matches(k, known, n=1))]
        base = "allowed keys: " + ", ".join(known)
        return f"did you mean {', '.join(hints)}? {base}" if hints else base
    if error.validator == "anyOf" and list(error.absolute_path) == ["upstream"]:
        return "link the bug report (issue:), or the pull request (pr:) or commit (commit:) when there is no issue"
    if error.validator in ("anyOf", "enum") and "expect" in map(str, error.absolute_path):
        return "each lane expects 'reproduces', 'passes' or 'unsupported: <why>'"
    if error.validator in _BOUNDS and schema.get("description"):
        return str(schema["description"])
    return "see harness/case.schema.json"


_BOUNDS = ("pattern", "maxLength", "minLength", "maximum", "exclusiveMinimum", "maxItems", "maxProperties")


def _build_case(folder: Path, path: Path, text: str, data: dict[str, Any]) -> Case:
    if data["id"] != folder.name:
        raise CaseFileError(path, f"id {data['id']!r} does not match its folder {folder.name!r}",
                            line=yaml_line(text, ["id"]),
                            fix=f"set 'id: {folder.name}' or rename the folder to {data['id']!r}")
    signature = _compile_signature(path, text, data["signature"])
    relative = data.get("script", "repro.py")
    _case_file(folder, path, relative, "script", text=text, trail=["script"] if "script" in data else None)
    script = folder / relative  # unresolved: the runner names it relative to the case folder
    timeout = float(data.get("timeout", 300))
    variants = {name: _build_variant(folder, path, text, data, name, timeout) for name in data["variants"]}
    roles = {v.role for v in variants.values()}
    if roles != {"buggy", "fix"}:
        missing = ({"buggy", "fix"} - roles).pop()
        raise CaseFileError(path, f"no variant with role {missing!r}",
                            fix="a case needs at least one buggy and one fix variant")
    check_variants(path, folder / relative, variants, lambda trail: yaml_line(text, trail), data)
    if data.get("status") == "retired" and not data.get("retired_reason"):
        raise CaseFileError(path, "retired case without retired_reason", fix="say why it was retired")
    return Case(
        id=data["id"], title=data["title"], upstream=data["upstream"], signature=signature,
        exception=data.get("exception"), summary=" ".join(data["summary"].split()), script=script,
        folder=folder, image=data.get("image", "images/torch"), timeout=timeout,
        tags=tuple(data.get("tags", ())), status=data.get("status", "active"),
        retired_reason=data.get("retired_reason", ""), variants=variants,
    )


def _compile_signature(path: Path, text: str, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except (re.error, RecursionError, OverflowError) as error:
        raise CaseFileError(path, f"signature is not a valid regular expression: {error}",
                            line=yaml_line(text, ["signature"]),
                            fix="escape regex metacharacters such as ( ) [ ] . with a backslash") from None


def _build_variant(folder: Path, path: Path, text: str, case: dict[str, Any], name: str,
                   case_timeout: float) -> Variant:
    raw = case["variants"][name]
    requires = merge_requirements(path, case.get("requires", []), raw.get("requires", []), name)
    patches = tuple(PatchFile.from_path(p) for p in _case_files(folder, path, text, case, name, "patches"))
    shims = _case_files(folder, path, text, case, name, "shims")
    return Variant(
        name=name, role=raw["role"], description=raw.get("description", ""), requires=requires,
        args=tuple(raw.get("args", ())), env={**case.get("env", {}), **raw.get("env", {})},
        patches=patches, shims=shims, timeout=float(raw.get("timeout", case_timeout)),
        expect={lane: Expectation.parse(raw["expect"][lane]) for lane in LANES},
    )


def _case_files(folder: Path, path: Path, text: str, case: dict[str, Any], variant: str, key: str) -> tuple[Path, ...]:
    """The case's and then the variant's files under ``key`` (patches, shims), each confined to the folder."""
    trails = [[key, i] for i in range(len(case.get(key, [])))]
    trails += [["variants", variant, key, i] for i in range(len(case["variants"][variant].get(key, [])))]
    names = [*case.get(key, []), *case["variants"][variant].get(key, [])]
    return tuple(_case_file(folder, path, name, key, text=text, trail=trail)
                 for name, trail in zip(names, trails, strict=True))


def _inside(path: Path, folder: Path) -> bool:
    try:
        return path.resolve().is_relative_to(folder.resolve())
    except (OSError, RuntimeError, ValueError):  # a symlink loop; a name holding a NUL byte
        return False


def _case_file(folder: Path, path: Path, relative: str, key: str, *, text: str, trail: list[Any] | None) -> Path:
    """A file the case names, resolved (symlinks included) and confined to the case folder."""
    try:
        target = (folder / relative).resolve()
        inside = target.is_relative_to(folder.resolve())
        found = inside and target.is_file()
    except (OSError, ValueError):  # a name too long for the file system, a NUL byte
        inside = found = False
    if inside and found:
        return target
    line = yaml_line(text, trail) if trail else None
    if not inside:
        raise CaseFileError(path, f"{key}: {relative!r} points outside the case folder", line=line,
                            fix=f"put the file in {folder} and name it relative to that folder "
                                "(no absolute path, no '..', no symlink leading out)")
    label = f"script {relative!r}" if key == "script" else f"{key}: file {relative!r}"
    raise CaseFileError(path, f"{label} not found in the case folder {folder}", line=line,
                        fix=f"add {relative} to {folder} or remove it from '{key}'")


# RFC 3986: never unencoded in a URL; what an example's "<commit>" or "{sha}" leaves behind
_NOT_IN_A_URL = re.compile(r'[<>"{}|\\^`\s]')


def merge_requirements(path: Path, shared: Iterable[str], own: Iterable[str], variant: str) -> tuple[str, ...]:
    """Case-level requirements overlaid by the variant's (same package name: the variant wins)."""
    merged: dict[str, str] = {}
    for text in [*shared, *own]:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise CaseFileError(path, f"variant {variant!r}: invalid requirement {text!r}: {error}",
                                fix=f"use pip requirement syntax, e.g. '{TORCH_PIN}'") from None
        stray = _NOT_IN_A_URL.search(requirement.url or "")
        if stray:
            raise CaseFileError(path, f"variant {variant!r}: the URL of {text!r} holds {stray.group()!r}, which no "
                                      "URL holds: an example's placeholder such as '<commit>' left in",
                                fix="write the real value, e.g. the full commit hash after '@'")
        merged[canonicalize_name(requirement.name)] = text
    torch = merged.get("torch")
    if torch is None or not re.search(r"==\s*[\w.+]+\s*$", torch):
        raise CaseFileError(path, f"variant {variant!r} does not pin torch with '==' (got {torch!r})",
                            fix=f"add e.g. '{TORCH_PIN}' to requires: an unpinned torch pulls a multi-GB CUDA build")
    return tuple(sorted(merged.values(), key=str.lower))
