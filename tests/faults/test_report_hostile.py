"""Hostile input to the report site (`python -m harness report`): results.json, history.json and run folders are
shaped by CI artifacts and pull requests. Nothing may be written outside --output, nothing outside a run folder
may be read into the site, and no input may stop the build of the others."""

from __future__ import annotations

import copy
import json
import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

from harness.report import build_site, write_run_reports
from tests.faults.conftest import REPO, run_harness

FIXTURE = REPO / "tests" / "report" / "fixtures" / "single" / "20261121T081200Z-b71e09"
SECRET = "CI_SECRET_TOKEN=hunter2-do-not-publish"


def make_run(folder: Path, run_id: str, mutate: Callable[[dict], object] | None = None, *,
             name: str | None = None) -> Path:
    """A copy of the fixture run as folder/<name or run_id>, with run.id set and ``mutate`` applied."""
    run_dir = folder / (name or run_id)
    shutil.copytree(FIXTURE, run_dir)
    data = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    data["run"]["id"] = run_id
    if mutate:
        mutate(data)
    (run_dir / "results.json").write_text(json.dumps(data), encoding="utf-8")
    return run_dir


def rename_case(old: str, new: str) -> Callable[[dict], None]:
    def mutate(data: dict) -> None:
        data["cases"][new] = data["cases"].pop(old)
        for item in (*data["cells"], *data["verdicts"]):
            if item["case"] == old:
                item["case"] = new
        data["run"]["selection"]["cases"] = None
    return mutate


def files_under(root: Path, *, skip: tuple[Path, ...] = ()) -> set[Path]:
    return {p for p in root.rglob("*") if not any(p == s or s in p.parents for s in skip)}


def site_text(site: Path) -> str:
    return "\n".join(p.read_bytes().decode("utf-8", "replace") for p in site.rglob("*") if p.is_file())


@pytest.mark.fault("results.json names that would write outside the site")
def test_ids_that_would_name_files_outside_the_site_are_skipped_and_listed(tmp_path):
    work = tmp_path / "a" / "b"
    runs = work / "runs"
    make_run(runs, "good-run")
    make_run(runs, "bad-case", rename_case("var-resume", "../../x"))
    make_run(runs, "bad-newline", rename_case("var-resume", "var-resume\n"))
    make_run(runs, "bad-long", rename_case("var-resume", "a" * 249))
    make_run(runs, "bad-variant", lambda d: d["cells"][0].update(variant="../../v"))
    make_run(runs, "../../r", name="bad-run-id")
    # A published history that carries hostile names: a run id and a case id that would name files.
    good = json.loads((FIXTURE / "results.json").read_text())["verdicts"][0]
    record = {"verdict": good["verdict"], "reason": "", "unsupported": False, "host": None, "variants": {}}
    previous = work / "previous"
    previous.mkdir()
    (previous / "history.json").write_text(json.dumps({
        "version": 1, "kind": "repro-matrix-history", "generated": None, "cases": {"../../y": {"title": "y"}},
        "hosts": {}, "environments": {},
        "runs": [{"id": "../../h", "started": "2026-11-01T00:00:00+00:00", "verdicts": {"var-resume": {"cpu": record}}},
                 {"id": "old-run", "started": "2026-11-02T00:00:00+00:00", "verdicts": {"../../z": {"cpu": record}}},
                 {"id": "kept-run", "started": "2026-11-03T00:00:00+00:00",
                  "verdicts": {"var-resume": {"cpu": record}}}]}))
    site = work / "out" / "site"
    site.parent.mkdir()
    before = files_under(tmp_path)
    proc = run_harness("report", "--input", str(runs), "--input", str(previous), "--output", str(site))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert files_under(tmp_path, skip=(site,)) == before  # nothing written anywhere but the site
    for name in ("bad-case", "bad-newline", "bad-long", "bad-variant", "bad-run-id"):
        assert f"{runs / name / 'results.json'}" in proc.stdout, name  # listed with the file...
    assert "'../../x'" in proc.stdout and "'var-resume\\n'" in proc.stdout  # ...and why
    assert "'../../y'" in proc.stdout and "runs[0]" in proc.stdout and "runs[1]" in proc.stdout
    assert (site / "runs" / "good-run" / "index.html").is_file() and (site / "cases" / "var-resume.html").is_file()
    history = json.loads((site / "history.json").read_text())
    assert [r["id"] for r in history["runs"]] == ["kept-run", "good-run"]
    assert "../" not in (site / "history.json").read_text() and "y" not in history["cases"]
    assert "Inputs that could not be read" in (site / "index.html").read_text()
    # The site's own history carries no hostile name: rebuilding from it writes nowhere else either.
    build_site([site], site)
    assert files_under(tmp_path, skip=(site,)) == before


