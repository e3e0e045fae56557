"""Fix round (fixenv3): an environment pasted as a Markdown key/value table, a release a sentence states for its
package ("My X version is 0.3.4"), and a deprecation warning's releases never read as the run's. Made-up reports of
each shape (none is a fixture's text)."""

from __future__ import annotations

from typing import Any

import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._envlist import parse_environment
from harness.authoring._owners import frame_owner, names_checkout

_PLACED = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _buggy(text: str) -> str:
    draft = draft_case("made-up", parse_report(text), "made-up.txt", released=lambda name: True,
                       project_urls=lambda name: None)
    data: dict[str, Any] = yaml.safe_load(draft.case_yaml)
    return " ".join(data["variants"]["buggy"]["requires"])


_TABLE = """Source: https://github.com/graphco/graphkit/issues/31
# Error in score_links with CUDA

Calling `score_links(model=m)` fails:
`{placed}`

**Environment:**

| Key             | Value                             |
|-----------------|-----------------------------------|
| OS              | posix                             |
| Release         | 5.10.60.1-microsoft-standard-WSL2 |
| Python          | 3.9.7                             |
| GraphKit        | 2.3.1                             |
| GraphKit Hash   | UNHASHED                          |
"""


def test_a_markdown_key_value_table_gives_the_project_release_and_python() -> None:
    environment = parse_environment(_TABLE.format(placed=_PLACED).splitlines())
    assert environment.python == "3.9.7"
    assert environment.pins["graphkit"].version == "2.3.1"
    assert "release" not in environment.pins  # the OS's kernel release is no package's
    assert "graphkit==2.3.1" in _buggy(_TABLE.format(placed=_PLACED))


def test_a_package_version_table_is_read_and_its_header_is_not() -> None:
    lines = ["| Package | Version |", "| --- | --- |", "| torch | 2.1.0+cu121 |", "| `accelerate` | `0.25.0` |"]
    pins = parse_environment(lines).pins
    assert (pins["torch"].version, pins["accelerate"].version) == ("2.1.0+cu121", "0.25.0")
    assert "package" not in pins


def test_a_table_of_metrics_is_no_environment() -> None:
    lines = ["| metric | score |", "|---|---|", "| loss | 0.53 |", "| mAP | 41.2 |"]
    assert parse_environment(lines).pins == {}


_STATED = """Source: https://github.com/sepnet/sepkit/issues/88
# Device error in the separator's forward

My sepkit version is 0.3.4

Traceback (most recent call last):
  File "/home/me/sepkit/sepkit/masknn/conv.py", line 189, in forward
    out = skip + torch.tensor([0.0])
{placed}
"""


def test_a_stated_release_outranks_the_checkout_path() -> None:
    """The checkout frame alone made commit placeholders; the sentence states the release the checkout held."""
    assert _buggy(_STATED.format(placed=_PLACED)) == "sepkit==0.3.4"


def test_a_version_sentence_about_a_release_that_is_no_package_or_that_works() -> None:
    lines = ["The latest version is 0.9.1, so I tried it.", "The sepkit version was 0.3.5 and it works fine."]
    environment = parse_environment(lines)
    assert environment.pins == {}


_WARNED = """Source: https://github.com/someone/dreamtrain/issues/5
# RuntimeError: {placed}

`C:\\envs\\ldm\\lib\\site-packages\\pytorch_lightning\\loggers\\tt.py:104: LightningDeprecationWarning: The TTLogger \
is deprecated since v1.5 and will be removed in v1.7. We recommend switching to another logger.
"""


def test_a_deprecation_warnings_releases_are_not_the_run() -> None:
    environment = parse_environment(_WARNED.format(placed=_PLACED).splitlines())
    assert environment.unnamed is None
    # the same sentence shape without the warning still states the run's release
    assert parse_environment(["I rerun it in v1.7 and it fails."]).unnamed is not None


_SECOND_GENERATION = """Source: https://github.com/lab/SegNet/issues/77
# Resuming fails after git pull

Traceback (most recent call last):
  File "/home/ana/code/SegNet/segnetv2/run/train.py", line 98, in maybe_resume
    trainer.load_checkpoint(path)
  File "/home/ana/code/SegNet/segnetv2/training/trainer.py", line 1103, in load_checkpoint
    self.network.load_state_dict(state)
  File "/opt/env/lib/python3.10/site-packages/torch/nn/modules/module.py", line 2041, in load_state_dict
    raise RuntimeError(msg)
RuntimeError: Error(s) in loading state_dict for Net:
"""


