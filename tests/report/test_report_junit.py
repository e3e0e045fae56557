from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import pytest
from report_helpers import HOSTILE

from harness.report import write_run_reports
from harness.report._junit import render_junit


def _outcome(testcase: ET.Element) -> str:
    for tag in ("failure", "error", "skipped"):
        if testcase.find(tag) is not None:
            return tag
    return "passed"


def test_one_testcase_per_cell_with_counts(single_run):
    run_dir, results = single_run
    write_run_reports(run_dir, results)
    root = ET.parse(run_dir / "junit.xml").getroot()
    testcases = root.findall("./testsuite/testcase")
    assert len(testcases) == len(results["cells"])
    judgements = Counter(cell["judgement"] for cell in results["cells"])
    outcomes = Counter(_outcome(tc) for tc in testcases)
    assert outcomes["skipped"] == judgements["skipped"]
    assert outcomes["error"] == judgements["infra-error"]
    assert outcomes["failure"] == sum(judgements[j] for j in ("fix-regressed", "stale-repro", "failed-differently"))
    assert outcomes["passed"] == judgements["confirmed"]
    assert int(root.get("tests")) == len(testcases)
    assert int(root.get("failures")) == outcomes["failure"]
    assert int(root.get("errors")) == outcomes["error"]
    assert int(root.get("skipped")) == outcomes["skipped"]
    for suite in root.findall("testsuite"):
        assert int(suite.get("tests")) == len(suite.findall("testcase"))


def test_names_classnames_and_skip_reasons(single_run):
    _, results = single_run
    root = ET.fromstring(render_junit(results))
    suites = {suite.get("name") for suite in root.findall("testsuite")}
    assert {"var-resume.cuda-sim", "var-resume.cuda", "deepspeed-zero3-offload-clip.cpu"} <= suites
    case = root.find("./testsuite[@name='var-resume.cuda-sim']/testcase[@name='var-resume[map-location-cuda]']")
    assert case is not None and case.get("classname") == "var-resume.cuda-sim"
    skipped = root.find("./testsuite[@name='var-resume.cuda']/testcase/skipped")
    assert skipped.get("message") == "no NVIDIA GPU on this host (nvidia-smi not found)"
    unsupported = root.find("./testsuite[@name='deepspeed-zero3-offload-clip.cpu']/testcase/skipped")
    assert unsupported.get("message").startswith("unsupported: ZeRO-3 offload")


def test_failures_carry_exception_and_signature_verdict(single_run):
    _, results = single_run
    root = ET.fromstring(render_junit(results))
    failure = root.find("./testsuite[@name='var-resume.cuda-sim']/testcase[@name='var-resume[map-location-cuda]']/failure")
    assert failure.get("type") == "fix-regressed"
    assert failure.get("message").startswith("fix-regressed: the fix no longer holds")
    assert "exception: RuntimeError: Expected all tensors to be on the same device" in failure.text
    assert "'Expected all tensors to be on the same device' matched" in failure.text
    assert "torch/optim/adamw.py:243 in step" in failure.text
    stale = root.find("./testsuite[@name='lycoris-extract-diff.cuda-sim']/testcase[@name='lycoris-extract-diff[buggy]']")
    assert stale.find("failure").get("type") == "stale-repro"
    assert "not matched" in stale.find("failure").text
    error = root.find("./testsuite[@name='onetrainer-validation-device.cpu']/testcase/error")
    assert error.get("type") == "infra-error" and "timed out after 300 s" in error.get("message")


def test_hostile_text_is_escaped_and_control_bytes_dropped(single_run):
    run_dir, results = single_run
    write_run_reports(run_dir, results)
    raw = (run_dir / "junit.xml").read_text(encoding="utf-8")
    assert HOSTILE not in raw
    assert "\x1b" not in raw and "\x00" not in raw
    root = ET.fromstring(raw)  # a raw NUL or ESC byte would make this raise
    failed = root.find("./testsuite[@name='onetrainer-validation-device.cuda-sim']/testcase[@name="
                       "'onetrainer-validation-device[buggy]']")
    assert HOSTILE in failed.find("failure").text
    assert HOSTILE in failed.find("system-out").text  # the log tail, as text


def test_junitparser_reads_it(single_run):
    """junitparser is what EnricoMi/publish-unit-test-result-action parses JUnit with."""
    junitparser = pytest.importorskip("junitparser")
    run_dir, results = single_run
    write_run_reports(run_dir, results)
    xml = junitparser.JUnitXml.fromfile(str(run_dir / "junit.xml"))
    tally = Counter()
    for suite in xml:
        for case in suite:
            kinds = {type(r).__name__ for r in case.result}
            tally[next(iter(kinds)) if kinds else "passed"] += 1
    assert tally["Skipped"] == sum(c["judgement"] == "skipped" for c in results["cells"])
    failing = ("fix-regressed", "stale-repro", "failed-differently")
    assert tally["Failure"] == sum(c["judgement"] in failing for c in results["cells"]) == 4
    assert tally["Error"] == sum(c["judgement"] == "infra-error" for c in results["cells"]) == 1


def test_atomic_write_leaves_no_temp_and_keeps_old_file_on_failure(single_run, monkeypatch):
    run_dir, results = single_run
    write_run_reports(run_dir, results)
    before = (run_dir / "index.html").read_text(encoding="utf-8")
    assert not [p for p in run_dir.iterdir() if p.name.startswith(".")]

    def broken_replace(src, dst, **_dir_fds):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr("os.replace", broken_replace)
    changed = dict(results, run=dict(results["run"], status="interrupted"))
    with pytest.raises(OSError):
        write_run_reports(run_dir, changed)
    assert (run_dir / "index.html").read_text(encoding="utf-8") == before
    assert not [p for p in Path(run_dir).iterdir() if p.name.startswith(".")]
