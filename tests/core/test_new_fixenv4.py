"""Fix round (fixenv4): a state_dict key is never a module, environment rows a code fence or a spaced colon hides,
the interpreter's banner as the Python, an index project named after the repository's owner, and a documentation
site named after the project. Made-up reports of each shape (none is a fixture's text)."""

from __future__ import annotations

from typing import Any

import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._envlist import parse_environment
from harness.authoring._index import _other_owner
from harness.authoring._owners import owner_prefixed
from harness.authoring._prose import _modules

_KEYS = """Source: https://github.com/pixelco/SuperRes/issues/88
# RuntimeError: Error(s) in loading state_dict

Resuming the GAN stage from the last saved state fails with missing and unexpected keys:

"encoder1.attn_2.W.1.running_mean", "encoder1.attn_2.theta.weight", "encoder1.conv9.bias", "encoder1.cat_1.convU.weight_orig"
"""


def _draft(text: str, released: Any = lambda name: True, urls: Any = lambda name: None) -> tuple[str, dict[str, Any]]:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=released, project_urls=urls)
    return draft.culprit, yaml.safe_load(draft.case_yaml)


def test_a_state_dict_key_list_names_no_module() -> None:
    culprit, data = _draft(_KEYS)
    assert culprit == "superres"  # the link's project, not `encoder1`
    assert "encoder1" not in data["title"] and "encoder1" not in " ".join(data["variants"]["buggy"]["requires"])


def test_dotted_keys_are_not_modules_but_dotted_module_paths_still_are() -> None:
    keys = ['missing "block.0.conv1.weight", "bn.running_var", "head.fc.bias", "x.attn.in_proj_weight" here']
    assert _modules(keys) == ()
    assert _modules(["see mmdet.models.backbones and torch.nn.utils.weight_norm for it"]) == ("mmdet", "torch")


def test_a_listing_glued_to_its_code_fence_is_read() -> None:
    lines = ["```Widgetlib version: 20.05", "PyTorch version: 1.5.0", "CUDA runtime version: 10.2```"]
    pins = parse_environment(lines).pins
    assert (pins["widgetlib"].version, pins["torch"].version) == ("20.05", "1.5.0")


def test_a_bug_forms_spaced_colon_row_is_read() -> None:
    assert parse_environment(["### OS information", "", "Widgetlib : 2.2.0"]).pins["widgetlib"].version == "2.2.0"
    assert "note" not in parse_environment(["Note : see the log below"]).pins


def test_the_interpreters_banner_in_a_bullet_gives_the_python() -> None:
    lines = ["- Python 3.7.11 (default, Jul 27 2021, 14:32:16) ", "[GCC 7.5.0] :: Anaconda, Inc. on linux"]
    assert parse_environment(lines).python == "3.7.11"
    assert parse_environment(["- Python 3.7 is what I use"]).python is None


def _answers(urls: dict[str, tuple[str, ...]]) -> tuple[Any, Any]:
    return (lambda name: name in urls), urls.get


def test_an_index_project_named_after_the_owner_is_the_repositorys_package() -> None:
    released, urls = _answers({"deepco-vislab": ()})
    assert owner_prefixed("vislab", "DeepCo/VisLab", released, urls, absent=True) == "deepco-vislab"
    # no link while the repository's own name is another project's: nothing ties it (PyPI's squatted names)
    assert owner_prefixed("vislab", "DeepCo/VisLab", released, urls, absent=False) == ""
    released, urls = _answers({"deepco-vislab": ("https://github.com/someone/vislab",)})
    assert owner_prefixed("vislab", "DeepCo/VisLab", released, urls, absent=True) == ""  # another repository
    released, urls = _answers({"deepco-vislab": ("https://github.com/DeepCo/VisLab",)})
    assert owner_prefixed("vislab", "DeepCo/VisLab", released, urls, absent=False) == "deepco-vislab"
    assert owner_prefixed("vislab", "DeepCo/VisLab", lambda name: None, urls, absent=True) == ""  # no answer


_RENAMED = """Source: https://github.com/DeepCo/VisLab/issues/12
# Training fails

```
Traceback (most recent call last):
  File "/home/me/VisLab/train.py", line 10, in <module>
    main()
  File "/home/me/VisLab/vislab/runner.py", line 40, in main
    model(x)
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
```
"""


def test_a_checkout_whose_name_is_no_index_project_pins_the_owner_named_project() -> None:
    _, data = _draft(_RENAMED, released=lambda name: name != "vislab", urls={"deepco-vislab": ()}.get)
    assert "deepco-vislab" in " ".join(data["variants"]["buggy"]["requires"])
    _, data = _draft(_RENAMED, released=lambda name: name != "vislab", urls=lambda name: None)
    assert "vislab @ git+https://github.com/DeepCo/VisLab@" in " ".join(data["variants"]["buggy"]["requires"])


def test_a_documentation_site_named_after_the_project_is_its_own_page() -> None:
    notes: list[str] = []
    assert _other_owner("vis-lab", "deepco/vis-lab", ("https://vis-lab.readthedocs.io/en/latest/",), notes) == ""
    assert _other_owner("vis-lab", "deepco/vis-lab", ("https://othersite.readthedocs.io/",), notes) != ""