def test_a_checkouts_package_of_a_later_generation_names_the_distribution() -> None:
    """The paths show the checkout SegNet/ holding the package segnetv2/: the distribution is segnetv2, run from a
    commit of the link's repository."""
    buggy = _buggy(_SECOND_GENERATION)
    assert buggy.startswith("FILL-IN: segnetv2 ran from a checkout")
    assert '"segnetv2 @ git+https://github.com/lab/SegNet@<commit>"' in buggy


def test_a_package_that_only_begins_with_the_checkouts_name_is_not_its_own() -> None:
    assert names_checkout("nnUNet", "nnunetv2") and names_checkout("Segment-Anything", "segment_anything")
    assert not names_checkout("seg", "segment") and not names_checkout("yolo", "yolo_utils")


def test_other_listings_of_a_distribution_and_its_release() -> None:
    """`pip show`, a conda environment file, an old pip list's parentheses, a `v` before a release, a possessive."""
    lines = ["Name: peft", "Version: 0.4.0", "Summary: PEFT", "", "dependencies:", "  - numpy=1.17.4=py37h7e9f1db_0",
             "  - pillow=6.2.1", "scipy (1.4.1)", "timm v0.9.12", "accelerate: v0.20.3", "my transformers version: 4.30.2"]
    pins = {name: pin.version for name, pin in parse_environment(lines).pins.items()}
    assert {name: pins.get(name) for name in ("peft", "numpy", "pillow", "scipy", "timm", "accelerate",
                                              "transformers")} == {
        "peft": "0.4.0", "numpy": "1.17.4", "pillow": "6.2.1", "scipy": "1.4.1", "timm": "0.9.12",
        "accelerate": "0.20.3", "transformers": "4.30.2"}


def test_a_configs_assignment_is_no_conda_spec() -> None:
    assert parse_environment(["lr=0.001", "momentum=0.9", "  weight_decay=0.0005"]).pins == {}


def test_a_warnings_schedule_names_no_torch_release() -> None:
    warned = ["/env/lib/python3.10/site-packages/x/y.py:3: UserWarning: `foo` is deprecated since torch 1.9 and will "
              "be removed in torch 2.1."]
    assert "torch" not in parse_environment(warned).pins
    assert parse_environment(["I run it with torch 2.1.0 on Ubuntu."]).pins["torch"].version == "2.1.0"


_CASED_CLONE = """Source: https://github.com/someone/DetNet/issues/15
# Two GPUs error

Traceback (most recent call last):
  File "/home/pc/space/detnet/DetNet/models/head.py", line 210, in get_grid
    box = (box + grid) * stride
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!
"""


def test_a_workspace_folder_holding_a_capitalised_clone_is_no_import_package() -> None:
    """detnet/DetNet/models/: the clone's root (the repository's capitals), not a package `DetNet` to import."""
    draft = draft_case("made-up", parse_report(_CASED_CLONE), "made-up.txt", released=lambda name: False,
                       project_urls=lambda name: ())
    assert "import DetNet" not in draft.repro_py
    assert draft.culprit == "detnet"
    frame = parse_report(_CASED_CLONE.replace("detnet/DetNet/models", "mmrotate/mmrotate/models")).traceback.frames[0]
    assert frame_owner(frame) == ("mmrotate", "mmrotate")  # a lower-case package below its checkout stays one


def test_a_table_without_outer_pipes() -> None:
    lines = ["Environment:", "", "Key | Value", "--- | ---", "Python | 3.10.12", "torch | 2.1.0", "sepkit | 0.4.2"]
    environment = parse_environment(lines)
    assert environment.python == "3.10.12"
    assert {name: pin.version for name, pin in environment.pins.items()} == {"torch": "2.1.0", "sepkit": "0.4.2"}
    # a shell pipe is no table: no separator row
    assert parse_environment(["cat run.log | grep sepkit", "sepkit | 0.4.2"]).pins == {}
