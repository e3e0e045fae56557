"""graded16's miss classes on made-up reports of each shape (issue 21 §1; tests/fixtures/graded16/EXPECTED.md lists
the real reports behind them). Each test fails on main 2a0df3e and passes with the fix of its class."""

from __future__ import annotations

from tests.core.test_new_graded14 import SITE, _draft

PLACED = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _chained(marker: str) -> str:
    """A made-up py4cast-shaped report: the cause's traceback cut at its start (a metrics library's wrapper calling
    the project's checkout code, which raised), then a framework's traceback that wrapped it, cut mid-line."""
    return ("https://github.com/someorg/widgetcast/issues/6\n# Fixes acc when training on GPU\n\n"
            "**python bin/test.py run.ckpt**\n\n```\n"
            f' File "{SITE}/metriclib/metric.py", line 483, in wrapped_func\n'
            "    update(*args, **kwargs)\n"
            '  File "/home/me/work/widgetcast/metrics.py", line 472, in update\n'
            "    (preds - self.means) * (target - self.means)\n"
            f"RuntimeError: {PLACED}\n\n{marker}\n\n"
            "Traceback (most recent call last):\n"
            '  File "/home/me/work/bin/test.py", line 75, in <module>\n'
            "    trainer.test(model=model)\n"
            f'  File "{SITE}/looplib/trainer.py", line 748, in test\n'
            "    return call._call_and_handle_interrupt(\n"
            f'  File "{SITE}/looplib/trainer.py", line 788, in _test_impl\n'
            "    results = self._run(model, ckpt_path=ckpt_\n")


def test_a_cut_wrapper_of_a_direct_cause_blames_the_causes_own_frame() -> None:
    """Class (py4cast-6): "The above exception was the direct cause of the following exception", the wrapper's
    traceback cut before its exception line: the cause's frames are the innermost calls (the project's ``update``
    under the metrics library), not the framework loop's last frame; the wrapper's frames lead there."""
    draft, data = _draft(_chained("The above exception was the direct cause of the following exception:"),
                         released=lambda dist: True)
    assert draft.culprit == "widgetcast", draft.culprit
    assert str(data["title"]).startswith("widgetcast metrics.py update: "), data["title"]
    shown = draft.repro_py.split("The report's own call", 1)[-1]
    assert "trainer.test(model=model)" in shown and "widgetcast/metrics.py" in shown
    assert "_test_impl" not in shown


