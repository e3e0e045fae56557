"""Listing a package's releases from the package sources uv gets: simple indexes (JSON and HTML, over real
loopback HTTP and file://) and find-links folders, without pip."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.environments._releases import list_releases, sources

REPO = Path(__file__).resolve().parents[2]
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
FILES = [
    {"filename": "demo-1.0.0.tar.gz"},
    {"filename": "demo-1.1.0-py3-none-any.whl"},
    {"filename": "demo-1.2.0-py3-none-any.whl", "yanked": "broken upload"},
    {"filename": "demo-2.0.0-py3-none-any.whl", "requires-python": ">=3.99"},
    {"filename": "demo-2.1.0rc1-py3-none-any.whl"},
    {"filename": "demo_plugin-9.0.0-py3-none-any.whl"},  # another project's file in a shared listing
]


class _Index(http.server.BaseHTTPRequestHandler):
    json_api = True

    def do_GET(self) -> None:
        if self.path.rstrip("/") != "/simple/demo":
            self.send_error(404)
            return
        if self.json_api and JSON_TYPE in self.headers.get("Accept", ""):
            body, kind = json.dumps({"meta": {"api-version": "1.0"}, "name": "demo", "files": FILES}).encode(), JSON_TYPE
        else:
            body, kind = _html(FILES).encode(), "text/html"
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args) -> None:
        pass


def _html(files: list[dict]) -> str:
    rows = []
    for entry in files:
        attrs = "".join(f' data-{key}="{entry[key]}"' for key in ("yanked", "requires-python") if key in entry)
        rows.append(f'<a href="../../files/{entry["filename"]}#sha256=00"{attrs}>{entry["filename"]}</a>')
    return "<!DOCTYPE html><html><body>" + "\n".join(rows).replace("requires-python=\">", "requires-python=\"&gt;") + "</body></html>"


@pytest.fixture(params=[True, False], ids=["json", "html"])
def index_url(request) -> Iterator[str]:
    handler = type("Handler", (_Index,), {"json_api": request.param})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/simple"
    server.shutdown()
    server.server_close()  # its listening socket: left open, a ResourceWarning


def test_index_lists_installable_releases_oldest_first(index_url):
    listing = list_releases("Demo", {"UV_INDEX_URL": index_url}, "3.11")
    assert listing.versions == ["1.0.0", "1.1.0", "2.1.0rc1"]  # 1.2.0 yanked, 2.0.0 needs Python 3.99
    assert listing.sources == [index_url] and listing.errors == []


def test_file_index_and_find_links_folder_are_merged(tmp_path):
    (tmp_path / "simple" / "demo").mkdir(parents=True)
    (tmp_path / "simple" / "demo" / "index.html").write_text(_html(FILES[:2]))
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    (wheels / "demo-3.0.0-cp311-cp311-manylinux_2_28_x86_64.whl").write_bytes(b"")
    (wheels / "other-1.0-py3-none-any.whl").write_bytes(b"")
    env = {"UV_INDEX_URL": (tmp_path / "simple").as_uri(), "UV_FIND_LINKS": str(wheels)}
    assert list_releases("demo", env, "3.11").versions == ["1.0.0", "1.1.0", "3.0.0"]


def test_an_unreachable_source_is_reported_and_the_others_still_count(tmp_path, index_url):
    env = {"UV_INDEX_URL": index_url, "UV_EXTRA_INDEX_URL": "http://127.0.0.1:9/simple",
           "UV_FIND_LINKS": str(tmp_path / "missing")}
    listing = list_releases("demo", env, "3.11")
    assert listing.versions == ["1.0.0", "1.1.0", "2.1.0rc1"]
    assert len(listing.errors) == 2
    assert any("127.0.0.1:9" in e for e in listing.errors) and any("missing" in e for e in listing.errors)


def test_sources_follow_uv_variables():
    assert sources({}) == (["https://pypi.org/simple"], [])
    env = {"UV_DEFAULT_INDEX": "https://a/simple", "UV_INDEX": "https://b/simple https://c/simple",
           "UV_FIND_LINKS": "/w1,/w2"}
    assert sources(env) == (["https://a/simple", "https://b/simple", "https://c/simple"], ["/w1", "/w2"])
    assert sources({"UV_NO_INDEX": "1", "UV_FIND_LINKS": "/w"}) == ([], ["/w"])


@pytest.mark.slow
def test_bisect_without_pip_lists_releases_from_the_index(tmp_path, index_url):
    """`nox -s bisect` runs in a uv-made venv with no pip: the listing must not need it. The real CLI in such a
    venv, pointed at a loopback index whose releases the selected range does not cover."""
    venv = tmp_path / "venv"
    uv = [sys.executable, "-m", "uv"]
    subprocess.run([*uv, "venv", "-q", str(venv)], check=True)
    deps = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    # cuda-sim is this repository's own distribution (not on an index): from its folder, as nox sessions do.
    deps = [str(REPO / "cuda-sim") if dep.startswith("cuda-sim") else dep for dep in deps]
    subprocess.run([*uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), *deps], check=True)
    proc = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "import importlib.util, sys; assert importlib.util.find_spec('pip') is None, 'pip found';"
         "from harness._cli import main; sys.exit(main(sys.argv[1:]))",
         "bisect", "--cases-dir", str(REPO / "tests" / "fixtures" / "bisect"), "--case", "six-regression",
         "--package", "demo", "--from", "5.0", "--lane", "cpu", "--output", str(tmp_path / "out")],
        cwd=REPO, capture_output=True, text=True, timeout=120,
        env={"PATH": "/usr/bin:/bin", "UV_INDEX_URL": index_url, "UV_FIND_LINKS": str(tmp_path), "COLUMNS": "200"},
    )
    output = proc.stdout + proc.stderr
    assert "3 release(s) of demo from" in output, output
    assert "no release between 5.0 and the last" in output and proc.returncode == 2, output
