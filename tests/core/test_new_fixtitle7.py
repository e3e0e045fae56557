"""Title classes of graded32-35's misses (issue 21 §1), each on a made-up report of its shape: the report's only own
frame is a module's forward, the entry point's function under a console script's loop, where a run happened taken as
what ran, the code line a comment marks as failing, a name's own trailing underscore, a folder the prose names, a
config passed to the command's script, and the failing place the prose quotes (tests/fixtures/graded32..35/EXPECTED.md
list the real reports)."""

from __future__ import annotations

from harness.authoring._title import _unmarked
from tests.core.test_new_fixtitle6 import _report, _title

_DEVICE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def test_the_only_own_frame_a_modules_forward_names_its_file() -> None:
    """Class (gazetteer-ner-acl19-5): a traceback tail whose one frame is the report's own module's ``forward``
    (relative path, under torch's ``result = self.forward(...)`` line): every module has a forward, its file says which
    one, so the title names ``tagger_crf.py forward`` rather than no API."""
    body = ("I get this when training on CPU\n\n    result = self.forward(*input, **kwargs)\n"
            '  File "./layers/tagger_crf.py", line 88, in forward\n    x = self.emb.cuda(device_of(x))\n'
            "RuntimeError: Device index must not be negative\n")
    assert _title(_report("widgettagger", "issue while training", body)).startswith(
        "widgettagger tagger_crf.py forward: Device index"), body


def test_a_console_scripts_loop_frame_yields_to_its_entry_function() -> None:
    """Class (deeptb-26): a console script (``bin/wdg``) enters the package's ``main`` -> ``train`` -> a trainer's
    ``run`` loop, the traceback cut there: the loop's ``run`` only runs the epochs, the entry function ``train`` (the
    command's subcommand) names what ran, not the console command again ("wdg wdg")."""
    site = "/home/u/venv/lib/python3.10/site-packages/widgetpkg"
    body = ("Here is the traceback:\n```\nTraceback (most recent call last):\n"
            '  File "/home/u/venv/bin/wdg", line 8, in <module>\n    sys.exit(main())\n'
            f'  File "{site}/entrypoints/main.py", line 30, in main\n    train(**args)\n'
            f'  File "{site}/entrypoints/train.py", line 76, in train\n    trainer.run(trainer.num_epoch)\n'
            f'  File "{site}/nnops/base_trainer.py", line 52, in run\n    self.train()\n{_DEVICE}\n```\n')
    title = _title(_report("widgetpkg", "Training on GPU?", body))
    assert title.startswith("widgetpkg train: Expected all tensors"), title


def test_where_a_run_happened_is_no_api_and_a_marked_line_names_the_call() -> None:
    """Class (denoising-diffusion-pytorch-8): a frameless report titled "... when running on CPU" gave the API "on
    CPU" (where it ran); the fenced loop's line the reporter marks ``#here`` names the failing call. A comment with
    other words ("# here we load the batch") marks nothing."""
    marked = "```python\nfor i in range(steps):\n    batch = next(self.loader).cuda() #here\n```\n"
    message = "fails with **AssertionError: Torch not compiled with CUDA enabled**"
    title = "'.cuda()' call in the loop breaks when running on CPU"
    assert _title(_report("widgetdiff", title, marked + message)).startswith(
        "widgetdiff next(self.loader).cuda(): Torch not compiled"), marked
    plain = marked.replace("#here", "# here we load the batch")
    assert _title(_report("widgetdiff", title, plain + message)).startswith("widgetdiff: Torch not compiled"), plain
    single = "```python\nout = widget_step(batch, cfg)  # <-- error\n```\n"
    assert _title(_report("widgetdiff", "crash on CPU", single + message)).startswith(
        "widgetdiff widget_step: Torch not compiled"), single


