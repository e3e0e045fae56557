"""Case files: the published schema plus the checks it cannot express, with errors that name the fix."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import jsonschema
import pytest
import yaml

from harness._exceptions import CaseFileError
from harness.cases._load import SCHEMA_PATH, Expectation, load_case, load_cases, merge_requirements

REPO = Path(__file__).resolve().parents[2]


def _edit(folder: Path, change) -> None:
    path = folder / "case.yaml"
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def test_every_case_in_the_repo_validates_against_the_published_schema():
    schema = json.loads(SCHEMA_PATH.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    folders = [p for p in (REPO / "cases").iterdir() if p.is_dir()]
    assert folders, "cases/ holds no case"
    for folder in folders:
        jsonschema.validate(yaml.safe_load((folder / "case.yaml").read_text()), schema)
        case = load_case(folder)
        assert case.id == folder.name
        assert {v.role for v in case.variants.values()} == {"buggy", "fix"}


def test_fixture_cases_load(fixture_cases):
    loaded = load_cases([fixture_cases])
    assert not loaded.errors
    assert {c.id for c in loaded.cases} == {"confirmed", "fix-regressed", "stale-repro", "failed-differently", "hangs"}
    case = next(c for c in loaded.cases if c.id == "confirmed")
    assert case.variants["buggy"].expect["cpu"] == Expectation("reproduces")
    assert case.variants["buggy"].requires == ("torch==2.13.0",)


def test_malformed_yaml_names_file_and_line(fixture_cases):
    path = fixture_cases / "confirmed" / "case.yaml"
    path.write_text(path.read_text() + "\n  bad: [unclosed\n")
    with pytest.raises(CaseFileError) as info:
        load_case(path.parent)
    assert info.value.path == path and info.value.line is not None
    assert "malformed YAML" in str(info.value)


def test_unknown_key_suggests_the_right_one(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d.update(signatrue=d["signature"]))
    with pytest.raises(CaseFileError) as info:
        load_case(fixture_cases / "confirmed")
    message = str(info.value)
    assert "unknown key(s) 'signatrue'" in message and "'signatrue' -> 'signature'" in message
    assert info.value.line is not None


def test_wrong_type_and_missing_field(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d.update(timeout="soon"))
    with pytest.raises(CaseFileError, match="timeout"):
        load_case(fixture_cases / "confirmed")
    _edit(fixture_cases / "stale-repro", lambda d: d.pop("summary"))
    with pytest.raises(CaseFileError, match="'summary' is required"):
        load_case(fixture_cases / "stale-repro")


def test_bad_expectation_word_gets_the_allowed_words(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d["variants"]["buggy"]["expect"].update(cpu="fails"))
    with pytest.raises(CaseFileError) as info:
        load_case(fixture_cases / "confirmed")
    assert "variants/buggy/expect/cpu" in str(info.value)
    assert "unsupported: <why>" in info.value.fix


def test_id_must_match_folder(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d.update(id="other-name"))
    with pytest.raises(CaseFileError, match="does not match its folder 'confirmed'") as info:
        load_case(fixture_cases / "confirmed")
    assert "id: confirmed" in info.value.fix


def test_missing_script_and_bad_regex(fixture_cases):
    (fixture_cases / "confirmed" / "repro.py").unlink()
    with pytest.raises(CaseFileError, match=r"script 'repro\.py' not found"):
        load_case(fixture_cases / "confirmed")
    _edit(fixture_cases / "stale-repro", lambda d: d.update(signature="Expected (all"))
    with pytest.raises(CaseFileError, match="not a valid regular expression"):
        load_case(fixture_cases / "stale-repro")


def test_torch_must_be_pinned():
    with pytest.raises(CaseFileError, match="does not pin torch"):
        merge_requirements(Path("case.yaml"), ["numpy"], ["torch>=2"], "buggy")
    assert merge_requirements(Path("x"), ["torch==2.13.0", "numpy"], ["numpy<2"], "v") == ("numpy<2", "torch==2.13.0")


def test_a_broken_case_does_not_stop_the_others(fixture_cases):
    (fixture_cases / "confirmed" / "case.yaml").write_text("id: [")
    (fixture_cases / "empty-folder").mkdir()
    loaded = load_cases([fixture_cases])
    assert len(loaded.cases) == 4
    assert sorted(e.path.parent.name for e in loaded.errors) == ["confirmed", "empty-folder"]


def test_duplicate_id_across_roots(fixture_cases, tmp_path):
    other = tmp_path / "more"
    other.mkdir()
    shutil.copytree(fixture_cases / "confirmed", other / "confirmed")
    loaded = load_cases([fixture_cases, other])
    assert any("duplicate case id 'confirmed'" in str(e) for e in loaded.errors)


def test_retired_needs_reason(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d.update(status="retired"))
    with pytest.raises(CaseFileError, match="retired_reason"):
        load_case(fixture_cases / "confirmed")


@pytest.mark.parametrize(("text", "where"), [("?", "(top level): key None"),
                                             ("id: x\nvariants:\n  1: {role: buggy}\n", "variants: key 1")])
def test_non_text_keys_are_named(tmp_path, text, where):
    folder = tmp_path / "x"
    folder.mkdir()
    (folder / "case.yaml").write_text(text)
    with pytest.raises(CaseFileError) as raised:
        load_case(folder)
    assert where in str(raised.value) and "quote the key" in str(raised.value)


@pytest.mark.parametrize("key", ["issue", "pr", "commit"])
def test_upstream_needs_only_one_of_issue_pr_commit(fixture_cases, key):
    url = "https://github.com/org/repo/pull/2"
    _edit(fixture_cases / "confirmed", lambda d: d.update(upstream={key: url}))
    assert load_case(fixture_cases / "confirmed").upstream == {key: url}


def test_upstream_without_issue_pr_or_commit_says_which_keys(fixture_cases):
    _edit(fixture_cases / "confirmed", lambda d: d.update(upstream={"fix": "https://github.com/org/repo/pull/2"}))
    with pytest.raises(CaseFileError) as info:
        load_case(fixture_cases / "confirmed")
    assert "upstream" in str(info.value)
    assert all(key in str(info.value) for key in ("issue", "pr", "commit")), str(info.value)


# --- text cut short by an unquoted ' #' (issue 14) ---------------------------------------------------------------

def _replace(folder: Path, old: str, new: str) -> None:
    path = folder / "case.yaml"
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, 1))


@pytest.mark.parametrize(("old", "new", "field"), [
    ('title: "Fixture: buggy raises the signature, fix passes"', "title: Flux sampling after PR #9817 adds a CPU arange",
     "title"),
    ('summary: Test fixture for the verdict "confirmed"; not a documented bug.',
     "summary: fixed by PR #42 upstream", "summary"),
    ("    role: fix\n", "    role: fix\n    description: the release after the revert (PR #9896)\n",
     "variants/fixed/description"),
    ("title:", "status: retired\nretired_reason: superseded by case #12\ntitle:", "retired_reason"),
])
def test_plain_text_cut_by_a_comment_is_named_with_the_fix(fixture_cases, old, new, field):
    folder = fixture_cases / "confirmed"
    _replace(folder, old, new)
    with pytest.raises(CaseFileError) as raised:
        load_case(folder)
    message = str(raised.value)
    assert f"{field}: the text stops at ' #'" in message, message
    assert raised.value.line == next(i for i, line in enumerate((folder / "case.yaml").read_text().splitlines(), 1)
                                     if " #" in line)
    assert "quote the whole text" in raised.value.fix


@pytest.mark.parametrize(("text", "title"), [
    ('title: "Flux sampling after PR #9817 adds a CPU arange"', "Flux sampling after PR #9817 adds a CPU arange"),
    ("title: 'Flux sampling after PR #9817 adds a CPU arange'", "Flux sampling after PR #9817 adds a CPU arange"),
    ("title: >-\n  Flux sampling after PR #9817\n  adds a CPU arange", "Flux sampling after PR #9817 adds a CPU arange"),
    ("title: Flux sampling after PR#9817 adds a CPU arange", "Flux sampling after PR#9817 adds a CPU arange"),
    ('title: "Flux sampling"  # a comment after a quoted title', "Flux sampling"),
])
def test_quoted_block_and_glued_hashes_are_text(fixture_cases, text, title):
    folder = fixture_cases / "confirmed"
    _replace(folder, 'title: "Fixture: buggy raises the signature, fix passes"', text)
    assert load_case(folder).title == title


def test_comments_after_non_text_fields_stay_comments(fixture_cases):
    folder = fixture_cases / "confirmed"
    _replace(folder, "timeout: 60", "timeout: 60  # seconds")
    _replace(folder, "requires: [torch==2.13.0]", "requires:\n  - torch==2.13.0  # CPU wheel")
    _replace(folder, "expect: {cpu: passes, cuda: passes, cuda-sim: passes}",
             "expect:\n      cpu: passes  # trivially\n      cuda: passes\n      cuda-sim: passes")
    case = load_case(folder)
    assert case.timeout == 60 and case.variants["fixed"].expect["cpu"] == Expectation("passes")


def test_the_seed_cases_keep_their_pr_numbers():
    titles = [load_case(REPO / "cases" / "ai-toolkit-flux-ids").title]
    descriptions = [v.description for name in ("ai-toolkit-flux-ids", "deepspeed-zero3-offload-clip", "var-resume")
                    for v in load_case(REPO / "cases" / name).variants.values()]
    assert titles[0].endswith("PR #9817 adds a CPU arange to latent image ids made on the GPU")
    for number in ("#9817's pipeline_flux.py", "(before PR #9817)", "(PR #9896)", "(before PR #5256;",
                   "revert PR #5461", "(PR #5504's", "PR #102619 (first released in 2.1.0)"):
        assert any(number in d for d in descriptions), number


# --- anchors and aliases within bounds, and the published schema's bounds ------------------------------------------

def test_small_anchors_aliases_and_merge_keys_stay_allowed(fixture_cases):
    folder = fixture_cases / "confirmed"
    _replace(folder, "expect: {cpu: reproduces, cuda: reproduces, cuda-sim: reproduces}",
             "expect: &everywhere {cpu: reproduces, cuda: reproduces, cuda-sim: reproduces}")
    _replace(folder, "  fixed:\n    role: fix\n", "  fixed:\n    <<: {role: fix}\n")
    text = (folder / "case.yaml").read_text()
    (folder / "case.yaml").write_text(text + "  again:\n    role: buggy\n    expect: *everywhere\n")
    case = load_case(folder)
    assert case.variants["again"].expect == case.variants["buggy"].expect
    assert case.variants["fixed"].role == "fix"


@pytest.mark.parametrize(("field", "value"), [("id", "x" * 65), ("timeout", 3601), ("timeout", float("inf")),
                                              ("image", "../../etc"), ("script", "/abs.py"), ("env", {"A=B": "1"}),
                                              ("tags", ["x" * 41]), ("upstream", {"issue": "https://x y"})])
def test_the_published_schema_states_the_bounds(field, value):
    """Any JSON Schema validator refuses these with the published schema alone (not only the harness)."""
    schema = json.loads(SCHEMA_PATH.read_text())
    data = yaml.safe_load((REPO / "tests/fixtures/cases/confirmed/case.yaml").read_text())
    data[field] = value
    assert list(jsonschema.Draft202012Validator(schema).iter_errors(data)), (field, value)
