"""Untrusted inputs, piece by piece: confined reads, name checks, history entries, page bounds, and the words the
pages and the terminal use (the fault tests in tests/faults/test_report_hostile.py drive the whole command)."""

from __future__ import annotations

import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
from report_helpers import SINGLE, load

from harness._vocabulary import RUN_ID
from harness.report import build_site, write_run_reports
from harness.report._common import name_problem
from harness.report._history import History
from harness.report._inputs import check_results
from harness.report._io import ReportInputError
from harness.report._run import render_run_html
from harness.report._safe import Confined, UnsafePath, read_inside, split_relative
from harness.run._results import new_run_dir

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a", "a\\b", "a\x00b", "a/"])
def test_only_plain_relative_names_are_opened(name):
    with pytest.raises(UnsafePath):
        split_relative(name)


def test_confined_reads_refuse_symlinks_fifos_and_hard_links(tmp_path):
    root = tmp_path / "run"
    (root / "logs" / "real").mkdir(parents=True)
    (root / "logs" / "real" / "ok.log").write_text("fine\n")
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (root / "logs" / "link.log").symlink_to(outside)
    (root / "logs" / "dir").symlink_to(tmp_path, target_is_directory=True)
    os.mkfifo(root / "logs" / "fifo.log")
    os.link(outside, root / "logs" / "hard.log")
    with Confined(root) as files, files.open("logs/real/ok.log") as fd:
        assert os.read(fd, 100) == b"fine\n"
    for name, why in (("logs/link.log", "symlink"), ("logs/dir/outside.txt", "symlink"),
                      ("logs/fifo.log", "not a regular file"), ("logs/hard.log", "hard links"),
                      ("logs/none.log", "No such file")):
        with pytest.raises(UnsafePath, match=why):
            read_inside(root, name, limit=1000)
    with pytest.raises(UnsafePath, match="above the"):
        read_inside(root, "logs/real/ok.log", limit=2)


@pytest.mark.parametrize(("kind", "value", "ok"), [
    ("case id", "var-resume", True), ("case id", "var-resume\n", False), ("case id", "a" * 65, False),
    ("case id", "../x", False), ("case id", "Var", False), ("variant", "release-2.1.0", True),
    ("variant", "fix+", True), ("variant", "a/b", False), ("lane", "cuda-sim", True), ("lane", "gpu", False),
    ("run id", "20261121T081200Z-b71e09", True), ("run id", "gh-123-1", True), ("run id", "../r", False),
    ("run id", "x" * 102, False), ("case id", 7, False),
])
def test_names_must_match_their_pattern_in_full(kind, value, ok):
    assert (name_problem(kind, value) is None) is ok


def test_the_harness_run_ids_match_the_report_pattern(tmp_path, monkeypatch):
    monkeypatch.delenv("REPRO_MATRIX_RUN_ID", raising=False)
    assert RUN_ID.fullmatch(new_run_dir(tmp_path)[0])
    monkeypatch.setenv("REPRO_MATRIX_RUN_ID", "g" * 101)
    assert RUN_ID.fullmatch(new_run_dir(tmp_path)[0])


def test_the_fixtures_pass_the_checks_and_a_bad_log_path_does_not():
    data = load(SINGLE)
    assert check_results(copy.deepcopy(data), "x") == data
    data["cells"][0]["log"] = "logs/../../etc/passwd"
    with pytest.raises(ReportInputError, match="cells/0/log"):
        check_results(data, "x")


def test_history_entries_are_checked_one_by_one():
    record = {"verdict": "confirmed", "reason": "", "variants": {"fix+": {"role": "fix"}}}
    problems: list[str] = []
    history = History.from_dict({"version": 1, "kind": "repro-matrix-history", "cases": {"var-resume": {}},
                                 "hosts": {"a1b2c3d4e5f6": {"hostname": "h"}}, "environments": {"e": {"installed": []}},
                                 "runs": [{"id": "ok", "verdicts": {"var-resume": {"cpu": record}}},
                                          {"id": "bad-lane", "verdicts": {"var-resume": {"gpu": record}}},
                                          {"id": "bad\nid", "verdicts": {}}]}, "h.json", problems)
    assert list(history.runs) == ["ok"] and list(history.cases) == ["var-resume"]
    assert list(history.hosts) == ["a1b2c3d4e5f6"] and history.environments == {}
    assert [p.split(":")[1].strip() for p in problems] == ["runs[1] (id 'bad-lane')", "runs[2] (id 'bad\\nid')",
                                                           "environments['e']"]


