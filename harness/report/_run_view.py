"""The per-run report's view model: results.json turned into what the page shows, cell by cell."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.report._common import (
    Attention,
    SkipGroup,
    attention,
    cases_of,
    clean_text,
    counts,
    cuda_of_torch,
    duration_text,
    host_line,
    hosts_of,
    image_text,
    lanes_of,
    parse_time,
    skip_groups,
    torch_versions,
    verdict_table,
)
from harness.report._io import log_tail

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_name(requirement: str) -> str:
    match = _NAME.match(requirement)
    return normalize(match.group(1)) if match else normalize(requirement)


def anchor(case: str, lane: str) -> str:
    return "cell-" + re.sub(r"[^A-Za-z0-9_-]", "_", f"{case}--{lane}")


@dataclass(frozen=True, slots=True)
class EnvView:
    id: str
    backend: str
    python: str
    requires: list[str]
    pinned: list[tuple[str, str]]
    installed: list[tuple[str, str]]
    patches: list[str]
    image: str | None
    error: str | None
    reused: bool | None


@dataclass(frozen=True, slots=True)
class CellView:
    variant: str
    role: str
    description: str
    expected: str
    status: str
    judgement: str
    reason: str
    exception_type: str | None
    exception_message: str | None
    traceback: list[Mapping[str, Any]]
    signature_matched: bool | None
    duration: str
    exit_code: int | None
    signal: str | None
    env: EnvView | None
    patches: list[str]
    shims: list[str]
    image: str | None
    log: str | None
    log_tail: str | None
    host: str | None


@dataclass(frozen=True, slots=True)
class LaneView:
    case: str
    lane: str
    verdict: str
    reason: str
    anchor: str
    cells: list[CellView]


@dataclass(frozen=True, slots=True)
class CaseView:
    id: str
    meta: Mapping[str, Any]
    lanes: list[LaneView | None]


@dataclass(frozen=True, slots=True)
class RunView:
    run: Mapping[str, Any]
    duration: str
    hosts: list[str]
    selection: Mapping[str, Any]
    torch: list[str]
    cuda: list[str]
    lanes: list[str]
    cases: list[CaseView]
    counts: dict[str, int]
    attention: list[Attention]
    skipped: list[SkipGroup]
    load_errors: list[str]
    title: str = field(default="")


def run_view(results: Mapping[str, Any], run_dir: Path | None) -> RunView:
    run = results["run"]
    lanes = lanes_of(results)
    verdicts = verdict_table(results)
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for cell in results.get("cells", []):
        cells.setdefault((cell["case"], cell["lane"]), []).append(cell)
    hosts = hosts_of(results)
    cases = []
    for case in cases_of(results):
        row = [_lane_view(results, case, lane, verdicts.get((case, lane)), cells.get((case, lane), []),
                          run_dir, hosts) for lane in lanes]
        cases.append(CaseView(case, results.get("cases", {}).get(case, {}), row))
    started, finished = parse_time(run.get("started")), parse_time(run.get("finished"))
    torch = torch_versions(results)
    return RunView(
        run=run,
        duration=duration_text((finished - started).total_seconds()) if started and finished else "",
        hosts=[host_line(h) for h in hosts],
        selection=run.get("selection") or {},
        torch=torch,
        cuda=sorted({c for c in (cuda_of_torch(v) for v in torch) if c}),
        lanes=lanes,
        cases=cases,
        counts=counts(results),
        attention=attention(results),
        skipped=skip_groups(results),
        load_errors=[clean_text(str(e)) for e in run.get("load_errors") or []],
        title=f"repro-matrix run {run['id']}",
    )


def _lane_view(results: Mapping[str, Any], case: str, lane: str, verdict: Mapping[str, Any] | None,
               cells: list[Mapping[str, Any]], run_dir: Path | None,
               hosts: list[dict[str, Any]]) -> LaneView | None:
    if verdict is None and not cells:
        return None
    views = [_cell_view(results, cell, run_dir, hosts) for cell in cells]
    return LaneView(case, lane, verdict["verdict"] if verdict else "missing",
                    clean_text(verdict.get("reason", "")) if verdict else "no verdict recorded",
                    anchor(case, lane), views)


def _cell_view(results: Mapping[str, Any], cell: Mapping[str, Any], run_dir: Path | None,
               hosts: list[dict[str, Any]]) -> CellView:
    exception = cell.get("exception") or {}
    env = results.get("environments", {}).get(cell.get("environment") or "")
    host_index = cell.get("host")
    host = hosts[host_index].get("hostname") if isinstance(host_index, int) and len(hosts) > 1 else None
    declared = results.get("cases", {}).get(cell["case"], {}).get("variants", {}).get(cell["variant"], {})
    return CellView(
        variant=cell["variant"], role=cell.get("role", ""), description=str(declared.get("description") or ""),
        expected=cell.get("expected", ""),
        status=cell.get("status", ""), judgement=cell.get("judgement", "skipped"),
        reason=clean_text(cell.get("reason", "")),
        exception_type=exception.get("type"),
        exception_message=clean_text(str(exception["message"])) if exception.get("message") is not None else None,
        traceback=list(exception.get("traceback") or []),
        signature_matched=cell.get("signature_matched") if cell.get("status") != "skipped" else None,
        duration=duration_text(cell.get("duration_s")) if cell.get("status") != "skipped" else "",
        exit_code=cell.get("exit_code"), signal=cell.get("signal"),
        env=_env_view(env, cell) if env else None,
        patches=list(cell.get("patches") or []), shims=list(cell.get("shims") or []),
        image=image_text(cell.get("image")) or (image_text(env.get("image")) if env else None),
        log=cell.get("log"), log_tail=log_tail(run_dir, cell.get("log")) if run_dir else None,
        host=host,
    )


def _env_view(env: Mapping[str, Any], cell: Mapping[str, Any]) -> EnvView:
    installed = {str(k): str(v) for k, v in (env.get("installed") or cell.get("imported") or {}).items()}
    by_name = {normalize(name): (name, version) for name, version in installed.items()}
    wanted = [requirement_name(r) for r in env.get("requires") or []]
    pinned = [by_name[name] for name in dict.fromkeys([*wanted, "torch"]) if name in by_name]
    patches = [p.get("file", "") if isinstance(p, Mapping) else str(p) for p in env.get("patches") or []]
    return EnvView(
        id=str(env.get("id") or cell.get("environment") or ""), backend=str(env.get("backend") or ""),
        python=str(env.get("python") or ""), requires=list(env.get("requires") or []), pinned=pinned,
        installed=sorted(installed.items(), key=lambda kv: normalize(kv[0])), patches=patches,
        image=image_text(env.get("image")), error=clean_text(str(env["error"])) if env.get("error") else None,
        reused=env.get("reused"),
    )