@pytest.fixture
def secret_file(tmp_path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET + "\n")
    return path


@pytest.mark.fault("results.json log paths outside the run, or symlinked logs")
def test_logs_are_read_only_from_inside_their_run_and_never_through_a_symlink(tmp_path, secret_file):
    runs = tmp_path / "runs"
    make_run(runs, "log-proc", lambda d: d["cells"][0].update(log="/proc/self/environ"))
    make_run(runs, "log-up", lambda d: d["cells"][0].update(log="../../secret.txt"))
    planted = make_run(runs, "planted")
    cells = json.loads((planted / "results.json").read_text())["cells"]
    by_dir: dict[Path, list[str]] = {}
    for cell in cells:
        if cell["log"]:
            by_dir.setdefault(Path(cell["log"]).parent, []).append(cell["log"])
    three = next(logs for logs in by_dir.values() if len(logs) >= 3)
    other, clean = [logs for logs in by_dir.values() if logs is not three][:2]
    logs = [*three[:3], other[0], clean[0]]
    (planted / logs[0]).unlink()
    (planted / logs[0]).symlink_to(secret_file)  # logs/x.log -> the secret
    hard = planted / logs[1]
    hard.unlink()
    os.link(secret_file, hard)  # a hard link carries the secret's contents too
    fifo = planted / logs[2]
    fifo.unlink()
    os.mkfifo(fifo)  # would block a reader forever
    linked_dir = planted / Path(logs[3]).parent
    decoy = tmp_path / "decoy" / linked_dir.name
    shutil.copytree(linked_dir, decoy)
    (decoy / Path(logs[3]).name).write_text(SECRET)
    shutil.rmtree(linked_dir)
    linked_dir.symlink_to(decoy, target_is_directory=True)  # logs/<case>/<lane> -> elsewhere
    (planted / "logs" / "evil.html").write_text("<script>alert(document.cookie)</script>")
    (planted / "index.html").write_text(f"<script>alert(1)</script>{SECRET}")  # a forged report page
    site = tmp_path / "site"
    proc = run_harness("report", "--input", str(runs), "--output", str(site), timeout=120,
                       env={"CI_SECRET_TOKEN": SECRET})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "hunter2" not in site_text(site)
    for name in ("log-proc", "log-up"):
        assert f"{runs / name / 'results.json'}" in proc.stdout and "cells/0/log" in proc.stdout
    report = site / "runs" / "planted"
    assert (report / "index.html").is_file()  # the run itself still publishes, without those logs
    assert "symlink" in proc.stdout and "hard links" in proc.stdout and "not a regular file" in proc.stdout
    assert not (report / "logs" / "evil.html").exists()  # only the logs the cells name are copied
    page = (report / "index.html").read_text()
    assert "<script>alert(1)</script>" not in page and "log not published" in page
    assert not (report / logs[0]).exists() and (report / logs[4]).is_file()
    # The run folder's own report (the `cases` side) reads logs the same way.
    write_run_reports(planted, json.loads((planted / "results.json").read_text()))
    assert "hunter2" not in (planted / "index.html").read_text() + (planted / "junit.xml").read_text()


