"""Bad case files: each error names the file (and line), says the fix, and the other cases still run."""

from __future__ import annotations

import json
import re
import shutil
import threading
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from harness._cases import load_case, load_cases
from harness._exceptions import CaseFileError
from tests.faults.conftest import REPO, SIGNATURE_SCRIPT, cell, results_of, run_harness, verdict, write_case

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


# --- hostile case files (the hardening issue) -------------------------------------------------------------------

_NINE = ",".join(["*{}"] * 9)
ALIAS_BOMB = "a: &a [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{_NINE.format(*[chr(97 + i)] * 9)}]\n" for i in range(8))  # 9**9 leaves
HOSTILE_YAML = {
    "alias-bomb": (f"id: alias-bomb\n{ALIAS_BOMB}", "alias bomb"),
    "self-reference": ("id: self-reference\ntitle: &loop [x, *loop]\n", "(a cycle)"),
    # The harness's own depth check, or libyaml's (CSafeLoader, libyaml >= 0.2.5) where its scanner, reading ahead
    # through a flow collection, reaches its own limit first: the behaviour, not one library's wording, is tested.
    "deep-nesting": ("id: deep-nesting\ntitle: " + "[" * 5000 + "\n", "nesting"),
    "deep-mapping": ("id: deep-mapping\ntitle: " + "{k: " * 5000 + "x" + "}" * 5000 + "\n", "nesting"),
}


@pytest.mark.fault("YAML alias bombs, self-references and deep nesting")
@pytest.mark.parametrize("command", [["validate"], ["cases", "--list"]])
def test_alias_bombs_cycles_and_deep_nesting_are_case_file_errors_and_the_others_load(tmp_path, command):
    root = tmp_path / "cases"
    for name, (text, _) in HOSTILE_YAML.items():
        folder = write_case(root, name, SIGNATURE_SCRIPT)
        (folder / "case.yaml").write_text(text)
    write_case(root, "good", SIGNATURE_SCRIPT)
    assert len(ALIAS_BOMB) < 1000
    # Before the fix the bomb hung for minutes and the others crashed with RecursionError: 60 s is a hang.
    proc = run_harness(*command, "--cases-dir", str(root), timeout=60)
    out = proc.stdout
    assert proc.returncode == 2, out + proc.stderr
    assert "Traceback" not in out + proc.stderr
    for name, (_, message) in HOSTILE_YAML.items():
        line = next(text for text in out.splitlines() if f"/{name}/case.yaml" in text)
        assert re.search(rf"/{name}/case\.yaml:\d+: .*{re.escape(message)}", line), line  # file, line, problem
    assert out.count("fix:") >= len(HOSTILE_YAML)
    assert ("1 case file(s) valid, 4 invalid" in out) if command == ["validate"] else ("good" in out)


@pytest.mark.fault("YAML alias bombs, self-references and deep nesting")
def test_a_case_file_over_the_size_bound_is_refused_unread(tmp_path):
    folder = write_case(tmp_path, "huge", SIGNATURE_SCRIPT)
    with (folder / "case.yaml").open("a") as handle:
        handle.write("# padding\n" * 100_000)
    with pytest.raises(CaseFileError, match="larger than"):
        load_case(folder)


