"""Reading untrusted inputs: a run folder's results.json, checked before anything in it names a file.

The nightly site is built from CI artifacts that pull requests can shape, so every results.json is hostile
until shown otherwise: it is refused above a size bound before parsing, must match the published schema
(harness/results.schema.json), and every name in it that the site turns into a file or URL must match its
pattern in full. A file that fails is skipped and listed with the reason; the other runs still publish.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import fastjsonschema
import jsonschema

from harness._io import compiled_validator, schema_validator
from harness.report import _checked
from harness.report._common import future_problem, name_problem, printable
from harness.report._io import RESULTS_VERSION, ReportInputError
from harness.report._safe import UnsafePath, read_inside

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "results.schema.json"
# A real run of 200 cases x 3 lanes x 3 variants with full package lists is a few MB; a file above the bound
# is refused before parsing (parsing takes ~10x the file's size in memory).
MAX_RESULTS_BYTES = 32 * 2**20
# The suite has a few hundred cases; a run naming more would write a page per case into every later build.
MAX_RUN_CASES = 2000
_MESSAGE_CHARS = 300


def _fast_validator() -> Callable[[Any], Any]:
    # jsonschema needs ~25 ms for one run's results.json; the compiled validator ~1 ms (a site reads 1,000s).
    return compiled_validator(SCHEMA_PATH)


def parse_json(data: bytes, source: Path | str) -> Any:
    """Strict JSON: no NaN or Infinity (nor a number too large for a float), no lone surrogate escape
    (``"\\ud800"``): what Python's parser lets through but no UTF-8 file or browser can hold."""
    try:
        parsed = json.loads(data, parse_constant=_not_a_number, parse_float=_finite)
        if _SURROGATE_ESCAPE.search(data):  # rare: only then the (slower) check that every string encodes
            json.dumps(parsed, ensure_ascii=False).encode("utf-8")
        return parsed
    except UnicodeEncodeError as error:
        raise ReportInputError(f"{source}: not valid JSON (a string holds a lone surrogate "
                               f"{printable(error.object[error.start:error.end])}, which is not text)") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise ReportInputError(f"{source}: not valid JSON ({str(error)[:_MESSAGE_CHARS]})") from error
    except RecursionError as error:  # "[[[[..." 100,000 deep
        raise ReportInputError(f"{source}: JSON nested too deeply to be a repro-matrix file") from error


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:40]} is too large for a number")
    return number


def read_results(run_dir: Path) -> dict[str, Any]:
    """The run's results.json, read without following symlinks, bounded, validated; ReportInputError if not."""
    return read_results_digest(run_dir)[0]


def read_results_digest(run_dir: Path) -> tuple[dict[str, Any], str | None]:
    """:func:`read_results` and the SHA-256 of the bytes read (None when no record of checks is kept)."""
    return results_of(read_results_bytes(run_dir), run_dir / "results.json")


def read_results_bytes(run_dir: Path) -> bytes:
    """The bytes of the run's results.json, read without following symlinks and bounded (not yet checked)."""
    try:
        # Hard links are allowed here (a backup made with ``cp -al`` links every file): the contents are parsed
        # and checked, never published as they are.
        return read_inside(run_dir, "results.json", limit=MAX_RESULTS_BYTES, allow_links=True)
    except UnsafePath as error:
        raise ReportInputError(f"{run_dir / 'results.json'}: not read: {error}") from error


def results_of(raw: bytes, path: Path) -> tuple[dict[str, Any], str | None]:
    """The checked contents of results.json bytes and their SHA-256 (None when no record of checks is kept)."""
    checked, digest = _checked.current(), ""
    if checked is not None:
        digest = _checked.digest_of(raw)
        if digest in checked:  # these very bytes passed every check below (a date once past stays past)
            return json.loads(raw), digest
    data = check_results(parse_json(raw, path), path)
    if checked is not None:
        checked.add(digest)
    return data, digest or None


