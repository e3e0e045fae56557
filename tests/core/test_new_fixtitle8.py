"""Title classes of graded36-37's misses (issue 21 §1), each on a made-up report of its shape: junk as the API (a
name the error message quotes, a warning a pasted log prints) (tests/fixtures/graded36..37/EXPECTED.md list the real
reports)."""

from __future__ import annotations

from tests.core.test_new_fixtitle6 import _report, _title
from tests.core.test_new_said_last import without_api

_PADDING = ("ValueError: Unable to create tensor, you should probably activate truncation and/or padding with "
            "'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your features "
            "(`widget_ids` in this case) have excessive nesting (inputs type `list` where type `int` is expected).")


def test_a_name_the_error_message_quotes_is_no_api() -> None:
    """Class (h2o-llmstudio-357): a frameless report quotes an error whose later sentence names a field in backticks
    (`widget_ids`); that word of the symptom is not what failed. Written as a call in the prose, it still is."""
    body = f"I started an experiment with the defaults and it fails:\n\n{_PADDING}\n"
    title = _title(_report("widgetstudio", "No clear error when training", body))
    assert without_api(title, "widgetstudio", "Unable to create tensor"), title
    called = body + "\nThe error comes from `widget_ids()` in my collate code.\n"
    assert _title(_report("widgetstudio", "No clear error when training", called)).startswith(
        "widgetstudio widget_ids: Unable"), called


def test_a_warning_a_pasted_log_prints_is_no_api() -> None:
    """Class (h2o-llmstudio-357): a pasted log's ``warn("The installed version ... without GPU support")`` line is
    another library's warning, never the call that failed."""
    log = ('```\n  warn("The installed version of widgetbits was compiled without GPU support. "\n'
           "Killed\n```\n")
    body = f"Full log below:\n{log}\nThe app says:\n\n```\n{_PADDING}\n```\n"
    title = _title(_report("widgetstudio", "No clear error when training", body))
    assert without_api(title, "widgetstudio", "Unable to create tensor"), title


_WEIGHT = ("RuntimeError: expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
           "'weight'")


def test_a_quoted_python_run_names_its_script() -> None:
    """Class (deephyperx-54): the prose quotes the run in double quotes (``when I run "python main.py --model m
    ..."``), which the command reader misses; its script is what ran, not the bare word "main"."""
    body = f'when I run "python main.py --model widget --epoch 10 --cuda 1 "\nit fails with\n\n{_WEIGHT}\n'
    assert _title(_report("widgethsi", "device error", body)).startswith("widgethsi main.py: expected tensor"), body


def test_the_projects_console_command_in_the_thread_is_the_api() -> None:
    """Class (lm-evaluation-harness-1575): a thread's log quotes the project's console command on its own line
    (``widget_eval --model hf --tasks swag ...``): with its first option it names the run; another program's command
    (``pip install``) names none."""
    log = ("```\nError: Command '\n            widget_eval --model hf    --model_args pretrained=x,parallelize=True"
           "    --tasks swag\n            ' returned non-zero exit status 1.\n" + _DEVICE_LOG + "\n```\n")
    body = f"RylanSchaeffer · comment · 2024-03-22\nI have the same issue:\n\n{log}\n"
    title = _title(_report("widget-eval", "When using parallel, raise error", body))
    assert title.startswith("widget-eval widget_eval --model hf: Expected all"), title
    other = body.replace("widget_eval --model", "pip install --upgrade")
    assert _title(_report("widget-eval", "When using parallel, raise error", other)).startswith(
        "widget-eval: Expected all"), other


_DEVICE_LOG = ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:7 and "
               "cuda:3!")


def test_the_function_the_code_defines_and_the_prose_names_is_the_api() -> None:
    """Class (llama3.1-finetuning-4): a frameless report shows its own ``def preprocess(...)`` (calling a tokenizer's
    ``get_vocab()`` inside) and its prose says that function is what it changed; that function, not another library's
    call inside it, is the API. A defined function the prose never names is none."""
    code = ("```python\ndef prepare_rows(sources, tokenizer):\n    bos = tokenizer.get_vocab()['<bos>']\n"
            "    return dict(input_ids=ids)\n```\n")
    body = f"I only replaced the prepare_rows function of the trainer and it fails when computing the loss.\n{code}"
    title = _title(_report("widget-tune", _DEVICE_LOG.removeprefix("RuntimeError: "), body))
    assert title.startswith("widget-tune prepare_rows: Expected all"), title
    unnamed = body.replace("replaced the prepare_rows function", "replaced the data code")
    assert not _title(_report("widget-tune", "two devices", unnamed)).startswith("widget-tune prepare_rows"), unnamed


def test_the_code_line_the_prose_puts_the_error_at_names_the_call() -> None:
    """Class (blur2blur-7): "This error happend in : pred_fake = self.netD(fake_B)", a statement quoted in a prose
    sentence with no fence: its call is the API (the callable of a single call); a statement after other words
    ("I set up: x = widget.load(y)") and a torch call there name none."""
    body = (f"Training with batch_size = 4 fails. This error happend in : pred_fake = self.netDisc(fake_B)\n\n"
            f"{_DEVICE_LOG}\n")
    assert _title(_report("widgetblur", "two devices", body)).startswith("widgetblur netDisc: Expected all"), body
    other = body.replace("This error happend in :", "I set up:")
    assert not _title(_report("widgetblur", "two devices", other)).startswith("widgetblur netDisc"), other
    torch_call = body.replace("self.netDisc(fake_B)", "torch.cat(fake_B)")
    assert without_api(_title(_report("widgetblur", "two devices", torch_call)), "widgetblur", "Expected all"), torch_call


def test_a_second_error_joined_in_the_title_names_no_api() -> None:
    """Class (megatron-deepspeed-379): a title holding two errors, "AttributeError: ... && batch =
    next(self.data_iterator)": the code of the second names no API of the first; the command's script does."""
    error = "AttributeError: 'Namespace' object has no attribute 'widget_config_dict'"
    body = f"```\ntorchrun --nproc_per_node 4 pretrain_widget.py --num-layers 2\n```\n\n{error}\n"
    title = _title(_report("widget-speed", f"{error} && batch = next(self.data_iterator)", body))
    assert title.startswith("widget-speed pretrain_widget.py: 'Namespace' object"), title


def test_the_only_own_frame_a_models_call_names_its_file() -> None:
    """Class (deeplearningshogi-40): an unfenced Windows traceback whose own frames are a script's top level and a
    Chainer-style model's ``__call__`` (then torch's module frames): the model's file and ``__call__`` name the API,
    as a module's ``forward`` does."""
    own = "c:\\users\\u\\src\\widgetshogi\\dl"
    body = ("Traceback (most recent call last):\n"
            f'  File "{own}\\train_widget.py", line 210, in <module>\n    y1, y2 = model(x1, x2)\n'
            f'  File "{own}\\widget_network.py", line 81, in __call__\n    u = self.l1(x1)\n'
            '  File "C:\\Anaconda3\\lib\\site-packages\\torch\\nn\\modules\\conv.py", line 423, in forward\n'
            "    return self._conv_forward(input, self.weight)\n"
            "RuntimeError: Expected tensor for argument #1 'input' to have the same device as tensor for argument #2 "
            "'weight'; but device 0 does not equal 1 (while checking arguments for cudnn_convolution)\n")
    title = _title(_report("widgetshogi", "data loader on GPU 1 fails", body))
    assert title.startswith("widgetshogi widget_network.py __call__: Expected tensor"), title