def test_a_cuda_tensor_handed_to_numpy_is_a_device_error() -> None:
    """Class (phrasenode-2): PyTorch < 1.13's "can't convert CUDA tensor to numpy" (a CUDA tensor handed to numpy)
    only happens where there is a CUDA tensor: the cpu lane passes, and it is tagged a device-placement bug."""
    report = ("https://github.com/someorg/widgetnode/issues/2\n# Which versions?\n\nTraceback (most recent call last):\n"
              '  File "./main.py", line 9, in <module>\n    run.train()\n'
              '  File "/home/me/widgetnode/widgetnode/model/encoding.py", line 151, in forward\n'
              "    if not np.isfinite(losses.data.sum()):\n"
              '  File "/home/me/miniconda3/envs/py27/lib/python2.7/site-packages/torch/tensor.py", line 458, in __array__\n'
              "    return self.numpy()\n"
              "TypeError: can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first.\n")
    data = _draft(report, released=lambda dist: True)[1]
    expect = data["variants"]["buggy"]["expect"]
    assert {lane: kind.split(":")[0] for lane, kind in expect.items()} == \
        {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
    assert "device-placement" in data["tags"]


def test_a_module_whose_distribution_has_another_name_is_pinned_by_the_distributions_name() -> None:
    """Class (nemo-2712, clean-fid-41): an import name that is not its distribution's (``import whisper``: PyPI's
    ``whisper`` is another project, OpenAI's is ``openai-whisper``) pins the distribution; a linked repository whose
    distribution imports under another name (llama-cpp-python: ``llama_cpp``) is imported by that name."""
    report = ("https://github.com/someorg/Speech/issues/12\n"
              f"# RuntimeError: {PLACED}\n\n```python\nimport torch\nimport whisper\n\n"
              'model = whisper.load_model("tiny")\n```\n')
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "openai-whisper", draft.culprit
    assert "openai-whisper==X.Y.Z" in " ".join(data["variants"]["buggy"]["requires"])
    assert "import whisper  # noqa: F401" in draft.repro_py
    linked = report.replace("someorg/Speech", "someone/llama-cpp-python").replace("whisper", "llama_cpp")
    draft = _draft(linked, released=lambda dist: True)[0]
    assert draft.culprit == "llama-cpp-python", draft.culprit
    assert "import llama_cpp  # noqa: F401" in draft.repro_py, draft.repro_py


def test_the_reports_own_bare_frame_keeps_the_linked_project_over_a_library_its_text_names() -> None:
    """Class (didi-instruct-1): the only frame is the report's own ``File "metrics.py"`` (a line of its code, not an
    import), and the text names a library (``widgetmetrics.aggregation.MeanMetric``): the error is raised in the
    linked repository's code, which is blamed, not the library the prose names."""
    report = ("https://github.com/someone/widget-instruct/issues/1\n"
              "# `metrics.py`: RuntimeError due to CPU/GPU device mismatch in WidgetMetrics update\n\n"
              "```\nRuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!\n"
              '  File "metrics.py", line 45, in update\n    self.weight += weight.sum()\n```\n\n'
              "In `NLL(widgetmetrics.aggregation.MeanMetric).update()`, internal buffers reside on GPU.\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widget-instruct", draft.culprit
    assert str(data["title"]).startswith("widget-instruct metrics.py update: "), data["title"]
    imported = report.replace('    self.weight += weight.sum()', "    import widgetmetrics.aggregation")
    assert _draft(imported, released=lambda dist: True)[0].culprit == "widgetmetrics"  # a failing import: the library's


def test_versions_a_question_asks_about_are_not_the_run() -> None:
    """Class (phrasenode-2): "When training with ... pytorch 1.3.1, I get ..." then "Does it work with the following
    versions?" over a bullet list naming pytorch 1.1.0: the run's torch is the one it trained with."""
    from harness.authoring._bugreport import parse_report

    report = ("https://github.com/someone/widgetnode/issues/2\n# Which versions?\n\n"
              "When training with cuda 10.1 and latest pytorch 1.3.1, I get the following error.\n\n"
              "Traceback (most recent call last):\n  File \"./main.py\", line 9, in <module>\n    run.train()\n"
              "ValueError: bad batch\n\nDoes it probably work with the following versions?\n\n"
              "- cuda 9.0\n- pytorch 1.1.0\n")
    assert parse_report(report).environment.pins["torch"].version == "1.3.1"
    listed = report.replace("probably work with the following versions?", "Environment:")
    assert parse_report(listed).environment.pins["torch"].version == "1.1.0"  # a listing, not a question: read


def test_a_web_uis_system_info_json_gives_python_and_torch() -> None:
    """Class (forge-621): an A1111/Forge sysinfo JSON ("Python": "3.10.6", a "Torch env info" block with collect_env's
    keys as JSON keys): its Python and torch_version are the run's."""
    from harness.authoring._bugreport import parse_report

    report = ("https://github.com/someone/widget-webui/issues/6\n# [Bug]: shape error\n\n"
              "RuntimeError: shape mismatch\n\n```json\n{\n"
              '    "Platform": "Windows-10-10.0.19045-SP0",\n    "Python": "3.10.6",\n'
              '    "Version": "f0.0.9-latest-51-g5bea443d",\n    "Torch env info": {\n'
              '        "torch_version": "2.1.2+cu121",\n        "is_debug_build": "False",\n'
              '        "python_version": "3.10.6 (tags/v3.10.6:9c7b4bd, Aug  1 2022) [MSC v.1932 64 bit (AMD64)]",\n'
              "    }\n}\n```\n")
    environment = parse_report(report).environment
    assert (environment.python, environment.pins["torch"].version) == ("3.10.6", "2.1.2+cu121")


def test_a_torch_series_written_with_an_x_is_the_runs_series() -> None:
    """Class (didi-instruct-1): an environment bullet "PyTorch 2.4.x, Lightning 2.4.x" states the 2.4 series."""
    from harness.authoring._bugreport import parse_report

    report = ("https://github.com/someone/widget-instruct/issues/1\n# device mismatch\n\n"
              "**Environment (example)**\n\n* PyTorch 2.4.x, Lightning 2.4.x, widgetmetrics 1.4.x\n\n"
              "RuntimeError: Expected all tensors to be on the same device, but found cuda:0 and cpu!\n")
    assert parse_report(report).environment.pins["torch"].version == "2.4"
    assert "torch" not in parse_report(report.replace("2.4.x,", "2.4.xyz,")).environment.pins


def test_a_reply_naming_the_release_that_resolved_it_gives_the_fix_pin() -> None:
    """Class (clean-fid-41): the maintainer's "It should be resolved in the latest release 0.1.32" names the
    linked project's first fixed release: the fix variant pins it."""
    report = ("https://github.com/someone/widget-fid/issues/41\n# FID crashes on `cpu`\n\n"
              f"```\nRuntimeError: {PLACED}\n```\n\nsomeone · comment · 2022-10-15\nThanks for pointing this out!\n"
              "It should be resolved in the latest release 0.1.32\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widget-fid", draft.culprit
    assert data["variants"]["fix"]["requires"] == ["widget-fid==0.1.32"], data["variants"]["fix"]["requires"]