def _hostile(change):
    def edit(folder: Path) -> None:
        data = yaml.safe_load((folder / "case.yaml").read_text())
        change(folder, data)
        (folder / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return edit


def _append(text: str):
    def edit(folder: Path) -> None:
        with (folder / "case.yaml").open("a") as handle:
            handle.write(text)
    return edit


def _variant(name: str, **values):
    return _hostile(lambda f, d: d["variants"][name].update(values))


def _symlinked_script(folder: Path, data: dict) -> None:
    (folder / "outside.py").symlink_to(folder.parent / "elsewhere.py")
    (folder.parent / "elsewhere.py").write_text("")
    data["script"] = "outside.py"


# value -> (what the message says, whether a line is named)
PASSES_SCHEMA_BREAKS_LATER = {
    "duplicate top-level key": (_append("title: a second title\n"), "key 'title' appears twice"),
    "duplicate nested key": (lambda f: (f / "case.yaml").write_text((f / "case.yaml").read_text().replace(
        "role: buggy", "role: buggy\n    role: fix", 1)), "key 'role' appears twice"),
    "id with a trailing newline": (_hostile(lambda f, d: d.update(id="x\n")), "id: 'x\\n' does not match"),
    "249-character id": (_hostile(lambda f, d: d.update(id="a" * 249)), "249 characters long (at most 64)"),
    "variant name with a trailing newline": (_hostile(lambda f, d: d["variants"].update(
        {"buggy\n": d["variants"].pop("buggy")})), "'buggy\\n' does not match"),
    "65-character variant name": (_hostile(lambda f, d: d["variants"].update(
        {"v" * 65: d["variants"].pop("fixed")})), "65 characters long (at most 64)"),
    "absolute script": (_hostile(lambda f, d: d.update(script="/etc/passwd")), "script: '/etc/passwd'"),
    "script outside the folder": (_hostile(lambda f, d: d.update(script="../good/repro.py")),
                                  "points outside the case folder"),
    "script symlinked outside": (_hostile(_symlinked_script), "points outside the case folder"),
    "env name with '='": (_hostile(lambda f, d: d.update(env={"A=B": "1"})), "env: 'A=B' does not match"),
    "env name with NUL": (_hostile(lambda f, d: d.update(env={"A\0": "1"})), "env: 'A\\x00' does not match"),
    "env value with NUL": (_hostile(lambda f, d: d.update(env={"A": "1\0"})), "env/A: '1\\x00' does not match"),
    "timeout .inf": (_hostile(lambda f, d: d.update(timeout=float("inf"))), "timeout: inf is greater than"),
    "timeout .nan": (_hostile(lambda f, d: d.update(timeout=float("nan"))), "timeout: nan is not a number"),
    "variant timeout of a year": (_variant("buggy", timeout=3e7), "timeout: 30000000.0 is greater than"),
    "argument with NUL": (_variant("buggy", args=["--x\0"]), "args/0: '--x\\x00' does not match"),
    "tag with a newline": (_hostile(lambda f, d: d.update(tags=["gpu\n"])), "tags/0: 'gpu\\n' does not match"),
    "image outside images/": (_hostile(lambda f, d: d.update(image="/etc")), "image: '/etc' does not match"),
    "patch path with NUL": (_hostile(lambda f, d: d.update(patches=["a\0.diff"])), "patches/0: 'a\\x00.diff'"),
    "shim outside the folder": (_hostile(lambda f, d: d.update(shims=["../good/repro.py"])),
                                "shims: '../good/repro.py' points outside"),
    "URL with a control character": (_hostile(lambda f, d: d.update(upstream={"issue": "https://x.invalid/\x1b[2J"})),
                                     "upstream/issue: 'https://x.invalid/\\x1b[2J' does not match"),
}


@pytest.mark.fault("case values that pass the schema but break later")
@pytest.mark.parametrize("name", list(PASSES_SCHEMA_BREAKS_LATER))
def test_values_that_would_break_later_are_refused_at_load(tmp_path, name):
    edit, message = PASSES_SCHEMA_BREAKS_LATER[name]
    write_case(tmp_path, "good", SIGNATURE_SCRIPT)
    folder = write_case(tmp_path, "x", SIGNATURE_SCRIPT)
    edit(folder)
    with pytest.raises(CaseFileError) as raised:
        load_case(folder)
    error = raised.value
    assert error.path == folder / "case.yaml"
    assert message in str(error), str(error)
    assert error.line is not None, str(error)
    assert error.fix and error.fix != "see harness/case.schema.json", str(error)


@pytest.mark.fault("case values that pass the schema but break later")
def test_symlinked_case_folders_and_case_files_are_refused(tmp_path):
    """A pull request can add symlinks: case.yaml -> /proc/self/environ was read, a linked case folder ran a
    repro from anywhere on the machine (and, sealed, out of its cell's reach)."""
    elsewhere = write_case(tmp_path / "elsewhere", "linked", SIGNATURE_SCRIPT)
    root = tmp_path / "cases"
    write_case(root, "good", SIGNATURE_SCRIPT)
    (root / "linked").symlink_to(elsewhere)
    environ = write_case(root, "environ", SIGNATURE_SCRIPT)
    (environ / "case.yaml").unlink()
    (environ / "case.yaml").symlink_to("/proc/self/environ")
    inside = write_case(root, "inside", SIGNATURE_SCRIPT)  # a symlink within the folder is fine
    (inside / "case.yaml").rename(inside / "real.yaml")
    (inside / "case.yaml").symlink_to("real.yaml")
    loaded = load_cases([root])
    assert sorted(c.id for c in loaded.cases) == ["good", "inside"]
    problems = {error.path.parent.name: (str(error), error.fix) for error in loaded.errors}
    assert "the case folder linked is a symlink" in problems["linked"][0] and "copy the case" in problems["linked"][1]
    assert "case.yaml is a symlink leading out of the case folder" in problems["environ"][0]
    assert "\\x00" not in problems["environ"][0] and "unacceptable character" not in problems["environ"][0]


# --- terminal escapes and rich markup in case and repro text ----------------------------------------------------

ESCAPES = "\x1b]0;owned\x07\x1b[2J\x1b[8mhidden\x1b[0m\rOK \x9b1A \u202egnp.exe"
VISIBLE = "\\x1b]0;owned\\x07\\x1b[2J\\x1b[8mhidden\\x1b[0m\\rOK \\x9b1A \\u202egnp.exe"
_RAW = ("\x1b]0;", "\x1b[2J", "\x1b[8m", "\r", "\x9b", "\u202e")
NO_COLOUR = {"FORCE_COLOR": "0"}  # rich then writes no escape of its own: every ESC left is the case's


def _raw_escapes(text: str) -> list[str]:
    return [seq for seq in _RAW if seq in text]


def _hostile_text_case(root: Path) -> Path:
    folder = write_case(root, "hostile-text", SIGNATURE_SCRIPT)
    data = yaml.safe_load((folder / "case.yaml").read_text())
    data.update(title=f"Flux [/] sampling [bold]{ESCAPES}", summary=f"summary {ESCAPES} [/dim]",
                upstream={"issue": "https://github.com/org/lib/issues/1?q=[x]]", "fix": "https://github.com/org/lib/pull/2"})
    data["variants"]["fixed"]["expect"]["cuda"] = f"unsupported: {ESCAPES}"
    (folder / "case.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    return folder


@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_list_shows_hostile_titles_as_text(tmp_path):
    _hostile_text_case(tmp_path / "cases")
    proc = run_harness("cases", "--list", "--cases-dir", str(tmp_path / "cases"), env=NO_COLOUR)
    assert proc.returncode == 0, proc.stdout + proc.stderr   # a MarkupError traceback before
    assert not _raw_escapes(proc.stdout), _raw_escapes(proc.stdout)
    assert f"Flux [/] sampling [bold]{VISIBLE}" in proc.stdout
    assert "https://github.com/org/lib/issues/1?q=[x]]" in proc.stdout
    assert f"unsupported (fixed): {VISIBLE}" in proc.stdout


@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_case_file_errors_show_hostile_names_as_text(tmp_path):
    root = tmp_path / "cases"
    folder = write_case(root, "bad", SIGNATURE_SCRIPT)
    (folder / "case.yaml").write_text(f"id: bad\ntitle: [/]\nsumary: \"{ESCAPES.encode('unicode_escape').decode()}\"\n")
    (root / f"dir{ESCAPES}[b]").mkdir()  # a folder name from a pull request
    proc = run_harness("validate", "--cases-dir", str(root), env=NO_COLOUR)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert not _raw_escapes(proc.stdout), _raw_escapes(proc.stdout)
    assert f"dir{VISIBLE}[b]" in proc.stdout and "0 case file(s) valid, 2 invalid" in proc.stdout


@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_terminal_summary_shows_hostile_results_as_text():
    from io import StringIO

    from rich.console import Console

    from harness.report import terminal_summary

    results = json.loads((REPO / "tests/report/fixtures/single/20261121T081200Z-b71e09/results.json").read_text())
    results["run"]["id"] += ESCAPES
    results["run"]["load_errors"] = [f"cases/x/case.yaml: {ESCAPES}"]
    results["run"]["host"]["cpu"] = ESCAPES
    for judged in results["verdicts"]:
        judged["reason"] = f"{judged['reason']} {ESCAPES}"
        judged["case"] = f"{judged['case']}{ESCAPES}"
    for record in results["cells"]:
        record["case"] = f"{record['case']}{ESCAPES}"
    console = Console(file=StringIO(), width=300, force_terminal=True, color_system="truecolor")
    console.print(terminal_summary(results))
    text = console.file.getvalue()
    assert not _raw_escapes(text), _raw_escapes(text)
    assert VISIBLE in text


@pytest.mark.slow
@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_repro_exception_messages_reach_the_terminal_as_text(tmp_path):
    script = f"""
        import sys
        print({ESCAPES!r}, flush=True)
        if "buggy" in sys.argv:
            raise RuntimeError("Expected all tensors to be on the same device " + {ESCAPES!r} + " [/] [bold]")
        raise ValueError("a different error " + {ESCAPES!r} + " [/]")
    """
    write_case(tmp_path / "cases", "escapes", script)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                       "--output", str(tmp_path / "out"), env=NO_COLOUR)
    out = proc.stdout
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, out + proc.stderr
    assert not _raw_escapes(out), _raw_escapes(out)
    # the cell line shows the recorded message (its first line: up to the \r) with every escape made visible
    assert "a different error \\x1b]0;owned\\x07\\x1b[2J\\x1b[8mhidden\\x1b[0m" in out
    assert verdict(results_of(tmp_path / "out")[0], "escapes")["verdict"] == "failed-differently"


@pytest.mark.slow
@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_a_lone_surrogate_in_a_repro_message_does_not_crash_the_run(tmp_path):
    """``raise E("\\ud800")``: the child writes it as a JSON escape; printed or written as UTF-8 it raised
    UnicodeEncodeError in the middle of the run (traceback, results.json left 'running' with no cell)."""
    script = """
        import sys
        if "buggy" in sys.argv:
            raise RuntimeError("Expected all tensors to be on the same device \\ud800 lone")
        raise ValueError("other \\udcff")
    """
    write_case(tmp_path / "cases", "surrogate", script)
    proc = run_harness("cases", "--cases-dir", str(tmp_path / "cases"), "--lane", "cpu",
                       "--output", str(tmp_path / "out"), env=NO_COLOUR)
    assert proc.returncode == 1 and "Traceback" not in proc.stdout + proc.stderr, proc.stdout + proc.stderr
    results = results_of(tmp_path / "out")[0]
    assert results["run"]["status"] == "completed" and len(results["cells"]) == 2
    assert "device \\ud800 lone" in cell(results, "surrogate", "buggy")["exception"]["message"]
    assert verdict(results, "surrogate")["verdict"] == "failed-differently"
    site = tmp_path / "site"
    proc = run_harness("report", "--input", str(tmp_path / "out"), "--output", str(site))
    assert proc.returncode == 0 and "1 run (1 new)" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.fault("terminal escapes and markup in repro or case text")
def test_pages_show_control_and_bidi_characters_as_escapes(tmp_path):
    """An RLO in a title or message reorders what the reader of the page sees, as on a terminal."""
    from harness.report import write_run_reports

    run_dir = tmp_path / "run"
    shutil.copytree(REPO / "tests/report/fixtures/single/20261121T081200Z-b71e09", run_dir)
    results = json.loads((run_dir / "results.json").read_text())
    case = next(iter(results["cases"]))
    results["cases"][case]["title"] = f"title {ESCAPES}"
    for record in results["cells"]:
        if record.get("exception"):
            record["exception"]["message"] = f"message {ESCAPES}"
    write_run_reports(run_dir, results)
    page = (run_dir / "index.html").read_text()
    assert not _raw_escapes(page.replace("\r", "")), _raw_escapes(page)
    assert "title \\x1b]0;owned\\x07\\x1b[2J" in page and "message " in page
    assert "\\u202egnp.exe" in page


@pytest.mark.fault("an image folder whose symlinks name host files")
def test_an_image_folder_never_carries_a_host_file_into_a_build(tmp_path):
    """images/ comes with pull requests: a symlink there was copied as the file it names into the build
    context (COPY + RUN cat printed it into the build log, which a failed build shows on the terminal)."""
    from harness._backend import EnvSpec
    from harness._exceptions import UsageError
    from harness.docker._build import make_context
    from harness.docker._plan import ImageSettings, plan_image

    secret = tmp_path / "host" / "config.json"
    secret.parent.mkdir()
    secret.write_text("HOST_SECRET=hunter2")
    folder = tmp_path / "repo" / "images" / "evil"
    folder.mkdir(parents=True)
    (folder / "Dockerfile").write_text("ARG BASE_IMAGE=scratch\nFROM ${BASE_IMAGE}\nCOPY secret /s\n")
    (folder / "secret").symlink_to(secret)
    (folder / "dir").symlink_to(secret.parent, target_is_directory=True)
    settings = ImageSettings(pip_source="index")
    plan = plan_image(EnvSpec(("torch==2.13.0",)), "cpu", image_dir=folder, settings=settings)
    context = make_context(plan, tmp_path / "scratch", tmp_path / "build.log", lambda line: None)
    assert (context / "secret").is_symlink() and (context / "dir").is_symlink()
    assert not any("hunter2" in p.read_text() for p in context.rglob("*") if p.is_file() and not p.is_symlink())
    linked = tmp_path / "repo" / "images" / "linked"
    linked.symlink_to(folder, target_is_directory=True)
    with pytest.raises(UsageError, match="is a symlink"):
        plan_image(EnvSpec(("torch==2.13.0",)), "cpu", image_dir=linked, settings=settings)


def _dead_running_run(folder: Path, tail: str) -> Path:
    """A results.json of a run "running" under a harness process of this host that is gone, then ``tail``."""
    import os
    import subprocess
    import sys

    from harness._results import harness_process

    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True,
                          check=True)
    process = {**harness_process(), "pid": int(gone.stdout), "start_ticks": 1}
    folder.mkdir(parents=True)
    head = json.dumps({"version": 1, "run": {"id": folder.name, "status": "running", "harness_process": process}})
    (folder / "results.json").write_text(head[:-1] + f', "cases": {{"c": {tail}}}}}')
    assert os.path.getsize(folder / "results.json") > 0
    return folder


