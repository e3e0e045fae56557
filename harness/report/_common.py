"""What every report shares: the story told about a run (the words and colours are harness/_vocabulary.py).

The terminal summary and the HTML both take the "needs attention" and "skipped" lists from here, so they
cannot tell two different stories.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from harness._vocabulary import (
    CASE_ID,
    LANES,
    MAX_NAME,
    OK_VERDICTS,
    RUN_ID,
    SEVERITY,
    VARIANT,
)
from harness.cases._library import group_by_library


def name_problem(kind: str, value: Any) -> str | None:
    """Why ``value`` cannot be used as a ``kind`` ("case id", "variant", "lane", "run id"); None when it can."""
    pattern = {"case id": CASE_ID, "variant": VARIANT, "run id": RUN_ID}.get(kind)
    if kind == "lane":
        return None if value in LANES else f"lane {printable(value)} is not one of {', '.join(LANES)}"
    if pattern is None:
        raise ValueError(f"unknown kind of name {kind!r}")
    if not isinstance(value, str) or not pattern.fullmatch(value):
        return f"{kind} {printable(value)} does not match {pattern.pattern}"
    if kind != "run id" and len(value) > MAX_NAME:
        return f"{kind} {printable(value)} is longer than {MAX_NAME} characters"
    return None


def severity(verdict: str) -> int:
    return SEVERITY.index(verdict) if verdict in SEVERITY else len(SEVERITY)


def worst(verdicts: Iterable[str]) -> str:
    return min(verdicts, key=severity, default="skipped")


def lanes_of(results: Mapping[str, Any]) -> list[str]:
    """The lanes a run selected, in canonical order, plus any lane that only shows up in verdicts."""
    selected = list(results.get("run", {}).get("selection", {}).get("lanes") or [])
    seen = selected + [v["lane"] for v in results.get("verdicts", [])]
    return sorted(dict.fromkeys(seen), key=lambda lane: (LANES.index(lane) if lane in LANES else 99, lane))


def cases_of(results: Mapping[str, Any]) -> list[str]:
    """Cases in the order the run lists them (results['cases'] first, then any seen only in verdicts)."""
    seen = list(results.get("cases", {})) + [v["case"] for v in results.get("verdicts", [])]
    return list(dict.fromkeys(seen))


def library_groups(results: Mapping[str, Any]) -> list[tuple[str, list[str]]]:
    """The run's cases grouped by library (harness/cases/_library.py), libraries and cases in name order."""
    meta = results.get("cases", {})
    described = ((case, (meta.get(case) or {}).get("upstream"), (meta.get(case) or {}).get("tags"))
                 for case in cases_of(results))
    return group_by_library(described)


