"""The site's pages: the front page (status now) and one history page per case (status over time)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness._vocabulary import MISSING
from harness.cases._library import library_of
from harness.report._common import age_text, parse_time, severity
from harness.report._history import History
from harness.report._io import write_text_atomic
from harness.report._render import render
from harness.report._safe import inside
from harness.report._timeline import Entry, LaneHistory, StaleItem, lanes_in, staleness, timelines

RECENT_RUNS = 30


@dataclass(frozen=True, slots=True)
class Cell:
    lane: str
    verdict: str
    reason: str
    age: str
    note: str
    stale: StaleItem | None


@dataclass(frozen=True, slots=True)
class Row:
    case: str
    meta: Mapping[str, Any]
    cells: list[Cell]
    library: str = ""


def write_pages(history: History, output: Path, *, now: datetime, stale_days: int,
                problems: list[str]) -> tuple[dict[tuple[str, str], str], list[StaleItem]]:
    lanes = lanes_in(history)
    lines = timelines(history)
    generated = now.astimezone(UTC).isoformat(timespec="seconds")
    rows, stale = [], []
    order = _case_order(history)
    grouped = len({library for library, _ in order}) > 1
    for library, case in order:
        meta = history.cases.get(case, {})
        retired = meta.get("status") == "retired"
        cells = []
        for lane in lanes:
            item = staleness(lines.get((case, lane)), case, lane, retired=retired, now=now, stale_days=stale_days)
            stale += [item] if item else []
            cells.append(_cell(lines.get((case, lane)), lane, item, now))
        rows.append(Row(case, meta, cells, library if grouped else ""))
        write_text_atomic(inside(output, output / "cases" / f"{case}.html"), render(
            "case.html", case=case, meta=meta, lanes=lanes, generated=generated, stale_days=stale_days,
            **_case_context(history, lines, case, lanes, cells, now)))
    active = [r for r in rows if r.meta.get("status") != "retired"]
    write_text_atomic(output / "index.html", render(
        "site.html", rows=active, retired=[r for r in rows if r not in active], lanes=lanes,
        generated=generated, stale_days=stale_days, alarms=_group_alarms(stale, len(active), lanes),
        attention=_attention(active), recent=_recent_runs(history, now), problems=problems,
        total_runs=len(history.runs), span=_span(history)))
    latest = {(r.case, c.lane): c.verdict for r in rows for c in r.cells}
    return latest, stale


def _case_order(history: History) -> list[tuple[str, str]]:
    """(library, case) pairs: active cases before retired ones, each part grouped by library."""
    def key(case: str) -> tuple[bool, str, str]:
        return history.cases[case].get("status") == "retired", libraries[case].lower(), case

    libraries = {case: library_of(meta.get("upstream"), meta.get("tags")) for case, meta in history.cases.items()}
    return [(libraries[case], case) for case in sorted(history.cases, key=key)]


def _cell(lane_history: LaneHistory | None, lane: str, stale: StaleItem | None, now: datetime) -> Cell:
    current = lane_history.current if lane_history else None
    if current is None:
        return Cell(lane, MISSING, "never selected", "never", "no run recorded this lane", stale)
    note = ""
    skipped = lane_history.skipped_since() if lane_history else 0
    if current.real and skipped:
        latest = lane_history.latest if lane_history else None
        why = latest.record.get("reason", "") if latest else ""
        note = f"skipped in the {skipped} newer run{'s' if skipped > 1 else ''}: {why}"
    elif not current.real and current.record.get("unsupported"):
        note = "every variant declares this lane unsupported"
    return Cell(lane, current.verdict, str(current.record.get("reason", "")), age_text(current.started, now),
                note, stale)


def _attention(rows: list[Row]) -> list[tuple[str, Cell]]:
    items = [(row.case, cell) for row in rows for cell in row.cells if cell.verdict not in ("confirmed", "skipped",
                                                                                            MISSING)]
    return sorted(items, key=lambda item: severity(item[1].verdict))


def _group_alarms(stale: list[StaleItem], active_cases: int, lanes: list[str]) -> list[tuple[str, str]]:
    """One line per lane that never ran anywhere (a fork without a GPU runner); one per case/lane otherwise."""
    lines: list[tuple[str, str]] = []
    for lane in lanes:
        items = [s for s in stale if s.lane == lane]
        never = [s for s in items if s.last_real is None]
        if active_cases > 1 and len(never) == active_cases:
            lines.append((lane, f"no case has ever run for real on this lane ({active_cases} cases: only skipped "
                                "or never selected)"))
            items = [s for s in items if s.last_real is not None]
        lines += [(f"{s.case} / {s.lane}", s.reason) for s in items]
    return lines


def _recent_runs(history: History, now: datetime) -> list[dict[str, Any]]:
    recent = []
    for run in list(history.ordered_runs())[::-1][:RECENT_RUNS]:
        tally = Counter(str(record["verdict"]) for lanes in run.get("verdicts", {}).values()
                        for record in lanes.values())
        hosts = [str(history.hosts.get(key, {}).get("hostname") or "?") for key in run.get("hosts", [])]
        recent.append({"run": run, "tally": [(v, tally[v]) for v in sorted(tally, key=severity)],
                       "hosts": hosts, "age": age_text(_time(run), now)})
    return recent


def _span(history: History) -> tuple[str, str] | None:
    runs = list(history.ordered_runs())
    return (str(runs[0].get("started")), str(runs[-1].get("started"))) if runs else None


def _time(run: Mapping[str, Any]) -> datetime | None:
    return parse_time(run.get("started"))


@dataclass(frozen=True, slots=True)
class HistoryCell:
    verdict: str
    reason: str
    flip: str | None  # anchor of the flip entry when the verdict changed in this run


@dataclass(frozen=True, slots=True)
class HistoryRow:
    id: str
    started: str
    report: str | None
    hosts: str
    cells: list[HistoryCell | None]


def _case_context(history: History, lines: Mapping[tuple[str, str], LaneHistory], case: str, lanes: list[str],
                  cells: list[Cell], now: datetime) -> dict[str, Any]:
    by_run: dict[str, dict[str, Entry]] = {}
    for lane in lanes:
        for entry in lines[(case, lane)].entries if (case, lane) in lines else []:
            by_run.setdefault(entry.run["id"], {})[lane] = entry
    flips = {lane: lines[(case, lane)].flips if (case, lane) in lines else {} for lane in lanes}
    rows = []
    for run in reversed(list(history.ordered_runs())):
        entries = by_run.get(run["id"])
        if entries is None:
            continue
        # The hosts that ran this case (a sharded run lists every shard's host otherwise).
        hosts = dict.fromkeys(str(history.hosts.get(e.record.get("host") or "", {}).get("hostname") or "?")
                              for e in entries.values())
        row_cells: list[HistoryCell | None] = []
        for lane in lanes:
            found = entries.get(lane)
            flip = flips[lane].get(run["id"])
            row_cells.append(HistoryCell(found.verdict, str(found.record.get("reason", "")),
                                         flip.anchor if flip else None) if found else None)
        rows.append(HistoryRow(run["id"], str(run.get("started") or ""), run.get("report"), ", ".join(hosts),
                               row_cells))
    strips = {lane: lines[(case, lane)].entries[-200:] if (case, lane) in lines else [] for lane in lanes}
    flip_list = sorted((flip for lane_flips in flips.values() for flip in lane_flips.values()),
                       key=lambda f: (f.after.started or datetime.min.replace(tzinfo=UTC)), reverse=True)
    return {"rows": rows, "flip_list": flip_list, "strips": strips, "status": cells, "now": now}