def check_results(data: Any, path: Path | str) -> dict[str, Any]:
    """``data`` when it is a results.json this report can publish safely; ReportInputError naming the problem."""
    if not isinstance(data, dict) or not isinstance(data.get("run"), dict):
        raise ReportInputError(f"{path}: not a repro-matrix results.json (no 'run' object)")
    if data.get("version") != RESULTS_VERSION:
        raise ReportInputError(f"{path}: results version {printable(data.get('version'))}; this report reads "
                               f"version {RESULTS_VERSION} (upgrade repro-matrix to read newer runs)")
    try:
        _fast_validator()(data)
    except fastjsonschema.JsonSchemaException:
        raise ReportInputError(f"{path}: does not match harness/results.schema.json: {_explain(data)}") from None
    problems = [*_name_problems(data), *_story_problems(data)]
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ReportInputError(f"{path}: {problems[0]}{more}")
    return data


def _explain(data: Any) -> str:
    """The most relevant schema error, said by jsonschema (slow, so only for a file already known bad)."""
    error = jsonschema.exceptions.best_match(schema_validator(SCHEMA_PATH).iter_errors(data))
    if error is None:  # only the compiled validator's full-string patterns refused it (a trailing newline, say)
        return next(_name_problems(data), "a pattern does not match in full")
    where = "/".join(str(part) for part in error.absolute_path) or "(top level)"
    return f"at {printable(where, 120)}: {error.message[:_MESSAGE_CHARS]}"


def _name_problems(data: Mapping[str, Any]) -> Iterator[str]:
    """Every case id, variant, lane and run id the site would turn into a file name or URL, in full."""
    run = data["run"]
    yield from _check("run id", [run["id"]], "run.id")
    yield from _check("case id", data["cases"], "cases")
    yield from _check("case id", (run["selection"].get("cases") or []), "run.selection.cases")
    yield from _check("lane", (run["selection"].get("lanes") or []), "run.selection.lanes")
    for case, meta in data["cases"].items():
        yield from _check("variant", meta.get("variants") or {}, f"cases.{case}.variants")
    for i, cell in enumerate(data["cells"]):
        yield from _check("case id", [cell["case"]], f"cells[{i}].case")
        yield from _check("variant", [cell["variant"]], f"cells[{i}].variant")
        yield from _check("lane", [cell["lane"]], f"cells[{i}].lane")
        if cell.get("log") is not None and not _plain_log(cell["log"]):
            yield f"cells[{i}].log: {printable(cell['log'])} is not a plain path inside the run's logs/ folder"
    for i, verdict in enumerate(data["verdicts"]):
        yield from _check("case id", [verdict["case"]], f"verdicts[{i}].case")
        yield from _check("lane", [verdict["lane"]], f"verdicts[{i}].lane")
        yield from _check("variant", verdict.get("cells") or [], f"verdicts[{i}].cells")


def _story_problems(data: Mapping[str, Any]) -> Iterator[str]:
    """What would make the site tell two stories: a run dated in the future, two verdicts for one (case, lane),
    more cases than a run of this suite can have."""
    run = data["run"]
    for key in ("started", "finished"):
        problem = future_problem(run.get(key), f"run.{key}")
        if problem:
            yield problem
    if len(data["cases"]) > MAX_RUN_CASES:
        yield (f"cases: {len(data['cases']):,} cases, above the {MAX_RUN_CASES:,} one run may add to the site "
               "(each becomes a page in every later build); split the run")
    seen: set[tuple[str, str]] = set()
    for i, verdict in enumerate(data["verdicts"]):
        pair = (verdict["case"], verdict["lane"])
        if pair in seen:
            yield (f"verdicts[{i}]: a second verdict for case {printable(pair[0])} on lane {pair[1]} (one run "
                   "judges each case and lane once; the pages could not agree on which to show)")
        seen.add(pair)


def _check(kind: str, values: Any, where: str) -> Iterator[str]:
    for value in values:
        problem = _name_problem(kind, value)
        if problem:
            yield f"{where}: {problem}"


@functools.lru_cache(maxsize=4096)
def _name_problem(kind: str, value: str) -> str | None:
    # A run repeats a handful of names over all its cells (and a site reads a thousand runs).
    return name_problem(kind, value)


def _plain_log(log: str) -> bool:
    parts = log.split("/")
    return (len(parts) >= 2 and parts[0] == "logs" and log.endswith(".log") and log.isprintable()
            and all(part not in ("", ".", "..") for part in parts))
