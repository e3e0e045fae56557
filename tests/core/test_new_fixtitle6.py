"""Title classes of graded30-31's misses (issue 21 §1), each on a made-up report of its shape: an API the prose names
glued to CJK words or in a reply's workaround, the run a CJK sentence names, a printed argument listing's key taken
as the API, and a script the reporter says works taken over the failing one (tests/fixtures/graded30..31/EXPECTED.md
list the real reports)."""

from __future__ import annotations

import builtins
from typing import Any

from harness.authoring._shown import _BUILTINS
from tests.core.test_new_graded14 import _draft

_DTYPE = "RuntimeError: expected scalar type Half but found Float"
_DEVICE = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0!"


def _title(report: str) -> str:
    data: dict[str, Any] = _draft(report, released=lambda dist: True)[1]
    return str(data["title"])


def _report(repo: str, title: str, body: str) -> str:
    return f"https://github.com/someone/{repo}/issues/4\n# {title}\n\n{body}\n"


def test_a_script_name_glued_to_cjk_words_is_the_api() -> None:
    """Class (dcnet-10 "好像在trainer.py文件里"): a script's file name written inside Chinese words with no space; Python's
    \\w takes CJK letters for word characters, so the English-shaped readers miss it. A plain word glued the same way
    ("在widget里面") names nothing."""
    body = "你好\uff0c运行的时候报错了\uff0c问题好像在engine_loop.py里面\uff0c能帮忙看一下吗"
    assert _title(_report("widgetnet", _DTYPE, body)).startswith("widgetnet engine_loop.py: "), body
    plain = body.replace("engine_loop.py", "widget")
    assert _title(_report("widgetnet", _DTYPE, plain)).startswith("widgetnet: expected scalar"), plain


def test_a_dotted_call_glued_to_cjk_words_is_the_api() -> None:
    """The same class for a call: "调用WidgetRunner.fit()时报错" (an error when calling ...) names ``WidgetRunner.fit``; a
    call a Chinese sentence writes with spaces around it, and a shell script glued to the words, too."""
    body = "我在调用WidgetRunner.fit()时报错\uff0c单卡没有问题"
    assert _title(_report("widgetnet", _DTYPE, body)).startswith("widgetnet WidgetRunner.fit: "), body
    spaced = "在调用 run_widget(data) 时报错"  # a call in a Chinese sentence, with spaces: no English reader reads it
    assert _title(_report("widgetnet", _DTYPE, spaced)).startswith("widgetnet run_widget: "), spaced
    shell = "执行bash start_widget.sh时出错"  # a shell script glued the same way
    assert _title(_report("widgetnet", _DTYPE, shell)).startswith("widgetnet start_widget.sh: "), shell


def test_the_run_a_cjk_sentence_names_before_its_error() -> None:
    """Class (chatglm-efficient-tuning-261 "评估阶段出现RuntimeError"): a Chinese title or description says which run
    failed (evaluation, resuming training) right before the error; with no other name, that run is the API. The run
    word nearest the error wins over an earlier one ("训练期间 ... 评估阶段出现")."""
    title = f"多卡训练期间验证阶段出现{_DTYPE}"
    assert _title(_report("widgettune", title, "参考之前的issue也没有解决")).startswith("widgettune validation: ")
    resumed = f"中断后恢复训练报错{_DEVICE}"
    assert _title(_report("widgettune", resumed, "请问怎么解决")).startswith("widgettune resuming training: ")


def test_a_file_a_replys_workaround_changes_is_the_api_over_a_run_word() -> None:
    """Class (higherhrnet-46): the reporter says only "during train"; a reply's workaround names the file to change
    ("comment the code ... in the launch_dist.py"): that file says more than the run word."""
    body = ("When i set USE_DIST = False, this mistake happens during train.\n\n"
            "helper · comment · 2024-03-02\nyou can comment the code\n `elif args.gpu is not None:\n"
            "     torch.cuda.set_device(args.gpu)`  in the launch_dist.py\n")
    title = _title(_report("widgetpose", "RuntimeError: Invalid device string: '0'", body))
    assert title.startswith("widgetpose launch_dist.py: "), title