@pytest.mark.fault("structurally wrong results.json in the report input")
def test_structurally_wrong_inputs_are_skipped_and_listed(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "good-run")
    make_run(runs, "no-lane", lambda d: d["verdicts"][0].pop("lane"))
    make_run(runs, "cells-dict", lambda d: d.update(cells={}))
    make_run(runs, "cell-string", lambda d: d["cells"].__setitem__(0, "x"))
    make_run(runs, "verdict-word", lambda d: d["verdicts"][0].update(verdict="<b>pwned</b>"))
    deep = runs / "deep"
    deep.mkdir()
    (deep / "results.json").write_text("[" * 200_000)
    # What Python's parser lets through: a lone surrogate (the site's UTF-8 writers then crashed the whole
    # build), NaN and a number too large for a float (history.json would not be JSON any more).
    make_run(runs, "surrogate", lambda d: d["run"]["host"].update(cpu="\ud800"))
    make_run(runs, "not-a-number", lambda d: d["cells"][0].update(duration_s=float("nan")))
    huge = make_run(runs, "huge-number")
    (huge / "results.json").write_text((huge / "results.json").read_text().replace('"duration_s": ', '"duration_s": 1e999', 1))
    text = copy.deepcopy(json.loads((FIXTURE / "results.json").read_text()))
    previous = tmp_path / "previous"
    previous.mkdir()
    record = {"verdict": "confirmed", "reason": "", "variants": {}}
    (previous / "history.json").write_text(json.dumps({
        "version": 1, "kind": "repro-matrix-history", "cases": {"var-resume": text["cases"]["var-resume"]},
        "hosts": {"abc": "not a host"}, "environments": {},
        "runs": [{"id": "no-verdict", "started": None, "verdicts": {"var-resume": {"cpu": {"reason": "x"}}}},
                 {"id": "verdicts-list", "verdicts": []}, "not a run",
                 {"id": "old-good", "started": "2026-11-01T00:00:00+00:00", "verdicts": {"var-resume": {"cpu": record}}}]}))
    summary = build_site([runs, previous], tmp_path / "site")
    problems = "\n".join(summary.problems)
    for name in ("no-lane", "cells-dict", "cell-string", "verdict-word", "deep", "surrogate", "not-a-number",
                 "huge-number"):
        assert str(runs / name / "results.json") in problems, name
    assert "lane" in problems and "nested too deeply" in problems and "lone surrogate" in problems
    assert "NaN is not a JSON number" in problems and "too large for a number" in problems
    for where in ("runs[0]", "runs[1]", "runs[2]", "hosts['abc']"):
        assert where in problems, where
    assert summary.runs == 2 and summary.new_runs == ("good-run",)
    assert (tmp_path / "site" / "runs" / "good-run" / "index.html").is_file()
    front = (tmp_path / "site" / "index.html").read_text()
    assert "<b>pwned</b>" not in front and "Inputs that could not be read" in front