def test_run_page_words_a_phone_reader_and_a_maintainer_need(single_run):
    run_dir, results = single_run
    results["run"]["selection"]["lanes"] = None
    html = render_run_html(results, run_dir)
    assert "lanes: all" in html
    row = html.split('data-variant="no-fused"', 1)[1].split("</tr>", 1)[0]
    assert 'title="nothing was expected to match">&mdash;' in row and "not matched" not in row
    assert '<td data-label="signature">not matched</td>' in html  # a buggy variant that did not raise it
    assert html.count('<details class="env"') == len(results["environments"])  # each environment listed once


def test_a_symlinked_log_is_neither_read_nor_linked(single_run, tmp_path):
    run_dir, results = single_run
    secret = tmp_path / "secret.txt"
    secret.write_text("hunter2\n")
    log = run_dir / results["cells"][0]["log"]
    log.unlink()
    log.symlink_to(secret)
    write_run_reports(run_dir, results)
    page = (run_dir / "index.html").read_text(encoding="utf-8")
    assert "hunter2" not in page + (run_dir / "junit.xml").read_text(encoding="utf-8")
    assert f'href="{results["cells"][0]["log"]}"' not in page and "log not published" in page


def test_case_history_heading_counts_runs_in_words(single_run, tmp_path):
    run_dir, _ = single_run
    summary = build_site([run_dir], tmp_path / "site")
    assert "History (1 run)</h2>" in (tmp_path / "site" / "cases" / "var-resume.html").read_text(encoding="utf-8")
    assert str(summary).startswith(f"site {tmp_path / 'site' / 'index.html'}: 1 run (1 new), ")


def test_report_command_says_the_site_once_and_neutralises_hostile_names(single_run, tmp_path):
    run_dir, _ = single_run
    hostile = run_dir.parent / "evil\x1b]0;pwned\x07\x1b[2J"
    hostile.mkdir()
    (hostile / "results.json").write_text("{}", encoding="utf-8")
    env = {**os.environ, "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "harness", "report", "--input", str(run_dir.parent), "--output",
                           str(tmp_path / "site")], cwd=ROOT, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.count(str(tmp_path / "site")) == 1  # the "report:" line named the site twice
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout
    assert "evil\\x1b]0;pwned\\x07\\x1b[2J" in proc.stdout


def test_attention_and_skip_lists_are_bounded_on_the_page(single_run):
    run_dir, results = single_run
    results["verdicts"] += [{"case": f"c{i}", "lane": lane, "verdict": verdict, "reason": "r" * 100}
                            for i in range(4000) for lane, verdict in (("cpu", "infra-error"), ("cuda", "skipped"))]
    html = render_run_html(results, run_dir)
    assert html.count('<li><span class="badge v-infra-error">') <= 300
    assert "list at most 300 entries" in html and "4,004 cases: the first 1,000 are shown" in html
    assert len(html) < 4 * 2**20


def test_a_rebuild_skips_the_checks_of_contents_already_checked_and_only_those(tmp_path, monkeypatch):
    import json
    import shutil

    from harness.report import _inputs
    from harness.report._checked import checks_version

    cache = tmp_path / "cache" / "report-checked"
    monkeypatch.setenv("REPRO_MATRIX_REPORT_CACHE", str(cache))
    calls: list[str] = []
    real = _inputs.check_results
    monkeypatch.setattr(_inputs, "check_results", lambda data, path: calls.append(str(path)) or real(data, path))
    runs = tmp_path / "runs"
    shutil.copytree(SINGLE, runs / SINGLE.name)
    build_site([runs], tmp_path / "site1")
    assert len(calls) == 1 and cache.read_text().splitlines()[0] == checks_version()
    build_site([runs], tmp_path / "site2")
    assert len(calls) == 1  # the same bytes: not checked again
    assert (tmp_path / "site2" / "runs" / SINGLE.name / "index.html").read_text() == \
        (tmp_path / "site1" / "runs" / SINGLE.name / "index.html").read_text()
    # Other bytes are checked again, and a bad file is refused even though its run id was seen before.
    results = runs / SINGLE.name / "results.json"
    data = json.loads(results.read_text())
    data["cases"]["../../x"] = data["cases"].pop(next(iter(data["cases"])))
    results.write_text(json.dumps(data))
    summary = build_site([runs], tmp_path / "site3")
    assert len(calls) == 2 and summary.runs == 0 and "'../../x'" in summary.problems[0]
    # A record written by other checks (another version of the schema or code) is not trusted.
    cache.write_text("repro-matrix report-checked 0000\n" + "\n".join(cache.read_text().splitlines()[1:]) + "\n")
    shutil.rmtree(runs / SINGLE.name)
    shutil.copytree(SINGLE, runs / SINGLE.name)
    build_site([runs], tmp_path / "site4")
    assert len(calls) == 3


