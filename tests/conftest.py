"""Shared fixtures: fixture case folders copied to tmp_path before a test edits them."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURE_CASES = REPO / "tests" / "fixtures" / "cases"


@pytest.fixture
def fixture_cases(tmp_path: Path) -> Path:
    """A private copy of tests/fixtures/cases that a test may modify."""
    target = tmp_path / "cases"
    shutil.copytree(FIXTURE_CASES, target)
    return target
