"""history.json: every run's verdicts, compact enough to carry forward from one published site to the next.

Format (version 1)::

    {"version": 1, "kind": "repro-matrix-history", "generated": ISO,
     "cases": {case: {title, upstream, summary, signature, exception, status, tags, seen: ISO}},
     "hosts": {digest: host}, "environments": {digest: {backend, python, requires, installed, image, patches}},
     "runs": [{id, started, finished, status, exit_code, harness_version, hosts: [digest], shards,
               selection: {cases, lanes, backend, shard}, report: "runs/<id>/index.html" | null,
               verdicts: {case: {lane: {verdict, reason, unsupported, host: digest,
                                        variants: {name: {role, status, judgement, env: digest,
                                                          image?, exception?, signature_matched?}}}}}}]}

    image only when a cell ran in one; exception and signature_matched only for cells judged other than
    confirmed or skipped (a confirmed cell raised exactly the signature).

Hosts and environments are stored once by content digest: a thousand nightly runs on the same runner
share one host entry and a handful of environments.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import fastjsonschema

from harness._io import compiled_validator
from harness.report._bounds import MAX_TEXT, clip_strings, clip_text
from harness.report._common import (
    clean_text,
    future_problem,
    hosts_of,
    image_text,
    name_problem,
    parse_time,
    printable,
)
from harness.report._io import ReportInputError

HISTORY_VERSION = 1
HISTORY_KIND = "repro-matrix-history"
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EXCEPTION_CHARS = 300
SCHEMA_PATH = Path(__file__).resolve().parent / "history.schema.json"


def _validator(definition: str) -> Callable[[Any], Any]:
    return compiled_validator(SCHEMA_PATH, None if definition == "top" else definition)


def _message(error: fastjsonschema.JsonSchemaException) -> str:
    return printable(str(error), 200).strip("'\"")


def _clip_run(run: dict[str, Any]) -> dict[str, Any]:
    """A checked run record with its texts cut as on ingest (the schema checks types, not lengths); written out
    field by field: a site re-reads every run of its history on each build."""
    for key, value in run.items():
        if type(value) is str and len(value) > MAX_TEXT:
            run[key] = clip_text(value)
    for lanes in run["verdicts"].values():
        for record in lanes.values():
            if len(record.get("reason") or "") > MAX_TEXT:
                record["reason"] = clip_text(record["reason"])
            for variant in (record.get("variants") or {}).values():
                for key, value in variant.items():
                    if type(value) is str and len(value) > MAX_TEXT:
                        variant[key] = clip_text(value)
    return run


def _entry_ok(kind: str, value: Any, where: str, problems: list[str]) -> bool:
    try:
        _validator(kind)(value)
    except fastjsonschema.JsonSchemaException as error:
        problems.append(f"{where}: skipped: {_message(error)}")
        return False
    return True


def _time_ok(value: Any, where: str, problems: list[str]) -> bool:
    problem = future_problem(value, "started")
    if problem:
        problems.append(f"{where}: skipped: {problem}")
    return problem is None


def _name_ok(kind: str, value: str, where: str, problems: list[str]) -> bool:
    problem = name_problem(kind, value)
    if problem:
        problems.append(f"{where}: skipped: {problem}")
    return problem is None


def digest(data: Any) -> str:
    return hashlib.sha1(json.dumps(data, sort_keys=True, separators=(",", ":")).encode(), usedforsecurity=False
                        ).hexdigest()[:12]


@dataclass
class History:
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)
    hosts: dict[str, dict[str, Any]] = field(default_factory=dict)
    environments: dict[str, dict[str, Any]] = field(default_factory=dict)
    _env_keys: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = field(default_factory=dict, repr=False,
                                                                         compare=False)

    @classmethod
    def from_dict(cls, data: Any, source: str = "history.json", problems: list[str] | None = None) -> History:
        """A history read from an untrusted history.json: the wrong kind or version is refused as a whole; a
        run, case, host or environment entry that fails history.schema.json is skipped and added to
        ``problems`` (the rest of the history is kept)."""
        if not isinstance(data, dict) or data.get("kind") != HISTORY_KIND:
            raise ReportInputError(f"{source}: not a repro-matrix history (kind {HISTORY_KIND!r} missing)")
        if data.get("version") != HISTORY_VERSION:
            raise ReportInputError(f"{source}: history version {printable(data.get('version'))}; this report "
                                   f"reads version {HISTORY_VERSION} (upgrade repro-matrix to extend it)")
        problems = [] if problems is None else problems
        try:
            _validator("top")(data)
        except fastjsonschema.JsonSchemaException as error:
            raise ReportInputError(f"{source}: does not match history.schema.json: {_message(error)}") from None
        history = cls()
        for i, run in enumerate(data["runs"]):
            label = f"runs[{i}] (id {printable(run.get('id'), 40)})" if isinstance(run, dict) else f"runs[{i}]"
            if _entry_ok("run", run, f"{source}: {label}", problems) and \
                    _time_ok(run.get("started"), f"{source}: {label}", problems):
                history.runs[run["id"]] = _clip_run(run)
        for table, kind in ((history.cases, "case"), (history.hosts, "host"), (history.environments, "environment")):
            name = "cases" if kind == "case" else f"{kind}s"
            for key, value in (data.get(name) or {}).items():
                if (kind != "case" or _name_ok("case id", key, f"{source}: cases", problems)) and \
                        _entry_ok(kind, value, f"{source}: {name}[{printable(key)}]", problems):
                    table[key] = clip_strings(value)
        return history

    def to_dict(self, generated: datetime) -> dict[str, Any]:
        return {"version": HISTORY_VERSION, "kind": HISTORY_KIND,
                "generated": generated.astimezone(UTC).isoformat(timespec="seconds"),
                "cases": self.cases, "hosts": self.hosts, "environments": self.environments,
                "runs": list(self.ordered_runs())}

    def ordered_runs(self) -> Iterator[dict[str, Any]]:
        """Oldest first; ties (same second) broken by id, which is time-ordered too."""
        yield from sorted(self.runs.values(), key=lambda r: (parse_time(r.get("started")) or _EPOCH, r["id"]))

    def extend(self, other: History) -> None:
        self.hosts.update(other.hosts)
        self.environments.update(other.environments)
        for case, meta in other.cases.items():
            self._note_case(case, meta, meta.get("seen"))
        for record in other.runs.values():
            self._add_run(record)

    def ingest(self, results: Mapping[str, Any]) -> dict[str, Any]:
        """Add one (merged) run; a run id already present is updated per (case, lane), newest data winning."""
        return self.add(self.prepare(results))

    def prepare(self, results: Mapping[str, Any]) -> dict[str, Any]:
        """What one (merged) run adds to the history, as plain JSON data: its run record and the hosts,
        environments and case descriptions it names. A pure function of ``results`` (the record of checked
        inputs keeps it, so that a rebuild need not parse the same results.json again)."""
        run = results["run"]
        hosts: dict[str, dict[str, Any]] = {}
        host_keys = [self._store(hosts, clip_strings(dict(h))) for h in hosts_of(results)]
        environments: dict[str, dict[str, Any]] = {}
        env_keys = {env_id: self._env_key(env, environments) for env_id, env in results.get("environments", {}).items()}
        cells: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
        for cell in results.get("cells", []):
            cells.setdefault((cell["case"], cell["lane"]), []).append(cell)
        verdicts: dict[str, dict[str, Any]] = {}
        for verdict in results.get("verdicts", []):
            lane_cells = cells.get((verdict["case"], verdict["lane"]), [])
            verdicts.setdefault(verdict["case"], {})[verdict["lane"]] = _verdict_record(
                verdict, lane_cells, host_keys, env_keys)
        selection = run.get("selection") or {}
        record = {
            "id": run["id"], "started": run.get("started"), "finished": run.get("finished"),
            "status": run.get("status"), "exit_code": run.get("exit_code"),
            "harness_version": run.get("harness_version"), "hosts": host_keys, "shards": run.get("shards", 1),
            "selection": {key: selection.get(key) for key in ("cases", "lanes", "backend", "shard")},
            "report": None, "verdicts": verdicts,
        }
        cases = {case: _case_meta(meta) for case, meta in results.get("cases", {}).items()}
        return {"record": record, "hosts": hosts, "environments": environments, "cases": cases}

    def add(self, prepared: Mapping[str, Any]) -> dict[str, Any]:
        """Add what :meth:`prepare` made of a run."""
        record = prepared["record"]
        for key, host in prepared["hosts"].items():
            self.hosts.setdefault(key, host)
        for key, env in prepared["environments"].items():
            self.environments.setdefault(key, env)
        for case, meta in prepared["cases"].items():
            self._set_case(case, meta, record.get("started"))
        return self._add_run(record)

    def _add_run(self, record: dict[str, Any]) -> dict[str, Any]:
        old = self.runs.get(record["id"])
        if old is not None:
            verdicts = {case: dict(lanes) for case, lanes in old.get("verdicts", {}).items()}
            for case, lanes in record.get("verdicts", {}).items():
                verdicts.setdefault(case, {}).update(lanes)
            record = {**old, **record, "verdicts": verdicts,
                      "hosts": list(dict.fromkeys([*old.get("hosts", []), *record.get("hosts", [])])),
                      "report": record.get("report") or old.get("report")}
        self.runs[record["id"]] = record
        return record

    def _note_case(self, case: str, meta: Mapping[str, Any], seen: str | None) -> None:
        self._set_case(case, _case_meta(meta), seen)

    def _set_case(self, case: str, meta: Mapping[str, Any], seen: str | None) -> None:
        known = self.cases.get(case)
        if known is None or (parse_time(seen) or _EPOCH) >= (parse_time(known.get("seen")) or _EPOCH):
            self.cases[case] = {**meta, "seen": seen}

    def _env_key(self, env: Mapping[str, Any], table: dict[str, dict[str, Any]]) -> str:
        # Hashing a tuple is far cheaper than serialising the env: a thousand runs share a dozen envs.
        cheap = (env.get("id"), env.get("backend"), env.get("python"), tuple(env.get("requires") or ()),
                 tuple((env.get("installed") or {}).items()), repr(env.get("image")), repr(env.get("patches")))
        known = self._env_keys.get(cheap)
        if known is None:
            value = clip_strings(_env_fingerprint(env))
            known = self._env_keys[cheap] = (digest(value), value)
        table[known[0]] = known[1]
        return known[0]

    @staticmethod
    def _store(table: dict[str, dict[str, Any]], value: dict[str, Any]) -> str:
        key = digest(value)
        table.setdefault(key, value)
        return key


def _case_meta(meta: Mapping[str, Any]) -> dict[str, Any]:
    keep = ("title", "upstream", "summary", "signature", "exception", "status", "tags", "retired_reason")
    return {k: clip_strings(meta[k]) for k in keep if k in meta}


def _env_fingerprint(env: Mapping[str, Any]) -> dict[str, Any]:
    patches = [p.get("sha256") or p.get("file") if isinstance(p, Mapping) else str(p) for p in env.get("patches") or []]
    return {"id": env.get("id"), "backend": env.get("backend"), "python": env.get("python"),
            "requires": list(env.get("requires") or []), "installed": dict(env.get("installed") or {}),
            "image": image_text(env.get("image")), "patches": patches}


def _verdict_record(verdict: Mapping[str, Any], cells: list[Mapping[str, Any]], host_keys: list[str],
                    env_keys: Mapping[str, str]) -> dict[str, Any]:
    variants = {}
    for cell in cells:
        record = {"role": cell.get("role"), "status": cell.get("status"), "judgement": cell.get("judgement"),
                  "env": env_keys.get(cell.get("environment") or "")}
        if cell.get("image"):
            record["image"] = image_text(cell["image"])
        exception = cell.get("exception")
        if exception and record["judgement"] not in ("confirmed", "skipped"):
            # Only surprises are worth carrying: a confirmed cell raised exactly the signature.
            text = f"{exception.get('type')}: {exception.get('message', '')}"
            record["exception"] = clean_text(text[:_EXCEPTION_CHARS])
            record["signature_matched"] = cell.get("signature_matched")
        variants[cell["variant"]] = record
    index = next((c["host"] for c in cells if isinstance(c.get("host"), int)), 0)
    unsupported = bool(cells) and all(str(c.get("expected", "")).startswith("unsupported") for c in cells)
    return {"verdict": verdict["verdict"], "reason": clip_text(clean_text(verdict.get("reason", ""))),
            "unsupported": verdict["verdict"] == "skipped" and unsupported,
            "host": host_keys[index] if 0 <= index < len(host_keys) else None, "variants": variants}
