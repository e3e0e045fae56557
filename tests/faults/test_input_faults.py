"""Bad case files: each error names the file (and line), says the fix, and the other cases still run."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness._cases import load_case
from harness._exceptions import CaseFileError
from tests.faults.conftest import SIGNATURE_SCRIPT, results_of, run_harness, verdict, write_case

BROKEN = {
    "malformed-yaml": ("id: malformed-yaml\ntitle: [unclosed\n", "malformed YAML", True),
    "unknown-key": (None, "unknown key(s) 'sumary'", True),
    "wrong-type": (None, "timeout: 'soon' is not of type 'number'", True),
    "id-mismatch": (None, "does not match its folder", True),
    "missing-script": (None, "script 'repro.py' not found", False),
    "bad-regex": (None, "not a valid regular expression", True),
}


def _make_broken(root: Path) -> None:
    for name, (raw, _, _) in BROKEN.items():
        folder = write_case(root, name, SIGNATURE_SCRIPT)
        data = yaml.safe_load((folder / "case.yaml").read_text())
        if raw:
            (folder / "case.yaml").write_text(raw)
            continue
        if name == "unknown-key":
            data["sumary"] = data.pop("summary")
            data["summary"] = "x"
        elif name == "wrong-type":
            data["timeout"] = "soon"
        elif name == "id-mismatch":
            data["id"] = "someone-else"
        elif name == "missing-script":
            (folder / "repro.py").unlink()
        elif name == "bad-regex":
            data["signature"] = "Expected (all tensors"
        (folder / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.slow
@pytest.mark.fault("malformed or invalid case files")
def test_broken_case_files_are_named_and_the_good_one_still_runs(tmp_path):
    root = tmp_path / "cases"
    _make_broken(root)
    write_case(root, "good", SIGNATURE_SCRIPT)
    dup = write_case(tmp_path / "more", "good", SIGNATURE_SCRIPT)
    proc = run_harness("cases", "--cases-dir", str(root), "--cases-dir", str(dup.parent), "--lane", "cpu",
                       "--output", str(tmp_path / "out"))
    out = proc.stdout
    assert proc.returncode == 2, out
    for name, (_, message, has_line) in BROKEN.items():
        line = next(text for text in out.splitlines() if f"/{name}/case.yaml" in text)
        assert message in out, (name, out)
        if has_line:
            assert f"/{name}/case.yaml:" in line, line
    assert out.count("fix:") >= len(BROKEN)
    assert "duplicate case id 'good'" in out
    results = results_of(tmp_path / "out")[0]
    assert verdict(results, "good")["verdict"] == "confirmed"
    assert len(results["run"]["load_errors"]) == len(BROKEN) + 1


@pytest.mark.fault("malformed or invalid case files")
def test_selecting_only_a_broken_case_stops_with_its_error(tmp_path):
    _make_broken(tmp_path / "cases")
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--case", "bad-regex",
                       "--output", str(tmp_path / "out"))
    assert proc.returncode == 2 and "not a valid regular expression" in proc.stdout
    assert not (tmp_path / "out").exists() or not results_of(tmp_path / "out")


_KEYS = ["id", "title", "upstream", "signature", "summary", "variants", "requires", "timeout", "script", "env",
         "patches", "shims", "status", "exception", "tags", "image", "role", "expect", "cpu", "cuda", "cuda-sim",
         "buggy", "fix", "issue", "args", "retired_reason"]
_SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True), st.text(max_size=20),
                     st.sampled_from(["reproduces", "passes", "unsupported: x", "torch==2.13.0", "buggy", "fix",
                                      "(", "https://x.invalid", "retired"]))
_DOCS = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4),
    st.dictionaries(st.one_of(st.sampled_from(_KEYS), st.text(max_size=8)), inner, max_size=6)), max_leaves=30)


@pytest.mark.fault("arbitrary YAML never crashes the loader")
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=_DOCS)
def test_arbitrary_documents_only_raise_case_file_errors(tmp_path, document):
    folder = tmp_path / "fuzz"
    folder.mkdir(exist_ok=True)
    (folder / "repro.py").write_text("")
    (folder / "case.yaml").write_text(yaml.safe_dump(document))
    try:
        load_case(folder)
    except CaseFileError as error:
        assert str(folder / "case.yaml") in str(error)


@pytest.mark.fault("arbitrary YAML never crashes the loader")
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=200))
@example(text="?")  # {None: None}: crashed the unknown-key suggestion once
@example(text="id: x\n1: one\nvariants: {true: {}}")
def test_arbitrary_text_only_raises_case_file_errors(tmp_path, text):
    folder = tmp_path / "fuzz"
    folder.mkdir(exist_ok=True)
    (folder / "repro.py").write_text("")
    (folder / "case.yaml").write_text(text)
    try:
        load_case(folder)
    except CaseFileError as error:
        assert str(folder / "case.yaml") in str(error)
