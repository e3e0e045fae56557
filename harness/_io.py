"""Files in and out, each done one way: atomic writes, bounded YAML with line numbers, JSON Schema checks.

Writes: :func:`write_atomic` (a temp file beside the target, mode 0644, fsync, rename), for every file the
harness writes for others to read (results, reports, the site, environment records).

Schemas: :func:`schema_validator` (jsonschema, ECMA-262 patterns, for clear messages) and
:func:`compiled_validator` (fastjsonschema, ~25x faster, for the report's thousands of files).

Text out: :func:`for_terminal` and :func:`for_page` make text a case or a repro controls safe to print.

YAML: :func:`load_plain_data` reads a ``case.yaml`` as plain data, safely: bounded in size, depth and alias
expansion, no duplicate keys; :func:`yaml_line` finds the line of a node for error messages.

A case file arrives in a pull request, so it is untrusted. Before anything is built from it, one pass over
the YAML event stream (linear in the file's size: aliases are counted, never expanded) refuses:

- files over :data:`MAX_BYTES`, nesting deeper than :data:`MAX_DEPTH` (RecursionError later),
- aliases that refer to their own unfinished node (a cycle) or that would expand the document past
  :data:`MAX_NODES` nodes (an "alias bomb": a few hundred bytes, billions of nodes),
- a mapping key given twice (YAML would keep the last one silently),
- a plain (unquoted) text field cut short by `` #`` (YAML reads the rest of the line as a comment).

Anchors and aliases within those bounds stay allowed (``expect: *all-pass``, ``<<: *defaults``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema
import yaml

from harness._exceptions import CaseFileError

MAX_BYTES = 256 * 1024
MAX_DEPTH = 32
MAX_NODES = 20_000
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_LINE_BREAK = re.compile("\r\n|[\r\n\x85\u2028\u2029]")  # what YAML counts as a line break
# Prose fields whose plain scalars must not be cut by a comment: (path pattern, "*" matches any key).
# An 'unsupported: <why>' reason cannot be a plain scalar at all (YAML forbids ': ' in one): it is quoted.
_TEXT_FIELDS = (("title",), ("summary",), ("retired_reason",), ("variants", "*", "description"))


def read_case_text(path: Path) -> str:
    """The file's text, refusing files over :data:`MAX_BYTES` before reading them whole."""
    with path.open("rb") as handle:
        raw = handle.read(MAX_BYTES + 1)
    if len(raw) > MAX_BYTES:
        raise CaseFileError(path, f"case file is larger than {MAX_BYTES // 1024} KiB",
                            fix="a case file is a page of data: move long text to the repro or the upstream links")
    return raw.decode("utf-8", errors="replace").removeprefix("\ufeff")


def load_plain_data(path: Path, text: str) -> Any:
    """Check the event stream (:func:`check_events`), then build the data with a safe loader."""
    try:
        check_events(path, text)
        return yaml.load(text, Loader=LOADER)  # a safe loader, C-accelerated when available
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        problem = getattr(error, "problem", None) or str(error)
        raise CaseFileError(path, f"malformed YAML: {problem}", line=mark.line + 1 if mark else None,
                            fix="fix the YAML syntax (indentation, quotes, colons)") from None


@dataclass
class _Frame:
    """One open mapping or sequence while scanning events."""

    is_mapping: bool
    anchor: str | None
    path: tuple[Any, ...]
    size: int = 1  # nodes inside it, aliases expanded
    keys: dict[str, int] = field(default_factory=dict)  # mapping key -> 1-based line
    expecting_key: bool = True
    key: Any = None  # mapping: the key whose value comes next
    index: int = -1  # sequence: the index of the last item started


@dataclass
class _Scan:
    path: Path
    lines: list[str]
    stack: list[_Frame] = field(default_factory=list)
    anchors: dict[str, int] = field(default_factory=dict)  # anchor -> expanded size of its node
    total: int = 0

    def fail(self, mark: Any, problem: str, fix: str) -> CaseFileError:
        return CaseFileError(self.path, problem, fix=fix, line=mark.line + 1 if mark else None)


