from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime, timedelta

import pytest

from harness.report import ReportInputError, build_site
from harness.report._history import History
from harness.report._inputs import read_results
from harness.report._timeline import timelines

DAY1, DAY2, DAY3 = "2026-11-01T02:00:00+00:00", "2026-11-02T02:00:00+00:00", "2026-11-03T02:00:00+00:00"
NEAR = datetime(2026, 11, 4, tzinfo=UTC)


def _history(site):
    return json.loads((site / "history.json").read_text(encoding="utf-8"))


def _without_generated(data):
    return {k: v for k, v in data.items() if k != "generated"}


def test_flip_is_marked_with_the_environment_diff(make_run, tmp_path):
    make_run("a", DAY1)
    make_run("b", DAY2, verdicts={("var-resume", "cpu"): "fix-regressed"},
             installed={"torch": "2.14.0+cpu", "numpy": "2.4.0"},
             host={"hostname": "runner-2", "cuda_driver": "560.1"})
    make_run("c", DAY3, verdicts={("var-resume", "cpu"): "fix-regressed"})
    summary = build_site([tmp_path / "made"], tmp_path / "site", now=NEAR)
    history = History.from_dict(_history(tmp_path / "site"))
    lane = timelines(history)[("var-resume", "cpu")]
    assert [e.verdict for e in lane.entries] == ["confirmed", "fix-regressed", "fix-regressed"]
    assert list(lane.flips) == ["b", "c"] or list(lane.flips) == ["b"]
    flip = lane.flips["b"]
    assert (flip.before.run["id"], flip.after.run["id"]) == ("a", "b")
    rows = {what: (before, after) for what, before, after in flip.diff}
    assert rows["torch"] == ("2.13.0+cpu", "2.14.0+cpu")  # torch first, for every variant
    assert rows["numpy"] == ("2.3.4", "2.4.0")
    assert rows["host"] == ("dev-laptop", "runner-2")
    assert rows["NVIDIA driver"] == ("none", "560.1")
    assert flip.diff[0][0] == "host" and [r[0] for r in flip.diff].index("torch") < [r[0] for r in flip.diff].index("numpy")
    assert "c" not in lane.flips  # same verdict again is not a flip, even though the env changed back
    page = (tmp_path / "site" / "cases" / "var-resume.html").read_text(encoding="utf-8")
    assert 'href="#flip-cpu-b"' in page and 'id="flip-cpu-b"' in page
    assert "<td>torch</td><td><code>2.13.0+cpu</code></td><td><code>2.14.0+cpu</code></td>" in page
    assert summary.latest[("var-resume", "cpu")] == "fix-regressed"


def test_skips_between_real_runs_are_not_flips(make_run, tmp_path):
    make_run("a", DAY1)
    make_run("b", DAY2, lanes=["cpu"])  # no cuda-sim verdict at all
    make_run("c", DAY3, verdicts={("lycoris-extract-diff", "cuda-sim"): "stale-repro"})
    build_site([tmp_path / "made"], tmp_path / "site", now=NEAR)
    lane = timelines(History.from_dict(_history(tmp_path / "site")))[("var-resume", "cuda")]
    assert [e.verdict for e in lane.entries] == ["skipped", "skipped", "skipped"][: len(lane.entries)]
    assert not lane.flips
    page = (tmp_path / "site" / "cases" / "lycoris-extract-diff.html").read_text(encoding="utf-8")
    assert "No verdict has changed between real runs." in page


def test_flip_without_environment_change_says_so(make_run, tmp_path):
    make_run("a", DAY1)
    make_run("b", DAY2, verdicts={("var-resume", "cpu"): "failed-differently"})
    build_site([tmp_path / "made"], tmp_path / "site", now=NEAR)
    page = (tmp_path / "site" / "cases" / "var-resume.html").read_text(encoding="utf-8")
    assert "No change recorded in the packages, image or host" in page


