"""``python -m harness new ID [--from REPORT]``: a case skeleton from a bug report.

Pipeline: read the report file (:func:`read_report_file`) -> parse it (``_bugreport``) -> draft the case
(``_draft``: signature, exception, requirements, expectations, repro imports) -> render the files
(``_skeleton``) -> write ``cases/ID/case.yaml`` and ``cases/ID/repro.py``. Whatever a report cannot say (the
fixed release, the upstream links, the summary, the call that reproduces the bug) is a ``FILL-IN`` placeholder
that ``validate`` reports with its line.
"""

from __future__ import annotations

import codecs
import json
import os
import re
import sys
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from harness._exceptions import UsageError
from harness._io import for_terminal
from harness._io import yaml_line as line_of
from harness.authoring._bugreport import BugReport, parse_report
from harness.authoring._draft import Draft, IndexVersions, ProjectUrls, Released, draft_case
from harness.cases._placeholders import MARK, find_placeholders

MAX_REPORT_BYTES = 20 * 1024 * 1024
_SCHEMA = json.loads((Path(__file__).parent.parent / "case.schema.json").read_text())["properties"]["id"]

if TYPE_CHECKING:
    from harness.environments._releases import ReleaseListing


def read_report_file(path: Path) -> str:
    """The report's text: UTF-8 (BOM or not) or UTF-16/32 with a BOM; anything else is a clear error."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"--from {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--from {path}: is a folder; give the report's text file") from None
    except OSError as error:
        raise UsageError(f"--from {path}: cannot read it ({error.strerror or error})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise UsageError(f"--from {path}: larger than {MAX_REPORT_BYTES // 2**20} MiB; keep the traceback and the "
                         "environment listing, cut the rest of the log")
    return decode_report(raw, path)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_report(raw: bytes, path: Path) -> str:
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        raise UsageError(f"--from {path}: not {encoding} text (byte 0x{raw[error.start]:02x} at offset {error.start}): "
                         f"{_encoding_hint(raw)}") from None
    if "\x00" in text:
        raise UsageError(f"--from {path}: contains NUL characters: {_encoding_hint(raw)}")
    return text


def _encoding_hint(raw: bytes) -> str:
    if raw.count(0) > len(raw) // 4:
        return "it looks like UTF-16 without a byte-order mark: re-save it as UTF-8"
    if raw.count(0):
        return "it is not a text file (paste the report as text)"
    return "re-save it as UTF-8 (e.g. iconv -f cp1252 -t utf-8 REPORT > report.txt)"


def default_cases_dir() -> Path:
    """``cases/`` of the checkout the harness runs from, else of the current folder (an installed harness)."""
    checkout = Path(__file__).resolve().parents[2]
    return (checkout if (checkout / "pyproject.toml").is_file() else Path.cwd()) / "cases"


def validate_id(case_id: str) -> str:
    if re.fullmatch(_SCHEMA["pattern"][1:-1], case_id) and len(case_id) <= _SCHEMA["maxLength"]:
        return case_id
    suggestion = "-".join(re.findall(r"[a-z0-9]+", case_id.lower()))[: _SCHEMA["maxLength"]].strip("-")
    hint = f" (e.g. {suggestion!r})" if suggestion and suggestion != case_id else ""
    raise UsageError(f"invalid case id {for_terminal(case_id, one_line=True)!r}: use kebab-case, lower-case letters "
                     f"and digits joined by '-', at most {_SCHEMA['maxLength']} characters{hint}")


def dotted_id(case_id: str) -> tuple[str, str | None]:
    """The id to use and a note: an id taken from a file or version name with dots (``ace-step-1.5-308``) becomes its
    kebab form (``ace-step-1-5-308``); any other invalid id is refused by :func:`validate_id`."""
    if "." in case_id and re.fullmatch(r"[a-z0-9][a-z0-9.-]*", case_id):
        kebab = re.sub(r"[.-]+", "-", case_id).strip("-")
        if kebab and re.fullmatch(_SCHEMA["pattern"][1:-1], kebab) and len(kebab) <= _SCHEMA["maxLength"]:
            return kebab, f"case id {case_id!r} has a dot, which ids may not: using {kebab!r}"
    return validate_id(case_id), None


@dataclass(frozen=True)
class Written:
    folder: Path
    files: tuple[Path, ...]
    notes: tuple[str, ...]
    todo: tuple[tuple[Path, int, str], ...]  # (file, line, what to write)


def create_case(case_id: str, cases_dir: Path, report_path: Path | None, *, force: bool = False,
                released: Released | None = None, project_urls: ProjectUrls | None = None,
                versions: IndexVersions | None = None) -> Written:
    """Validate the id, read and parse the report, refuse to overwrite, write the two files atomically."""
    case_id, renamed = dotted_id(case_id)
    if cases_dir.exists() and not cases_dir.is_dir():
        raise UsageError(f"--cases-dir {cases_dir}: not a folder")
    folder = cases_dir / case_id
    files = (folder / "case.yaml", folder / "repro.py")
    _check_target(folder, files, force=force)
    report = _parse(report_path) if report_path is not None else None
    if report is not None and report.traceback.exception.startswith(MARK):
        print(f"new: {report_path}: the report prints no exception line (missing: {', '.join(report.missing)}); "
              "drafted all the same: write the exception's class and the signature in case.yaml", file=sys.stderr)
    draft = draft_case(case_id, report, source=report_path.name if report_path else "", released=released,
                       project_urls=project_urls, versions=versions)
    from harness.report._io import write_text_atomic  # here: the report package is not needed before

    created = not folder.exists()
    try:
        folder.mkdir(parents=True, exist_ok=True)  # a --cases-dir that does not exist yet is made, with its parents
        for path, text in zip(files, (draft.case_yaml, draft.repro_py), strict=True):
            write_text_atomic(path, text)
    except OSError as error:
        if created:
            for path in files:
                path.unlink(missing_ok=True)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise UsageError(f"cannot write {folder}: {error.strerror or error}") from None
    return Written(folder, files, (*([renamed] if renamed else []), *draft.notes), _todo(files[0], draft))


def _check_target(folder: Path, files: tuple[Path, ...], *, force: bool) -> None:
    """Refuse a case folder that exists (unless ``force``), is a link, is not a folder or holds folders in the
    files' place."""
    if folder.is_symlink():  # --force or not: writing through the link would change files outside cases/
        target = for_terminal(os.readlink(folder), one_line=True)
        raise UsageError(f"{folder} is a symbolic link (to {target}): the harness does not write through it; "
                         "remove the link, or pick another id")
    if folder.exists() and not force:
        raise UsageError(f"{folder} already exists: pick another id (ids are never reused), or pass --force to "
                         "overwrite its case.yaml and repro.py")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} exists and is not a folder")
    odd = [str(path) for path in files if path.exists() and not path.is_file()]
    if odd:
        raise UsageError(f"{', '.join(odd)}: not a file; --force overwrites files only")


