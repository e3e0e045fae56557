"""Pin miss classes of graded14-16 (issue 21 §1) on made-up reports of each shape: a project run from a source
checkout, a commit the report states, a version series, a pull request a maintainer names as the fix. Each test
fails on main f59c70c and passes with the fix of its class (tests/fixtures/graded16/EXPECTED.md: the real reports)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from harness._exceptions import CaseFileError
from harness.authoring._new import create_case
from harness.cases._load import load_case
from tests.core.test_new import fill_in
from tests.core.test_new_graded14 import SITE, _draft

PLACED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
GIT = "git+https://github.com/someorg/widgetcast"


def _buggy(data: dict[str, Any]) -> str:
    return " ".join(data["variants"]["buggy"]["requires"])


def _fixed(data: dict[str, Any]) -> str:
    return " ".join(data["variants"]["fix"]["requires"])


def _checkout_report(extra: str = "") -> str:
    """A py4cast-shaped report: the linked project's package runs from a folder outside site-packages."""
    return ("https://github.com/someorg/widgetcast/issues/6\n# Metric fails on GPU\n\n" + extra + "```\n"
            "Traceback (most recent call last):\n"
            '  File "/home/me/work/bin/test.py", line 75, in <module>\n'
            "    trainer.test(model=model)\n"
            f'  File "{SITE}/looplib/trainer.py", line 748, in test\n'
            "    return self._run(model)\n"
            '  File "/home/me/work/widgetcast/metrics.py", line 472, in update\n'
            "    (preds - self.means) * (target - self.means)\n"
            f"RuntimeError: {PLACED}\n```\n")


def test_a_project_run_from_a_checkout_is_pinned_by_commit() -> None:
    """Class (py4cast-6): the linked project's frames lie in a checkout, not site-packages, and the report lists no
    release of it: the run was the repository's code at some commit, so both variants pin commits even when the index
    has releases of that name."""
    draft, data = _draft(_checkout_report(), released=lambda dist: True)
    assert draft.culprit == "widgetcast", draft.culprit
    assert f"widgetcast @ {GIT}@" in _buggy(data), _buggy(data)
    assert f"widgetcast @ {GIT}@" in _fixed(data), _fixed(data)
    assert "widgetcast==" not in _buggy(data) + _fixed(data)
    assert any("checkout" in note for note in draft.notes), draft.notes


def test_a_project_installed_in_site_packages_keeps_its_release_pins() -> None:
    """The same shape installed (its frame under site-packages): a release placeholder, as before."""
    report = _checkout_report().replace("/home/me/work/widgetcast/", f"{SITE}/widgetcast/")
    _, data = _draft(report, released=lambda dist: True)
    assert "widgetcast==X.Y.Z" in _buggy(data), _buggy(data)


def test_a_commit_the_report_states_is_the_buggy_pin() -> None:
    """Class (forge-621): a web UI's sysinfo states the commit that ran ("Commit": "<sha>"); the commit pin of a
    project the index lacks uses it instead of a FILL-IN."""
    sha = "5bea443d94f3a85f819cb8541c1bba0aac208d83"
    info = f'```\n{{\n    "Version": "f0.0.9-latest-51-g5bea443d",\n    "Commit": "{sha}",\n}}\n```\n\n'
    draft, data = _draft(_checkout_report(info), released=lambda dist: dist != "widgetcast")
    assert _buggy(data) == f"widgetcast @ {GIT}@{sha}", _buggy(data)
    assert _fixed(data).startswith("FILL-IN"), _fixed(data)  # the fix commit is still the author's to find
    assert any(sha in note for note in draft.notes), draft.notes


def test_a_blob_link_at_a_sha_of_another_repository_is_not_the_runs_commit() -> None:
    """A blob link of another repository's file at a sha says nothing of the project's commit."""
    link = "See https://github.com/other/lib/blob/0123456789abcdef0123456789abcdef01234567/x.py#L3\n\n"
    _, data = _draft(_checkout_report(link), released=lambda dist: dist != "widgetcast")
    assert "0123456789" not in _buggy(data) and _buggy(data).startswith("FILL-IN"), _buggy(data)


def test_a_commit_a_reply_says_fixed_it_is_not_the_runs_commit() -> None:
    """"Fixed in commit abc1234" is the fix (a reply's), not the commit the report ran."""
    _, data = _draft(_checkout_report("Maintainer: fixed in commit abc1234f.\n\n"), released=lambda dist: False)
    assert "abc1234f" not in _buggy(data), _buggy(data)


