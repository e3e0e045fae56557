"""Merge the shards of one run (same run id, possibly different hosts) into one results dict.

Cells and verdicts are a union; each cell keeps the index of the host that ran it (``cell["host"]`` into
``run["hosts"]``). Two shards that both judged the same (case, lane) keep the worse verdict, and a real
verdict always beats "skipped" (a CPU shard skipping cuda must not hide the GPU job's answer).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from harness.report._common import hosts_of, lanes_of, parse_time, severity

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def merge_shards(shards: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if not shards:
        raise ValueError("merge_shards needs at least one shard")
    ordered = sorted(shards, key=lambda s: parse_time(s["run"].get("started")) or _EPOCH)
    if len(ordered) == 1:
        return dict(ordered[0])  # nothing to merge; callers only read it
    hosts: list[dict[str, Any]] = []
    merged: dict[str, Any] = {"version": ordered[0].get("version", 1), "run": _merge_run(ordered),
                              "cases": {}, "environments": {}, "cells": [], "verdicts": []}
    verdicts: dict[tuple[str, str], dict[str, Any]] = {}
    cells: dict[tuple[str, str, str], dict[str, Any]] = {}
    for shard in ordered:
        # A shard may itself be a merged run: map its own host indexes onto the union.
        host_map = [_host_index(hosts, host) for host in hosts_of(shard) or [{}]]
        for case, meta in shard.get("cases", {}).items():
            merged["cases"].setdefault(case, copy.deepcopy(meta))
        renamed = _merge_environments(merged["environments"], shard.get("environments", {}))
        for cell in shard.get("cells", []):
            cell = copy.deepcopy(dict(cell))
            cell["environment"] = renamed.get(cell.get("environment") or "", cell.get("environment"))
            index = cell.get("host")
            cell["host"] = host_map[index] if isinstance(index, int) and 0 <= index < len(host_map) else host_map[0]
            cells[(cell["case"], cell["lane"], cell["variant"])] = cell  # the same shard read twice counts once
        for verdict in shard.get("verdicts", []):
            key = (verdict["case"], verdict["lane"])
            verdicts[key] = _merge_verdict(verdicts.get(key), dict(verdict))
    merged["run"]["hosts"] = hosts
    merged["run"]["host"] = hosts[0] if hosts else {}
    merged["cells"] = list(cells.values())
    merged["verdicts"] = list(verdicts.values())
    merged["run"]["selection"]["lanes"] = lanes_of(merged)
    return merged


def _merge_run(ordered: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    runs = [shard["run"] for shard in ordered]
    run = copy.deepcopy(dict(runs[0]))
    starts = sorted((t, r["started"]) for r in runs if (t := parse_time(r.get("started"))))
    ends = sorted((t, r["finished"]) for r in runs if (t := parse_time(r.get("finished"))))
    run["started"] = starts[0][1] if starts else run.get("started")
    run["finished"] = ends[-1][1] if ends else None
    statuses = [r.get("status") for r in runs]
    run["status"] = next((s for s in ("interrupted", "running") if s in statuses), statuses[0])
    codes = [r.get("exit_code") for r in runs if isinstance(r.get("exit_code"), int)]
    run["exit_code"] = max(codes, key=_exit_rank) if codes else None
    selection = dict(run.get("selection") or {})
    selection["cases"] = _union([r.get("selection", {}).get("cases") for r in runs])
    selection["lanes"] = _union([r.get("selection", {}).get("lanes") for r in runs]) or []
    selection["shard"] = [r["selection"]["shard"] for r in runs if (r.get("selection") or {}).get("shard")] or None
    selection["backend"] = ", ".join(dict.fromkeys(str(r.get("selection", {}).get("backend")) for r in runs))
    selection["argv"] = [arg for r in runs for arg in [*(["|"] if r is not runs[0] else []),
                                                       *(r.get("selection", {}).get("argv") or [])]]
    run["selection"] = selection
    run["shards"] = len(runs)
    return run


def _exit_rank(code: int) -> int:
    # 130 (interrupted) outranks 1 (verdicts); 2/3 (usage, empty selection) sit between.
    return {0: 0, 3: 1, 1: 2, 2: 3, 130: 4}.get(code, 5)


def _union(lists: Sequence[Sequence[Any] | None]) -> list[Any] | None:
    """None means "every case": if any shard selected everything, so did the run."""
    union: dict[Any, None] = {}
    for items in lists:
        if items is None:
            return None
        union.update(dict.fromkeys(items))
    return list(union)


def _host_index(hosts: list[dict[str, Any]], host: Mapping[str, Any]) -> int:
    for i, known in enumerate(hosts):
        if known == host:
            return i
    hosts.append(dict(host))
    return len(hosts) - 1


def _merge_environments(into: dict[str, Any], envs: Mapping[str, Any]) -> dict[str, str]:
    """Add envs; an id already present with different content (another host's install) gets a suffix."""
    renamed: dict[str, str] = {}
    for env_id, env in envs.items():
        if env_id not in into or _same(into[env_id], env):
            into.setdefault(env_id, copy.deepcopy(env))
            continue
        n = 2
        while f"{env_id}@{n}" in into and not _same(into[f"{env_id}@{n}"], env):
            n += 1
        into.setdefault(f"{env_id}@{n}", copy.deepcopy(env))
        renamed[env_id] = f"{env_id}@{n}"
    return renamed


def _same(a: Any, b: Any) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _merge_verdict(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    if old is None:
        return new
    keep, other = (new, old) if severity(new["verdict"]) < severity(old["verdict"]) else (old, new)
    merged = dict(keep)
    merged["cells"] = list(dict.fromkeys([*(old.get("cells") or []), *(new.get("cells") or [])]))
    if keep["verdict"] == other["verdict"] and other.get("reason") and other["reason"] != keep.get("reason"):
        merged["reason"] = f"{keep.get('reason', '')}; {other['reason']}"
    return merged
