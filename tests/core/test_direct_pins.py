"""validate reads what a direct reference builds (uv, sealed, from the commit's own packaging metadata) and refuses
a pin named otherwise than that project, or one whose URL cannot be read (graded30 gt4sd-core-144: a commit of
gt4sd-core pinned as `paccmann-chemistry @ git+...` passed validate; its install fails on the name)."""

from __future__ import annotations

import functools
import http.server
import re
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from harness.cases._load import load_cases
from harness.environments._direct_pins import built_name, direct_pins, read_pins, refusals
from tests.faults.conftest import SIGNATURE_SCRIPT, run_harness, write_case


def _git(*args: str, cwd: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture(scope="module")
def served(tmp_path_factory) -> Iterator[tuple[str, str]]:
    """A repository whose packaging names its project `real-name`, served over git's dumb HTTP protocol on
    loopback: (its URL, its commit)."""
    root = tmp_path_factory.mktemp("pins")
    work = root / "work"
    (work / "realpkg").mkdir(parents=True)
    (work / "realpkg" / "__init__.py").write_text("")
    (work / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=61"]\n'
                                         'build-backend = "setuptools.build_meta"\n\n'
                                         '[project]\nname = "real-name"\nversion = "0.1"\n')
    _git("init", "-q", cwd=work)
    _git("add", "-A", cwd=work)
    _git("commit", "-qm", "packaging", cwd=work)
    commit = _git("rev-parse", "HEAD", cwd=work)
    site = root / "site"
    site.mkdir()
    _git("clone", "-q", "--bare", str(work), str(site / "repo.git"), cwd=root)
    _git("update-server-info", cwd=site / "repo.git")
    handler = functools.partial(_Quiet, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"git+http://127.0.0.1:{server.server_port}/repo.git", commit
    server.shutdown()
    server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def _case(root: Path, case_id: str, pin: str) -> Path:
    return write_case(root, case_id, SIGNATURE_SCRIPT, variants={
        "buggy": {"role": "buggy", "requires": [pin],
                  "expect": {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}},
        "fixed": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}}})


def test_validate_refuses_a_commit_pin_named_otherwise_than_the_project_it_builds(tmp_path, served):
    url, commit = served
    _case(tmp_path, "misnamed", f"paccmann-chemistry @ {url}@{commit}")
    _case(tmp_path, "named", f"real-name @ {url}@{commit}")
    proc = run_harness("validate", "--cases-dir", str(tmp_path))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 2, out
    assert "1 case file(s) valid, 1 invalid" in out
    assert "misnamed/case.yaml:" in out and "but that URL builds the project 'real-name'" in out
    assert f"name the pin `real-name @ {url}@{commit}`" in out
    assert "named/case.yaml" not in out.replace("misnamed/case.yaml", "")


def test_validate_passes_a_commit_pin_under_the_name_its_packaging_gives(tmp_path, served):
    url, commit = served
    _case(tmp_path, "named", f"Real_Name @ {url}@{commit}")  # the name compared canonically
    proc = run_harness("validate", "--cases-dir", str(tmp_path))
    assert proc.returncode == 0 and "1 case file(s) valid, 0 invalid" in proc.stdout, proc.stdout + proc.stderr


def test_validate_does_not_sign_off_a_pin_it_cannot_read_unless_told_to_skip(tmp_path, served):
    url, _ = served
    _case(tmp_path, "gone", f"real-name @ {url}@{'0' * 40}")
    proc = run_harness("validate", "--cases-dir", str(tmp_path))
    assert proc.returncode == 2 and "what that URL builds could not be read (" in proc.stdout, proc.stdout
    assert "--static" in proc.stdout
    skipped = run_harness("validate", "--static", "--cases-dir", str(tmp_path))
    assert skipped.returncode == 0 and "1 case file(s) valid" in skipped.stdout, skipped.stdout


