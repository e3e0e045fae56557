"""Title classes of graded21-23's misses (issue 21 §1), each on a made-up report of its shape: junk as the API (a
torch helper or a model instance the entry line calls, a source line glued to its frame's function), an API the
report shows outside the blamed project's frames (a command the issue title quotes, a name the title labels as the
bug, the models a title adds after the message, a constructor's file), and the symptom (a first line that only
introduces its cause, a message cut inside a quotation, a config file a title adds after the message). Each test
fails on main 7a8eb5b (tests/fixtures/graded21..23/EXPECTED.md list the real reports)."""

from __future__ import annotations

from typing import Any

from tests.core.test_new_graded14 import _draft
from tests.core.test_new_graded16 import PLACED
from tests.core.test_new_said_last import without_api


def _title(report: str) -> str:
    data: dict[str, Any] = _draft(report, released=lambda dist: True)[1]
    return str(data["title"])


def _entry(line: str) -> str:
    """A checkout's script whose entry function ``main`` failed on ``line`` inside torch."""
    return ("https://github.com/someone/widgetseg/issues/16\n# Error while training\n\nTraceback (most recent call "
            'last):\n  File "train.py", line 300, in <module>\n    main()\n  File "train.py", line 210, in main\n'
            f'    {line}\n  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in '
            f"_call_impl\n    return forward_call(*args, **kwargs)\nRuntimeError: {PLACED}\n")


def test_an_entry_lines_torch_helper_or_model_call_is_no_api() -> None:
    """Class (dodnet-16 "device", e5-mistral "model"): ``main``'s failing line is a continued argument list calling
    ``torch.device(...)``, or calls the model instance: neither is the project's API; ``main`` is. A call of the
    project's own function on that line still names it."""
    assert _title(_entry("args.reload_path, map_location=torch.device('cpu')")).startswith("widgetseg main: ")
    assert _title(_entry("embs = model(**{k: v for k, v in batch.items()})")).startswith("widgetseg main: ")
    assert _title(_entry("run_epoch(loader, optimizer)")).startswith("widgetseg run_epoch: ")


def test_a_source_line_glued_to_its_frames_function_is_dropped() -> None:
    """Class (difftf-3): a paste lost the line break after a frame's function ("in train    for data in loader:"):
    the function is the API, never the glued source line."""
    report = ("https://github.com/someone/widgetgen/issues/3\n# RuntimeError: generator device\n\nTraceback (most "
              'recent call last):\n  File "/home/me/widgetgen/train.py", line 90, in <module>\n    train(args)\n'
              '  File "/home/me/widgetgen/train.py", line 60, in train    for data in training_loader:\n'
              '  File "/usr/lib/python3.10/site-packages/torch/utils/data/dataloader.py", line 630, in __next__\n'
              "    data = self._next_data()\n"
              "RuntimeError: Expected a 'cuda' device type for generator but found 'cpu'\n")
    title = _title(report)
    assert "for data" not in title and title.partition(":")[0].endswith(" train"), title


def test_a_first_message_line_that_introduces_its_cause_keeps_the_cause() -> None:
    """Class (dodnet-16): "Error(s) in loading state_dict for Net:" says where; the next line says what ("Missing
    key(s) in state_dict"), its long key list left out."""
    report = _entry("model.load_state_dict(checkpoint)").replace(
        f"RuntimeError: {PLACED}\n", 'RuntimeError: Error(s) in loading state_dict for WidgetNet:\n\tMissing key(s) in '
        'state_dict: "conv1.weight", "layer0.0.gn1.weight", "layer0.0.gn1.bias", "layer0.0.conv1.weight".\n')
    assert _title(report).endswith("for WidgetNet: Missing key(s) in state_dict"), _title(report)
    fenced = report.replace("\tMissing key(s)", "```\nMissing key(s)")
    assert _title(fenced).endswith("for WidgetNet:"), _title(fenced)  # a fence, not the cause


