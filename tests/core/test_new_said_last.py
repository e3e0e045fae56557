"""A title's last-resort API (harness/authoring/_said_last.py): when neither the frames nor what the report says ran
name an API, the project's own source file the text names, else the activity that failed; built on the shapes of
frameless reports (a permalink into the project's repository under its old owner, a bare error line with prose)."""

from __future__ import annotations

import re

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case
from harness.authoring._pytest_report import unpytest
from harness.authoring._said_last import said_activity, said_file

DEVICES = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _title(text: str) -> str:
    return str(yaml.safe_load(draft_case("t", parse_report(text)).case_yaml)["title"])


def test_a_link_into_the_projects_repository_under_its_old_owner_names_the_file() -> None:
    """A maintainer's permalink into the repository before it moved (a/x, then x/x): its file is the project's."""
    text = ("Source: https://github.com/points/pointlab/issues/4\n\n# mAP\n\n"
            f"{DEVICES}\n\nCan you change this line https://github.com/someone/pointlab/blob/47e6227/pointlab/"
            "modules/results.py#L183 to use .cpu()?\n")
    assert _title(text).startswith("pointlab results.py: Expected all tensors")


def test_a_link_into_another_repository_names_no_file_of_the_project() -> None:
    lines = ["see https://github.com/other/library/blob/main/library/model.py#L12", DEVICES]
    assert said_file(lines, "https://github.com/points/pointlab/issues/4") == ""


@pytest.mark.parametrize("line", [
    '  File "/usr/lib/python3.10/site-packages/lib/train.py", line 3, in run',
    '  File "/home/u/pointlab/train.py", line 3, in run',
    "/opt/conda/lib/python3.9/dist-packages/pkg/evaluate.py:12: UserWarning: deprecated",
])
def test_a_file_only_a_traceback_or_an_installed_tree_shows_is_not_said(line: str) -> None:
    assert said_file([line, DEVICES], "") == ""


def test_a_script_the_prose_names_is_the_file_and_files_every_project_has_are_not() -> None:
    lines = ["I installed it with setup.py, then ran `python tools/train_net.py --cfg a.yaml` and got", DEVICES]
    assert said_file(lines, "") == "train_net.py"


@pytest.mark.parametrize(("title", "lines", "said"), [
    ("Error when resuming from a checkpoint", ["while training the model"], "resume"),
    ("", ["I fine-tuned the model for 2 epochs", "then resumed"], "fine-tuning"),
    ("", ["During inference on cuda:", "python train.py worked"], "inference"),
    ("", ["The training loop fails"], "training"),
    ("Device mismatch", ["no activity here"], ""),
])
def test_the_activity_the_title_else_the_first_line_says(title: str, lines: list[str], said: str) -> None:
    """The title first, its most specific word; else the first line of the text that names one."""
    assert said_activity(title, lines) == said


def test_the_activity_names_a_frameless_reports_title() -> None:
    text = ("Source: https://github.com/someone/mindlab/issues/4\n\n# KeyError when I resume\n\n"
            "I resume training from last.pth and get\n\nKeyError: 'param_groups'\n")
    assert _title(text) == "mindlab resume: KeyError 'param_groups'"


def test_no_activity_is_added_when_the_message_names_the_call() -> None:
    """The symptom already says which call failed: "Trainer.__init__() got an unexpected keyword argument"."""
    text = ("Source: https://github.com/someone/speechlab/issues/9\n\n# Training fails\n\nI have just tried the "
            "command and get\n\n"
            "TypeError: Trainer.__init__() got an unexpected keyword argument 'num_processes'\n")
    assert _title(text).startswith("speechlab: Trainer.__init__() got")


def test_a_file_named_as_the_project_is_not_its_api() -> None:
    text = ("Source: https://github.com/someone/pixlab/issues/9\n\nThis line https://github.com/someone/"
            "pixlab/blob/main/pixlab.py#L30 fails while I train it:\n\n"
            "AttributeError: module 'timm.models' has no attribute 'registry'\n")
    assert _title(text).startswith("pixlab training: module")


# --- pytest's traceback (graded45 pypots-654's shape): read as Python's -----------------------------------------------

PYTEST_SHORT = """# Loading a saved model fails

```
widgetlab/base.py:408: in load
    raise e
widgetlab/base.py:380: in load
    loaded = torch.load(path, map_location=self.device)
../env/lib/python3.10/site-packages/torch/serialization.py:1382: in load_tensor
    wrap_storage=restore_location(storage, location),

[torch.storage.UntypedStorage(device=cpu) of size 1280], location = 'cuda:1'

    def restore_location(storage, location):
>       result = map_location(storage, location)
E       TypeError: 'list' object is not callable
```
"""

PYTEST_LONG = """Source: https://github.com/someone/widgetlab/issues/3

    def test_fit():
        model = Widget()
>       model.fit(data)

tests/test_widget.py:12:
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _
widgetlab/model.py:55: in fit
    loss = self.step(batch)
_ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _

self = <widgetlab.model.Widget object at 0x7f>, batch = tensor([1.])

    def step(self, batch):
        weights = self.weights
>       return batch @ weights
E       RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!

widgetlab/model.py:71: RuntimeError
"""


def test_a_pytest_traceback_gives_its_frames_exception_and_message() -> None:
    report = parse_report(PYTEST_SHORT)
    assert (report.traceback.exception, report.traceback.message) == ("TypeError", "'list' object is not callable")
    assert [frame.function for frame in report.traceback.frames][:2] == ["load", "load"]
    assert report.traceback.frames[-1].function == "restore_location"
    assert report.traceback.frames[-1].source == "result = map_location(storage, location)"


def test_a_pytest_long_traceback_puts_the_innermost_frame_where_its_location_line_says() -> None:
    report = parse_report(PYTEST_LONG)
    assert report.traceback.exception == "RuntimeError"
    assert report.traceback.message.endswith("cuda:0 and cpu!")
    innermost = report.traceback.frames[-1]
    assert (innermost.posix, innermost.function, innermost.source) == ("widgetlab/model.py", "step",
                                                                      "return batch @ weights")
    assert _title(PYTEST_LONG).startswith("widgetlab model.py step: Expected all tensors")  # a generic method: its file


def test_lines_that_only_look_like_pytests_are_left_alone() -> None:
    """An ``E`` line with no pytest frame before it (a log's level letter) changes nothing."""
    lines = ["E       something logged", "train.py:3: in main", "RuntimeError: boom"]
    assert unpytest(lines) == lines
    assert len(unpytest(PYTEST_LONG.splitlines())) == len(PYTEST_LONG.splitlines())


ACTIVITIES = r"(?: (?:resume|fine-tuning|export|inference|evaluation|training))?"


def without_api(title: str, project: str, message_start: str = "") -> bool:
    """Whether ``title`` names no API of the report's words: the project, at most the activity that failed, then the
    message (the title an older test expected before the activity was said)."""
    return re.match(rf"{re.escape(project)}{ACTIVITIES}: {re.escape(message_start)}", title) is not None
