"""Paths and small helpers shared by the report tests (a unique module name: tests are not packages)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"
SINGLE = FIXTURES / "single" / "20261121T081200Z-b71e09"
RUN_ID = "20261120T021530Z-3f9a1c"
SHARD_DIRS = [FIXTURES / "shards" / name / RUN_ID for name in ("cpu-1", "cpu-2", "gpu")]
HOSTILE = "<script>alert(1)</script>"


def load(path: Path) -> dict[str, Any]:
    return json.loads((path / "results.json").read_text(encoding="utf-8"))
