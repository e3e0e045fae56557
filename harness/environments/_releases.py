"""The releases of one package, read from the package sources the harness hands uv.

``bisect`` needs the list of releases in a range. It reads them the way an installer does, from the
simple repository API (PEP 503 pages, or PEP 691 JSON when the index offers it) of the index and extra
indexes, and from find-links folders or pages, as given by the ``UV_*`` variables the harness sets for
its environments (:func:`harness.uv_index_environment`). Standard library only: it works wherever the
harness runs, with or without pip (nox's uv-made environments have none).
"""

from __future__ import annotations

import json
import os
import queue
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

DEFAULT_INDEX = "https://pypi.org/simple"
_JSON = "application/vnd.pypi.simple.v1+json"
_TIMEOUT_S = 30.0  # each network read
# Whatever an index does (drips a byte every few seconds, sends a page without end), one source costs at most
# this long and this many bytes; it is then skipped with a message and the other sources still count.
SOURCE_DEADLINE_S = 120.0
MAX_PAGE_BYTES = 64 * 2**20  # PyPI's largest simple pages (torch, tensorflow) are a few MB
_MAX_DEPTH_NOTE = "nested too deeply to be a simple-index page"


@dataclass(frozen=True)
class DistFile:
    """One distribution file as a simple index lists it."""

    filename: str
    yanked: bool = False
    requires_python: str | None = None


@dataclass
class ReleaseListing:
    versions: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)  # the sources that answered
    errors: list[str] = field(default_factory=list)  # "source: why" for those that did not


def sources(environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(indexes, find-links) from uv's variables, as uv would read them."""
    if environ.get("UV_NO_INDEX", "").strip().lower() in ("1", "true", "yes"):
        indexes: list[str] = []
    else:
        default = environ.get("UV_DEFAULT_INDEX") or environ.get("UV_INDEX_URL") or DEFAULT_INDEX
        extra = f"{environ.get('UV_INDEX', '')} {environ.get('UV_EXTRA_INDEX_URL', '')}".split()
        indexes = [default, *extra]
    links = [part.strip() for part in environ.get("UV_FIND_LINKS", "").replace(" ", ",").split(",") if part.strip()]
    return list(dict.fromkeys(indexes)), list(dict.fromkeys(links))


def list_releases(package: str, environ: Mapping[str, str], python: str,
                  timeout: float = _TIMEOUT_S, deadline: float = SOURCE_DEADLINE_S) -> ReleaseListing:
    """Every release of ``package`` with a file installable on ``python`` (e.g. ``"3.11"``), oldest first.

    Yanked files do not count. A release all of whose files exclude ``python`` through requires-python is left
    out. Sources that cannot be read (or take more than ``deadline`` seconds) are recorded in ``errors`` and the
    others still count.
    """
    indexes, links = sources(environ)
    listing = ReleaseListing()
    found: set[Version] = set()
    name = canonicalize_name(package)
    for source in [*indexes, *links]:
        fetch = _index_files if source in indexes else _link_files
        try:
            files = _within(deadline, fetch, source, name, timeout)
        except (OSError, ValueError, urllib.error.URLError) as error:
            listing.errors.append(f"{source}: {_why(error)}")
            continue
        listing.sources.append(source)
        found |= _versions(files, name, Version(python))
    listing.versions = [str(v) for v in sorted(found)]
    return listing


def _within(deadline: float, fetch: Any, source: str, name: str, timeout: float) -> list[DistFile]:
    """``fetch(source, name, timeout)`` given at most ``deadline`` seconds in all: a per-read timeout does not
    bound a server that answers one byte at a time. A fetch past its deadline is left to finish in a daemon
    thread (its socket times out or its page bound stops it) and never blocks the exit."""
    answer: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)

    def work() -> None:
        try:
            answer.put((True, fetch(source, name, timeout)))
        except BaseException as error:  # handed to the caller, which re-raises it
            answer.put((False, error))
    threading.Thread(target=work, name=f"list-releases {source}", daemon=True).start()
    try:
        ok, value = answer.get(timeout=deadline)
    except queue.Empty:
        raise TimeoutError(f"no complete answer in {deadline:.0f} s") from None
    if not ok:
        raise value
    files: list[DistFile] = value
    return files


def _why(error: BaseException) -> str:
    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error) or type(error).__name__


def _versions(files: Iterable[DistFile], name: str, python: Version) -> set[Version]:
    versions: set[Version] = set()
    for file in files:
        parsed = _parse_filename(file.filename)
        if parsed is None or parsed[0] != name or file.yanked:
            continue
        if file.requires_python and not _allows(file.requires_python, python):
            continue
        versions.add(parsed[1])
    return versions