def test_staleness_alarm(make_run, tmp_path):
    make_run("a", DAY1)
    late = datetime(2026, 11, 20, tzinfo=UTC)
    summary = build_site([tmp_path / "made"], tmp_path / "site", now=late, stale_days=7)
    stale = {(s.case, s.lane): s for s in summary.stale}
    assert ("var-resume", "cpu") in stale and "older than 7 days" in stale[("var-resume", "cpu")].reason
    assert stale[("var-resume", "cpu")].last_real == datetime.fromisoformat(DAY1)
    # cuda only ever skipped: never ran for real
    assert stale[("var-resume", "cuda")].last_real is None
    assert "never ran for real: only skipped (no NVIDIA GPU" in stale[("var-resume", "cuda")].reason
    # every variant unsupported there: nothing is owed
    assert ("deepspeed-zero3-offload-clip", "cpu") not in stale
    front = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "cuda</strong>: no case has ever run for real on this lane" in front
    assert "var-resume / cpu</strong>: last real run 18 days ago (confirmed); older than 7 days" in front
    fresh = build_site([tmp_path / "site"], tmp_path / "site", now=datetime.fromisoformat(DAY1) + timedelta(days=2))
    assert {(s.case, s.lane) for s in fresh.stale if s.last_real is not None} == set()


def test_retired_cases_raise_no_alarm(make_run, tmp_path):
    run_dir = make_run("a", DAY1)
    data = read_results(run_dir)
    data["cases"]["var-resume"]["status"] = "retired"
    (run_dir / "results.json").write_text(json.dumps(data), encoding="utf-8")
    summary = build_site([run_dir], tmp_path / "site", now=datetime(2026, 12, 30, tzinfo=UTC))
    assert not [s for s in summary.stale if s.case == "var-resume"]
    assert "Retired cases (1)" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")


def test_history_round_trip_extends_like_a_single_build(make_run, tmp_path):
    make_run("a", DAY1, folder=tmp_path / "night1")
    make_run("b", DAY2, verdicts={("var-resume", "cpu"): "fix-regressed"}, installed={"torch": "2.14.0+cpu"},
             folder=tmp_path / "night2")
    build_site([tmp_path / "night1"], tmp_path / "published", now=NEAR)
    # the publish job: only the previous history.json plus the new runs
    previous = tmp_path / "previous"
    previous.mkdir()
    shutil.copy(tmp_path / "published" / "history.json", previous / "history.json")
    build_site([previous, tmp_path / "night2"], tmp_path / "site", now=NEAR)
    build_site([tmp_path / "night1", tmp_path / "night2"], tmp_path / "direct", now=NEAR)
    extended, direct = _history(tmp_path / "site"), _history(tmp_path / "direct")
    assert [r["id"] for r in extended["runs"]] == ["a", "b"]
    # run a's report was not carried (only history.json was), everything else is identical
    assert extended["runs"][0]["report"] is None and direct["runs"][0]["report"] == "runs/a/index.html"
    extended["runs"][0]["report"] = direct["runs"][0]["report"]
    assert _without_generated(extended) == _without_generated(direct)
    assert History.from_dict(extended).to_dict(NEAR) == History.from_dict(direct).to_dict(NEAR)
    page = (tmp_path / "site" / "cases" / "var-resume.html").read_text(encoding="utf-8")
    assert 'id="flip-cpu-b"' in page  # flips across the boundary between old history and new runs


def test_rebuilding_in_place_is_idempotent(make_run, tmp_path):
    make_run("a", DAY1)
    build_site([tmp_path / "made"], tmp_path / "site", now=NEAR)
    first = _history(tmp_path / "site")
    build_site([tmp_path / "site", tmp_path / "made"], tmp_path / "site", now=NEAR)
    assert _history(tmp_path / "site") == first
    assert (tmp_path / "site" / "runs" / "a" / "index.html").is_file()


def test_history_from_a_newer_format_is_refused(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "history.json").write_text(json.dumps({"kind": "repro-matrix-history", "version": 2}), encoding="utf-8")
    with pytest.raises(ReportInputError, match="history version 2"):
        build_site([site], tmp_path / "out", now=NEAR)
    (site / "history.json").write_text("[]", encoding="utf-8")
    with pytest.raises(ReportInputError, match="not a repro-matrix history"):
        build_site([site], tmp_path / "out", now=NEAR)
