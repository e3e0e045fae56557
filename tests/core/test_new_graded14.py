"""graded14's miss classes on made-up reports of each shape (issue 21 §1; tests/fixtures/graded14/EXPECTED.md lists
the real reports behind them). Each test fails on main 9f5627b and passes with the fix of its class."""

from __future__ import annotations

from typing import Any

import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case

PLACEMENT = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
SITE = "/home/u/miniconda3/envs/w/lib/python3.10/site-packages"


def _draft(text: str, **index: object) -> tuple[Draft, dict[str, Any]]:
    draft = draft_case("t", parse_report(text), "report.txt", **index)  # type: ignore[arg-type]
    return draft, yaml.safe_load(draft.case_yaml)


def test_a_checkout_whose_frames_show_the_linked_package_keeps_the_blame_past_a_task_runner() -> None:
    """Class (verl): the linked repository's checkout (``~/widgetrl/widgetrl/...``) calls an installed task runner
    whose re-raise (``taskpool.exceptions.TaskError(RuntimeError)``) names it in the text; the runner's frames sit
    between the project's. The project the link and the frames name is blamed, not the runner the text names."""
    report = ("https://github.com/widget-org/widgetrl/issues/12\n\nTraceback (most recent call last):\n"
              '  File "/home/u/widgetrl/widgetrl/trainer/main.py", line 40, in main\n'
              "    taskpool.get(runner.run.remote(config))\n"
              f'  File "{SITE}/taskpool/_private/worker.py", line 900, in get_objects\n'
              "    raise value.as_instanceof_cause()\n"
              "taskpool.exceptions.TaskError(RuntimeError): taskpool::Runner.run() (pid=1)\n"
              '  File "/home/u/widgetrl/widgetrl/trainer/main.py", line 300, in run\n'
              "    trainer.fit()\n"
              '  File "/home/u/widgetrl/widgetrl/trainer/loop.py", line 1000, in fit\n'
              "    old_log = self.actor.compute_log_prob(batch)\n"
              f"RuntimeError: {PLACEMENT}\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == "widgetrl", draft.culprit
    assert data["title"].startswith("widgetrl "), data["title"]
    assert "widgetrl" in " ".join(data["variants"]["buggy"]["requires"])
