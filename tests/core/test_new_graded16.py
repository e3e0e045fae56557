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
    assert str(data["title"]).startswith("widgetcast update: "), data["title"]
    shown = draft.repro_py.split("The report's own call", 1)[-1]
    assert "trainer.test(model=model)" in shown and "widgetcast/metrics.py" in shown
    assert "_test_impl" not in shown