def _parse_filename(filename: str) -> tuple[str, Version] | None:
    try:
        if filename.endswith(".whl"):
            parsed_name, version, _, _ = parse_wheel_filename(filename)
            return parsed_name, version
        if filename.endswith((".tar.gz", ".zip")):
            parsed_name, version = parse_sdist_filename(filename)
            return parsed_name, version
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return None


def _allows(requires_python: str, python: Version) -> bool:
    try:
        return SpecifierSet(requires_python).contains(python, prereleases=True)
    except InvalidSpecifier:
        return True  # an index's malformed metadata must not hide a release; the install will tell


def _index_files(index: str, name: str, timeout: float = _TIMEOUT_S) -> list[DistFile]:
    url = f"{index.rstrip('/')}/{name}/"
    body, content_type, _ = _read(url, accept=f"{_JSON}, text/html;q=0.1", timeout=timeout)
    if content_type.startswith(_JSON):
        return _json_files(body)
    return _html_files(body)


def _link_files(link: str, name: str = "", timeout: float = _TIMEOUT_S) -> list[DistFile]:
    parsed = urllib.parse.urlparse(link)
    if parsed.scheme in ("", "file"):
        folder = Path(urllib.request.url2pathname(parsed.path) if parsed.scheme else link)
        if folder.is_dir():
            return [DistFile(entry.name) for entry in folder.iterdir()]
        if not folder.exists():
            raise FileNotFoundError(f"no such folder {folder}")
    body, _, _ = _read(link if parsed.scheme else folder.as_uri(), accept="text/html", timeout=timeout)
    return _html_files(body)


def _read(url: str, *, accept: str, timeout: float = _TIMEOUT_S) -> tuple[bytes, str, str]:
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        path = Path(urllib.request.url2pathname(parsed.path))
        page = path / "index.html" if path.is_dir() else path
        with page.open("rb") as handle:
            return _bounded(handle.read, page.as_uri()), "text/html", page.as_uri()
    if parsed.scheme not in ("http", "https"):
        raise ValueError(f"unsupported URL scheme {parsed.scheme!r}")
    request = urllib.request.Request(url, headers={"Accept": accept, "User-Agent": "repro-matrix"})
    try:
        opened = urllib.request.urlopen(request, timeout=timeout)
    except urllib.error.HTTPError as error:
        error.close()  # its open response would otherwise be collected unclosed (a ResourceWarning)
        raise
    with opened as response:
        length = response.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > MAX_PAGE_BYTES:
            raise ValueError(f"page of {int(length) / 2**20:.0f} MB, above the {MAX_PAGE_BYTES // 2**20} MB bound")
        return _bounded(response.read1, url), response.headers.get("Content-Type", ""), response.geturl()


def _bounded(read: Any, url: str) -> bytes:
    """Read until the end, refusing more than MAX_PAGE_BYTES (checked as it arrives, not after)."""
    chunks, total = [], 0
    while chunk := read(1 << 16):
        total += len(chunk)
        if total > MAX_PAGE_BYTES:
            raise ValueError(f"{url}: page larger than the {MAX_PAGE_BYTES // 2**20} MB bound")
        chunks.append(chunk)
    return b"".join(chunks)


def _json_files(body: bytes) -> list[DistFile]:
    """The files of a PEP 691 page; ValueError for anything else (a list, deep nesting, files not a list).
    A field of the wrong type in one entry is ignored: the file still counts, as an installer reads it."""
    try:
        data = json.loads(body)
    except RecursionError:
        raise ValueError(_MAX_DEPTH_NOTE) from None
    if not isinstance(data, dict) or not isinstance(data.get("files", []), list):
        raise ValueError("not a PEP 691 simple-index page (a JSON object with a 'files' list)")
    return [DistFile(entry["filename"], bool(entry.get("yanked")), _text_or_none(entry.get("requires-python")))
            for entry in data.get("files", []) if isinstance(entry, dict) and isinstance(entry.get("filename"), str)]


def _text_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.files: list[DistFile] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag != "a":
            return
        values = dict(attrs)
        href = values.get("href") or ""
        filename = urllib.parse.unquote(urllib.parse.urlparse(href).path.rsplit("/", 1)[-1])
        self.files.append(DistFile(filename, "data-yanked" in values, values.get("data-requires-python")))


def _html_files(body: bytes) -> list[DistFile]:
    parser = _Anchors()
    parser.feed(body.decode("utf-8", errors="replace"))
    return parser.files


def describe_failure(package: str, listing: ReleaseListing) -> str:
    tried = "; ".join(listing.errors) if listing.errors else "none of them lists it"
    return (f"could not list the releases of {package!r} from the package sources ({tried}); "
            f"pass --versions A,B,C instead")


def index_environment() -> dict[str, str]:
    """The variables uv sees in the harness's environments: this process's, plus pip's find-links."""
    from harness.environments._index import uv_index_environment

    return {**os.environ, **uv_index_environment()}
