"""Reading a history over time: per (case, lane) verdicts in order, flips, staleness, environment diffs."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from harness.report._common import LANES, age_text, parse_time
from harness.report._history import History


@dataclass(frozen=True, slots=True)
class Entry:
    run: Mapping[str, Any]
    started: datetime | None
    record: Mapping[str, Any]
    verdict: str
    real: bool  # anything but skipped


@dataclass(frozen=True, slots=True)
class Flip:
    lane: str
    before: Entry
    after: Entry
    diff: list[tuple[str, str, str]]

    @property
    def anchor(self) -> str:
        return f"flip-{self.lane}-{self.after.run['id']}"


@dataclass(frozen=True, slots=True)
class StaleItem:
    """A (case, lane) whose newest real (non-skipped) verdict is older than the limit, or that never ran."""

    case: str
    lane: str
    last_real: datetime | None
    reason: str


@dataclass(slots=True)
class LaneHistory:
    case: str
    lane: str
    entries: list[Entry] = field(default_factory=list)  # oldest first
    flips: dict[str, Flip] = field(default_factory=dict)  # by the run id where the new verdict showed

    @property
    def latest(self) -> Entry | None:
        return self.entries[-1] if self.entries else None

    @property
    def latest_real(self) -> Entry | None:
        return next((e for e in reversed(self.entries) if e.real), None)

    @property
    def current(self) -> Entry | None:
        """What the front page shows: the newest real verdict (a later skip does not hide it)."""
        return self.latest_real or self.latest

    def skipped_since(self) -> int:
        """Skipped entries after the newest real one (or all, when none is real)."""
        count = 0
        for entry in reversed(self.entries):
            if entry.real:
                break
            count += 1
        return count


def lanes_in(history: History) -> list[str]:
    seen = {lane for run in history.runs.values() for lanes in run.get("verdicts", {}).values() for lane in lanes}
    return sorted(seen | set(LANES), key=lambda lane: (LANES.index(lane) if lane in LANES else 99, lane))


def timelines(history: History) -> dict[tuple[str, str], LaneHistory]:
    result: dict[tuple[str, str], LaneHistory] = {}
    for run in history.ordered_runs():
        started = parse_time(run.get("started"))
        for case, lanes in run.get("verdicts", {}).items():
            for lane, record in lanes.items():
                lane_history = result.get((case, lane))
                if lane_history is None:
                    lane_history = result[(case, lane)] = LaneHistory(case, lane)
                verdict = str(record["verdict"])
                lane_history.entries.append(Entry(run, started, record, verdict, verdict != "skipped"))
    for lane_history in result.values():
        _find_flips(history, lane_history)
    return result


def _find_flips(history: History, lane_history: LaneHistory) -> None:
    """A flip is a change between consecutive real verdicts; skips in between are not verdicts."""
    previous: Entry | None = None
    for entry in lane_history.entries:
        if not entry.real:
            continue
        if previous is not None and previous.verdict != entry.verdict:
            lane_history.flips[entry.run["id"]] = Flip(lane_history.lane, previous, entry,
                                                       env_diff(history, previous.record, entry.record))
        previous = entry


def staleness(lane_history: LaneHistory | None, case: str, lane: str, *, retired: bool, now: datetime,
              stale_days: int) -> StaleItem | None:
    if retired:
        return None
    latest = lane_history.latest if lane_history else None
    if latest is not None and latest.record.get("unsupported"):
        return None  # every variant declares the lane unsupported: nothing is owed there
    real = lane_history.latest_real if lane_history else None
    if real is None:
        why = f"only skipped ({latest.record.get('reason') or 'no reason'})" if latest else "never selected"
        return StaleItem(case, lane, None, f"never ran for real: {why}")
    if real.started is None or now - real.started > timedelta(days=stale_days):
        return StaleItem(case, lane, real.started,
                         f"last real run {age_text(real.started, now)} ({real.verdict}); older than {stale_days} days")
    return None


_HOST_FIELDS = (("hostname", "host"), ("os", "OS"), ("cpu", "CPU"), ("gpus", "GPUs"),
                ("cuda_driver", "NVIDIA driver"), ("python", "host Python"))


def env_diff(history: History, before: Mapping[str, Any], after: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """What changed between two verdict records: host, then per-variant packages, requires, image, patches."""
    rows: list[tuple[str, str, str]] = []
    if before.get("host") != after.get("host"):
        old, new = history.hosts.get(before.get("host") or "", {}), history.hosts.get(after.get("host") or "", {})
        for key, label in _HOST_FIELDS:
            a, b = _host_value(old, key), _host_value(new, key)
            if a != b:
                rows.append((label, a, b))
    per_variant: dict[tuple[str, str, str], list[str]] = {}
    names = list(dict.fromkeys([*before.get("variants", {}), *after.get("variants", {})]))
    for name in names:
        for row in _variant_diff(history, before.get("variants", {}).get(name), after.get("variants", {}).get(name)):
            per_variant.setdefault(row, []).append(name)
    for (what, a, b), variants in sorted(per_variant.items(), key=lambda kv: (kv[0][0] != "torch", kv[0])):
        label = what if len(variants) == len(names) else f"{what} ({', '.join(variants)})"
        rows.append((label, a, b))
    return rows


def _host_value(host: Mapping[str, Any], key: str) -> str:
    value = host.get(key)
    if key == "gpus":
        return ", ".join(f"{g.get('name')} ({g.get('driver')})" for g in value or []) or "none"
    return "none" if value in (None, "") else str(value)


def _variant_diff(history: History, old: Mapping[str, Any] | None,
                  new: Mapping[str, Any] | None) -> list[tuple[str, str, str]]:
    if old is None or new is None:
        return [("variant", "absent" if old is None else "present", "absent" if new is None else "present")]
    rows = []
    if old.get("image") != new.get("image"):
        rows.append(("image", str(old.get("image") or "none"), str(new.get("image") or "none")))
    if old.get("env") == new.get("env"):
        return rows
    env_a = history.environments.get(old.get("env") or "", {})
    env_b = history.environments.get(new.get("env") or "", {})
    rows.extend(_environment_diff(env_a, env_b))
    if env_a.get("image") != env_b.get("image") and not rows:
        rows.append(("image", str(env_a.get("image") or "none"), str(env_b.get("image") or "none")))
    return rows


def _environment_diff(env_a: Mapping[str, Any], env_b: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """What differs between two environment records: installed releases, requires/patches, python, backend."""
    rows = []
    installed_a, installed_b = env_a.get("installed", {}), env_b.get("installed", {})
    for package in sorted(set(installed_a) | set(installed_b)):
        a, b = installed_a.get(package, "absent"), installed_b.get(package, "absent")
        if a != b:
            rows.append((package, a, b))
    for key in ("requires", "patches"):
        removed = [x for x in env_a.get(key, []) if x not in env_b.get(key, [])]
        added = [x for x in env_b.get(key, []) if x not in env_a.get(key, [])]
        if removed or added:
            rows.append((key, " ".join(removed) or "-", " ".join(added) or "-"))
    for key in ("python", "backend"):
        if env_a.get(key) != env_b.get(key):
            rows.append((f"venv {key}" if key == "python" else key, str(env_a.get(key)), str(env_b.get(key))))
    return rows