def _parse(report_path: Path) -> BugReport:
    text = read_report_file(report_path)
    try:
        return parse_report(text)
    except UsageError as error:
        raise UsageError(f"--from {report_path}: {error}") from None


def _todo(case_file: Path, draft: Draft) -> tuple[tuple[Path, int, str], ...]:
    todo = [(case_file, line_of(draft.case_yaml, list(p.trail)) or 0, f"{p.where}: {p.fix()}")
            for p in find_placeholders(yaml.safe_load(draft.case_yaml))]
    repro = case_file.with_name("repro.py")
    number = next(n for n, line in enumerate(draft.repro_py.splitlines(), 1) if "raise NotImplementedError" in line)
    todo.append((repro, number, "the call that reproduces the bug (replace the NotImplementedError)"))
    return tuple(todo)



def _listing(name: str, deadline_s: float) -> ReleaseListing:
    """One listing of a project's releases from the configured package index (uv's sources, as cells install)."""
    from harness import uv_index_environment
    from harness.environments._releases import list_releases

    environ = {**os.environ, **uv_index_environment()}
    python = f"{sys.version_info.major}.{sys.version_info.minor}"
    return list_releases(name, environ, python, timeout=deadline_s / 2, deadline=deadline_s)


def index_released(deadline_s: float = 10.0) -> Released:
    """Ask the configured package index whether a project has releases: a 404 from every source is "no"; no
    answer in ``deadline_s`` (an offline host) is "not known"."""
    def released(name: str) -> bool | None:
        listing = _listing(name, deadline_s)
        if listing.versions:
            return True
        if listing.errors and all("404" in error for error in listing.errors):
            return False
        return None
    return released


def index_versions(deadline_s: float = 10.0) -> IndexVersions:
    """The releases the configured package index has of a project (one listing, bounded by ``deadline_s``); None
    when a source did not answer (the draft then says the release was not checked)."""
    def versions(name: str) -> tuple[str, ...] | None:
        listing = _listing(name, deadline_s)
        if listing.errors and not all("404" in error for error in listing.errors):
            return None
        return tuple(listing.versions)
    return versions


def index_project_urls(deadline_s: float = 10.0) -> ProjectUrls:
    """The home page and project URLs the configured index's JSON metadata (``<index>/../pypi/NAME/json``, as PyPI
    and its mirrors serve it) gives for a project; None when it does not answer in ``deadline_s``."""
    from harness import uv_index_environment
    from harness.environments._releases import sources

    def project_urls(name: str) -> tuple[str, ...] | None:
        indexes, _ = sources({**os.environ, **uv_index_environment()})
        if not indexes or not indexes[0].rstrip("/").endswith("/simple"):
            return None
        url = f"{indexes[0].rstrip('/').removesuffix('/simple')}/pypi/{name}/json"
        try:
            with urllib.request.urlopen(url, timeout=deadline_s) as answer:
                info = json.loads(answer.read(4 * 2**20))["info"]
        except urllib.error.HTTPError as error:
            return () if error.code == 404 else None  # no such project: it links nothing (and the search goes on)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        found = [info.get("home_page") or "", *(info.get("project_urls") or {}).values()]
        return tuple(u for u in found if isinstance(u, str) and u.startswith(("http://", "https://")))
    return project_urls
