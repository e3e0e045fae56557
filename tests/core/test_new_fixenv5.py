"""Fix round (fixenv5): torch's release from the setup's install command, the Python of a prose list of versions, and
a library filed at another project's repository never pinned to that repository. Made-up reports of each shape (none
is a fixture's text)."""

from __future__ import annotations

from typing import Any

import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._envlist import parse_environment
from harness.authoring._owners import renamed_index_pins


def _torch(lines: list[str]) -> str | None:
    pin = parse_environment(lines).pins.get("torch")
    return pin.version if pin else None


def test_the_setups_pip_or_conda_install_command_gives_torch() -> None:
    pip = ["I set up the environment with:", "", "`pip install torch==1.9.0+cu111 torchvision==0.10.0+cu111 -f "
           "https://download.pytorch.org/whl/torch_stable.html`", "then ran the training."]
    assert _torch(pip) == "1.9.0+cu111"
    conda = ["```", "$ conda install pytorch=1.7.1 torchvision cudatoolkit=10.2 -c pytorch", "```"]
    assert _torch(conda) == "1.7.1"
    assert _torch(["    python -m pip install 'torch==2.0.1' numpy"]) == "2.0.1"


def test_an_install_tried_as_a_fix_or_in_a_reply_gives_no_torch() -> None:
    assert _torch(["Downgrading fixed it for me:", "`pip install torch==1.8.0`"]) is None
    assert _torch(["You could try `pip install torch==1.8.0`"]) is None
    reply = ["The training stops with the error below.", "", "helper · comment · 2023-01-02",
             "pip install torch==1.8.0"]
    assert _torch(reply) is None


def test_a_listing_states_torch_before_an_install_command() -> None:
    lines = ["conda install pytorch=1.7.1 -c pytorch", "", "torch==1.7.0", "numpy==1.21.0"]
    assert _torch(lines) == "1.7.0"


def test_a_prose_list_of_versions_gives_the_python() -> None:
    assert parse_environment(["(setup: python 2.7, cv2 3.4, pytorch 0.3.1)"]).python == "2.7"
    assert parse_environment(["Environment: Python 3.8 + PyTorch 1.9, CUDA 11.1"]).python == "3.8"


def test_a_python_without_a_torch_release_or_one_torch_never_ran_on_is_not_read() -> None:
    assert parse_environment(["It works on python 3.8 but not here."]).python is None
    assert parse_environment(["I am using Cuda 11.8, Python3.0 PyTorch 2.0.1"]).python is None
    assert parse_environment(["Upgrading to python 3.9 and torch 1.10 solved it"]).python is None


_ELSEWHERE = """Source: https://github.com/acme/chemkit-core/issues/12
# device error in training

Running `chemkit-train --pipeline vae-trainer`:

```
Traceback (most recent call last):
  File "/opt/env/lib/python3.8/site-packages/chemkit/training/core.py", line 88, in train
    run_vae(params)
  File "/opt/env/lib/python3.8/site-packages/molgen_tools/training.py", line 40, in run_vae
    batch = prepare(batch)
  File "/opt/env/lib/python3.8/site-packages/molgen_tools/utils.py", line 12, in prepare
    return torch.cat([batch, extra])
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
```
"""


def _draft(text: str, released: Any) -> tuple[str, dict[str, Any]]:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=released, project_urls=lambda name: ())
    return draft.culprit, yaml.safe_load(draft.case_yaml)


def test_a_library_filed_at_another_projects_repository_is_not_pinned_to_it() -> None:
    culprit, data = _draft(_ELSEWHERE, lambda name: name == "chemkit")
    pins = " ".join([*data["variants"]["buggy"]["requires"], *data["variants"]["fix"]["requires"]])
    assert culprit == "molgen-tools"
    assert "github.com/acme/chemkit-core" not in pins
    assert '"molgen-tools @ git+https://github.com/<owner>/<repo>@<commit>"' in pins
    assert "acme/chemkit-core builds chemkit" in pins


def test_a_repositorys_own_unreleased_package_keeps_commit_pins_of_it() -> None:
    own = _ELSEWHERE.replace("acme/chemkit-core", "acme/molgen_tools")
    culprit, data = _draft(own, lambda name: name == "chemkit")
    assert culprit == "molgen-tools"
    assert "git+https://github.com/acme/molgen_tools@" in " ".join(data["variants"]["buggy"]["requires"])
    # no package of the frames is named as the repository: nothing says it builds another project, so it is kept
    other = _ELSEWHERE.replace("acme/chemkit-core", "acme/labtools")
    assert "acme/labtools@" in " ".join(_draft(other, lambda name: name == "chemkit")[1]["variants"]["buggy"]
                                        ["requires"])


def test_the_index_pins_come_with_the_name_they_pin() -> None:
    urls = {"widgetnet": (), "widgetnet-python": ("https://github.com/acme/widgetnet",)}
    pins = ([("FILL-IN: pin the widgetnet release the report ran, e.g. widgetnet==X.Y.Z", "")], [])
    renamed = renamed_index_pins("widgetnet", "acme/widgetnet", urls.get, pins, [], True, lambda name: False)
    assert renamed is not None and renamed[2] == "widgetnet-python" and "widgetnet-python==X.Y.Z" in renamed[0][0][0]


def test_an_install_command_in_a_sentences_inline_code_and_conda_creates_python() -> None:
    assert _torch(["I installed it with `conda install pytorch==1.10.1 cudatoolkit=11.3 -c pytorch` and ran"]) == "1.10.1"
    assert _torch(["Upgrading with `pip install torch==2.1.0` solved it"]) is None
    created = parse_environment(["```", "conda create -n seg python=3.7 -y", "conda activate seg", "```"])
    assert created.python == "3.7"
    assert parse_environment(["conda create -n seg python=3.7 worked instead of 3.11"]).python is None


def test_a_dependency_that_starts_the_repositorys_name_is_not_its_package() -> None:
    # chemkit-molgen: a repository named after a dependency it uses, not one that builds chemkit
    other = _ELSEWHERE.replace("acme/chemkit-core", "acme/chemkit-molgen")
    assert "acme/chemkit-molgen@" in " ".join(_draft(other, lambda name: name == "chemkit")[1]["variants"]["buggy"]
                                              ["requires"])