def test_each_url_is_read_once_and_local_or_index_pins_are_not_read(tmp_path):
    shared = "git+https://example.invalid/o/r@" + "1" * 40
    write_case(tmp_path, "two", SIGNATURE_SCRIPT, requires=["torch==2.13.0", f"r @ {shared}"], variants={
        "buggy": {"role": "buggy", "expect": {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}},
        "fixed": {"role": "fix", "expect": {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}}})
    loaded = load_cases([tmp_path])
    assert not loaded.errors, loaded.errors
    asked: list[str] = []

    def reader(url: str) -> tuple[str | None, str]:
        asked.append(url)
        return "other", ""

    readings = read_pins(direct_pins(loaded.cases), reader)
    assert asked == [shared] and len(readings) == 2  # both variants carry the case's pin; read once
    errors = refusals(readings)
    assert len(errors) == 2 and all(e.line for e in errors) and "builds the project 'other'" in str(errors[0])


@pytest.mark.parametrize(("compiled", "name"), [
    ("real-name @ git+https://h/o/r@abc\n", "real-name"),
    ("# a comment\n\nReal_Name @ git+https://h/o/r@abc\n", "real-name"),
    ("", None), ("warning: odd output\n", None)])
def test_the_built_name_is_read_from_uv_s_output(compiled, name):
    assert built_name(compiled)[0] == name


def test_a_case_without_direct_references_needs_no_reading(tmp_path):
    write_case(tmp_path, "plain", SIGNATURE_SCRIPT)
    cases = load_cases([tmp_path]).cases
    assert cases and direct_pins(cases) == []


def filled_draft(tmp_path: Path, buggy: str, fix: str, report: Path | None = None, case_id: str = "flux-ids") -> Path:
    """`new`'s draft of a real report (ai-toolkit-212 by default), filled in as an author would, with the buggy and the
    fix variant's pins given: the cases folder."""
    from tests.core.test_new import REPORTS, fill_in, new

    folder = new(case_id, tmp_path, report or REPORTS / "ai-toolkit-212.txt").folder
    fill_in(folder)
    data = yaml.safe_load((folder / "case.yaml").read_text())
    data["variants"]["buggy"]["requires"] = [buggy]
    data["variants"]["fix"]["requires"] = [fix]
    (folder / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder.parent


def test_validate_resolves_a_filled_in_draft_s_variants_and_refuses_one_that_cannot_install(tmp_path):
    """A draft's names are `new`'s guesses and its versions the author's: whether a variant installs is the package
    index's to say (graded35: `pysyft==X.Y.Z` drafted where PySyft's releases are `syft`; filled in, it passed)."""
    cases = filled_draft(tmp_path, "diffusers==0.30.0", "diffusers==0.31.0")
    good = run_harness("validate", "--no-run", "--cases-dir", str(cases))  # the repro is a stand-in: installs only
    assert good.returncode == 0 and "1 case file(s) valid, 0 invalid" in good.stdout, good.stdout + good.stderr
    assert "resolving flux-ids variant 'buggy'" in good.stdout
    (tmp_path / "bad").mkdir()
    bad_cases = filled_draft(tmp_path / "bad", "diffusers==0.30.0", "diffusers==0.31.77")
    bad = run_harness("validate", "--cases-dir", str(bad_cases))
    out = bad.stdout
    assert bad.returncode == 2 and "variant 'fix' cannot be installed: uv cannot resolve its requires" in out, out
    assert "diffusers==0.31.77" in out and re.search(r"flux-ids/case\.yaml:\d+: variant 'fix'", out)
    line = int(re.search(r"case\.yaml:(\d+): variant 'fix'", out)[1])
    assert (bad_cases / "flux-ids" / "case.yaml").read_text().splitlines()[line - 1].strip() == "fix:"
    assert run_harness("validate", "--static", "--cases-dir", str(bad_cases)).returncode == 0


def test_only_drafts_are_resolved(tmp_path):
    """Cases written by hand (or confirmed: the catalogue) are checked by their first build, not on every validate."""
    from harness.environments._draft_installs import drafted, unresolved

    write_case(tmp_path, "by-hand", SIGNATURE_SCRIPT, requires=["torch==2.13.0", "no-such-thing==9.9"])
    cases = load_cases([tmp_path]).cases
    assert cases and drafted(cases) == []
    asked: list[tuple[str, ...]] = []
    # the two variants' requires are the same (the fix differs by its env): resolved once
    assert unresolved(cases, lambda requires: asked.append(tuple(requires)) or "") == [] and len(asked) == 1
