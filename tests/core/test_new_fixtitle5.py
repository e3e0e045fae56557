"""Title classes of graded27-29's misses (issue 21 §1), each on a made-up report of its shape: an issue title's file
name glued to CJK words, and torch's class call a message advises, taken as the API (tests/fixtures/graded27..29/
EXPECTED.md list the real reports)."""

from __future__ import annotations

from typing import Any

from tests.core.test_new_graded14 import _draft
from tests.core.test_new_said_last import without_api


def _title(report: str) -> str:
    data: dict[str, Any] = _draft(report, released=lambda dist: True)[1]
    return str(data["title"])


_TRACEBACK = """Traceback (most recent call last):
  File "run_widget.py", line 12, in <module>
    torch.cuda.set_device(args.gpu)
  File "/usr/lib/python3/site-packages/torch/cuda/__init__.py", line 243, in set_device
    device = _get_device_index(device)
RuntimeError: Invalid device string: '0'"""


def test_cjk_words_glued_to_a_file_name_are_no_part_of_the_api() -> None:
    """Class (federated-learning-15 "py运行有问题"): a title writes a script's name glued to CJK words ("..._main.py
    运行有问题", "... has a problem running"); Python's \\w matches CJK, so the name ran on into the words. The name is
    ASCII: the script stays, the words go."""
    report = f"https://github.com/someone/widgetfed/issues/3\n# run_widget.py运行有问题\n\n{_TRACEBACK}\n"
    title = _title(report)
    assert "运行" not in title, title
    assert title.startswith("widgetfed run_widget.py: "), title


def test_a_torch_class_call_a_message_advises_is_no_api() -> None:
    """Class (robustdet-15 Tensor.cpu): the prose quotes two runs' errors in inline code, one advising "Use
    Tensor.cpu() to copy ..."; torch's class call is torch's API, never the project's: the script the prose names
    ("When I train the model with train_widget.py") is the API."""
    body = ("Hi! When I train the model with train_widget.py, I met this problem:\n"
            "On cuda it shows `TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy "
            "the tensor to host memory first`.\n"
            "When I train on cpu, it shows `RuntimeError: Expected a 'cuda' device type for generator but found "
            "'cpu'`.\nHow should I solve this?")
    title = _title(f"https://github.com/someone/widgetdet/issues/15\n# Problems with devices\n\n{body}\n")
    assert "Tensor.cpu" not in title, title
    assert title.startswith("widgetdet train_widget.py: "), title


def test_the_failing_line_quoted_with_its_error_in_one_code_span_names_the_api() -> None:
    """Class (deepcluster-61): the prose quotes the failing source line and its error in one backtick span, no
    frame; the line's call is the API even when it is every object's method (``loader.load_state_dict``), with its
    object. A bare common method alone (``x.to(...)`` written with no object) is still none."""
    body = ("hi, when trying to resume from the released checkpoint an error occurs.\n"
            "`scheduler.load_state_dict(checkpoint['scheduler']) \nKeyError: 'scheduler'`\n\nThanks")
    title = _title(f"https://github.com/someone/widgetclust/issues/9\n# resume error\n\n{body}\n")
    assert title.startswith("widgetclust scheduler.load_state_dict: KeyError 'scheduler'"), title
    plain = body.replace("scheduler.load_state_dict(checkpoint['scheduler'])", "print(checkpoint['scheduler'])")
    title = _title(f"https://github.com/someone/widgetclust/issues/9\n# resume error\n\n{plain}\n")
    assert without_api(title, "widgetclust", "KeyError 'scheduler'"), title


def test_the_class_a_quoted_command_runs_by_its_option_names_the_api() -> None:
    """Class (tud-rl-21 LSTMRecDQN): a frameless report whose one sentence quotes the command that ran, a module run
    with the agent (model, architecture) as an option; that CamelCase class is the API. A lowercase preset
    ("--model resnet50") names none."""
    message = "Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor"
    body = ("I set device to cuda in config.yaml and run python -m widget_rl -t train -c config.yaml -a GRUWidgetQN."
            "And there is a mistake happened.")
    report = f"https://github.com/someone/widget-rl/issues/21\n# RuntimeError: {message} at cuda:0\n\n{body}\n"
    assert _title(report).startswith("widget-rl GRUWidgetQN: Input and parameter"), _title(report)
    preset = _title(report.replace("-a GRUWidgetQN.", "--model resnet50."))
    assert without_api(preset, "widget-rl", "Input and parameter"), preset


def test_torch_classes_the_prose_calls_are_no_api() -> None:
    """Class (datasets-4675 DataLoader): the prose and code call torch's ``DataLoader(...)`` around the project's
    call; torch's class is never the project's API: the project's own call is."""
    code = ("```python\nfrom widgetsets import load_widgets\nfrom torch.utils.data import DataLoader\n\n"
            "ds = load_widgets(\"para\")\nloader = DataLoader(ds, num_workers=4)\nfor batch in loader:\n"
            "    print(batch)\n```")
    body = f"I am unable to use it by passing it to a PyTorch DataLoader: see the code below.\n\n{code}\n\n```\nAttributeError: 'str' object has no attribute 'dtype'\n```"
    title = _title(f"https://github.com/someone/widgetsets/issues/4\n# Unable to use the set with a dataloader\n\n{body}\n")
    assert "DataLoader" not in title, title
    assert title.startswith("widgetsets load_widgets: "), title


def test_what_a_title_says_should_work_names_the_api() -> None:
    """Class (secml-torch-41 "Trackers should work when using other devices"): a title saying what should work (and
    does not) opens with the part that failed, as "X fails ..." does; a vague subject ("It should work") names none."""
    message = "Expected all tensors to be on the same device, but found at least two devices, mps:0 and cpu!"
    body = f"The loggers get tensors on the attack's device before passing them on.\n\n> RuntimeError: {message}\n"
    title = _title(f"https://github.com/someone/widgetattack/issues/41\n# Loggers should work on other devices\n\n{body}")
    assert title.startswith("widgetattack Loggers: "), title
    vague = _title(f"https://github.com/someone/widgetattack/issues/41\n# It should work on other devices\n\n{body}")
    assert vague.startswith("widgetattack: "), vague


_RESUME = """Resuming from my checkpoint fails:
```
Traceback (most recent call last):
  File "/home/u/widgetseg/train_seg.py", line 318, in <module>
    main()
  File "/home/u/widgetseg/train_seg.py", line 305, in main
    trainer = Trainer(args)
  File "/home/u/widgetseg/train_seg.py", line 95, in __init__
    self.optimizer.load_state_dict(checkpoint['optimizer'])
  File "/usr/lib/python3.7/site-packages/torch/optim/optimizer.py", line 114, in load_state_dict
    raise ValueError("loaded state dict contains a parameter group "
ValueError: loaded state dict contains a parameter group that doesn't match the size of optimizer's group
```"""


def test_an_entry_line_calling_every_objects_method_keeps_its_object() -> None:
    """Class (pytorch-deeplab-xception-134 "load_state_dict"): the project's frames are a script's main and a
    constructor whose line calls torch's method on an attribute (``self.optimizer.load_state_dict(...)``); the bare
    method is torch's, the call with its object is the report's: ``optimizer.load_state_dict``."""
    title = _title(f"https://github.com/someone/widgetseg/issues/134\n# Cannot resume\n\n{_RESUME}\n")
    assert title.startswith("widgetseg optimizer.load_state_dict: loaded state dict"), title
