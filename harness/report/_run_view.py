"""The per-run report's view model: results.json turned into what the page shows, cell by cell."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.report._bounds import (
    LOG_TAIL_BYTES,
    MAX_FRAME_TEXT,
    MAX_FRAMES,
    MAX_LISTED,
    MAX_PAGE_CASES,
    MAX_PAGE_CELLS,
    PAGE_BUDGET,
    Bounded,
    Budget,
    bound_results,
    clip_text,
)
from harness.report._common import (
    Attention,
    SkipGroup,
    attention,
    clean_text,
    counts,
    cuda_of_torch,
    duration_text,
    host_line,
    host_torch_text,
    hosts_of,
    image_text,
    lanes_of,
    library_groups,
    parse_time,
    skip_groups,
    torch_versions,
    verdict_table,
)
from harness.report._io import log_problem, log_tail
from harness.report._safe import Confined

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
    anchor: str
    backend: str
    python: str
    requires: list[str]
    installed: list[tuple[str, str]]
    patches: list[str]
    image: str | None
    error: str | None
    reused: bool | None
    listed: bool  # False when the page's budget had no room for its package lists


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
    frames_hidden: int
    signature: str  # "matched", "not matched", "n/a" (not run) or "—" (nothing was expected to match)
    duration: str
    exit_code: int | None
    signal: str | None
    env: EnvView | None
    pinned: list[tuple[str, str]]
    patches: list[str]
    shims: list[str]
    image: str | None
    log: str | None
    log_note: str | None  # why a recorded log is not linked
    log_tail: str | None
    host: str | None
    compact: bool  # details left out: the page's budget was spent
    host_torch: str | None = None  # "host torch X instead of Y": the cell did not run with its pinned torch


@dataclass(frozen=True, slots=True)
class LaneView:
    case: str
    lane: str
    verdict: str
    reason: str
    anchor: str
    cells: list[CellView]
    hidden: int  # cells of this lane beyond the page's cell bound


@dataclass(frozen=True, slots=True)
class CaseView:
    id: str
    meta: Mapping[str, Any]
    lanes: list[LaneView | None]
    library: str = ""  # set when the run spans several libraries: the matrix heads each group with it


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
    environments: list[EnvView]
    bounds: list[str]  # what the page left out, said at the top
    title: str = field(default="")


@dataclass(slots=True)
class _Page:
    """What building one page keeps track of: its budget, the environments shown, the cells placed."""

    files: Confined | None  # the run folder, when logs are to be read
    budget: Budget = field(default_factory=Budget)
    envs: dict[str, EnvView] = field(default_factory=dict)
    cells_left: int = MAX_PAGE_CELLS


def run_view(full: Mapping[str, Any], run_dir: Path | None, bounded: Bounded | None = None) -> RunView:
    """The page's view of one run; ``bounded`` is ``bound_results(full)`` when the caller has it already."""
    bounded = bounded or bound_results(full)
    results = bounded.results
    run = results["run"]
    lanes = lanes_of(results)
    verdicts = verdict_table(results)
    cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for cell in results.get("cells", []):
        cells.setdefault((cell["case"], cell["lane"]), []).append(cell)
    hosts = hosts_of(results)
    page = _Page(Confined(run_dir) if run_dir else None)
    groups = library_groups(results)
    all_cases = [(library if len(groups) > 1 else "", case) for library, members in groups for case in members]
    cases = []
    try:
        for library, case in all_cases[:MAX_PAGE_CASES]:
            row = [_lane_view(results, case, lane, verdicts.get((case, lane)), cells.get((case, lane), []), page,
                              hosts) for lane in lanes]
            cases.append(CaseView(case, _case_meta(results.get("cases", {}).get(case, {}), page), row, library))
    finally:
        if page.files:
            page.files.close()
    started, finished = parse_time(run.get("started")), parse_time(run.get("finished"))
    torch = torch_versions(results)
    needs, skips = attention(results), skip_groups(results)
    if len(needs) > MAX_LISTED or len(skips) > MAX_LISTED or any(len(g.cases) > MAX_LISTED for g in skips):
        bounded.note(f"'needs attention' and 'skipped' list at most {MAX_LISTED} entries (and cases per line)")
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
        attention=needs[:MAX_LISTED],
        skipped=[SkipGroup(g.lane, g.cases[:MAX_LISTED], g.reason) for g in skips[:MAX_LISTED]],
        load_errors=[clean_text(str(e)) for e in run.get("load_errors") or []],
        environments=list(page.envs.values()),
        bounds=_bound_notes(bounded.notes, page, len(all_cases), len(results.get("cells", []))),
        title=f"repro-matrix run {run['id']}",
    )


def _bound_notes(notes: list[str], page: _Page, cases: int, cells: int) -> list[str]:
    said = list(notes)
    if cases > MAX_PAGE_CASES:
        said.append(f"{cases:,} cases: the first {MAX_PAGE_CASES:,} are shown")
    if page.cells_left < 0:
        said.append(f"{cells:,} cells: the first {MAX_PAGE_CELLS:,} have a row")
    if page.budget.refused:
        said.append(f"{page.budget.refused:,} texts (messages, tracebacks, log tails, package lists) left out once "
                    f"the page held {PAGE_BUDGET // 2**20} MB of captured text")
    return said


def _case_meta(meta: Mapping[str, Any], page: _Page) -> Mapping[str, Any]:
    size = sum(len(str(v)) for v in meta.values() if isinstance(v, str))
    if page.budget.take(size):
        return meta
    return {"title": clip_text(str(meta.get("title") or ""), 200), "status": meta.get("status")}


