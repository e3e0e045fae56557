"""harness._io.write_atomic: the one writer of files others read (results, reports, the site, conformance)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from harness._io import write_atomic
from harness.conformance._report import write_json


@pytest.fixture
def strict_umask():
    old = os.umask(0o077)
    yield
    os.umask(old)


def test_files_are_readable_by_others_whatever_the_umask(tmp_path, strict_umask):
    write_atomic(tmp_path / "page.html", "<p>hi</p>")
    write_json(tmp_path / "conformance" / "summary.json", {"libraries": []})  # was mkstemp's 0600
    for path in (tmp_path / "page.html", tmp_path / "conformance" / "summary.json"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
    assert json.loads((tmp_path / "conformance" / "summary.json").read_text()) == {"libraries": []}


def test_a_symlink_in_place_is_replaced_never_written_through(tmp_path):
    victim = tmp_path / "victim"
    victim.write_text("victim")
    (tmp_path / "out").symlink_to(victim)
    write_atomic(tmp_path / "out", b"new")
    assert victim.read_text() == "victim" and not (tmp_path / "out").is_symlink()
    assert (tmp_path / "out").read_bytes() == b"new"


def test_a_failed_write_keeps_the_old_file_and_leaves_no_temp(tmp_path, monkeypatch):
    (tmp_path / "results.json").write_text("old")

    def refuse(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError, match="No space"):
        write_atomic(tmp_path / "results.json", "new")
    assert (tmp_path / "results.json").read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["results.json"]
