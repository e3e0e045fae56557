"""junit.xml: one testcase per cell, one testsuite per (case, lane), so CI test tabs show the matrix.

Mapping: confirmed -> pass; skipped -> <skipped message=reason>; infra-error -> <error> (the cell could
not run, which JUnit calls an error); fix-regressed, stale-repro, failed-differently -> <failure>.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.report._bounds import LOG_TAIL_BYTES, MAX_FRAMES, Bounded, Budget, bound_results
from harness.report._common import cases_of, clean_text, image_text, lanes_of, verdict_table
from harness.report._io import log_tail
from harness.report._run_view import signature_text
from harness.report._safe import Confined

_PASSING = {"confirmed"}


def render_junit(full: Mapping[str, Any], run_dir: Path | None = None, bounded: Bounded | None = None) -> str:
    """One run's junit.xml; its text is bounded as on the run page (_bounds.py), log tails by a budget."""
    results = (bounded or bound_results(full)).results
    budget = Budget()
    files = Confined(run_dir) if run_dir else None
    run = results["run"]
    root = ET.Element("testsuites", name=f"repro-matrix {run['id']}")
    cells_by_key: dict[tuple[str, str], list[Mapping[str, Any]]] = {}
    for cell in results.get("cells", []):
        cells_by_key.setdefault((cell["case"], cell["lane"]), []).append(cell)
    verdicts = verdict_table(results)
    try:
        for case in cases_of(results):
            for lane in lanes_of(results):
                if (case, lane) in verdicts or (case, lane) in cells_by_key:
                    root.append(_suite(results, case, lane, verdicts.get((case, lane)),
                                       cells_by_key.get((case, lane), []), files, budget))
    finally:
        if files:
            files.close()
    _sum_attributes(root, list(root))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(results: Mapping[str, Any], case: str, lane: str, verdict: Mapping[str, Any] | None,
           cells: list[Mapping[str, Any]], files: Confined | None, budget: Budget) -> ET.Element:
    run = results["run"]
    suite = ET.Element("testsuite", name=f"{case}.{lane}", timestamp=str(run.get("started") or ""),
                       hostname=str(run.get("host", {}).get("hostname") or ""))
    props = ET.SubElement(suite, "properties")
    title = results.get("cases", {}).get(case, {}).get("title", "")
    for name, value in (("case", case), ("lane", lane), ("title", title),
                        ("verdict", verdict["verdict"] if verdict else "missing"),
                        ("verdict_reason", verdict.get("reason", "") if verdict else "")):
        ET.SubElement(props, "property", name=name, value=clean_text(str(value)))
    for cell in cells:
        suite.append(_testcase(results, cell, files, budget))
    if not cells and verdict:
        # A lane skipped before any variant was planned still shows up, with its reason.
        testcase = ET.SubElement(suite, "testcase", classname=f"{case}.{lane}", name=f"{case}[{lane}]", time="0")
        _outcome(testcase, verdict["verdict"], verdict.get("reason", ""), "")
    _sum_attributes(suite, suite.findall("testcase"))
    return suite


def _testcase(results: Mapping[str, Any], cell: Mapping[str, Any], files: Confined | None,
              budget: Budget) -> ET.Element:
    case, lane = cell["case"], cell["lane"]
    testcase = ET.Element("testcase", classname=f"{case}.{lane}", name=f"{case}[{cell['variant']}]",
                          time=f"{float(cell.get('duration_s') or 0.0):.3f}")
    if cell.get("log"):
        testcase.set("file", str(cell["log"]))
    judgement = cell.get("judgement", "skipped")
    _outcome(testcase, judgement, cell.get("reason", ""), _details(results, cell))
    tail = log_tail(files, cell.get("log"), lines=60, max_bytes=LOG_TAIL_BYTES) \
        if files and budget.left >= LOG_TAIL_BYTES else None
    if tail and budget.take(len(tail)):
        ET.SubElement(testcase, "system-out").text = tail
    return testcase


def _outcome(testcase: ET.Element, judgement: str, reason: str, details: str) -> None:
    message = clean_text(reason or judgement)
    if judgement in _PASSING:
        return
    if judgement == "skipped":
        ET.SubElement(testcase, "skipped", message=message)
        return
    tag = "error" if judgement == "infra-error" else "failure"
    ET.SubElement(testcase, tag, message=f"{judgement}: {message}", type=judgement).text = details


def _details(results: Mapping[str, Any], cell: Mapping[str, Any]) -> str:
    exception = cell.get("exception") or {}
    case = results.get("cases", {}).get(cell["case"], {})
    lines = [
        f"judgement: {cell.get('judgement')} ({cell.get('reason', '')})",
        f"expected: {cell.get('expected')}; status: {cell.get('status')}; exit code: {cell.get('exit_code')}"
        + (f"; signal: {cell['signal']}" if cell.get("signal") else ""),
        f"signature: {case.get('signature', '')!r} {signature_text(cell)}",
    ]
    if exception:
        lines.append(f"exception: {exception.get('type')}: {exception.get('message', '')}")
        for frame in (exception.get("traceback") or [])[-MAX_FRAMES:]:
            lines.append(f"  {frame.get('file')}:{frame.get('line')} in {frame.get('function')}: "
                         f"{frame.get('code') or ''}")
    if image_text(cell.get("image")):
        lines.append(f"image: {image_text(cell.get('image'))}")
    if cell.get("log"):
        lines.append(f"log: {cell['log']}")
    return clean_text("\n".join(lines))


def _sum_attributes(node: ET.Element, children: list[ET.Element]) -> None:
    tests = failures = errors = skipped = 0
    seconds = 0.0
    for child in children:
        if child.tag == "testcase":
            tests += 1
            failures += child.find("failure") is not None
            errors += child.find("error") is not None
            skipped += child.find("skipped") is not None
            seconds += float(child.get("time", "0"))
        else:
            tests += int(child.get("tests", "0"))
            failures += int(child.get("failures", "0"))
            errors += int(child.get("errors", "0"))
            skipped += int(child.get("skipped", "0"))
            seconds += float(child.get("time", "0"))
    for name, value in (("tests", tests), ("failures", failures), ("errors", errors), ("skipped", skipped)):
        node.set(name, str(value))
    node.set("time", f"{seconds:.3f}")
