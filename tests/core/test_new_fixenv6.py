"""Fix round (fixenv6): the release an installed egg's or dist-info's folder on a frame path names, a module alias
(``import X as y``) never taken for the distribution, and a commit a reply says fixes the bug never pinned as the run's.
Made-up reports of each shape (none is a fixture's text)."""

from __future__ import annotations

from typing import Any

import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._envlist import parse_environment
from harness.authoring._prose_modules import _modules

_EGG = """Source: https://github.com/acme/widgetnet/issues/7
# crash when resuming

```
Traceback (most recent call last):
  File "train.py", line 20, in <module>
    trainer.fit(model)
  File "/home/me/conda/envs/w/lib/python3.7/site-packages/widget_net-1.3.2-py3.7.egg/widget_net/trainer.py", line 51, in fit
    self.step(batch)
  File "/home/me/conda/envs/w/lib/python3.7/site-packages/widget_net-1.3.2-py3.7.egg/widget_net/trainer.py", line 80, in step
    loss = self.model(batch.cuda())
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
```
"""


def _drafted(text: str, urls: Any = lambda name: None) -> tuple[str, dict[str, Any]]:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=lambda name: True, project_urls=urls)
    return draft.culprit, yaml.safe_load(draft.case_yaml)


def test_an_egg_folder_on_a_frame_path_pins_the_release_it_names() -> None:
    culprit, data = _drafted(_EGG)
    assert culprit == "widget-net"
    assert "widget-net==1.3.2" in data["variants"]["buggy"]["requires"]
    # the index's project that links no repository is taken as the one the egg installed (not a commit pin)
    assert "widget-net==1.3.2" in _drafted(_EGG, lambda name: ())[1]["variants"]["buggy"]["requires"]


def test_a_dist_info_folder_names_a_release_and_a_listing_wins_over_a_path() -> None:
    line = '  File "C:\\\\py\\\\Lib\\\\site-packages\\\\foo_bar-2.0.1.dist-info\\\\entry.py", line 3, in main'
    assert parse_environment([line]).pins["foo-bar"].version == "2.0.1"
    egg = '  File "/x/site-packages/foo_bar-2.0.1-py3.8.egg/foo_bar/a.py", line 3, in f'
    assert parse_environment(["foo-bar==2.0.3", egg]).pins["foo-bar"].version == "2.0.3"


def test_an_egg_built_from_a_checkout_or_a_plain_site_packages_folder_names_no_release() -> None:
    built = '  File "/usr/lib/python3.6/dist-packages/TTSx-0.0.3+6d6dca0-py3.6.egg/TTSx/layers.py", line 9, in f'
    assert "ttsx" not in parse_environment([built]).pins
    assert parse_environment(['  File "/x/site-packages/widget_net/a.py", line 3, in f']).pins == {}


def test_an_import_as_alias_stands_for_its_module() -> None:
    lines = ["```python", "import widgetnet as wn", "import torch.nn as tnn", "```",
             "Calling wn.layers.Block(3) fails, and so does tnn.layers.relu."]
    assert _modules(lines) == ("widgetnet", "torch", "widgetnet", "torch")


_ALIASED = """Source: https://github.com/acme/widgetnet/issues/9
# tutorial 3 fails

Running the tutorial:

----> 4 model = wn.models.GraphModel(net, wn.models.losses.L1())

AttributeError: module 'widgetnet.models' has no attribute 'GraphModel'

* widgetnet version: 1.2.0
"""


def test_an_alias_the_message_writes_out_in_full_is_read_as_that_module() -> None:
    assert parse_report(_ALIASED).modules == ("widgetnet", "widgetnet")
    culprit, data = _drafted(_ALIASED)
    assert culprit == "widgetnet" and data["variants"]["buggy"]["requires"] == ["widgetnet==1.2.0"]


def test_a_name_that_abbreviates_no_written_out_module_stays() -> None:
    # timm is no shorter spelling of transformers: both stay, though both write out a `models` submodule
    assert _modules(["see timm.models.layers.x here", "from transformers.models import y"]) == ("timm", "transformers")
    # an imported module is never another's alias, even when its letters fit (`import nx` is a module of its own)
    assert _modules(["import nx", "see nx.graphs.path.y here", "module 'networkx.graphs' is odd"]) == ("nx", "nx")


_ADDED = """Source: https://github.com/acme/widgetnet/issues/21
# error on the second run

RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0!

maintainer · comment · 2024-02-03
Seen it too, no root cause yet. For now we've added a device argument to the loader:

https://github.com/acme/widgetnet/blob/1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d/loader.py#L40
"""


def test_a_replys_link_to_code_its_writer_added_is_the_fix_not_the_run() -> None:
    report = parse_report(_ADDED)
    assert report.environment.commit == ("", "")
    assert report.fixes == ("commit:1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",)


def test_a_replys_link_to_the_line_to_change_stays_the_code_that_ran() -> None:
    change = _ADDED.replace("For now we've added a device argument to the loader:", "Please change this line:")
    assert parse_report(change).environment.commit[1] == "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
    local = _ADDED.replace("For now we've added a device argument to the loader:",
                           "I modified this code, then it runs:")
    assert parse_report(local).environment.commit[1] == "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
    debug = _ADDED.replace("For now we've added a device argument to the loader:", "I added a print right here:")
    assert parse_report(debug).environment.commit[1] == "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"


_APP_LISTING = ["### Version Platform Description", "", "app: WidgetUI", "updated: 2024-01-02", "hash: 9f3e2a17",
                "url: https://github.com/acme/widgetui/tree/master", "python: 3.10.6", "", "2.1.2+cu121 Autocast  half"]


def test_an_apps_version_listing_gives_its_hash_and_its_bare_torch_build() -> None:
    environment = parse_environment(_APP_LISTING)
    assert environment.commit == ("", "9f3e2a17")
    assert environment.pins["torch"].version == "2.1.2+cu121"


def test_a_checkpoints_hash_or_a_version_without_a_torch_build_is_not_read() -> None:
    other = parse_environment(["Model hash: 31e35c80fc", "hash: sha256:abc123def", "2.1.2 Autocast half",
                               "0.15.2+cu118 is what torchvision reports? no"])
    assert other.commit == ("", "") and "torch" not in other.pins
    assert parse_environment(["torch==2.0.0", "2.1.2+cu121 Autocast half"]).pins["torch"].version == "2.0.0"


def test_an_eggs_release_whose_name_the_index_gives_another_project_is_pinned_as_a_commit() -> None:
    built = _EGG.replace("acme/widgetnet", "acme/pytorch-widget-net")
    requires = _drafted(built, lambda name: ("https://github.com/other/widget-net-tf",))[1]["variants"]["buggy"]["requires"]
    assert requires[0].startswith("FILL-IN") and "git+https://github.com/acme/pytorch-widget-net@<commit>" in requires[0]
    assert "the commit of its 1.3.2 state" in requires[0]
    # the index's project links the repository, or nowhere: the egg's release is the index's
    for urls in (("https://github.com/acme/pytorch-widget-net",), ()):
        assert _drafted(built, lambda name, urls=urls: urls)[1]["variants"]["buggy"]["requires"] == ["widget-net==1.3.2"]