def test_a_printed_argument_listings_key_is_no_api() -> None:
    """Class (gpt-neox-929 ``log_dir``): a stored description that is only a launcher's argument dump
    (``name ........ value``, cut inside a key) names no API: its keys are settings, never the call that failed, even
    when the stored header quotes them as code ("from `save_dir` to a cut `warmup_`")."""
    dump = "\n".join(f"          {key} {'.' * (30 - len(key))} {value}{'.' * 12}updated" for key, value in
                     (("save_dir", "ckpts"), ("save_interval", "100"), ("seq_length", "2048"), ("train_iters", "9")))
    body = f"[turn 0 by someone, continued]\n{dump}\n          warmup_\n"
    header = ("(issue by someone, closed; as the project's issue search stores it: the argument dump cut at both ends "
              "(from `save_dir` to a cut `warmup_`))")
    report = _report("widgetlm", "RuntimeError: stack expects each tensor to be equal size", body)
    title = _title(report.replace("\n", f"\n{header}\n", 1))
    assert title.startswith("widgetlm: stack expects"), title


def test_a_script_the_reporter_says_works_is_not_the_api() -> None:
    """Class (teaching-where-to-look-8): "i run prep_widget.py without any error, but when i run fit_widget.py on 4
    gpus, i got an error": the failing run's script is the API, never the one that works. A report naming one script
    that "runs fine" on one GPU but fails on two keeps it (the only name of the failing run)."""
    body = ("thanks for your job, i run prep_widget.py without any error, but when i run fit_widget.py on 4 gpus, "
            "i got an error as:\n![image](https://example.com/x.png)")
    assert _title(_report("widgetkd", _DEVICE, body)).startswith("widgetkd fit_widget: ")
    alone = "fit_widget.py runs fine on one GPU but on 4 gpus I get the error in the title."
    assert _title(_report("widgetkd", _DEVICE, alone)).startswith("widgetkd fit_widget"), alone
    later = "prep_widget.py successfully loads the data and then crashes; fit_widget.py is next."
    assert _title(_report("widgetkd", _DEVICE, later)).startswith("widgetkd prep_widget"), later
    negated = "I can't run prep_widget.py without errors, and fit_widget.py fails too."
    assert _title(_report("widgetkd", _DEVICE, negated)).startswith("widgetkd prep_widget"), negated


_BOX = """╭──────────── Traceback (most recent call last) ────────────╮
│ in <module>:1                                             │
│                                                           │
│ ❱ 1 score_widget('some text')                             │
│                                                           │
│ in score_widget:6                                         │
│                                                           │
│    5 │   batch = {k: v.to(device) for k, v in batch.items()} │
│ ❱  6 │   outputs = widget_model(**batch)                   │
│    7 │                                                     │
│                                                           │
│ /usr/lib/python3/site-packages/torch/nn/modules/module.py:1501 in _call_impl │
│                                                           │
│ ❱ 1501 │   │   return forward_call(*args, **kwargs)        │"""


def test_a_box_tracebacks_cell_frames_give_their_failing_calls_to_the_skeleton() -> None:
    """Class (transformers-text-classification-bert-blog-1, S): a rich box traceback cut inside the box, its frames
    notebook cells ("in score_widget:6", no file): the skeleton starts from the cells' failing lines' calls
    (``score_widget``, ``widget_model``), never a library frame's line (``forward_call``), and quotes the innermost
    cell's failing line."""
    report = _report("widgetblog", "Expected all tensors to be on the same device, but found at least two devices, "
                     "cpu and cuda:0!", _BOX)
    repro = _draft(report, released=lambda dist: True)[0].repro_py
    assert "#   score_widget, widget_model\n" in repro, repro  # the library frame's forward_call is not among them
    assert "# Its notebook cell's line on the failing path:\n    #   outputs = widget_model(**batch)\n" in repro, repro


def test_builtins_are_derived_from_the_builtins_module() -> None:
    """Debt: every public builtin is a builtin call the report's code makes, never an API."""
    assert {name for name in dir(builtins) if not name.startswith("_")} <= _BUILTINS


def test_an_inline_code_class_method_keeps_its_class() -> None:
    """An inline-code ``Class.method`` call in the prose, in any language ("在`WidgetTrainer.train()`里报错"), is
    written with its class as the title's other readers write one; a call on an object keeps the method alone."""
    for body in ("Calling `WidgetTrainer.train()` fails with this error", "在`WidgetTrainer.train()`里报错"):
        assert _title(_report("widgetnet", _DTYPE, body)).startswith("widgetnet WidgetTrainer.train: "), body
    assert _title(_report("widgetnet", _DTYPE, "`trainer.train()` fails")).startswith("widgetnet train: ")