def verdict_table(results: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {(v["case"], v["lane"]): v for v in results.get("verdicts", [])}


@dataclass(frozen=True, slots=True)
class Attention:
    case: str
    lane: str
    verdict: str
    reason: str


@dataclass(frozen=True, slots=True)
class SkipGroup:
    lane: str
    cases: tuple[str, ...]
    reason: str


def attention(results: Mapping[str, Any]) -> list[Attention]:
    """Every verdict other than confirmed/skipped, worst first: what a maintainer must read today."""
    items = [Attention(v["case"], v["lane"], v["verdict"], clean_text(v.get("reason", "")))
             for v in results.get("verdicts", []) if v["verdict"] not in OK_VERDICTS]
    order = {case: i for i, case in enumerate(cases_of(results))}
    lanes = lanes_of(results)
    return sorted(items, key=lambda a: (severity(a.verdict), order.get(a.case, 0), lanes.index(a.lane)))


def skip_groups(results: Mapping[str, Any]) -> list[SkipGroup]:
    """Skipped verdicts grouped by lane and reason, so "no GPU on this host" is said once, not per case."""
    groups: dict[tuple[str, str], list[str]] = {}
    for v in results.get("verdicts", []):
        if v["verdict"] == "skipped":
            groups.setdefault((v["lane"], clean_text(v.get("reason", ""))), []).append(v["case"])
    lanes = lanes_of(results)
    return [SkipGroup(lane, tuple(cases), reason)
            for (lane, reason), cases in sorted(groups.items(), key=lambda kv: (lanes.index(kv[0][0]), kv[0][1]))]


def counts(results: Mapping[str, Any]) -> dict[str, int]:
    tally = dict.fromkeys(SEVERITY, 0)
    for v in results.get("verdicts", []):
        tally[v["verdict"]] = tally.get(v["verdict"], 0) + 1
    return {verdict: n for verdict, n in tally.items() if n}


# A clock a little ahead is no reason to refuse a run; a date days ahead is (it would stay "the newest" forever).
FUTURE_SLACK = timedelta(days=1)


def future_problem(value: Any, what: str, now: datetime | None = None) -> str | None:
    """Why ``value`` (an ISO time) cannot be trusted as a time that has happened; None when it can."""
    when = parse_time(value) if isinstance(value, str) else None
    now = now or datetime.now(UTC)
    if when is not None and when > now + FUTURE_SLACK:
        return (f"{what} {printable(value, 40)} is in the future (now {now.isoformat(timespec='seconds')}): "
                "a run dated ahead would stay the newest verdict in every later build; fix the clock of the "
                "host that wrote it")
    return None


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def duration_text(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest:02d} s" if minutes < 60 else f"{minutes // 60} h {minutes % 60:02d} min"


def age_text(then: datetime | None, now: datetime) -> str:
    if then is None:
        return "never"
    seconds = max(0.0, (now - then).total_seconds())
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 2 * 86400:
        return f"{int(seconds // 3600)} h ago"
    return f"{int(seconds // 86400)} days ago"


_CUDA_SUFFIX = re.compile(r"\+cu(\d+)(\d)$")


def cuda_of_torch(version: str) -> str | None:
    """'2.4.1+cu121' -> '12.1' (the CUDA the wheel was built for); None for CPU or unknown builds."""
    match = _CUDA_SUFFIX.search(version)
    return f"{match.group(1)}.{match.group(2)}" if match else None


def torch_versions(results: Mapping[str, Any]) -> list[str]:
    """torch versions actually installed (or imported) by the run's environments and cells."""
    found = [env.get("installed", {}).get("torch") for env in results.get("environments", {}).values()]
    found += [cell.get("imported", {}).get("torch") for cell in results.get("cells", [])]
    return sorted({v for v in found if v})


def image_text(image: Any) -> str | None:
    """Cells and environments record an image as an id string or as {"id", "tag", ...}; show one string."""
    if not image:
        return None
    if isinstance(image, Mapping):
        parts = [str(image[k]) for k in ("tag", "id") if image.get(k)]
        return " ".join(parts) or None
    return str(image)


def hosts_of(results: Mapping[str, Any]) -> list[dict[str, Any]]:
    """All hosts of a run: merged shards carry run['hosts']; a single run has run['host']."""
    run = results.get("run", {})
    hosts = run.get("hosts") or ([run["host"]] if run.get("host") else [])
    return [dict(h) for h in hosts]


def host_line(host: Mapping[str, Any]) -> str:
    gpus = ", ".join(g.get("name", "?") for g in host.get("gpus") or []) or "no GPU"
    driver = f", driver {host['cuda_driver']}" if host.get("cuda_driver") else ""
    return (f"{host.get('hostname') or '?'}: {host.get('os') or '?'} {host.get('machine') or ''}, "
            f"{host.get('cpu') or '?'} x{host.get('cpu_count') or '?'}, {gpus}{driver}, "
            f"Python {host.get('python') or '?'}")


_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[@-_]")
_NOT_XML = re.compile("[^\x09\x0a\x0d\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def printable(value: Any, limit: int = 80) -> str:
    """An untrusted value quoted for a message (terminal, CI log, page): repr escapes every control character
    (no escape sequence reaches a terminal), and a long value is cut."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


def clean_text(text: str) -> str:
    """Drop terminal colour codes and characters XML 1.0 cannot carry (a raw byte in a log breaks junit.xml)."""
    return _NOT_XML.sub("\ufffd", _ANSI.sub("", text))


def host_torch_text(torch: Any) -> str | None:
    """"host torch X instead of Y" for a cell that ran with an interpreter's own torch (cases --python)."""
    if not isinstance(torch, Mapping) or torch.get("source") != "host":
        return None
    pinned = torch.get("pinned")
    return clean_text(f"host torch {torch.get('version')}" + (f" instead of {pinned}" if pinned else " (none pinned)"))


def host_torch_lines(results: Mapping[str, Any]) -> list[str]:
    """One line per distinct host torch / pin pair of a run, with how many cells ran that way."""
    seen: dict[str, int] = {}
    for cell in results.get("cells") or []:
        text = host_torch_text(cell.get("torch")) if isinstance(cell, Mapping) else None
        if text:
            seen[text] = seen.get(text, 0) + 1
    return [f"ran with {text}: {n} cell(s); their verdicts hold for that torch, not the pinned one"
            for text, n in seen.items()]
