from __future__ import annotations

import base64
import hashlib
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from report_helpers import HOSTILE

from harness._vocabulary import STYLES
from harness.report import write_run_reports


class Collect(HTMLParser):
    """Tags with attributes, and the text of <script> elements."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        self._in_script = tag == "script"
        if self._in_script:
            self.scripts.append("")

    def handle_endtag(self, tag):
        self._in_script = False if tag == "script" else self._in_script

    def handle_data(self, data):
        if self._in_script:
            self.scripts[-1] += data


def _page(single_run) -> tuple[Path, dict, str, Collect]:
    run_dir, results = single_run
    write_run_reports(run_dir, results)
    html = (run_dir / "index.html").read_text(encoding="utf-8")
    parsed = Collect()
    parsed.feed(html)
    return run_dir, results, html, parsed


def test_captured_text_is_escaped(single_run):
    _, _, html, parsed = _page(single_run)
    assert HOSTILE not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(3)&gt;" in html  # from the log tail
    assert len(parsed.scripts) == 1 and "alert" not in parsed.scripts[0]
    assert not [attrs for tag, attrs in parsed.tags if tag == "img"]
    assert "\x1b" not in html and "\x00" not in html


def test_only_our_script_may_run(single_run):
    _, _, _, parsed = _page(single_run)
    csp = next(attrs["content"] for tag, attrs in parsed.tags if attrs.get("http-equiv") == "Content-Security-Policy")
    digest = base64.b64encode(hashlib.sha256(parsed.scripts[0].encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert "default-src 'none'" in csp


def test_self_contained_no_external_fetches(single_run):
    _, _, _, parsed = _page(single_run)
    for tag, attrs in parsed.tags:
        assert tag not in ("link", "img", "iframe", "object", "embed")
        assert "src" not in attrs or tag != "script"
    hrefs = [attrs["href"] for tag, attrs in parsed.tags if tag == "a" and attrs.get("href")]
    for href in hrefs:  # navigation only: in-page anchors, relative logs, or http(s) upstream links
        assert href.startswith(("#", "logs/", "https://", "http://")), href
    assert "#" in hrefs  # the case's javascript: link was neutralised


def test_matrix_cells_colour_and_open_their_details(single_run):
    _, results, html, parsed = _page(single_run)
    cells = [attrs for tag, attrs in parsed.tags if tag == "td" and "cell" in (attrs.get("class") or "")]
    assert len(cells) == len(results["verdicts"])
    for verdict in results["verdicts"]:
        attrs = next(a for a in cells if a.get("data-case") == verdict["case"] and a.get("data-lane") == verdict["lane"])
        assert f"v-{verdict['verdict']}" in attrs["class"].split()
        assert attrs["data-verdict"] == verdict["verdict"]
    ids = {attrs.get("id") for tag, attrs in parsed.tags if tag == "details"}
    for tag, attrs in parsed.tags:
        if tag == "a" and attrs.get("data-open"):
            assert attrs["data-open"] in ids and attrs["href"] == "#" + attrs["data-open"]
    for verdict, style in STYLES.items():
        assert f".v-{verdict} {{ background: {style.background}; color: {style.foreground}; }}" in html
        assert verdict in html  # the legend names each verdict


def test_variant_table_shows_what_a_maintainer_needs(single_run):
    run_dir, _, html, parsed = _page(single_run)
    assert "expected" in html and "what happened" in html
    assert "not matched" in html and "matched" in html
    assert "lycoris-lora==2.1.0.dev7" in html  # installed pin
    assert "torch==2.13.0+cpu" in html
    assert "harness/sim" in html  # shim applied
    assert "12.0 s" in html  # a duration
    assert "dev-laptop" in html and "11th Gen Intel" in html and "no GPU" in html
    assert "2.13.0+cpu · CPU build" in html
    assert "AdamW(fused=False): non-fused AdamW reads &#39;step&#39; on the CPU by design" in html  # variant description
    assert "Case files that could not be loaded (1)" in html and "did you mean &#39;cuda-sim&#39;?" in html
    logs = [attrs["href"] for tag, attrs in parsed.tags if tag == "a" and "log" in (attrs.get("class") or "")]
    assert logs
    for href in logs:
        assert (run_dir / unquote(href)).is_file()


def test_docker_cell_shows_image_and_hosts(shard_dirs):
    gpu = shard_dirs[2]
    from report_helpers import load

    results = load(gpu)
    write_run_reports(gpu, results)
    html = (gpu / "index.html").read_text(encoding="utf-8")
    assert "repro-matrix/torch:2.13.0 sha256:5c3e8f1b9d2a" in html
    assert "NVIDIA GeForce RTX 4090" in html and "driver 550.54.14" in html
    assert "CUDA build 12.8" in html


def test_attention_and_skips_tell_the_terminal_story(single_run):
    from io import StringIO

    from rich.console import Console

    from harness.report import terminal_summary

    _, results, html, _ = _page(single_run)
    console = Console(file=StringIO(), width=400, color_system=None)
    console.print(terminal_summary(results))
    text = console.file.getvalue()
    for verdict in results["verdicts"]:
        assert verdict["verdict"] in text
    items = re.findall(r'<li><span class="badge v-([a-z-]+)">[^<]*</span> <a href="#[^"]+" data-open="[^"]+">'
                       r"([^<]+)</a>: ([^\n]*)</li>", html)
    assert len(items) == 4
    import html as html_lib

    for verdict, where, reason in items:
        line = f"{verdict} {html_lib.unescape(where)}: {html_lib.unescape(reason)}"
        assert line in text, line
    assert "cuda (4 cases: var-resume, lycoris-extract-diff, onetrainer-validation-device, " \
           "deepspeed-zero3-offload-clip): no NVIDIA GPU on this host (nvidia-smi not found)" in text
    assert "no NVIDIA GPU on this host (nvidia-smi not found)" in html
    assert "Case files that could not be loaded (1):" in text and "did you mean 'cuda-sim'?" in text