@pytest.mark.fault("a FIFO or deeply nested results.json in the output folder")
def test_a_fifo_or_a_deeply_nested_results_json_in_the_output_does_not_stop_later_runs(tmp_path):
    import os
    import threading

    from harness._workflow import UI, recover_step

    output = tmp_path / "reports"
    fifo_run = output / "fifo-run"
    fifo_run.mkdir(parents=True)
    os.mkfifo(fifo_run / "results.json")  # nobody ever writes it: a blocking open would wait forever
    _dead_running_run(output / "deep-run", "[" * 200_000 + "]" * 200_000)  # too deep for the parser
    _dead_running_run(output / "almost-run", "[" * 990 + "]" * 990)  # parses; too deep to write back
    linked = output / "linked-run"
    linked.mkdir()
    (linked / "results.json").symlink_to(fifo_run / "results.json")
    messages: list[str] = []
    done = threading.Event()

    def step() -> None:
        recover_step(output, UI(info=messages.append, error=messages.append))
        done.set()
    worker = threading.Thread(target=step, daemon=True)
    worker.start()
    assert done.wait(30), "the recovery step blocked on the output folder"
    assert messages == []  # none of them is a run it can finalise, and none stops the step
    assert b'"status": "running"' in (output / "almost-run" / "results.json").read_bytes()[:200]