def test_a_pull_request_a_maintainer_names_gives_the_fix_placeholder() -> None:
    """Class (mase-40): "This was broken by a refactor, can you check now on pr #43": the fix is PR #43's merge
    commit for a commit-pinned project, the first release with it for a released one."""
    reply = "This was broken by a refactor, can you check now on pr #43\n\n"
    _, data = _draft(_checkout_report(reply), released=lambda dist: dist != "widgetcast")
    assert "pull request #43" in _fixed(data) and f"widgetcast @ {GIT}@" in _fixed(data), _fixed(data)
    installed = _checkout_report(reply).replace("/home/me/work/widgetcast/", f"{SITE}/widgetcast/")
    _, data = _draft(installed, released=lambda dist: True)
    assert "pull request #43" in _fixed(data) and "widgetcast==X.Y.Z" in _fixed(data), _fixed(data)


def test_a_pull_request_link_of_another_repository_is_not_the_fix() -> None:
    """A fixed PR of another repository (a dependency's) is not the project's fix."""
    reply = "Fixed upstream in https://github.com/other/lib/pull/9 .\n\n"
    _, data = _draft(_checkout_report(reply), released=lambda dist: dist != "widgetcast")
    assert "#9" not in _fixed(data), _fixed(data)


def test_a_series_bullet_names_each_librarys_series() -> None:
    """Class (didi-instruct-1): "* PyTorch 2.4.x, Lightning 2.4.x, metriclib 1.4.x": torch's series is the run's
    torch (as before), and each other library's series reaches its pin instead of "the report lists none"."""
    report = ("https://github.com/someorg/widgetcast/issues/6\n\n**Environment**\n\n"
              "* PyTorch 2.4.x, Lightning 2.4.x, metriclib 1.4.x\n* CUDA 12.x, single GPU\n\n```\n"
              "Traceback (most recent call last):\n"
              '  File "/home/me/work/run.py", line 5, in <module>\n'
              "    metric.update(x)\n"
              f'  File "{SITE}/metriclib/metric.py", line 483, in update\n'
              "    self.weight += weight.sum()\n"
              f"RuntimeError: {PLACED}\n```\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "metriclib", draft.culprit
    assert "1.4.x" in _buggy(data) and "lists none" not in _buggy(data), _buggy(data)
    assert any("the report ran torch 2.4" in note for note in draft.notes), draft.notes


def test_a_series_a_question_asks_about_is_not_the_runs() -> None:
    """"Does it work with these?" then "- metriclib 1.5.x": versions asked about, not the run's."""
    report = _checkout_report().replace("# Metric fails on GPU\n", "# Metric fails on GPU\nDoes it work with these?\n"
                                        "- metriclib 1.5.x\n")
    _, data = _draft(report.replace("/home/me/work/widgetcast/", f"{SITE}/metriclib/"), released=lambda dist: True)
    assert "1.5.x" not in _buggy(data), _buggy(data)


def _asked_cpu(sentence: str) -> str:
    return ("https://github.com/someorg/widgetcast/issues/41\n# Score crashes when evaluated on `cpu` device\n\n"
            f"{sentence}\n\n```\nRuntimeError: Expected all tensors to be on the same device, but found at least two "
            "devices, cpu and cuda:0! (when checking argument for argument weight in method wrapper___slow_conv2d_"
            "forward)\n```\n")


def test_a_cpu_the_report_asked_for_gives_the_cpu_lane_its_reason() -> None:
    """Class (clean-fid-41): the report passes ``device="cpu"`` and the message names cuda:0: the library ignores
    the device it is given, so the cpu lane (no GPU) cannot show it: "unsupported" with that reason (the schema gives
    a lane a reason only when it is "unsupported": "passes: <why>" could never validate)."""
    _, data = _draft(_asked_cpu('Passing `device="cpu"` and `model_name="vit"` crashes with the following error:'),
                     released=lambda dist: True)
    expect = data["variants"]["buggy"]["expect"]
    assert expect["cpu"].startswith('unsupported: the report asked for the CPU (device="cpu")'), expect
    assert "ignores the device argument" in expect["cpu"]
    assert expect["cuda"] == "reproduces", expect


def test_a_cpu_move_a_fix_adds_is_not_the_runs_device() -> None:
    """`.to(device="cpu")` in the reporter's solution is the fix, not the device the run asked for."""
    _, data = _draft(_asked_cpu('My solution: add `.to(device="cpu")` after `metrics_dict.get(...)`.'),
                     released=lambda dist: True)
    assert data["variants"]["buggy"]["expect"]["cpu"] == "passes", data["variants"]["buggy"]["expect"]


def _filled_case(tmp_path: Path, head: str, library_file: str) -> Path:
    """A made-up report's draft (one installed library frame), its FILL-INs filled as an author would."""
    report = tmp_path / "report.txt"
    report.write_text(f"{head}```\nTraceback (most recent call last):\n"
                      '  File "/home/me/run.py", line 3, in <module>\n    run(model)\n'
                      f'  File "{SITE}/{library_file}", line 9, in run\n    y = model(x)\n'
                      f"RuntimeError: {PLACED}\n```\n")
    written = create_case("made-up", tmp_path / "cases", report, released=lambda dist: True)
    fill_in(written.folder)
    return written.folder


def test_validate_refuses_an_import_its_pinned_distribution_does_not_install(tmp_path: Path) -> None:
    """grade16's validate defect (clean-fid-41): a filled draft whose repro imports ``clean_fid`` with clean-fid
    pinned; clean-fid installs ``cleanfid``, so the import fails in every lane. The harness's import-name table says
    so without installing anything; the right import passes."""
    folder = _filled_case(tmp_path, "https://github.com/someone/clean-fid/issues/41\n\n", "cleanfid/fid.py")
    repro = folder / "repro.py"
    assert re.search(r"^import cleanfid\b", repro.read_text(), re.MULTILINE), repro.read_text()
    load_case(folder)  # the import `new` wrote, filled in: valid
    repro.write_text(re.sub(r"^import cleanfid\b", "import clean_fid", repro.read_text(), flags=re.MULTILINE))
    with pytest.raises(CaseFileError, match=r"imports 'clean_fid', but clean-fid .* installs the module 'cleanfid'"):
        load_case(folder)


def test_validate_keeps_a_distribution_whose_name_is_its_module(tmp_path: Path) -> None:
    """torch installs torchgen and functorch too (the table lists them): ``import torch`` is never flagged."""
    written = create_case("torch-only", tmp_path / "cases", None, released=lambda dist: True)
    fill_in(written.folder)
    load_case(written.folder)


def test_validate_refuses_a_same_named_distribution_that_is_another_project(tmp_path: Path) -> None:
    """grade16's nemo-2712 defect: ``import nemo`` with ``nemo==X`` pinned runs PyPI's nemo, another project than
    NVIDIA's NeMo (nemo-toolkit). The draft pins nemo-toolkit (valid once filled); a hand-made nemo pin with the
    author's own import line (no skeleton comment naming the distribution) is refused."""
    folder = _filled_case(tmp_path, "", "nemo/core/classes/modelPT.py")
    load_case(folder)
    case_file = folder / "case.yaml"
    case_file.write_text(case_file.read_text().replace("nemo-toolkit==", "nemo=="))
    repro = folder / "repro.py"  # the author's own import line (the skeleton's comment gone)
    repro.write_text(re.sub(r"^import nemo .*$", "import nemo", repro.read_text(), flags=re.MULTILINE))
    with pytest.raises(CaseFileError, match=r"pins nemo, yet PyPI's nemo is another project"):
        load_case(folder)


def _root_script_report(path: str) -> str:
    return ("https://github.com/someorg/widgetcast/issues/1\n# `metrics.py`: RuntimeError in update\n\n"
            "**Actual Error (excerpt)**\n\n```\n"
            f"RuntimeError: {PLACED}\n```\n\nIt occurs at:\n\n```\n"
            f'  File "{path}", line 45, in update\n    self.weight += weight.sum()\n```\n')


def test_a_script_run_from_the_checkouts_root_is_pinned_by_commit() -> None:
    """Class (didi-instruct-1): the linked project's frame is a bare relative script (``File "metrics.py"``), no
    frame installed: the repository's scripts, which no release holds, so both variants pin commits."""
    draft, data = _draft(_root_script_report("metrics.py"), released=lambda dist: True)
    assert draft.culprit == "widgetcast", draft.culprit
    assert f"widgetcast @ {GIT}@" in _buggy(data) and f"widgetcast @ {GIT}@" in _fixed(data), data["variants"]


def test_a_relative_frame_in_the_projects_package_keeps_release_pins() -> None:
    """``File "widgetcast/utils/x.py"`` (the package's folder, run from the checkout's root, as a PR's tests are): a
    release may hold that code, so the release placeholder stays."""
    _, data = _draft(_root_script_report("widgetcast/utils/metrics.py"), released=lambda dist: True)
    assert "widgetcast==X.Y.Z" in _buggy(data), _buggy(data)


def test_a_pull_requests_checkout_keeps_release_pins() -> None:
    """A pull request's report (its author's checkout of the branch that fixes the released code): the bug is in the
    releases, so the release placeholders stay."""
    report = _checkout_report().replace("/issues/6", "/pull/6")
    _, data = _draft(report, released=lambda dist: True)
    assert "widgetcast==X.Y.Z" in _buggy(data), _buggy(data)
