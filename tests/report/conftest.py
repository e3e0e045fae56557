"""Fixture runs for the report tests (tests/report/fixtures, copied before use) and a run factory for history."""

from __future__ import annotations

import copy
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from report_helpers import SHARD_DIRS, SINGLE, load


@pytest.fixture
def single_run(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """The all-verdicts run (cuda lane skipped, a hostile log), copied so tests may write next to it."""
    run_dir = tmp_path / "runs" / SINGLE.name
    shutil.copytree(SINGLE, run_dir)
    return run_dir, load(run_dir)


@pytest.fixture
def shard_dirs(tmp_path: Path) -> list[Path]:
    """Three shards of one run id: two CPU shards on GitHub runners and the GPU job (docker, with images)."""
    dirs = []
    for source in SHARD_DIRS:
        dest = tmp_path / "artifacts" / f"results-{source.parent.name}" / source.name
        shutil.copytree(source, dest)
        dirs.append(dest)
    return dirs


RunFactory = Callable[..., Path]


@pytest.fixture
def make_run(tmp_path: Path) -> RunFactory:
    """Write a variant of the single fixture run: new id and start time, edited verdicts/packages/host."""

    def factory(run_id: str, started: str, *, verdicts: dict[tuple[str, str], str] | None = None,
                installed: dict[str, str] | None = None, host: dict[str, Any] | None = None,
                lanes: list[str] | None = None, folder: Path | None = None) -> Path:
        data = copy.deepcopy(load(SINGLE))
        data["run"].update(id=run_id, started=started, finished=started)
        if host:
            data["run"]["host"].update(host)
        for env in data["environments"].values():
            env["installed"].update(installed or {})
        for verdict in data["verdicts"]:
            new = (verdicts or {}).get((verdict["case"], verdict["lane"]))
            if new:
                verdict.update(verdict=new, reason=f"set to {new} by the test")
        if lanes is not None:
            data["verdicts"] = [v for v in data["verdicts"] if v["lane"] in lanes]
            data["cells"] = [c for c in data["cells"] if c["lane"] in lanes]
            data["run"]["selection"]["lanes"] = lanes
        run_dir = (folder or tmp_path / "made") / run_id
        run_dir.mkdir(parents=True)
        (run_dir / "results.json").write_text(json.dumps(data), encoding="utf-8")
        shutil.copytree(SINGLE / "logs", run_dir / "logs")
        return run_dir

    return factory
