"""Title classes of graded14-16's misses (issue 21 §1), each on a made-up report of its shape: no junk taken as the API
(an environment listing's field, a product's name, a middle frame), the symptom a context sentence hides, owner/repo
for a repository named by a generic word, and the API a frameless report's title or prose names. Each test fails on
main f59c70c and passes with the fix of its class (tests/fixtures/graded16/EXPECTED.md lists the real reports)."""

from __future__ import annotations

from harness.authoring._title import _title_message
from tests.core.test_new_graded14 import SITE, _draft
from tests.core.test_new_graded16 import PLACED
from tests.core.test_new_said_last import without_api


def _title(report: str) -> str:
    return str(_draft(report, released=lambda dist: True)[1]["title"])


def test_an_environment_listings_field_is_never_the_api() -> None:
    """Class (forge-621): the report names a field of its sysinfo JSON (`pip_packages`) as inline code and its frames
    are the project's checkout: the API is a function on the failing path, never the listing's field."""
    report = ("https://github.com/someone/widget-webui/issues/9\n# [Bug]: ShapeError in sampling\n\n"
              "The sysinfo is attached (cut inside `pip_packages`).\n\nTraceback (most recent call last):\n"
              '  File "D:\\wui\\webui\\patched\\samplers.py", line 289, in sampling_function\n'
              "    out = model.apply_model(x, t)\n"
              '  File "D:\\wui\\webui\\patched\\model_base.py", line 85, in apply_model\n'
              "    return self.diffusion_model(x, t)\n"
              '  File "D:\\wui\\python\\lib\\site-packages\\torch\\nn\\modules\\module.py", line 1527, in _call_impl\n'
              "    return forward_call(*args, **kwargs)\n"
              "RuntimeError: shape '[2, 16, -1]' is invalid for input of size 7\n")
    title = _title(report)
    assert "pip_packages" not in title, title
    assert title.startswith("widget-webui apply_model: "), title


def test_a_context_sentence_keeps_the_messages_cause() -> None:
    """Class (forge-621): a long message whose first sentence only says where it failed ("Error while processing
    ...") keeps its last sentence, the symptom, instead of stopping at the first."""
    message = ('Error while processing rearrange-reduction pattern "(b f) d c -> (b d) f c". Input tensor shape: '
               "torch.Size([2, 6144, 320]). Additional info: {'f': 16}. Shape mismatch, can't divide axis of length 2 "
               "in chunks of 16")
    assert _title_message("EinopsError", message) == ('Error while processing rearrange-reduction pattern "(b f) d c '
                                                      "-> (b d) f c\" ... Shape mismatch, can't divide axis of length 2 "
                                                      "in chunks of 16")
    plain = ("Sizes of tensors must match except in dimension 1. Expected size 8 but got size 7 for tensor number 1 in "
             "the list of tensors given to the concatenation")  # a first sentence that states the symptom stays alone
    assert _title_message("RuntimeError", plain) == "Sizes of tensors must match except in dimension 1."


def test_the_forward_that_failed_is_named_over_a_middle_frame() -> None:
    """Class (phrasenode-2): the project's entry call, a middle function, then a module's forward whose own line fails
    in torch's tensor code: the title names that forward with its file, not the middle frame."""
    report = ("https://github.com/someorg/widgetnode/issues/2\n# Which versions?\n\nTraceback (most recent call last):\n"
              '  File "./main.py", line 9, in <module>\n    run.train()\n'
              '  File "/home/me/widgetnode/widgetnode/training_run.py", line 80, in train\n'
              "    self._process_examples(examples)\n"
              '  File "/home/me/widgetnode/widgetnode/training_run.py", line 120, in _process_examples\n'
              "    logits = self.model(examples)\n"
              f'  File "{SITE}/torch/nn/modules/module.py", line 1500, in _call_impl\n'
              "    return forward_call(*args, **kwargs)\n"
              '  File "/home/me/widgetnode/widgetnode/model/encoding.py", line 151, in forward\n'
              "    if not np.isfinite(losses.data.sum()):\n"
              f'  File "{SITE}/torch/_tensor.py", line 458, in __array__\n'
              "    return self.numpy()\n"
              "TypeError: can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor to host "
              "memory first.\n")
    assert _title(report).startswith("widgetnode encoding.py forward (np.isfinite): "), _title(report)


def test_a_repository_named_by_a_generic_word_is_named_with_its_owner() -> None:
    """Class (transformer-samlynnevans-30, roboflow notebooks): a checkout of a repository whose name is a generic term
    ("Transformer") names no project alone: the title says owner/repo."""
    report = ("https://github.com/JaneDoe/Transformer/issues/30\n# RuntimeError\n\nTraceback (most recent call last):\n"
              '  File "train.py", line 9, in train_model\n    src_mask = create_masks(src, opt)\n'
              '  File "/home/me/Transformer-master/Batch.py", line 30, in create_masks\n'
              "    trg_mask = trg_mask & np_mask\n"
              f"RuntimeError: {PLACED}\n")
    assert _title(report).startswith("JaneDoe/Transformer create_masks: "), _title(report)


