"""validate builds a filled-in draft's environments and refuses one that does not install a module its repro imports
(graded39 trustworthyai-53: `new` named the distribution `castle`, the import name; the index's `castle` is
castle-python, another project whose module is also `castle`, so the filled draft resolved and passed while it could
not run; the right filling, gcastle, was refused by a name rule)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

from harness.cases._load import load_case
from harness.environments._draft_installs import repro_imports
from harness.environments._spec import EnvSpec
from harness.environments._venv import VenvBackend
from tests.core.test_direct_pins import filled_draft
from tests.faults.conftest import run_harness
from tests.faults.test_build_cache import _wheel

REPORT = Path(__file__).parents[1] / "fixtures" / "graded39" / "trustworthyai-53.txt"


def _draft(tmp_path: Path, buggy: str, fix: str) -> Path:
    return filled_draft(tmp_path, buggy, fix, REPORT, "gcastle-rl")


def test_the_skeleton_imports_the_module_the_report_ran(tmp_path):
    from tests.core.test_new import new

    repro = (new("gcastle-rl", tmp_path, REPORT).folder / "repro.py").read_text()
    assert "\nimport castle.algorithms.gradient.rl.torch.rl  # noqa: F401 - in the traceback" in repro


def test_validate_refuses_another_project_of_the_same_module_name_and_passes_the_right_one(tmp_path):
    (tmp_path / "wrong").mkdir()
    wrong = _draft(tmp_path / "wrong", "castle==1.0.0", "castle==1.0.1")  # castle-python: `castle`, no algorithms
    refused = run_harness("validate", "--cases-dir", str(wrong), timeout=1200)
    out = refused.stdout
    assert refused.returncode == 2, out + refused.stderr
    assert "the environment of variant 'buggy' installs no module 'castle.algorithms'" in out, out
    assert "castle.algorithms.gradient.rl.torch.rl" in out and "0 case file(s) valid, 1 invalid" in out
    line = int(re.search(r"case\.yaml:(\d+): the environment of variant 'buggy'", out)[1])
    assert (wrong / "gcastle-rl" / "case.yaml").read_text().splitlines()[line - 1].strip() == "buggy:"

    (tmp_path / "right").mkdir()
    right = _draft(tmp_path / "right", "gcastle==1.0.3rc2", "gcastle==1.0.3rc3")
    load_case(right / "gcastle-rl")  # the name rule no longer refuses a distribution whose module it cannot know
    passed = run_harness("validate", "--no-run", "--cases-dir", str(right), timeout=1200)  # a stand-in repro
    assert passed.returncode == 0 and "1 case file(s) valid, 0 invalid" in passed.stdout, passed.stdout
    assert "looking up gcastle-rl's imports in the environment of variant 'buggy'" in passed.stdout
    assert run_harness("validate", "--static", "--cases-dir", str(wrong)).returncode == 0  # files only


def test_the_imports_looked_up_are_the_module_level_ones(tmp_path):
    script = tmp_path / "repro.py"
    script.write_text(textwrap.dedent("""
        from __future__ import annotations
        import os.path, torch
        import a.b.c as abc
        from d.e import f
        from . import sibling
        try:
            import optional
        except ImportError:
            optional = None
        def main():
            import inside
        if True:
            import branch
        import a.b.c
    """))
    assert repro_imports(script) == ["os.path", "torch", "a.b.c", "d.e"]
    script.write_text("import (")
    assert repro_imports(script) == []


def test_a_module_is_looked_up_without_running_the_package(tmp_path):
    wheels = tmp_path / "wheels"
    init = b"raise SystemExit('the package ran')  # it names `lazy`, a submodule it would make when imported\n"
    wheel = _wheel(wheels, "pkgreal", {"pkg/__init__.py": init, "pkg/algorithms/__init__.py": b"",
                                        "pkg/algorithms/rl.py": b"", "pkg/plain.py": b"", "nsonly/part/x.py": b""})
    backend = VenvBackend(root=tmp_path / "envs")
    env = backend.prepare(EnvSpec(requires=(f"pkgreal @ {wheel.as_uri()}",)), lambda message: None)
    case = tmp_path / "case"
    case.mkdir()
    (case / "helper.py").write_text("")
    asked = ["pkg.algorithms.rl", "pkg.lazy", "pkg.plain.attribute", "nsonly.part.x", "json.decoder", "helper",
             "pkg.nothing.deeper", "absent.module", "pkg.algorithms.absent"]
    assert backend.missing_modules(env, asked, [case]) == [
        ("pkg.nothing.deeper", "pkg.nothing"), ("absent.module", "absent"),
        ("pkg.algorithms.absent", "pkg.algorithms.absent")]
    assert backend.missing_modules(env, ["helper"]) == [("helper", "helper")]  # not without the case folder


def test_validate_refuses_the_index_s_project_of_the_blamed_name_when_its_metadata_is_another_s(tmp_path):
    """graded41 nanogpt-317: `new` blamed `outputs` (a name in torch's assert line); filled with the index's real
    `outputs` releases (a console library whose module is also `outputs`), the draft passed validate."""
    report = REPORT.parents[1] / "graded41" / "nanogpt-317.txt"
    cases = filled_draft(tmp_path, "outputs==1.13", "outputs==1.14", report, "nanogpt-scaler")
    refused = run_harness("validate", "--cases-dir", str(cases), timeout=1200)
    out = refused.stdout
    assert refused.returncode == 2, out + refused.stderr
    assert "variant 'buggy' pins outputs, but the index's outputs is another project than the report's" in out, out
    assert "https://pinpe.top" in out


def test_a_distribution_is_another_project_only_when_its_metadata_names_somewhere_else(tmp_path):
    from types import SimpleNamespace

    from harness.environments._draft_identity import another_project

    site = tmp_path / "lib" / "python3.11" / "site-packages"

    def installed(name: str, *fields: str) -> None:
        info = site / f"{name}-1.0.dist-info"
        info.mkdir(parents=True, exist_ok=True)
        (info / "METADATA").write_text("\n".join(["Metadata-Version: 2.1", f"Name: {name}", "Version: 1.0", *fields]))

    case = SimpleNamespace(title="castle build_optim: Expected all tensors", tags=("castle", "device-placement"),
                           upstream={"issue": "https://github.com/huawei-noah/trustworthyAI/issues/53"})
    installed("castle", "Home-page: https://castle.io")
    other = "neither the repository the upstream issue is filed at nor any source repository"
    assert another_project(case, ["castle==1.0", "torch==2.13.0"], tmp_path) == ("castle", other, ("https://castle.io",))
    installed("castle", "Home-page: https://github.com/castle/castle-python")  # a source repository of its own:
    assert another_project(case, ["castle==1.0"], tmp_path) is None  # told apart by the modules (_module_probe)
    assert another_project(case, ["gcastle==1.0"], tmp_path) is None  # not the blamed name: not asked
    installed("castle-sdk", "Project-URL: Homepage, https://example.org/sdk")  # a longer name carrying it: asked
    assert another_project(case, ["castle-sdk==1.0"], tmp_path) == ("castle-sdk", other, ("https://example.org/sdk",))
    from_pr = SimpleNamespace(**{**vars(case), "upstream": {"pr": "https://github.com/huawei-noah/trustworthyAI/pull/9"}})
    assert another_project(from_pr, ["castle-sdk==1.0"], tmp_path) is not None  # a draft from a pull request
    installed("castle", "Project-URL: Source, https://GitHub.com/huawei-noah/trustworthyAI/tree/master/gcastle")
    assert another_project(case, ["castle==1.0"], tmp_path) is None  # the repository
    installed("castle")
    assert another_project(case, ["castle==1.0"], tmp_path) is None  # no URL: cannot tell
    named = SimpleNamespace(title="remora train: x", tags=("remora",),
                            upstream={"issue": "https://github.com/nanoporetech/remora/issues/226"})
    installed("remora", "Home-page: https://example.org/another")
    assert another_project(named, ["remora==1.0"], tmp_path) is None  # named as the repository: no source named


def test_a_distribution_named_as_the_reports_repository_is_another_project_when_its_source_is_another_repository(
        tmp_path):
    """graded45 pet-4: `new` took `pet` from the repository cxliu0/PET; the index's pet names its source at
    drake-jin/pi-email-transmission: another project. A fork or a move of the repository (its name kept), a home page
    that is no source repository, or no URL at all, is not refused."""
    from types import SimpleNamespace

    from harness.environments._draft_identity import another_project

    info = tmp_path / "lib" / "python3.11" / "site-packages" / "pet-1.0.dist-info"
    info.mkdir(parents=True)
    case = SimpleNamespace(title="pet pet.py: indices should be either on cpu", tags=("pet", "device-placement"),
                           upstream={"issue": "https://github.com/cxliu0/PET/issues/4"})

    def pet(*fields: str) -> tuple[str, str, tuple[str, ...]] | None:
        (info / "METADATA").write_text("\n".join(["Metadata-Version: 2.1", "Name: pet", "Version: 1.0", *fields]))
        return another_project(case, ["pet==1.0", "torch==2.13.0"], tmp_path)

    refused = pet("Home-page: https://github.com/drake-jin/pi-email-transmission")
    assert refused is not None and refused[1] == "not a repository named PET, as the report's is", refused
    assert pet("Home-page: https://github.com/cxliu0/PET") is None  # the report's own repository
    assert pet("Project-URL: Source, https://github.com/someone/pet.git") is None  # a fork or a move: the name kept
    assert pet("Home-page: https://pet.example.org") is None  # no source repository named: cannot tell
    assert pet() is None  # no URL: cannot tell


@pytest.mark.parametrize(("name", "release"), [("neural-renderer-109", "neural-renderer-pytorch==1.1.3"),
                                               ("remora-226", "ont-remora==3.3.0")])
def test_a_project_listed_under_a_longer_name_is_not_refused_by_the_name_rule(tmp_path, name: str, release: str):
    """graded41: the index lists neural_renderer as neural-renderer-pytorch and remora as ont-remora; filled with those
    real releases, the drafts were refused ("pins neither neural-renderer nor a commit of its repository")."""
    cases = filled_draft(tmp_path, release, release.partition("==")[0] + "==9.9.9", REPORT.parents[1] / "graded41"
                         / f"{name}.txt", "longer-name")
    load_case(cases / "longer-name")
