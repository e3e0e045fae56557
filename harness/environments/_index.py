"""Package-index settings for uv, taken from the user's pip configuration.

uv reads none of pip's configuration. On hosts where the pinned CPU torch wheel comes from pip's
``find-links`` folder, uv would otherwise resolve the multi-GB CUDA build from PyPI. Standard library
only: the noxfile imports this before any dependency is installed.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

# pip setting -> uv variable. Index URLs are passed through only when the user set them for pip
# explicitly in the environment; find-links is also read from pip's config files.
_ENV_MAP = {
    "PIP_FIND_LINKS": "UV_FIND_LINKS",
    "PIP_INDEX_URL": "UV_INDEX_URL",
    "PIP_EXTRA_INDEX_URL": "UV_EXTRA_INDEX_URL",
    "PIP_CONSTRAINT": "UV_CONSTRAINT",
}


@functools.cache  # `pip config get` takes 0.3-1.4 s; pip's configuration does not change under a run
def _pip_config_value(key: str) -> str | None:
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "config", "get", key],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = proc.stdout.strip()
    return value if proc.returncode == 0 and value else None


def uv_index_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Return the ``UV_*`` variables that make uv see the same packages pip sees.

    Variables the user already set for uv win; ``PIP_*`` variables are translated; when neither
    gives find-links, pip's configured ``global.find-links`` is used.
    """
    env = os.environ if environ is None else environ
    result: dict[str, str] = {}
    for pip_name, uv_name in _ENV_MAP.items():
        if uv_name in env:
            result[uv_name] = env[uv_name]
        elif env.get(pip_name):
            result[uv_name] = env[pip_name]
    if "UV_FIND_LINKS" not in result:
        configured = _pip_config_value("global.find-links")
        if configured:
            result["UV_FIND_LINKS"] = configured
    # pip separates several find-links with whitespace; uv wants commas.
    if "UV_FIND_LINKS" in result:
        result["UV_FIND_LINKS"] = ",".join(result["UV_FIND_LINKS"].split())
    return result


_MISSING = (re.compile(r"(?:no version of|Because) ([A-Za-z0-9_.\-]+(?:\[[^\]]*\])?(?:[=<>!~]=?[^\s,]+)?)"
                       r"(?: was not found| could not be found|,|\s)"),)


def offline_hint(error: str, links: Path | None) -> str:
    """An offline install failure, led by the requirement the wheel folder does not hold."""
    found = next((m.group(1) for pattern in _MISSING for m in pattern.finditer(error)
                  if m.group(1) not in ("there", "the", "all", "only")), None)
    where = str(links) if links is not None else "the --find-links folder"
    lead = (f"offline: {where} holds no wheel for {found}" if found else f"offline: {where} lacks a wheel this "
            "environment needs")
    return (f"{lead}; make the folder on a connected machine with 'nox -s wheelhouse -- --case ID ... --output DIR' "
            f"and bring it here.\n{error}")