_GOOD_PAGE = {"meta": {"api-version": "1.0"}, "name": "demo", "files": [
    {"filename": "demo-1.0.0-py3-none-any.whl", "requires-python": 3},  # not a string: ignored, file counts
    {"filename": "demo-1.1.0-py3-none-any.whl", "requires-python": {"min": "3.9"}},
    {"filename": 7}]}
_HOSTILE_PAGES = {
    "list": b"[1, 2, 3]",
    "deep": b"[" * 200_000 + b"]" * 200_000,
    "files-not-a-list": b'{"files": {"a": 1}}',
    "good": json.dumps(_GOOD_PAGE).encode(),
}


class _HostileIndex:
    """A loopback index whose /<kind>/demo/ answers with a hostile page: one of _HOSTILE_PAGES, a server that
    drips one byte every 5 s, or a page of 200 MB (sent as it is read, never held)."""

    def __init__(self) -> None:
        import http.server

        pages = _HOSTILE_PAGES

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                import time
                kind = self.path.strip("/").split("/")[0]
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                self.end_headers()
                try:
                    if kind == "drip":
                        for byte in b'{"files": []}':
                            self.wfile.write(bytes([byte]))
                            self.wfile.flush()
                            time.sleep(5)
                    elif kind == "huge":
                        chunk = b" " * 2**20
                        for _ in range(200):
                            self.wfile.write(chunk)
                    else:
                        self.wfile.write(pages[kind])
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def log_message(self, *args: object) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


