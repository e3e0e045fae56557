"""Jinja2 setup shared by every page: autoescaping on, strict undefined, one inline script with its CSP hash."""

from __future__ import annotations

import base64
import functools
import hashlib
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import jinja2
from markupsafe import Markup

from harness._io import for_page
from harness._vocabulary import MISSING, OK_VERDICTS, SEVERITY, STYLES
from harness.report._run_view import anchor

TEMPLATES = Path(__file__).parent / "templates"
GENERATOR_VERSION = "1"


def safe_url(url: Any) -> str:
    """Only http(s) links leave the page; anything else (javascript:, data:) becomes inert."""
    text = str(url or "")
    return text if urlsplit(text).scheme in ("http", "https") else "#"


def relative_url(path: Any) -> str:
    """A stored relative path (logs/<case>/<lane>/<variant>.log) as a URL that works from file:// and a host."""
    parts = [p for p in str(path or "").replace("\\", "/").split("/") if p not in ("", ".", "..")]
    return "/".join(quote(p) for p in parts) or "#"


def short_link(url: Any) -> str:
    parts = urlsplit(str(url or ""))
    tail = parts.path.rstrip("/").rsplit("/", 3)[-3:]
    return f"{parts.netloc}/…/{'/'.join(tail)}" if len(parts.path) > 40 else f"{parts.netloc}{parts.path}"


@functools.cache
def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html",), default_for_string=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_visible_controls,
    )
    script = (TEMPLATES / "app.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode("ascii")
    env.globals.update(
        STYLES=STYLES, SEVERITY=SEVERITY, MISSING=MISSING, OK_VERDICTS=OK_VERDICTS, anchor=anchor,
        script=Markup(script), script_hash=f"sha256-{digest}",
        generator_version=GENERATOR_VERSION,
    )
    env.filters.update(safe_url=safe_url, relurl=relative_url, shortlink=short_link)
    return env


def _visible_controls(value: Any) -> Any:
    """Every string a page prints shows its control characters as escapes (``\\u202e``), as on the
    terminal: a right-to-left override in a title or message must not reorder what the reader sees."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return for_page(value)
    return value


def render(template: str, **context: Any) -> str:
    context.setdefault("generated", None)
    return environment().get_template(template).render(**context)
