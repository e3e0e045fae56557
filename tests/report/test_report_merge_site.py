from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import unquote

import jsonschema
import pytest
from report_helpers import FIXTURES, RUN_ID, SINGLE, load

from harness.report import ReportInputError, build_site
from harness.report._merge import merge_shards

SCHEMA = json.loads((Path(__file__).parents[2] / "harness" / "results.schema.json").read_text(encoding="utf-8"))
NOW = datetime(2026, 11, 22, 6, 0, tzinfo=UTC)


@pytest.mark.parametrize("path", sorted(FIXTURES.rglob("results.json")), ids=lambda p: p.parent.parent.name)
def test_fixtures_match_the_published_schema(path):
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(path.read_text(encoding="utf-8")))


def test_schema_rejects_a_typo():
    data = load(SINGLE)
    data["cells"][0]["judgment"] = data["cells"][0].pop("judgement")
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(data, SCHEMA)


def test_merge_unions_cells_and_verdicts_and_keeps_hosts(shard_dirs):
    shards = [load(d) for d in shard_dirs]
    merged = merge_shards(shards)
    jsonschema.validate(merged, SCHEMA)
    assert merged["run"]["id"] == RUN_ID
    assert len(merged["cells"]) == sum(len(s["cells"]) for s in shards)
    assert len(merged["verdicts"]) == sum(len(s["verdicts"]) for s in shards)
    assert [h["hostname"] for h in merged["run"]["hosts"]] == ["gh-runner-a", "gpu-box-1", "gh-runner-b"]
    assert merged["run"]["started"] == "2026-11-20T02:15:30+00:00"
    assert merged["run"]["finished"] == "2026-11-20T02:34:10+00:00"
    assert merged["run"]["exit_code"] == 1 and merged["run"]["shards"] == 3
    assert merged["run"]["selection"]["lanes"] == ["cpu", "cuda", "cuda-sim"]
    assert sorted(merged["run"]["selection"]["shard"]) == ["1/2", "2/2"]
    hosts = merged["run"]["hosts"]
    for cell in merged["cells"]:
        expected = "gpu-box-1" if cell["lane"] == "cuda" else None
        if expected:
            assert hosts[cell["host"]]["hostname"] == expected
        assert cell["environment"] is None or cell["environment"] in merged["environments"]
    assert merge_shards([*shards, shards[0]])["cells"] == merged["cells"]  # a shard read twice counts once


def test_a_real_verdict_beats_a_skip_and_the_worse_one_wins():
    base = load(SINGLE)
    gpu = load(FIXTURES / "shards" / "gpu" / RUN_ID)
    cpu_host = json.loads(json.dumps(base))
    cpu_host["run"]["id"] = gpu["run"]["id"] = "same-run"
    merged = merge_shards([cpu_host, gpu])
    verdicts = {(v["case"], v["lane"]): v["verdict"] for v in merged["verdicts"]}
    assert verdicts[("var-resume", "cuda")] == "confirmed"  # the GPU job's answer, not the CPU shard's skip
    worse = json.loads(json.dumps(gpu))
    worse["run"]["started"] = "2026-11-20T03:00:00+00:00"
    next(v for v in worse["verdicts"] if v["case"] == "var-resume")["verdict"] = "stale-repro"
    merged = merge_shards([gpu, worse])
    assert {(v["case"], v["lane"]): v["verdict"] for v in merged["verdicts"]}[("var-resume", "cuda")] == "stale-repro"


def test_environment_id_collision_across_hosts_is_kept_apart():
    a, b = load(SINGLE), load(SINGLE)
    b["run"]["host"] = dict(b["run"]["host"], hostname="other")
    env_id = next(iter(b["environments"]))
    b["environments"][env_id]["installed"]["numpy"] = "1.26.4"
    merged = merge_shards([a, b])
    assert merged["environments"][env_id]["installed"]["numpy"] == "2.3.4"
    assert merged["environments"][f"{env_id}@2"]["installed"]["numpy"] == "1.26.4"
    assert any(c["environment"] == f"{env_id}@2" for c in merged["cells"])


def test_site_from_shards_renders_one_merged_run(shard_dirs, tmp_path):
    summary = build_site([tmp_path / "artifacts"], tmp_path / "site", now=NOW)
    assert summary.runs == 1 and summary.new_runs == (RUN_ID,) and summary.problems == ()
    report = tmp_path / "site" / "runs" / RUN_ID
    html = (report / "index.html").read_text(encoding="utf-8")
    for host in ("gh-runner-a", "gh-runner-b", "gpu-box-1"):
        assert host in html
    merged = json.loads((report / "results.json").read_text(encoding="utf-8"))
    jsonschema.validate(merged, SCHEMA)
    for href in re.findall(r'<a class="log" href="([^"]+)"', html):
        assert (report / unquote(href)).is_file(), href
    assert (report / "junit.xml").is_file()
    history = json.loads((tmp_path / "site" / "history.json").read_text(encoding="utf-8"))
    (run,) = history["runs"]
    assert len(run["hosts"]) == 3 and run["shards"] == 3 and run["report"] == f"runs/{RUN_ID}/index.html"
    assert run["verdicts"]["var-resume"]["cuda"]["verdict"] == "confirmed"
    assert history["hosts"][run["verdicts"]["var-resume"]["cuda"]["host"]]["hostname"] == "gpu-box-1"
    assert summary.latest[("var-resume", "cuda-sim")] == "fix-regressed"
    front = (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    assert "<script>alert(1)</script>" not in front
    assert 'href="cases/var-resume.html#lane-cuda-sim"' in front


def test_inputs_run_folder_results_file_and_unreadable_artifact(tmp_path, single_run, shard_dirs):
    run_dir, _ = single_run
    broken = tmp_path / "artifacts" / "results-broken" / "x"
    broken.mkdir(parents=True)
    (broken / "results.json").write_text('{"version": 1, "run": {"id": "x", "star', encoding="utf-8")
    newer = tmp_path / "artifacts" / "results-newer" / "y"
    newer.mkdir(parents=True)
    (newer / "results.json").write_text(json.dumps({"version": 2, "run": {"id": "y"}}), encoding="utf-8")
    summary = build_site([run_dir / "results.json", tmp_path / "artifacts"], tmp_path / "site", now=NOW)
    assert summary.runs == 2
    assert len(summary.problems) == 2 and any("results version 2" in p for p in summary.problems)
    assert "Inputs that could not be read" in (tmp_path / "site" / "index.html").read_text(encoding="utf-8")
    with pytest.raises(ReportInputError, match="no such file"):
        build_site([tmp_path / "missing"], tmp_path / "site2", now=NOW)


def test_keep_reports_bounds_the_site_but_not_the_history(make_run, tmp_path):
    for day in range(1, 5):
        make_run(f"r{day}", f"2026-11-0{day}T02:00:00+00:00")
    build_site([tmp_path / "made"], tmp_path / "site", now=NOW, keep_reports=2)
    kept = sorted(p.name for p in (tmp_path / "site" / "runs").iterdir())
    assert kept == ["r3", "r4"]
    history = json.loads((tmp_path / "site" / "history.json").read_text(encoding="utf-8"))
    assert [r["id"] for r in history["runs"]] == ["r1", "r2", "r3", "r4"]
    assert [r["report"] for r in history["runs"]] == [None, None, "runs/r3/index.html", "runs/r4/index.html"]
    assert not [p for p in (tmp_path / "site").rglob(".*")]  # no temp files or folders left behind
