"""Fix round (fixenv2): a repository's package under the index's own name, a module path read as a distribution, a
stated release or a reply's fix commit used, and validate's check of a commit pin's name. Made-up reports of each
shape (none is a fixture's text)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness._exceptions import CaseFileError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case
from harness.cases._load import load_case

_PLACED = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _drafted(text: str, *, missing: frozenset[str] = frozenset(),
             urls: dict[str, tuple[str, ...]] | None = None) -> tuple[Draft, dict[str, Any]]:
    known = urls or {}
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=lambda name: name not in missing,
                       project_urls=lambda name: known.get(name, () if name in missing else None))
    return draft, yaml.safe_load(draft.case_yaml)


def _pins(data: dict[str, Any], variant: str) -> str:
    return " ".join(data["variants"][variant]["requires"])


def _frameless(repo: str, body: str = "") -> str:
    return (f"Source: https://github.com/{repo}/issues/7\n# error when training on GPU\n\n"
            f"Training the model on a GPU raises:\n\n{_PLACED}\n{body}")


# 2. The repository's package is on the index under another name.
def test_a_repository_absent_from_the_index_is_pinned_under_its_squeezed_name_there() -> None:
    draft, data = _drafted(_frameless("someone/tide_cast"), missing=frozenset({"tide-cast"}),
                           urls={"tidecast": ("https://github.com/someone/tide_cast",)})
    assert "tidecast==X.Y.Z" in _pins(data, "buggy") and "tidecast==X.Y.Z" in _pins(data, "fix")
    assert "git+" not in _pins(data, "buggy")
    assert any("package there is tidecast" in note for note in draft.notes)


def test_a_draft_blames_the_distribution_it_pins_under_the_index_name() -> None:
    draft, _ = _drafted(_frameless("someone/tide_cast"), missing=frozenset({"tide-cast"}),
                        urls={"tidecast": ("https://github.com/someone/tide_cast",)})
    assert draft.culprit == "tidecast"


def test_a_repository_the_index_does_not_rename_keeps_its_name_as_the_culprit() -> None:
    draft, _ = _drafted(_frameless("someone/tide_cast"), missing=frozenset({"tide-cast"}),
                        urls={"tidecast": ("https://github.com/other/tidecast",)})
    assert draft.culprit == "tide-cast"


def test_a_squeezed_name_that_is_another_projects_is_not_taken() -> None:
    _, data = _drafted(_frameless("someone/tide_cast"), missing=frozenset({"tide-cast"}),
                       urls={"tidecast": ("https://github.com/other/tidecast",)})
    assert "tide-cast @ git+https://github.com/someone/tide_cast@<commit>" in _pins(data, "buggy")


def test_a_reply_naming_the_fix_pr_uses_the_index_name_of_the_package() -> None:
    reply = "\nmaintainer · comment\nThis is fixed in #12, thanks!\n"
    _, data = _drafted(_frameless("someone/tide_cast", reply), missing=frozenset({"tide-cast"}),
                       urls={"tidecast": ("https://github.com/someone/tide_cast",)})
    assert "pull request #12" in _pins(data, "fix") and "tidecast==X.Y.Z" in _pins(data, "fix")


def test_an_index_project_whose_page_is_its_own_site_is_the_repositorys() -> None:
    _, data = _drafted(_frameless("jdoe/lexio"), urls={"lexio": ("https://lexio.dev",)})
    assert "lexio==X.Y.Z" in _pins(data, "buggy") and "git+" not in _pins(data, "buggy")


def test_an_index_project_linking_a_sibling_repository_of_the_same_owner_is_the_repositorys() -> None:
    _, data = _drafted(_frameless("acme/widget-zoo"), urls={"widget-zoo": ("https://github.com/acme/widget",)})
    assert "widget-zoo==X.Y.Z" in _pins(data, "buggy") and "git+" not in _pins(data, "buggy")


def test_an_index_project_of_another_owner_or_another_site_stays_another_project() -> None:
    for urls in (("https://github.com/stranger/widget",), ("https://thesoftwarehouse.com/widget-zoo/",)):
        _, data = _drafted(_frameless("acme/widget-zoo"), urls={"widget-zoo": urls})
        assert "widget-zoo @ git+https://github.com/acme/widget-zoo@<commit>" in _pins(data, "buggy"), urls


# 1. A checkout's generic top-level folder read as a distribution.
def _cut_tail(repo: str, folder: str) -> str:
    return (f"Source: https://github.com/{repo}/issues/3\n# crash when resuming\n\n"
            f'{folder}/optim_sched.py", line 17, in __init__\n'
            "KeyError: \"param 'initial_lr' is not specified in param_groups[0] when resuming an optimizer\"\n")


def test_a_cut_frame_in_a_checkouts_generic_folder_blames_the_links_project() -> None:
    for folder in ("utils", "models", "training", "lib"):
        draft, data = _drafted(_cut_tail("jdoe/occluder", folder))
        assert draft.culprit == "occluder", folder
        assert data["title"].startswith("occluder"), data["title"]
        assert "occluder @ git+https://github.com/jdoe/occluder@<commit>" in _pins(data, "buggy")


def test_a_cut_frame_in_an_installed_packages_folder_still_blames_that_package() -> None:
    draft, _ = _drafted(_cut_tail("jdoe/occluder", "transformers"))
    assert draft.culprit == "transformers"


def test_a_dotted_target_in_a_generic_folder_is_not_read_as_a_module() -> None:
    text = (_frameless("jdoe/segmentor", "\nThe config's target training.trainer.Trainer fails, and "
                       "utils.io.load_ckpt too.\n"))
    report = parse_report(text)
    assert "training" not in report.modules and "utils" not in report.modules
    assert _drafted(text)[0].culprit == "segmentor"


def _examples_traceback(package: str) -> str:
    return ("Source: https://github.com/acme/quantlib/issues/9\n# resume fails\n\n```\nTraceback (most recent call last):\n"
            '  File "/home/u/.local/bin/quant_train", line 8, in <module>\n    sys.exit(main())\n'
            f'  File "/home/u/.local/lib/python3.8/site-packages/{package}/bnn/trainer.py", line 140, in __init__\n'
            "    self.model.load_state_dict(state)\n"
            "AttributeError: 'Trainer' object has no attribute 'model'\n```\n")


def test_an_examples_package_shipped_beside_its_project_is_that_projects_distribution() -> None:
    draft, data = _drafted(_examples_traceback("quantlib_examples"))
    assert draft.culprit == "quantlib" and "quantlib==X.Y.Z" in _pins(data, "buggy")
    assert "import quantlib_examples" in draft.repro_py  # the module keeps its own name


def test_a_package_merely_containing_examples_keeps_its_name() -> None:
    assert _drafted(_examples_traceback("examplesbox"))[0].culprit == "examplesbox"


# 3. A release the prose states without naming its package.
def _checkout_run(sentence: str) -> str:
    return ("Source: https://github.com/acme/foundrykit/issues/5\n# resume problem\n\n"
            f"{sentence} When resuming I get the following error:\n\n```\nTraceback (most recent call last):\n"
            '  File "/home/u/foundrykit/scripts/train/train.py", line 786, in <module>\n    main(cfg)\n'
            '  File "/home/u/foundrykit/scripts/train/train.py", line 717, in main\n    trainer.fit()\n'
            "KeyError: 'state'\n```\n")


def test_the_latest_release_a_sentence_states_is_pinned_even_from_a_checkout() -> None:
    for sentence in ("I'm facing this with the latest release (0.8.0).", "Seen on the current version v0.8.0."):
        _, data = _drafted(_checkout_run(sentence))
        assert "foundrykit==0.8.0" in _pins(data, "buggy"), sentence
        assert "foundrykit==X.Y.Z" in _pins(data, "fix") and "git+" not in _pins(data, "fix")


def test_a_release_a_sentence_proposes_is_not_the_runs() -> None:
    _, data = _drafted(_checkout_run("Maybe I should try the latest release (0.9.0)."))
    assert "0.9.0" not in _pins(data, "buggy") and "foundrykit @ git+" in _pins(data, "buggy")


# 3. A fix commit a reply links (a view of the repository's code at that commit that works).
def _replied(link_line: str, saying: str) -> str:
    return _frameless("acme/trainkit", f"\nHow can I resolve this?\n\nmaint · comment · 2022-05-26\nHi there!\n\n"
                                       f"{saying}\n\n{link_line}\n")


def test_a_replys_link_to_the_repository_at_a_commit_that_works_is_the_fix_pin() -> None:
    sha = "68a3f926b2d4dd771ca6e767c77b6c9d10051aae"
    for host in ("github.com", "githubtocolab.com"):
        _, data = _drafted(_replied(f"https://{host}/acme/trainkit/blob/{sha}/notebooks/Demo.ipynb",
                                    "Here's a new notebook that should work:"))
        assert f"trainkit @ git+https://github.com/acme/trainkit@{sha}" in _pins(data, "fix"), host


def test_a_replys_link_at_a_commit_without_a_fix_or_of_another_repository_is_no_fix() -> None:
    sha = "68a3f926b2d4dd771ca6e767c77b6c9d10051aae"
    for link, saying in ((f"https://github.com/acme/trainkit/blob/{sha}/x.py#L10", "The error is raised here:"),
                         (f"https://github.com/other/trainkit/blob/{sha}/x.py", "This should work:")):
        _, data = _drafted(_replied(link, saying))
        assert sha not in _pins(data, "fix"), link


# 4. validate: a commit pin named otherwise than the project it builds.
def _variants(folder: Path, buggy: list[str], fixed: list[str]) -> None:
    path = folder / "case.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    data["variants"]["buggy"]["requires"] = buggy
    data["variants"]["fixed"]["requires"] = fixed
    path.write_text(yaml.safe_dump(data, sort_keys=False))


_SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(("buggy", "fixed", "named"), [
    (["tidecast==0.4.0"], [f"tide-cast @ git+https://github.com/someone/tide_cast@{_SHA}"], "tidecast"),
    ([f"tide_cast @ git+https://github.com/someone/tide_cast@{_SHA}"], ["tidecast==0.5.0"], "tidecast"),
    ([f"whisper @ git+https://github.com/openai/whisper@{_SHA}"], ["openai-whisper==20231117"], "openai-whisper"),
])
def test_validate_refuses_a_commit_pin_named_otherwise_than_its_project(fixture_cases: Path, buggy: list[str],
                                                                       fixed: list[str], named: str) -> None:
    folder = fixture_cases / "confirmed"
    _variants(folder, buggy, fixed)
    with pytest.raises(CaseFileError) as info:
        load_case(folder)
    assert info.value.path == folder / "case.yaml" and info.value.line is not None
    assert f"that project is named {named}" in str(info.value) and f"name it {named} @ git+" in str(info.value)


@pytest.mark.parametrize(("buggy", "fixed"), [
    ([f"tidecast @ git+https://github.com/someone/tide_cast@{_SHA}"], ["tidecast==0.5.0"]),
    (["tide-cast==0.4.0"], [f"tide_cast @ git+https://github.com/someone/tide_cast@{_SHA}"]),  # one canonical name
    ([f"somelib @ git+https://github.com/o/r@{_SHA}"], ["otherlib==1.0"]),
])
def test_validate_loads_commit_pins_named_as_their_project(fixture_cases: Path, buggy: list[str],
                                                            fixed: list[str]) -> None:
    folder = fixture_cases / "confirmed"
    _variants(folder, buggy, fixed)
    assert load_case(folder).variants["buggy"].requires


# 2/3. A report that installed its repository's current code (a clone's `pip install .`, a git URL at no commit).
def _installed(steps: str) -> str:
    return _frameless("acme/difflib2", f"\n### Reproduction\n\n```bash\n{steps}\n```\n")


def test_a_report_that_installed_a_clone_of_its_repository_pins_commits() -> None:
    for steps in ("git clone https://github.com/acme/difflib2\ncd difflib2\npip install .",
                  "git clone https://github.com/acme/difflib2.git\ncd difflib2\npip install -e \".[torch]\"",
                  "pip install git+https://github.com/acme/difflib2"):
        draft, data = _drafted(_installed(steps))
        assert "difflib2 @ git+https://github.com/acme/difflib2@<commit>" in _pins(data, "buggy"), steps
        assert any("installed from its default branch" in note for note in draft.notes)


def test_a_clone_of_another_repository_or_a_release_install_keeps_release_pins() -> None:
    for steps in ("git clone https://github.com/other/tools\ncd tools\npip install .", "pip install difflib2==1.2.0",
                  "git clone https://github.com/acme/difflib2\ncd difflib2\npython run.py"):
        _, data = _drafted(_installed(steps))
        assert "git+" not in _pins(data, "buggy"), steps


def test_a_replys_install_from_the_default_branch_is_a_fix_to_try_not_the_run() -> None:
    text = _frameless("acme/difflib2", "\nmaint · comment · 2024-01-02\nCould you install from main? "
                                       "`pip install git+https://github.com/acme/difflib2`\n")
    assert "git+" not in _pins(_drafted(text)[1], "buggy")


def test_a_renamed_projects_title_and_frames_keep_the_name_its_code_goes_by() -> None:
    text = ("Source: https://github.com/someone/tide_cast/issues/7\n# error when training on GPU\n\nTraceback (most "
            'recent call last):\n  File "/home/u/tide_cast/tide_cast/train.py", line 9, in fit_epoch\n'
            f"    loss = model(batch)\n{_PLACED}\n")
    draft, data = _drafted(text, missing=frozenset({"tide-cast"}),
                           urls={"tidecast": ("https://github.com/someone/tide_cast",)})
    assert draft.culprit == "tidecast" and "tidecast==X.Y.Z" in _pins(data, "buggy")
    assert re.match(r"tide[-_]cast fit_epoch: ", data["title"]), data["title"]