def test_a_command_the_issue_title_quotes_names_the_run() -> None:
    """Class (kraken-380): the title quotes the console command that ran (`ketos test`), the frames are torch's
    only: the command is the API; a flag (`--device cpu`), an install (`pip install x`) or the message quoted as code
    is not; a launcher's command names its script."""
    body = ("\n\nTraceback (most recent call last):\n  File \"/usr/lib/python3.10/site-packages/torch/utils/data/"
            "_utils/pin_memory.py\", line 37, in do_one_step\n    data = pin_memory(data, device)\n"
            "RuntimeError: CUDA error: out of memory\n")
    head = "https://github.com/someone/widgetocr/issues/380\n# "
    assert _title(f"{head}`--device cpu` is ignored by `wocr test`{body}").startswith("widgetocr wocr test: ")
    assert _title(f"{head}`--device cpu` is ignored by `python tools/eval.py --fast`{body}").startswith(
        "widgetocr eval.py: ")
    assert _title(f"{head}`accelerate launch --fp16 run_ocr.py` OOMs{body}").startswith("widgetocr run_ocr.py: ")
    assert _title(f"{head}OOM after `pip install widgetocr`{body}").startswith("widgetocr: ")
    assert _title(f"{head}`CUDA error: out of memory` on cpu{body}").startswith("widgetocr: ")


def test_a_name_the_title_labels_as_the_bug_is_the_api() -> None:
    """Class (neuralforecast-522): a frameless report's title opens "Autoformer bug, <message>": the model is the
    API; a common word labelled so ("Memory bug, ...", "Training bug: ...") is not."""
    body = f"\n\nWith this model I get the following error:\n\nRuntimeError: {PLACED}\n"
    head = "https://github.com/someone/widgetcast/issues/522\n# "
    assert _title(f"{head}Informerx bug, Expected all tensors{body}").startswith("widgetcast Informerx: ")
    assert without_api(_title(f"{head}Memory bug, Expected all tensors{body}"), "widgetcast")
    assert without_api(_title(f"{head}Training bug: Expected all tensors{body}"), "widgetcast")
    assert without_api(_title(f"{head}NaN issue: Expected all tensors{body}"), "widgetcast")  # a symptom's word


def test_a_titles_context_after_the_message_leaves_the_symptom() -> None:
    """Class (recbole-1984, pytorch-connectomics-40): a frameless report whose only exception line is its title's,
    with the models it ran ("... with Random, ADMMSLIM, and SLIMElastic") or the config file ("... in configs/x.yaml")
    after the message: the symptom is the message; the first model is the API. A traceback's message is kept whole."""
    head = "https://github.com/someone/widgetrec/issues/1984\n# "
    body = "\n\nI ran the quick start with these models on a GPU.\n"
    title = _title(f"{head}RuntimeError: Expected all tensors to be on the same device with Popular, ItemKNN and "
                   f"EASE{body}")
    assert title == "widgetrec Popular: Expected all tensors to be on the same device", title
    title = _title(f"{head}RuntimeError: Expected one of cpu, cuda device type at start of device string: train in "
                   f"configs/Widget-Cleft.yaml{body}")
    assert without_api(title, "widgetrec", "Expected one of cpu, cuda device type at start of device string: train")
    assert title.endswith("device string: train"), title
    framed = _title(_entry("run_epoch(loader)").replace(f"RuntimeError: {PLACED}", "ValueError: bad input for Linear"))
    assert framed.endswith(": bad input for Linear"), framed  # a traceback's own message: no title context to drop