@pytest.fixture
def hostile_index():
    index = _HostileIndex()
    yield index
    index.server.shutdown()
    index.server.server_close()


@pytest.mark.fault("bisect against a hostile package index")
def test_bisect_skips_each_hostile_index_with_a_message_and_lists_the_good_one(hostile_index, monkeypatch):
    import time

    from harness import _releases
    from harness._releases import list_releases

    monkeypatch.setattr(_releases, "MAX_PAGE_BYTES", 8 * 2**20)  # the 200 MB page is cut off at 8 MB
    kinds = ["list", "deep", "files-not-a-list", "drip", "huge", "good"]
    environ = {"UV_DEFAULT_INDEX": f"{hostile_index.url}/{kinds[0]}",
               "UV_INDEX": " ".join(f"{hostile_index.url}/{kind}" for kind in kinds[1:])}
    started = time.monotonic()
    listing = list_releases("demo", environ, "3.12", timeout=30, deadline=8)
    elapsed = time.monotonic() - started
    assert listing.versions == ["1.0.0", "1.1.0"]
    assert listing.sources == [f"{hostile_index.url}/good"]
    errors = dict(error.split(": ", 1) for error in listing.errors)
    assert set(errors) == {f"{hostile_index.url}/{kind}" for kind in kinds[:-1]}, listing.errors
    assert "not a PEP 691" in errors[f"{hostile_index.url}/list"]
    assert "nested too deeply" in errors[f"{hostile_index.url}/deep"]
    assert "no complete answer in 8 s" in errors[f"{hostile_index.url}/drip"]
    assert "8 MB bound" in errors[f"{hostile_index.url}/huge"]
    assert elapsed < 25, elapsed  # the drip alone would hold it 65 s; a read timeout never fires on it


@pytest.mark.fault("bisect against a hostile package index")
@pytest.mark.parametrize("versions", ["1.0,,2.0", "1.0,banana", "../../x", " , "])
def test_bisect_bad_versions_are_a_usage_error(versions):
    from harness._exceptions import UsageError
    from harness.authoring._bisect import select_range

    with pytest.raises(UsageError, match=r"--versions: .* is not a version"):
        select_range(versions.split(","), None, None)