def test_a_frameless_title_names_what_failed_before_its_verb() -> None:
    """Class (clean-fid-41): no frame, and the title opens with what failed ("FID clip crashes when ..."): that is
    the title's API; a vague subject ("It crashes") names none."""
    report = ("https://github.com/someone/widget-fid/issues/41\n# FID clip crashes when evaluated on `cpu` device\n\n"
              "Passing the cpu device crashes with the following error:\n\n"
              f"```\nRuntimeError: {PLACED}\n```\n")
    assert _title(report).startswith("widget-fid FID clip: "), _title(report)
    vague = report.replace("# FID clip crashes", "# It crashes")
    assert without_api(_title(vague), "widget-fid"), _title(vague)
    worded = report.replace("# FID clip crashes when evaluated", "# fusedclip does not work when evaluated")
    assert _title(worded).startswith("widget-fid fusedclip: "), _title(worded)
    for junk in ("# GeForce RTX crashes", "# Import fails", "# PyTorch crashes"):  # hardware, a step, a product
        other = report.replace("# FID clip crashes", junk)
        assert without_api(_title(other), "widget-fid"), _title(other)


def test_a_class_the_title_names_before_the_quoted_exception_is_the_api() -> None:
    """Class (trl-1202): a frameless report whose title names the class that failed before quoting the exception
    ("After upgrade to 0.7.8 DPOTrainer get RuntimeError: ..."); a product's name (PyTorch) is no API."""
    report = ("https://github.com/someorg/widgettrl/issues/1202\n"
              "# After upgrade from 0.7.5 to 0.7.8 WPOTrainer get RuntimeError: expected scalar type Float but found "
              "BFloat16\n\nIt worked before.\n")
    assert _title(report).startswith("widgettrl WPOTrainer: "), _title(report)
    product = report.replace("WPOTrainer get", "PyTorch get")
    assert not _title(product).startswith("widgettrl PyTorch"), _title(product)


def test_a_bare_method_gets_the_class_the_prose_names_or_its_file() -> None:
    """Class (didi-instruct-1, py4cast-6): the report's own frame's method (``update``) is named with the class the
    prose names with it (`NLL()` ... `update()`): ``NLL.update``; a generic method of code in no package, with no class
    named, is named with its file (``metrics.py update``)."""
    report = ("https://github.com/someorg/widget-instruct/issues/1\n"
              "# `metrics.py`: RuntimeError due to a device mismatch\n\n"
              "The `NLL()` metric's `update()` adds a CPU tensor.\n\nTraceback (most recent call last):\n"
              '  File "metrics.py", line 30, in update\n    self.weight += weight.sum()\n'
              "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!\n")
    assert _title(report).startswith("widget-instruct NLL.update: "), _title(report)
    checkout = ("https://github.com/someorg/widgetcast/issues/6\n# Fixes acc\n\nTraceback (most recent call last):\n"
                '  File "/home/me/work/bin/test.py", line 75, in <module>\n    trainer.test(model=model)\n'
                f'  File "{SITE}/metriclib/metric.py", line 483, in wrapped_func\n    update(*args, **kwargs)\n'
                '  File "/home/me/work/widgetcast/metrics.py", line 472, in update\n'
                "    (preds - self.means) * (target - self.means)\n"
                f"RuntimeError: {PLACED}\n")
    assert _title(checkout).startswith("widgetcast metrics.py update: "), _title(checkout)


def test_a_scripts_setup_call_is_never_the_api() -> None:
    """Class (nemo-2712): a frameless report's script imports and calls a setup helper (``seed_everything(42)``):
    that is no API; the title names the run its command shows (``train.py``, by its file's name, or ``train``)."""
    report = ("https://github.com/someorg/widgetspeech/issues/7\n"
              f"# RuntimeError: {PLACED}\n\nI am using the following script:\n\n```\nimport torch\n"
              "from widgetlib import seed_everything\nfrom widgetspeech.models import SpeakerModel\n\n"
              "seed_everything(42)\n```\n\n"
              "python /home/me/app/src/train.py --data_dir data --num_classes 64\n")
    title = _title(report)
    assert "seed_everything" not in title, title
    assert title.startswith(("widgetspeech train.py: ", "widgetspeech train: ")), title


def test_a_launchers_call_names_the_function_it_is_handed() -> None:
    """Class (launcher frames as the API): the script's entry function hands its run to a launcher
    (``accelerator.launch(train)``) whose frames raise: the title names the function handed, not the launcher."""
    report = ("https://github.com/someorg/widgetrl/issues/6\n# Fails\n\nTraceback (most recent call last):\n"
              '  File "/home/me/widgetrl/train.py", line 75, in <module>\n    main()\n'
              '  File "/home/me/widgetrl/train.py", line 70, in main\n    accelerator.launch(train)\n'
              f'  File "{SITE}/accelerate/launchers.py", line 748, in notebook_launcher\n    start_processes(fn)\n'
              f'  File "{SITE}/accelerate/utils/launch.py", line 48, in _launch\n    fn()\n'
              f"RuntimeError: {PLACED}\n")
    assert _title(report).startswith("widgetrl train: "), _title(report)


def test_a_library_whose_frames_are_only_constructors_names_the_class_its_line_builds() -> None:
    """Class (x-transformers-residual-init): the blamed library's frames are only ``__init__``s and the innermost one's
    line builds the class whose constructor failed (``residual_fn = Residual(dim)``): that class is the API."""
    report = ("https://github.com/someone/widget-layers/issues/65\n\nTraceback (most recent call last):\n"
              '  File "run.py", line 3, in <module>\n    model = Encoder(dim=8)\n'
              f'  File "{SITE}/widget_layers/layers.py", line 900, in __init__\n'
              "    super().__init__(causal=False, **kwargs)\n"
              f'  File "{SITE}/widget_layers/layers.py", line 500, in __init__\n    residual_fn = Residual(dim)\n'
              "TypeError: __init__() takes 1 positional argument but 2 were given\n")
    assert _title(report).startswith("widget_layers Residual: "), _title(report)
