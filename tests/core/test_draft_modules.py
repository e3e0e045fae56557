"""validate builds a filled-in draft's environments and refuses one that does not install a module its repro imports
(graded39 trustworthyai-53: `new` named the distribution `castle`, the import name; the index's `castle` is
castle-python, another project whose module is also `castle`, so the filled draft resolved and passed while it could
not run; the right filling, gcastle, was refused by a name rule)."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

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
    passed = run_harness("validate", "--cases-dir", str(right), timeout=1200)
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