def test_a_message_cut_inside_a_quotation_says_it_goes_on() -> None:
    """Class (easyedit-40, omnidrive-42, pytorch-104767): the report's exception line stops inside a quoted path
    (``at "../aten/src``), an open parenthesis or the device a device check names last (``cuda:0 and c``): the title
    ends before it, with " ..." (never mid-path nor mid-word); a whole device ("cuda:0 and cpu") stays."""
    report = ("https://github.com/someone/widgetedit/issues/40\n# CUDA call failed\n\nTraceback (most recent call "
              'last):\n  File "/home/me/widgetedit/editor.py", line 40, in from_hparams\n    torch.cuda.init()\n'
              "torch.cuda.DeferredCudaCallError: CUDA call failed lazily at initialization with error: device >= 0 "
              '&& device < num_gpus INTERNAL ASSERT FAILED at "../aten/src\n')
    assert _title(report).endswith("INTERNAL ASSERT FAILED ..."), _title(report)
    two = "Expected all tensors to be on the same device, but found at least two devices, cuda:1 and"
    parenthesis = report.replace(report[report.index("torch.cuda.Deferred"):],
                                 f"RuntimeError: {two} cpu! (when checking argument for argument \n")
    assert _title(parenthesis).endswith(f"{two} cpu! ..."), _title(parenthesis)
    device = report.replace(report[report.index("torch.cuda.Deferred"):], f"RuntimeError: {two} c\n")
    assert _title(device).endswith("devices, cuda:1 ..."), _title(device)
    whole = report.replace(report[report.index("torch.cuda.Deferred"):], f"RuntimeError: {two} cpu\n")
    assert _title(whole).endswith(f"{two} cpu"), _title(whole)


def test_a_constructor_that_builds_no_class_is_named_with_its_file() -> None:
    """Class (brevitas-126): the blamed project's only frame is a constructor (``__init__``) whose line calls a
    method, not a class: the file and ``__init__`` name it."""
    report = ("https://github.com/someone/widgetq/issues/126\n# issue with resuming training\n\nTraceback (most recent "
              'call last):\n  File "/home/me/widgetq/examples/train.py", line 20, in <module>\n'
              "    trainer = Trainer(args)\n"
              '  File "/home/me/widgetq/widgetq/trainer.py", line 120, in __init__\n'
              "    self.model.load_state_dict(model_state_dict, strict=False)\n"
              "AttributeError: 'Trainer' object has no attribute 'model'\n")
    assert _title(report).startswith("widgetq trainer.py __init__: "), _title(report)


def _frameless(title: str) -> str:
    return _title(f"https://github.com/someone/widgetcast/issues/7\n# {title}\n\nIt breaks on my GPU.\n\n"
                  f"RuntimeError: {PLACED}\n")


def test_a_call_or_dotted_name_in_the_title_is_the_api() -> None:
    """Class (brief 1, the title's named identifier): a frameless report's title names the call that failed with
    parentheses (`model.fit()`, `predict()`), a class's method (`WidgetModel.predict`, also backticked) or a module
    path (`widgetcast.models.Informer`): the method (with its class) or the last part; an attribute read
    (`device.type`), another library's name (`torch.cuda`) or a host (`huggingface.co`) is none."""
    assert _frameless("model.fit() raises RuntimeError on GPU").startswith("widgetcast fit: ")
    assert _frameless("Error when calling predict() on GPU").startswith("widgetcast predict: ")
    assert _frameless("WidgetModel.predict returns an error").startswith("widgetcast WidgetModel.predict: ")
    assert _frameless("RuntimeError in `DataModule.setup`").startswith("widgetcast DataModule.setup: ")
    assert _frameless("Bug in widgetcast.models.Informer forward").startswith("widgetcast Informer: ")
    assert without_api(_frameless("device.type mismatch after torch.cuda init"), "widgetcast")
    assert without_api(_frameless("Cannot load from huggingface.co on GPU"), "widgetcast")


def test_a_model_the_title_says_ran_is_the_api() -> None:
    """Class (brief 1): "GPU error with NHITS model", "fails for the Informer models": the model is the API; a
    generic word in that place ("with Custom model", "with pretrained model") is not."""
    assert _frameless("GPU error with NHITS model").startswith("widgetcast NHITS: ")
    assert _frameless("Device mismatch for the Informer models").startswith("widgetcast Informer: ")
    assert without_api(_frameless("GPU error with Custom model"), "widgetcast")