def test_a_names_own_trailing_underscore_is_kept() -> None:
    """Class (pysyft-7397): torch's "... in call to _th_set_" lost its last underscore (taken for markdown); a name with
    an inner underscore keeps it, an emphasis's closing underscore still goes."""
    error = ("RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call "
             "to _th_set_")
    body = f"```\n{error}\n```\n"
    assert _title(_report("widgetnet", "set fails", body)).endswith("in call to _th_set_"), body
    assert _unmarked("in call to _th_set_") == "in call to _th_set_"
    assert _unmarked("widget weights _missing_") == "widget weights _missing"  # an emphasis's closing underscore
    assert _unmarked("__widget weights missing__") == "widget weights missing"


def test_a_folder_the_prose_names_is_no_api() -> None:
    """Class (itwinai-208): "the error is in the file job.err in the logs_slurm folder" gave the folder as the API; a
    name the prose calls a folder or directory is none, the script it names is (train.py)."""
    body = ("The multi-node run crashes. The error is shown in job.err in the run_logs_x folder.\n"
            f"The message is: `{_DEVICE}`\n\nExpected: the train.py file should run.\n")
    assert _title(_report("widgetdist", "Strategy crashing on two nodes", body)).startswith(
        "widgetdist train.py: Expected all"), body


def test_a_config_file_passed_to_the_commands_script_is_not_the_script() -> None:
    """Class (mmsegmentation-2359): ``python tools/train.py my_config.py --work-dir out``: the config passed to the
    script is its argument; the command's first ``.py`` file, with its folder, is what ran."""
    body = ("1. What command did you run?\n\n   ```none\n   python tools/train.py my_config.py --work-dir out\n   ```\n\n"
            "Custom dataset, already registered.\n")
    error = "RuntimeError: Input type (torch.cuda.ByteTensor) and weight type (torch.cuda.FloatTensor) should be the same"
    assert _title(_report("widgetseg", error, body)).startswith("widgetseg tools/train.py: Input type"), body


def test_the_failing_place_the_prose_quotes_beats_other_names() -> None:
    """Class (torchio-1189, scaledyolov4-256): a frameless report quotes where it fails: a frame's tail ("related to
    widgetio/data/image.py", line 471, in _parse_path") or a link to its repository's line after "an error in this
    line". That place is the API, over a class the code shows or a file the prose names as a condition; a link without
    such words (often the fix's place) or into another repository is none."""
    code = "```python\nds = wio.WidgetDataset(items)\ntrainer.fit(net, loader)\n```\n"
    tail = 'The issue seems to be related to widgetio/data/image.py", line 471, in _parse_path\nTypeError: The path ar\n'
    assert _title(_report("widgetio", "Issue with Lightning", code + tail)).startswith(
        "widgetio image.py _parse_path: The path ar"), tail
    link = "https://github.com/someone/widgetyolo/blob/0c13b23d8cfcbfcd42f7f6731084c4037475a4be/test.py#L200"
    body = (f"when I run the test script I sometimes get an error in this line {link}\nsaying:\n\n"
            f"pi = (cls == pred[:, 5]).nonzero(as_tuple=False).view(-1)\n{_DEVICE}\n\n"
            "It works when I set img_formats = ['.jpg'] in datasets.py.\n")
    assert _title(_report("widgetyolo", "two devices", body)).startswith("widgetyolo test.py: Expected all"), body
    other = body.replace("someone/widgetyolo", "another/upstream")
    assert not _title(_report("widgetyolo", "two devices", other)).startswith("widgetyolo test.py"), other
    seen = body.replace("get an error in this line", "read the code at")
    assert not _title(_report("widgetyolo", "two devices", seen)).startswith("widgetyolo test.py"), seen


def test_a_call_with_its_argument_in_the_issue_title_names_the_api() -> None:
    """Class (chroma-34): a title quoting the failing statement with an argument ('problem about "protein =
    widget.design(protein)"') names the call as one written with empty parentheses would."""
    title = 'problem about "protein = widgetchem.design(protein)"'
    body = f"When I run this command from the tutorial:\n\n{_DEVICE}\n"
    assert _title(_report("widgetchem", title, body)).startswith("widgetchem design: Expected all"), title