def _lane_view(results: Mapping[str, Any], case: str, lane: str, verdict: Mapping[str, Any] | None,
               cells: list[Mapping[str, Any]], page: _Page, hosts: list[dict[str, Any]]) -> LaneView | None:
    if verdict is None and not cells:
        return None
    shown = cells[:max(page.cells_left, 0)]
    page.cells_left -= len(cells)
    views = [_cell_view(results, cell, page, hosts) for cell in shown]
    return LaneView(case, lane, verdict["verdict"] if verdict else "missing",
                    clean_text(verdict.get("reason", "")) if verdict else "no verdict recorded",
                    anchor(case, lane), views, len(cells) - len(shown))


def signature_text(cell: Mapping[str, Any]) -> str:
    """What the signature column says: a passing fix expected nothing to match, so it shows a dash."""
    if cell.get("status") == "skipped":
        return "n/a"
    if cell.get("signature_matched"):
        return "matched"
    if cell.get("expected") == "reproduces" or cell.get("exception"):
        return "not matched"
    return "—"


def _cell_view(results: Mapping[str, Any], cell: Mapping[str, Any], page: _Page,
               hosts: list[dict[str, Any]]) -> CellView:
    exception = cell.get("exception") or {}
    env = results.get("environments", {}).get(cell.get("environment") or "")
    host_index = cell.get("host")
    host = hosts[host_index].get("hostname") if isinstance(host_index, int) and len(hosts) > 1 else None
    declared = results.get("cases", {}).get(cell["case"], {}).get("variants", {}).get(cell["variant"], {})
    frames = list(exception.get("traceback") or [])
    kept: list[Mapping[str, Any]] = [
        {key: clip_text(str(frame.get(key) or ""), MAX_FRAME_TEXT) for key in ("file", "line", "function", "code")}
        for frame in frames[-MAX_FRAMES:] if isinstance(frame, Mapping)]
    description = str(declared.get("description") or "")
    message = clean_text(str(exception["message"])) if exception.get("message") is not None else None
    reason = clean_text(cell.get("reason", ""))
    weight = len(description) + len(reason) + len(message or "") + sum(len(v) for f in kept for v in f.values())
    compact = not page.budget.take(weight)
    log, log_note, tail = _log(cell.get("log"), page, compact)
    return CellView(
        variant=cell["variant"], role=cell.get("role", ""), description="" if compact else description,
        expected=cell.get("expected", ""),
        status=cell.get("status", ""), judgement=cell.get("judgement", "skipped"),
        reason=clip_text(reason, 200) if compact else reason,
        exception_type=exception.get("type"), exception_message=None if compact else message,
        traceback=[] if compact else kept, frames_hidden=len(frames) - (0 if compact else len(kept)),
        signature=signature_text(cell),
        duration=duration_text(cell.get("duration_s")) if cell.get("status") != "skipped" else "",
        exit_code=cell.get("exit_code"), signal=cell.get("signal"),
        env=_env_view(env, cell, page) if env else None,
        pinned=_pinned(env, cell) if env else [],
        patches=list(cell.get("patches") or []), shims=list(cell.get("shims") or []),
        image=image_text(cell.get("image")) or (image_text(env.get("image")) if env else None),
        log=log, log_note=log_note, log_tail=tail, host=host, compact=compact,
        host_torch=host_torch_text(cell.get("torch")),
    )


def _log(log: str | None, page: _Page, compact: bool) -> tuple[str | None, str | None, str | None]:
    """(log to link, why a recorded log is not linked, its tail): only a log that is a regular file inside the
    run folder, reached without a symlink, is linked or read."""
    if not log or page.files is None:
        return log, None, None
    problem = log_problem(page.files, log)
    if problem:
        return None, f"log not published: {problem}", None
    if compact or page.budget.left < LOG_TAIL_BYTES:
        page.budget.refused += 1
        return log, None, None
    tail = log_tail(page.files, log, max_bytes=LOG_TAIL_BYTES)
    page.budget.take(len(tail or ""))
    return log, None, tail


def _installed(env: Mapping[str, Any], cell: Mapping[str, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in (env.get("installed") or cell.get("imported") or {}).items()}


def _pinned(env: Mapping[str, Any], cell: Mapping[str, Any]) -> list[tuple[str, str]]:
    by_name = {normalize(name): (name, version) for name, version in _installed(env, cell).items()}
    wanted = [requirement_name(r) for r in env.get("requires") or []]
    return [by_name[name] for name in dict.fromkeys([*wanted, "torch"]) if name in by_name]


def _env_view(env: Mapping[str, Any], cell: Mapping[str, Any], page: _Page) -> EnvView:
    """Each environment is described once per page (its full package list can be long); cells link to it."""
    key = str(cell.get("environment") or "")
    if key in page.envs:
        return page.envs[key]
    installed = sorted(_installed(env, cell).items(), key=lambda kv: normalize(kv[0]))
    requires = [str(r) for r in env.get("requires") or []]
    listed = page.budget.take(sum(len(k) + len(v) + 3 for k, v in installed) + sum(len(r) for r in requires))
    patches = [p.get("file", "") if isinstance(p, Mapping) else str(p) for p in env.get("patches") or []]
    view = page.envs[key] = EnvView(
        id=str(env.get("id") or key), anchor=f"env-{len(page.envs) + 1}", backend=str(env.get("backend") or ""),
        python=str(env.get("python") or ""), requires=requires if listed else [],
        installed=installed if listed else [], patches=patches,
        image=image_text(env.get("image")), error=clean_text(str(env["error"])) if env.get("error") else None,
        reused=env.get("reused"), listed=listed,
    )
    return view
