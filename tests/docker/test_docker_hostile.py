"""Hostile repros on the docker backend: what one case's containers write never reaches another case's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from harness.run._backend import CellRequest

PLANT = """
    import os
    from pathlib import Path
    cache = Path(os.environ["TORCH_EXTENSIONS_DIR"])
    cache.mkdir(parents=True, exist_ok=True)
    print("sees", sorted(p.name for p in cache.iterdir()))
    (cache / f"planted-by-{os.environ['CASE']}").write_text("a JIT extension another case would load")
"""


def _request(tmp_path: Path, case: str) -> CellRequest:
    case_dir = tmp_path / "cases" / case
    case_dir.mkdir(parents=True)
    (case_dir / "repro.py").write_text(textwrap.dedent(PLANT))
    log = tmp_path / "logs" / f"{case}.log"
    log.parent.mkdir(exist_ok=True)
    log.write_text("# header\n")
    return CellRequest(case_dir=case_dir, script=case_dir / "repro.py", shims=(),
                       argv=("--variant", "v", "--device", "cpu"), sim=False, gpu=False, env={"CASE": case},
                       timeout=60, cell_dir=tmp_path / "cells" / case, log_path=log, label=f"{case}/cpu/v")


@pytest.mark.fault("a repro plants code that other cells or later runs execute")
def test_the_extension_cache_is_never_shared_between_cases(backend, tiny_spec, tmp_path, docker_client):
    """/cache was one volume per image: a case could plant a compiled extension every other case of the
    image then loaded (DeepSpeed ops), in that run and every later one."""
    import secrets

    from harness.docker._client import cache_volume

    env = backend.prepare(tiny_spec, progress=lambda text: None)
    image_id = env.image["id"]
    token = secrets.token_hex(3)  # the daemon is shared: this test's volumes only
    planter_id, victim_id = f"aa-planter-{token}", f"zz-victim-{token}"
    try:
        planter, victim = _request(tmp_path, planter_id), _request(tmp_path, victim_id)
        assert backend.run_cell(env, planter).status == "passed", planter.log_path.read_text()
        assert backend.run_cell(env, victim).status == "passed", victim.log_path.read_text()
        assert "sees []" in victim.log_path.read_text(), victim.log_path.read_text()
        again = _request(tmp_path / "again", planter_id)  # a case keeps its own cache from cell to cell
        assert backend.run_cell(env, again).status == "passed"
        assert f"sees ['planted-by-{planter_id}']" in again.log_path.read_text()
    finally:
        for case in (planter_id, victim_id):
            for volume in docker_client.volumes.list(filters={"name": cache_volume(image_id, case)}):
                volume.remove()