def test_a_rebuild_takes_the_history_of_unchanged_contents_from_the_record_and_rereads_changed_ones(
        tmp_path, monkeypatch):
    import json
    import shutil
    from datetime import UTC, datetime

    from harness.report import _inputs, _site_reports

    cache = tmp_path / "cache" / "report-checked"
    monkeypatch.setenv("REPRO_MATRIX_REPORT_CACHE", str(cache))
    checks: list[str] = []
    real_check = _inputs.check_results
    monkeypatch.setattr(_inputs, "check_results", lambda data, path: checks.append(str(path)) or real_check(data, path))
    prepared: list[str] = []
    real_prepare = History.prepare
    monkeypatch.setattr(History, "prepare", lambda self, results: prepared.append(results["run"]["id"]) or
                        real_prepare(self, results))
    runs = tmp_path / "runs"
    shutil.copytree(SINGLE, runs / SINGLE.name)
    now = datetime(2030, 1, 1, tzinfo=UTC)
    build_site([runs], tmp_path / "site1", now=now)
    assert len(checks) == 1 and len(prepared) == 1
    original, parsed = (runs / SINGLE.name / "results.json").read_bytes(), []
    real_loads = json.loads
    monkeypatch.setattr(_site_reports.json, "loads", lambda raw, **kw: (parsed.append(raw) if raw == original else None) or
                        real_loads(raw, **kw))
    build_site([runs], tmp_path / "site2", now=now)
    assert len(checks) == 1 and len(prepared) == 1  # neither checked nor made into history again
    assert len(parsed) == 1  # parsed only to render the run's own report into the new folder
    for page in ("history.json", "index.html", *(f"cases/{p.name}" for p in (tmp_path / "site1" / "cases").iterdir())):
        assert (tmp_path / "site2" / page).read_bytes() == (tmp_path / "site1" / page).read_bytes(), page
    build_site([runs], tmp_path / "site2", now=now)
    assert len(checks) == 1 and len(prepared) == 1
    assert len(parsed) == 2  # a rebuild over that site: parsed only for the log names that key its kept report

    # Changed bytes are read, checked and made into history again, and the site says what they say.
    results = runs / SINGLE.name / "results.json"
    data = json.loads(results.read_text())
    data["verdicts"][0]["reason"] = "a reason only the changed file gives"
    results.write_text(json.dumps(data))
    build_site([runs], tmp_path / "site2", now=now)
    assert len(checks) == 2 and len(prepared) == 2
    assert "a reason only the changed file gives" in (tmp_path / "site2" / "history.json").read_text()
    # Changed bytes that fail the checks are refused, though the run id's history is in the record.
    data["cases"]["../../x"] = data["cases"].pop(next(iter(data["cases"])))
    results.write_text(json.dumps(data))
    summary = build_site([runs], tmp_path / "site3", now=now)
    assert len(checks) == 3 and summary.runs == 0 and "'../../x'" in summary.problems[0]

    # The kept history of other code (another version of _history.py, say) is not used: made again.
    shutil.rmtree(runs / SINGLE.name)
    shutil.copytree(SINGLE, runs / SINGLE.name)
    history_record = cache.with_name("report-checked.history.json")
    kept = json.loads(history_record.read_text())
    history_record.write_text(json.dumps({**kept, "version": "repro-matrix report-prepared 0000"}))
    build_site([runs], tmp_path / "site4", now=now)
    assert len(checks) == 3 and len(prepared) == 3  # the bytes' checks are still known; their history is not
    # Nor is an entry for contents the record does not list as checked.
    cache.write_text(cache.read_text().splitlines()[0] + "\n")
    build_site([runs], tmp_path / "site5", now=now)
    assert len(checks) == 4 and len(prepared) == 4


def test_a_rebuild_keeps_an_unchanged_run_report_and_redoes_one_that_was_touched(tmp_path, monkeypatch):
    import shutil

    from harness.report import _site_reports

    monkeypatch.setenv("REPRO_MATRIX_REPORT_CACHE", str(tmp_path / "report-checked"))
    calls: list[Path] = []
    real = _site_reports.write_run_reports
    monkeypatch.setattr(_site_reports, "write_run_reports", lambda dest, results: calls.append(dest) or real(dest, results))
    runs = tmp_path / "runs"
    shutil.copytree(SINGLE, runs / SINGLE.name)
    site = tmp_path / "site"
    build_site([runs], site)
    page = site / "runs" / SINGLE.name / "index.html"
    original = page.read_text()
    build_site([runs], site)
    assert len(calls) == 1  # same inputs, same code, the report untouched: kept as it is
    page.write_text(original.replace("<body", "<body data-forged", 1))  # the published report was changed
    build_site([runs], site)
    assert len(calls) == 2 and page.read_text() == original
    log = next((runs / SINGLE.name / "logs").rglob("*.log"))
    log.write_text(log.read_text() + "one more line\n")  # an input log changed: redone
    build_site([runs], site)
    assert len(calls) == 3
    build_site([runs], tmp_path / "elsewhere")  # another output folder: its own report
    assert len(calls) == 4