def check_events(path: Path, text: str) -> None:
    """Raise :class:`CaseFileError` for the problems listed in the module docstring (see there)."""
    scan = _Scan(path, _LINE_BREAK.split(text))
    for event in yaml.parse(text, Loader=LOADER):
        if isinstance(event, yaml.CollectionStartEvent):
            _start(scan, event)
        elif isinstance(event, yaml.CollectionEndEvent):
            _end(scan)
        elif isinstance(event, yaml.ScalarEvent):
            _scalar(scan, event)
        elif isinstance(event, yaml.AliasEvent):
            _alias(scan, event)


def _start(scan: _Scan, event: yaml.CollectionStartEvent) -> None:
    if len(scan.stack) >= MAX_DEPTH:
        raise scan.fail(event.start_mark, f"nesting deeper than {MAX_DEPTH} levels",
                        fix="a case file is a few levels deep (variants -> name -> expect -> lane): flatten it")
    _check_new_anchor(scan, event)
    path = _child_path(scan)
    _take_position(scan, key=None)
    _count(scan, 0, event)
    scan.stack.append(_Frame(isinstance(event, yaml.MappingStartEvent), event.anchor, path))


def _end(scan: _Scan) -> None:
    frame = scan.stack.pop()
    if frame.anchor:
        scan.anchors[frame.anchor] = frame.size
    if scan.stack:
        scan.stack[-1].size += frame.size


def _scalar(scan: _Scan, event: yaml.ScalarEvent) -> None:
    _check_new_anchor(scan, event)
    parent = scan.stack[-1] if scan.stack else None
    if parent is not None and parent.is_mapping and parent.expecting_key:
        _check_duplicate(scan, parent, event)
    elif not event.style:
        _check_cut_by_comment(scan, _child_path(scan), event)
    _take_position(scan, key=event.value)
    _count(scan, 1, event)
    if event.anchor:
        scan.anchors[event.anchor] = 1


def _alias(scan: _Scan, event: yaml.AliasEvent) -> None:
    if any(frame.anchor == event.anchor for frame in scan.stack):
        raise scan.fail(event.start_mark, f"alias *{event.anchor} refers to a node that contains it (a cycle)",
                        fix="case files are plain data: write the value out instead of the self-reference")
    _take_position(scan, key=None)
    _count(scan, scan.anchors.get(event.anchor or "", 1), event)


def _check_new_anchor(scan: _Scan, event: yaml.NodeEvent) -> None:
    if event.anchor and (event.anchor in scan.anchors or any(f.anchor == event.anchor for f in scan.stack)):
        raise scan.fail(event.start_mark, f"anchor &{event.anchor} is defined twice",
                        fix="give each anchor its own name")


def _take_position(scan: _Scan, key: Any) -> None:
    """A node starts in the current collection: a mapping alternates key and value."""
    if not scan.stack:
        return
    parent = scan.stack[-1]
    if parent.is_mapping:
        if parent.expecting_key:
            parent.key = key
        parent.expecting_key = not parent.expecting_key
    else:
        parent.index += 1


def _count(scan: _Scan, size: int, event: yaml.Event) -> None:
    """``size`` more nodes (0 for a collection that starts: it counts itself when it ends)."""
    scan.total += size or 1
    if scan.stack:
        scan.stack[-1].size += size
    if scan.total > MAX_NODES:
        raise scan.fail(event.start_mark, f"the document expands to more than {MAX_NODES:,} values "
                        "(aliases of aliases: an alias bomb?)",
                        fix="case files are plain data: write values out, or use a few aliases of small nodes")


def _child_path(scan: _Scan) -> tuple[Any, ...]:
    """The path of the node about to start (its parent's path plus the key or index it sits under)."""
    if not scan.stack:
        return ()
    parent = scan.stack[-1]
    if parent.is_mapping:
        return (*parent.path, parent.key) if not parent.expecting_key else parent.path
    return (*parent.path, parent.index + 1)


