"""Load and validate case files: ``cases/<id>/case.yaml`` -> :class:`Case`.

Validation is the published JSON Schema (``harness/case.schema.json``) plus the checks a schema
cannot express (id equals folder, files exist, the signature compiles, torch is pinned). A broken
case file becomes a :class:`CaseFileError` that names the file, the line and the fix; the other
cases still load.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

import jsonschema
import yaml
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from harness._exceptions import CaseFileError

SCHEMA_PATH = Path(__file__).with_name("case.schema.json")
LANES: tuple[str, ...] = ("cpu", "cuda", "cuda-sim")
ExpectKind = Literal["reproduces", "passes", "unsupported"]
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
    role: Literal["buggy", "fix"]
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


@cache
def _validator() -> jsonschema.protocols.Validator:
    schema = json.loads(SCHEMA_PATH.read_text())
    return jsonschema.Draft202012Validator(schema)


def load_cases(roots: Iterable[Path]) -> CaseLoad:
    """Load every ``<root>/<id>/case.yaml``; collect errors instead of stopping at the first."""
    cases: list[Case] = []
    errors: list[CaseFileError] = []
    seen: dict[str, Path] = {}
    for root in roots:
        for folder in sorted(p for p in root.resolve().iterdir() if p.is_dir() and not p.name.startswith((".", "_"))):
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
    if not path.is_file():
        raise CaseFileError(path, "case folder has no case.yaml",
                            fix="add case.yaml (see harness/case.schema.json) or remove the folder")
    text = path.read_text(encoding="utf-8", errors="replace")
    data = _parse_yaml(path, text)
    _validate_schema(path, text, data)
    return _build_case(folder, path, data)


def _parse_yaml(path: Path, text: str) -> dict[str, Any]:
    try:
        data = yaml.load(text, Loader=_LOADER)  # a safe loader, C-accelerated when available
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise CaseFileError(path, f"malformed YAML: {problem}", line=mark.line + 1 if mark else None,
                            fix="fix the YAML syntax (indentation, quotes, colons)") from None
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
                                    fix=f"quote the key ('{key}':) or remove it", line=_line_of(text, trail))
            _require_text_keys(path, text, value, [*trail, key])


def _validate_schema(path: Path, text: str, data: dict[str, Any]) -> None:
    errors = sorted(_validator().iter_errors(data), key=lambda e: (len(e.absolute_path), list(map(str, e.path))))
    if not errors:
        return
    error = errors[0]
    location = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    more = f" (and {len(errors) - 1} more problem(s))" if len(errors) > 1 else ""
    raise CaseFileError(path, f"{location}: {_describe(error)}{more}", fix=_suggest(error),
                        line=_line_of(text, list(error.absolute_path)))


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        extra = sorted(set(map(str, error.instance)) - set(error.schema.get("properties", {})))
        return f"unknown key(s) {', '.join(map(repr, extra))}"
    if error.validator == "required":
        return str(error.message).replace("is a required property", "is required")
    if error.validator == "anyOf" and all(set(branch) == {"required"} for branch in error.validator_value):
        keys = [key for branch in error.validator_value for key in branch["required"]]
        return f"needs at least one of {', '.join(map(repr, keys))}"
    return str(error.message)


def _suggest(error: jsonschema.ValidationError) -> str:
    if error.validator == "additionalProperties":
        known = list(error.schema.get("properties", {}))
        extra = sorted(set(map(str, error.instance)) - set(known))
        hints = [f"{k!r} -> {m[0]!r}" for k in extra if (m := difflib.get_close_matches(k, known, n=1))]
        base = "allowed keys: " + ", ".join(known)
        return f"did you mean {', '.join(hints)}? {base}" if hints else base
    if error.validator == "anyOf" and list(error.absolute_path) == ["upstream"]:
        return "link the bug report (issue:), or the pull request (pr:) or commit (commit:) when there is no issue"
    if error.validator in ("anyOf", "enum") and "expect" in map(str, error.absolute_path):
        return "each lane expects 'reproduces', 'passes' or 'unsupported: <why>'"
    return "see harness/case.schema.json"


def _line_of(text: str, path: list[Any]) -> int | None:
    """1-based line of the YAML node at ``path`` (the closest existing parent)."""
    try:
        node = yaml.compose(text)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node else None
    for key in path:
        if not isinstance(node, yaml.MappingNode):
            break
        match = next((v for k, v in node.value if k.value == str(key)), None)
        if match is None:
            break
        node = match
        line = node.start_mark.line + 1
    return line


def _build_case(folder: Path, path: Path, data: dict[str, Any]) -> Case:
    if data["id"] != folder.name:
        raise CaseFileError(path, f"id {data['id']!r} does not match its folder {folder.name!r}",
                            line=_line_of(path.read_text(), ["id"]),
                            fix=f"set 'id: {folder.name}' or rename the folder to {data['id']!r}")
    signature = _compile_signature(path, data["signature"])
    script = folder / data.get("script", "repro.py")
    if not script.is_file():
        raise CaseFileError(path, f"script {script.name!r} not found in {folder}",
                            fix="add the repro script or set 'script:' to its file name")
    timeout = float(data.get("timeout", 300))
    variants = {name: _build_variant(folder, path, data, name, raw, timeout)
                for name, raw in data["variants"].items()}
    roles = {v.role for v in variants.values()}
    if roles != {"buggy", "fix"}:
        missing = ({"buggy", "fix"} - roles).pop()
        raise CaseFileError(path, f"no variant with role {missing!r}",
                            fix="a case needs at least one buggy and one fix variant")
    if data.get("status") == "retired" and not data.get("retired_reason"):
        raise CaseFileError(path, "retired case without retired_reason", fix="say why it was retired")
    return Case(
        id=data["id"], title=data["title"], upstream=data["upstream"], signature=signature,
        exception=data.get("exception"), summary=" ".join(data["summary"].split()), script=script,
        folder=folder, image=data.get("image", "images/torch"), timeout=timeout,
        tags=tuple(data.get("tags", ())), status=data.get("status", "active"),
        retired_reason=data.get("retired_reason", ""), variants=variants,
    )


def _compile_signature(path: Path, pattern: str) -> re.Pattern[str]:
    try:
        return re.compile(pattern)
    except re.error as error:
        raise CaseFileError(path, f"signature is not a valid regular expression: {error}",
                            line=_line_of(path.read_text(), ["signature"]),
                            fix="escape regex metacharacters such as ( ) [ ] . with a backslash") from None


def _build_variant(folder: Path, path: Path, case: dict[str, Any], name: str, raw: dict[str, Any],
                   case_timeout: float) -> Variant:
    requires = merge_requirements(path, case.get("requires", []), raw.get("requires", []), name)
    patches = tuple(PatchFile.from_path(_case_file(folder, path, p, "patches"))
                    for p in [*case.get("patches", []), *raw.get("patches", [])])
    shims = tuple(_case_file(folder, path, s, "shims") for s in [*case.get("shims", []), *raw.get("shims", [])])
    return Variant(
        name=name, role=raw["role"], description=raw.get("description", ""), requires=requires,
        args=tuple(raw.get("args", ())), env={**case.get("env", {}), **raw.get("env", {})},
        patches=patches, shims=shims, timeout=float(raw.get("timeout", case_timeout)),
        expect={lane: Expectation.parse(raw["expect"][lane]) for lane in LANES},
    )


def _case_file(folder: Path, path: Path, relative: str, key: str) -> Path:
    target = (folder / relative).resolve()
    if not target.is_relative_to(folder.resolve()) or not target.is_file():
        raise CaseFileError(path, f"{key}: file {relative!r} not found in the case folder",
                            fix=f"add {relative} to {folder} or remove it from '{key}'")
    return target


def merge_requirements(path: Path, shared: Iterable[str], own: Iterable[str], variant: str) -> tuple[str, ...]:
    """Case-level requirements overlaid by the variant's (same package name: the variant wins)."""
    merged: dict[str, str] = {}
    for text in [*shared, *own]:
        try:
            requirement = Requirement(text)
        except InvalidRequirement as error:
            raise CaseFileError(path, f"variant {variant!r}: invalid requirement {text!r}: {error}",
                                fix="use pip requirement syntax, e.g. 'torch==2.13.0'") from None
        merged[canonicalize_name(requirement.name)] = text
    torch = merged.get("torch")
    if torch is None or not re.search(r"==\s*[\w.+]+\s*$", torch):
        raise CaseFileError(path, f"variant {variant!r} does not pin torch with '==' (got {torch!r})",
                            fix="add e.g. 'torch==2.13.0' to requires: an unpinned torch pulls a multi-GB CUDA build")
    return tuple(sorted(merged.values(), key=str.lower))