@pytest.mark.fault("report file permissions and links")
def test_site_files_are_copies_with_the_site_mode(tmp_path):
    run_dir = make_run(tmp_path / "runs", "perm-run")
    for path in run_dir.rglob("*"):  # as the harness writes them: results.json via mkstemp is 0600
        path.chmod(0o700 if path.is_dir() else 0o600)
    site = tmp_path / "site"
    build_site([tmp_path / "runs"], site)
    report = site / "runs" / "perm-run"
    files = [p for p in site.rglob("*") if p.is_file()]
    assert report / "results.json" in files and len([p for p in files if p.suffix == ".log"]) >= 4
    for path in files:
        info = path.stat()
        assert stat.S_IMODE(info.st_mode) == 0o644, path
        assert info.st_nlink == 1, path  # a copy, never a hard link to a run file
    for path in [site, *(p for p in site.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(path.stat().st_mode) & 0o055 == 0o055, path  # others can list and read
    log = next(p for p in run_dir.rglob("*.log"))
    published = report / log.relative_to(run_dir)
    before = published.read_text()
    log.write_text("changed by a later run\n")
    assert published.read_text() == before


@pytest.mark.fault("report --output inside its own input")
def test_output_overlapping_its_input_is_refused(tmp_path):
    runs = tmp_path / "reports"
    run_dir = make_run(runs, "one-run")
    write_run_reports(run_dir, json.loads((run_dir / "results.json").read_text()))
    page = (run_dir / "index.html").read_bytes()
    for output in (runs, run_dir, run_dir / "site", tmp_path):
        proc = run_harness("report", "--input", str(runs), "--output", str(output))
        assert proc.returncode == 2, (output, proc.stdout + proc.stderr)
        assert "error:" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
        assert (run_dir / "index.html").read_bytes() == page
        assert not (runs / "history.json").exists() and not (tmp_path / "history.json").exists()
    # The default layout (reports/site inside reports/) keeps working and sees later runs.
    proc = run_harness("report", "--input", str(runs), "--output", str(runs / "site"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    make_run(runs, "two-run", lambda d: d["run"].update(started="2026-11-22T08:12:00+00:00"))
    proc = run_harness("report", "--input", str(runs), "--output", str(runs / "site"))
    assert proc.returncode == 0 and "2 runs (2 new)" in proc.stdout, proc.stdout  # both folders read again


@pytest.mark.fault("a huge results.json")
def test_a_huge_results_json_is_refused_unread_and_a_large_one_gives_a_bounded_page(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "small-run")
    make_run(runs, "huge-run", lambda d: d["verdicts"][0].update(reason="x" * (40 * 2**20)))
    big = make_run(runs, "big-run", lambda d: _inflate(d, cells=12_000, text=600))
    assert 10 * 2**20 < (big / "results.json").stat().st_size < 32 * 2**20
    summary = build_site([runs], tmp_path / "site")
    problem = next(p for p in summary.problems if "huge-run" in p)
    assert "above the 32 MB limit" in problem
    report = tmp_path / "site" / "runs" / "big-run"
    page = (report / "index.html").read_text()
    assert len(page) < 16 * 2**20, len(page)
    assert "This page is shortened" in page and "the first 3,000 have a row" in page
    assert (report / "junit.xml").stat().st_size < 48 * 2**20
    assert summary.runs == 2
    case = json.loads((FIXTURE / "results.json").read_text())["verdicts"][0]["case"]
    assert (tmp_path / "site" / "cases" / f"{case}.html").stat().st_size < 2**20
    assert "w" * 2001 not in (tmp_path / "site" / "history.json").read_text()


def _inflate(data: dict, *, cells: int, text: int) -> None:
    template = data["cells"][0]
    frames = [{"file": "f" * text, "line": i, "function": "g" * 200, "code": "c" * text} for i in range(60)]
    data["cells"] = [dict(template, variant=f"v{i}", reason="r" * text, exception={
        "type": "RuntimeError", "message": "m" * text, "traceback": frames if i < 50 else []}) for i in range(cells)]
    data["verdicts"][0]["reason"] = "w" * (4 * 2**20)  # carried into history.json and every case page


@pytest.mark.fault("out-of-range command-line numbers")
@pytest.mark.parametrize(("args", "expected"), [
    (("--keep-reports", "-1"), "--keep-reports: '-1' is not an integer from 0 to 100000"),
    (("--stale-days", "-5"), "--stale-days: '-5' is not an integer from 1 to 3650"),
    (("--stale-days", "0"), "--stale-days: '0' is not an integer from 1 to 3650"),
    (("--keep-reports", "many"), "--keep-reports: 'many' is not an integer from 0 to 100000"),
])
def test_report_numbers_out_of_range_are_usage_errors(tmp_path, args, expected):
    make_run(tmp_path / "runs", "one-run")
    proc = run_harness("report", "--input", str(tmp_path / "runs"), "--output", str(tmp_path / "site"), *args)
    assert proc.returncode == 2 and expected in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "site").exists()


@pytest.mark.fault("output folder read-only or a file")
def test_report_output_read_only_or_a_file_is_a_clear_error(tmp_path, read_only_folder):
    make_run(tmp_path / "runs", "one-run")
    proc = run_harness("report", "--input", str(tmp_path / "runs"), "--output", str(read_only_folder / "site"))
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "could not write the site" in proc.stdout and "Traceback" not in proc.stdout + proc.stderr
    afile = tmp_path / "a-file"
    afile.write_text("keep me")
    proc = run_harness("report", "--input", str(tmp_path / "runs"), "--output", str(afile))
    assert proc.returncode == 2 and "is a file" in proc.stdout, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr and afile.read_text() == "keep me"


@pytest.mark.fault("a results.json or history run dated in the future")
def test_a_run_dated_in_the_future_never_becomes_the_newest_verdict(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "real-run")  # var-resume on cuda-sim: fix-regressed

    def forged(data: dict) -> None:
        data["run"].update(started="9999-12-31T00:00:00+00:00", finished="9999-12-31T00:10:00+00:00")
        for verdict in data["verdicts"]:
            verdict["verdict"] = "confirmed" if verdict["verdict"] != "skipped" else "skipped"
    make_run(runs, "future-run", forged)
    summary = build_site([runs], tmp_path / "site")
    assert summary.latest[("var-resume", "cuda-sim")] == "fix-regressed"
    assert any("future-run" in p and "is in the future" in p for p in summary.problems), summary.problems
    assert not (tmp_path / "site" / "runs" / "future-run").exists()
    # A site built before this check carries the forged run in its history: the next build drops it too.
    history_path = tmp_path / "site" / "history.json"
    history = json.loads(history_path.read_text())
    real = next(r for r in history["runs"] if r["id"] == "real-run")
    fake = copy.deepcopy(real)
    fake.update(id="future-run", started="9999-12-31T00:00:00+00:00", report=None)
    fake["verdicts"]["var-resume"]["cuda-sim"]["verdict"] = "confirmed"
    history["runs"].append(fake)
    history_path.write_text(json.dumps(history))
    summary = build_site([tmp_path / "site"], tmp_path / "site")
    assert summary.latest[("var-resume", "cuda-sim")] == "fix-regressed"
    assert any("future-run" in p and "is in the future" in p for p in summary.problems), summary.problems


@pytest.mark.fault("two verdicts for one (case, lane) in a run")
def test_duplicate_verdicts_in_one_run_are_refused(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "good-run")

    def duplicate(data: dict) -> None:
        regressed = next(v for v in data["verdicts"] if v["verdict"] == "fix-regressed")
        data["verdicts"].append(dict(regressed, verdict="confirmed"))
    make_run(runs, "dup-run", duplicate, name="dup")
    summary = build_site([runs], tmp_path / "site")
    problem = next(p for p in summary.problems if "dup" in p)
    assert "a second verdict for case 'var-resume' on lane cuda-sim" in problem
    assert summary.runs == 1 and summary.latest[("var-resume", "cuda-sim")] == "fix-regressed"


@pytest.mark.fault("a hard-link backup of a run")
def test_a_hard_link_backup_leaves_the_run_publishable(tmp_path):
    runs = tmp_path / "runs"
    run = make_run(runs, "linked-run")
    backup = tmp_path / "backup"
    for path in run.rglob("*"):  # what ``cp -al`` does
        target = backup / path.relative_to(run)
        if path.is_dir():
            target.mkdir(parents=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
    assert (run / "results.json").stat().st_nlink == 2
    summary = build_site([runs], tmp_path / "site")
    assert summary.runs == 1 and (tmp_path / "site" / "runs" / "linked-run" / "index.html").is_file()
    assert not any("results.json" in p for p in summary.problems), summary.problems


@pytest.mark.fault("a killed report build's temporary files")
def test_what_a_killed_build_left_is_never_published(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "one-run")
    site = tmp_path / "site"
    build_site([runs], site)
    leftovers = [site / "runs" / ".one-run.k1ll3d_x", site / "runs" / ".one-run.old", site / ".index.html.abc_1234",
                 site / "cases" / ".var-resume.html.zz9zz9zz"]
    for path in leftovers:
        if path.name.endswith((".k1ll3d_x", ".old")):
            path.mkdir()
            (path / "index.html").write_text("half written")
        else:
            path.write_text("half written")
    (site / ".nojekyll").write_text("")  # a site's own dotfile stays
    build_site([runs, site], site)
    assert not [p for p in leftovers if p.exists()]
    assert (site / ".nojekyll").exists() and (site / "runs" / "one-run" / "index.html").is_file()


@pytest.mark.fault("two report builds into one output")
def test_a_second_build_into_the_same_output_is_refused_while_one_runs(tmp_path):
    import fcntl

    from harness._exceptions import UsageError
    runs = tmp_path / "runs"
    make_run(runs, "one-run")
    site = tmp_path / "site"
    site.mkdir()
    held = os.open(site, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)  # the lock a running build holds
        with pytest.raises(UsageError, match="another report build is writing into"):
            build_site([runs], site)
        proc = run_harness("report", "--input", str(runs), "--output", str(site))
        assert proc.returncode == 2 and "another report build" in proc.stdout + proc.stderr, proc.stdout
    finally:
        os.close(held)
    assert not (site / "index.html").exists()
    assert build_site([runs], site).runs == 1  # released: the next build goes ahead


@pytest.mark.fault("a results.json of 20,000 cases")
def test_a_run_of_more_cases_than_the_bound_is_refused_and_the_others_publish(tmp_path):
    runs = tmp_path / "runs"
    make_run(runs, "good-run")

    def many(data: dict) -> None:
        meta = data["cases"]["var-resume"]
        data["cases"].update({f"case-{i:05d}": meta for i in range(20_000)})
    make_run(runs, "huge-run", many)
    summary = build_site([runs], tmp_path / "site")
    assert any("huge-run" in p and "20,004 cases, above the 2,000" in p for p in summary.problems), summary.problems
    assert summary.runs == 1 and len(list((tmp_path / "site" / "cases").iterdir())) < 10