def _check_duplicate(scan: _Scan, parent: _Frame, event: yaml.ScalarEvent) -> None:
    first = parent.keys.get(event.value)
    if first is not None:
        where = "/".join(map(str, parent.path)) or "(top level)"
        raise scan.fail(event.start_mark, f"{where}: key {event.value!r} appears twice (first on line {first}); "
                        "YAML would silently keep only the last one",
                        fix=f"keep one {event.value!r} and merge the two values")
    parent.keys[event.value] = event.start_mark.line + 1 if event.start_mark else 0


def _check_cut_by_comment(scan: _Scan, path: tuple[Any, ...], event: yaml.ScalarEvent) -> None:
    if not any(_matches(path, pattern) for pattern in _TEXT_FIELDS):
        return
    end = event.end_mark
    if end is None:
        return
    rest = scan.lines[end.line][end.column:] if end.line < len(scan.lines) else ""
    if not rest.lstrip(" \t").startswith("#"):
        return
    name = "/".join(map(str, path))
    raise scan.fail(event.start_mark, f"{name}: the text stops at ' #': YAML reads {rest.strip()[:60]!r} as a "
                    f"comment, so {name} is only {event.value[-60:]!r}",
                    fix=f"quote the whole text ({path[-1]}: \"... #...\") or use a block scalar ({path[-1]}: >-)")


def _matches(path: tuple[Any, ...], pattern: tuple[str, ...]) -> bool:
    return len(path) == len(pattern) and all(p == "*" or p == str(k) for k, p in zip(path, pattern, strict=True))


def yaml_line(text: str, path: Iterable[Any], *, key: bool = False) -> int | None:
    """1-based line of the YAML node at ``path`` (the closest existing parent); None when the text is no YAML.
    ``key``: the line of the last key of ``path`` itself (``fix:``), not of its value (the line below a block)."""
    try:
        node = yaml.compose(text, Loader=LOADER)
    except yaml.YAMLError:
        return None
    line = node.start_mark.line + 1 if node else None
    for step in path:
        if isinstance(node, yaml.SequenceNode) and isinstance(step, int) and 0 <= step < len(node.value):
            match, named = node.value[step], None
        elif isinstance(node, yaml.MappingNode):
            match, named = next(((v, k) for k, v in node.value if k.value == str(step)), (None, None))
        else:
            break
        if match is None:
            break
        node = match
        line = (named if key and named is not None else node).start_mark.line + 1
    return line


# ---- atomic writes ----------------------------------------------------------------------------------------------

FILE_MODE = 0o644  # what the harness writes is read by others: a web server, CI's upload step, another user


def write_atomic(path: Path, data: str | bytes, *, before_replace: Callable[[int, str], None] | None = None) -> None:
    """Write ``path`` so that a reader sees the old file or the new one, never half of one.

    A temp file in the same folder (never through a symlink planted there), mode :data:`FILE_MODE` whatever the
    umask, flushed to disk, then renamed over ``path``. ``before_replace(folder_fd, name)`` runs just before the
    rename. OSError reaches the caller, with the temp file removed and the previous ``path`` intact.
    """
    folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        write_atomic_at(folder, path.name, data, before_replace=before_replace)
    finally:
        os.close(folder)


def write_atomic_at(folder: int, name: str, data: str | bytes, *,
                    before_replace: Callable[[int, str], None] | None = None) -> None:
    """:func:`write_atomic` into the folder open as ``folder`` (a descriptor: the folder cannot be swapped)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    tmp = f".{name}.{secrets.token_hex(4)}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE,
                     dir_fd=folder)
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), FILE_MODE)
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        if before_replace is not None:
            before_replace(folder, name)
        os.replace(tmp, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp, dir_fd=folder)
        raise


def write_json_atomic(path: Path, data: Any, *, indent: int | None = 1) -> None:
    separators = (",", ":") if indent is None else None
    write_atomic(path, json.dumps(data, indent=indent, separators=separators, ensure_ascii=False) + "\n")


# ---- JSON Schema ------------------------------------------------------------------------------------------------


@functools.cache
def read_schema(path: Path, definition: str | None = None) -> dict[str, Any]:
    """A schema file, or one of its ``$defs`` as a schema of its own."""
    schema: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return schema if definition is None else {"$defs": schema["$defs"], "$ref": f"#/$defs/{definition}"}


def _ecma_pattern(validator: Any, pattern: str, instance: Any, schema: dict[str, Any]) -> Iterable[Any]:
    """``pattern`` as JSON Schema (ECMA-262) means it: a final ``$`` is the end of the text.

    jsonschema uses Python's ``re.search``, whose ``$`` also matches before a final newline, so an id
    ``"my-case\\n"`` would pass ``^[a-z0-9-]+$``.
    """
    if not isinstance(instance, str):
        return
    python = pattern[:-1] + r"\Z" if pattern.endswith("$") and not pattern.endswith(r"\$") else pattern
    if not re.search(python, instance):
        yield jsonschema.ValidationError(f"{short_repr(instance)} does not match {pattern!r}")


def short_repr(value: str, limit: int = 80) -> str:
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}..."


# jsonschema types extend() loosely: the class it makes is a Draft 2020-12 validator with one keyword replaced.
_EcmaValidator: type[jsonschema.protocols.Validator] = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
    jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


@functools.cache
def schema_validator(path: Path) -> jsonschema.protocols.Validator:
    """The schema at ``path`` as a validator whose errors say where and why (slow: ~25 ms a results.json)."""
    return _EcmaValidator(read_schema(path))


@functools.cache
def compiled_validator(path: Path, definition: str | None = None) -> Callable[[Any], Any]:
    """The schema (or one ``$defs`` entry) compiled: ~1 ms a results.json; raises
    ``fastjsonschema.JsonSchemaException``. Use :func:`schema_validator` to explain a refusal."""
    return fastjsonschema.compile(read_schema(path, definition))


# ---- text out --------------------------------------------------------------------------------------------------
# Text a case or a repro controls, made safe to print on a terminal or into a CI log.
#
# A title, an exception message or a log line can carry escape sequences: an OSC title change, a
# clear-screen, text hidden with SGR "conceal", a carriage return that overwrites what came before, or a
# right-to-left override that reorders what the reader sees. :func:`for_terminal` makes each such
# character visible (``\x1b`` for ESC) and leaves every other character alone.
#
# Rich markup is the other half: print such text as a ``rich.text.Text`` (never parsed as markup), not
# inside a markup string, where a title containing ``[/]`` raises MarkupError.

# C0 controls but tab and newline, DEL, C1 controls (U+009B is a one-character CSI on some terminals),
# the Unicode characters that reorder or break lines (bidi embeddings, overrides, isolates, marks), and
# lone surrogates (no UTF-8 stream can write one: printing it raised UnicodeEncodeError mid-run).
_UNSAFE = [*range(0x00, 0x09), *range(0x0B, 0x20), *range(0x7F, 0xA0), 0x061C, 0x200E, 0x200F,
           *range(0x2028, 0x202F), *range(0x2066, 0x206A), *range(0xD800, 0xE000)]
_VISIBLE = {code: (f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}") for code in _UNSAFE} | {ord("\r"): "\\r"}
_VISIBLE_ONE_LINE = {**_VISIBLE, ord("\n"): "\\n"}


def for_terminal(text: str, *, one_line: bool = False) -> str:
    """``text`` with every control character shown as an escape (``\\x1b``); newlines kept unless ``one_line``."""
    return text.translate(_VISIBLE_ONE_LINE if one_line else _VISIBLE)


# A web page: the same, but a carriage return stays (browsers show it as a line break, never overwrite).
_VISIBLE_PAGE = {code: shown for code, shown in _VISIBLE.items() if code != ord("\r")}


def for_page(text: str) -> str:
    """``text`` for an HTML page: control and bidi characters shown as escapes, line breaks kept."""
    if text.isascii() and text.isprintable():  # most of what a page prints: nothing to show (and 3x faster)
        return text
    return text.translate(_VISIBLE_PAGE)
