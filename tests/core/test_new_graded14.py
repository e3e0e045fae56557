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


def _assert_blamed(report: str, project: str, title: str) -> None:
    draft, data = _draft(report, released=lambda dist: True)
    assert draft.culprit == project, draft.culprit
    assert data["title"].startswith(title), data["title"]


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


# A reply's copy of a console that wrapped at a ragged width: the first frame's path cut at "site-packages/w", the
# function name cut at "_run_eval_epo", the message cut inside a word; the paste's last frame line is cut short.
WRAPPED = ("https://github.com/someone/Captioner.pytorch/issues/7\n\nAfter the first epoch it raises\n```\n"
           'File "/home/jiang/anaconda3/envs/pyl/lib/python3.7/site-packages/w\n'
           'idgetlightning/trainer/evaluation_loop.py", line 490, in _run_eval_epo\n'
           "ch_end\n"
           "    eval_results = model.validation_epoch_end(eval_results)\n"
           '  File "tools/train_pl.py", line 219, in validation_epoch_end\n'
           "    for _ in outputs]) / len(outputs)\n"
           "RuntimeError: Expected all tensors to be on the same device, but foun\n"
           "d at least two devices, cuda:0 and cuda:1!\n"
           "Exception ignored in: <function tqdm.__del__ at 0x7f2ea66388c0>\n"
           "Traceback (most recent call last):\n"
           '  File "/home/jiang/anaconda3/envs/pyl/lib/python3.7/site-packages/tq\n'
           'dm/std.py", line 1124, in __del__\n'
           '  File "/home/jiang/anaconda3/envs/pyl/lib/python3.7/site-packages/tq\n'
           'dm/std.py", line 1337, in close\n'
           '  File "/home/j/anaconda3/envs/p\n```\n')


def test_a_ragged_console_wrap_in_a_reply_is_undone() -> None:
    """Class (imagecaptioning): the wrap was not undone, so "site-packages/w" + "idgetlightning/..." became the
    distribution "idgetlightning" and the signature stopped at "but foun"."""
    report = parse_report(WRAPPED)
    assert report.traceback.message == ("Expected all tensors to be on the same device, but found at least two "
                                        "devices, cuda:0 and cuda:1!")
    first = report.traceback.frames[0]
    assert first.path.endswith("/site-packages/widgetlightning/trainer/evaluation_loop.py"), first.path
    assert first.function == "_run_eval_epoch_end"


def test_the_innermost_frame_of_a_script_run_by_a_relative_path_blames_the_linked_project() -> None:
    """Class (imagecaptioning, mmaction2): the innermost frame is the checkout's own script run by a relative path
    (``tools/train_pl.py``), called by an installed framework: the linked project is blamed, not the framework."""
    _assert_blamed(WRAPPED, "captioner-pytorch", "captioner-pytorch validation_epoch_end: ")


def test_a_titles_circumstance_after_the_message_is_not_the_messages() -> None:
    """Class (accelerate): a title-only report, "RuntimeError: Found dtype Float but expected BFloat16 on a CPU":
    " on a CPU" is where the reporter ran it, not torch's words; the signature and the title stop before it."""
    report = ("https://github.com/org/widgetkit/issues/3\n\n# [Casting] RuntimeError: Found dtype Half but expected "
              "Float on a CPU\n\nWhen I run the example on CPUs with bf16 it fails.\n")
    _, data = _draft(report, released=lambda dist: True)
    assert data["signature"] == "Found dtype Half but expected Float", data["signature"]
    assert data["title"].endswith(": Found dtype Half but expected Float"), data["title"]


def test_a_package_the_reports_listing_names_is_never_its_api() -> None:
    """Class (ray): a frameless report whose prose writes a listed package as inline code (`typing_extensions`, the
    conda list's last row): a package is not the API the title and the skeleton name."""
    report = ("https://github.com/widget-org/widgetray/issues/5\n\n# [Tune] Expected all tensors to be on the same "
              "device\n\nMy environment, from `pyparsing` to `typing_extensions`:\n\n"
              "pyparsing 3.0.9 pypi_0 pypi\ntorch 1.13.0 py3.10_cuda11.7_cudnn8.5.0_0 pytorch\n"
              "widgetray 2.3.0 pypi_0 pypi\ntyping_extensions 4.3.0\n")
    draft, data = _draft(report, released=lambda dist: True)
    assert "typing_extensions" not in data["title"], data["title"]
    assert "typing_extensions" not in draft.repro_py


def test_the_python_row_of_a_collect_env_table_is_read() -> None:
    """Class (detectron2): its collect_env table writes sys.version whole after "Python" and a run of spaces."""
    table = ("sys.platform                     linux\n"
             "Python                           3.11.4 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0]\n"
             "numpy                            1.24.4\n"
             "PyTorch                          2.0.1+cu117 @/usr/local/lib/python3.11/dist-packages/torch\n")
    environment = parse_report(f"{table}\nTypeError: f() missing 1 required positional argument: 'x'\n").environment
    assert environment.python == "3.11.4"
    assert environment.pins["torch"].version == "2.0.1+cu117"


def test_an_index_entry_without_links_is_the_project_of_a_repository_owner_named_after_it() -> None:
    """Class (pyannote-audio, openrlhf): pypi.org's entry lists no URL at all. An organisation named after its
    project (widgetorg/widgetorg-audio) publishes its own package: release pins, not "another project"; a person's
    repository of that name (someone/widgetorg-audio) still gets commit pins (nothing ties the name to it)."""
    def buggy(owner: str) -> str:
        report = (f"https://github.com/{owner}/widgetorg-audio/issues/8\n\nTraceback (most recent call last):\n"
                  f'  File "{SITE}/torch/nn/functional.py", line 2523, in instance_norm\n'
                  "    return torch.instance_norm(\n"
                  f"RuntimeError: {PLACEMENT}\n")
        _, data = _draft(report, released=lambda dist: True, project_urls=lambda dist: ())
        return " ".join(data["variants"]["buggy"]["requires"])
    assert "widgetorg-audio==X.Y.Z" in buggy("widgetorg"), buggy("widgetorg")
    assert "git+https://github.com/someone/widgetorg-audio@<commit>" in buggy("someone"), buggy("someone")


def test_a_release_a_maintainer_tells_the_reporter_to_use_is_the_fix_not_the_run() -> None:
    """Class (trl): "things are fixed now on Pypi, you can use widgettrl==0.7.9 without any problem" in a reply is the
    fixed release: the fix variant's pin, never the buggy variant's."""
    report = ("https://github.com/org/widgettrl/issues/4\n\n# After upgrading, Trainer gets RuntimeError: expected "
              "scalar type Float but found BFloat16\n\nmaintainer · comment · 2024-01-09\n"
              "@someone things are fixed now on Pypi, you can use widgettrl==0.7.9 without any problem\n")
    _, data = _draft(report, released=lambda dist: True)
    assert "widgettrl==0.7.9" not in " ".join(data["variants"]["buggy"]["requires"]), data["variants"]["buggy"]
    assert data["variants"]["fix"]["requires"] == ["widgettrl==0.7.9"], data["variants"]["fix"]


def test_an_error_about_cuda_already_initialised_passes_on_the_cpu_lane() -> None:
    """Class (xturing): "Lightning can't create new processes if CUDA is already initialized" needs CUDA
    initialised before a fork; a CPU run never initialises CUDA, so the cpu lane passes."""
    report = ("RuntimeError: Widget can't create new processes if CUDA is already initialized. Did you manually call "
              "`torch.cuda.*` functions?\n")
    _, data = _draft(report, released=lambda dist: True)
    expect = data["variants"]["buggy"]["expect"]
    assert (expect["cpu"], expect["cuda"]) == ("passes", "reproduces"), expect


def test_the_linked_projects_installed_frame_outer_to_the_library_that_raised_is_blamed() -> None:
    """Class (xturing): the linked project, installed, initialised CUDA and then called an inner framework that
    raised for it; the project's frame is blamed (its tracker got the report), the framework stays pinned."""
    report = ("https://github.com/widget-ai/widgetune/issues/231\n\nTraceback (most recent call last):\n"
              '  File "/home/u/run.py", line 9, in <module>\n    model.finetune(dataset=instruction_dataset)\n'
              f'  File "{SITE}/widgetune/models/causal.py", line 120, in finetune\n    trainer.fit()\n'
              f'  File "{SITE}/lightning_fabric/strategies/launchers/multiprocessing.py", line 190, in '
              "_check_bad_cuda_fork\n    raise RuntimeError(message)\n"
              "RuntimeError: Lightning can't create new processes if CUDA is already initialized.\n")
    _assert_blamed(report, "widgetune", "widgetune finetune: ")


def test_a_script_copy_the_title_places_the_error_in_is_the_linked_projects_code() -> None:
    """Class (detectron2): the linked project's script, copied outside its repository (``/media/./x/detection/``),
    calls Lightning, which raised; the issue's title says the error is "in widget_train_net.py". The script is the
    project's own code: the project is blamed, Lightning stays pinned as what ran it."""
    report = ("https://github.com/widget-research/widgetdet/issues/5078\n\n# TypeError: TrainingModule.on_validation_"
              "epoch_end() missing 1 required positional argument: '_outputs' in widget_train_net.py\n\n"
              "Traceback (most recent call last):\n"
              '  File "/media/./x/detection/widget_train_net.py", line 240, in train\n'
              "    trainer.validate(module, data_module)\n"
              '  File "/usr/local/lib/python3.10/dist-packages/pytorch_lightning/trainer/trainer.py", line 1046, in '
              "_run_stage\n    return self._evaluation_loop.run()\n"
              "TypeError: TrainingModule.on_validation_epoch_end() missing 1 required positional argument: '_outputs'\n")
    _assert_blamed(report, "widgetdet", "widgetdet widget_train_net.py train: ")


def test_a_frameless_titles_component_label_names_the_api_and_a_kind_label_never_does() -> None:
    """Class (ray): a frameless report titled "[Tune] Expected all tensors ...": the label is the part of the library
    that ran; "[Bug]" names the issue's kind, no API."""
    def title(label: str) -> str:
        report = (f"https://github.com/widget-org/widgetray/issues/9\n\n# [{label}] Expected all tensors to be on the "
                  "same device\n\nIt fails after the first trial.\n")
        return str(_draft(report, released=lambda dist: True)[1]["title"])
    assert title("Tune").startswith("widgetray Tune: Expected all tensors"), title("Tune")
    assert title("Bug").startswith("widgetray: Expected all tensors"), title("Bug")


def test_torchs_function_is_never_the_linked_projects_api_and_a_titles_leading_run_is() -> None:
    """Class (pyannote-audio): only torch's frames show and the link names the project: torch's ``instance_norm``
    under the project's name names none of its code; the title's "Training fails" says what ran."""
    def title(heading: str) -> str:
        report = (f"https://github.com/widget-org/widget-audio/issues/15\n\n# {heading}\n\n"
                  "Traceback (most recent call last):\n"
                  f'  File "{SITE}/torch/nn/functional.py", line 2523, in instance_norm\n'
                  "    return torch.instance_norm(\n"
                  f"RuntimeError: {PLACEMENT}\n")
        return str(_draft(report, released=lambda dist: True)[1]["title"])
    assert title('Training fails : "Expected all tensors"').startswith("widget-audio training: "), title("Training")
    assert title("Crash on the second epoch").startswith("widget-audio: Expected all"), title("Crash")


def test_the_release_a_title_says_it_upgraded_to_is_the_buggy_pin() -> None:
    """Class (trl): "After upgrade from 0.7.5 to 0.7.8 Trainer gets RuntimeError ...": 0.7.8 ran and broke, the
    linked project's buggy pin; 0.7.5 (what worked) is not."""
    report = ("https://github.com/org/widgettrl/issues/4\n\n# After upgrade from 0.7.5 to 0.7.8 Trainer gets "
              "RuntimeError: expected scalar type Float but found BFloat16\n")
    _, data = _draft(report, released=lambda dist: True)
    assert data["variants"]["buggy"]["requires"] == ["widgettrl==0.7.8"], data["variants"]["buggy"]


def test_a_release_a_sentence_says_fails_is_read_as_the_run_and_one_it_requires_is_not() -> None:
    """Class (imagecaptioning): "widgetlightning=0.9.0 is required, and the code is not work when
    widgetlightning=1.1.1 or 1.1.0": the release that fails is what ran; the required one is not read."""
    text = ("It should notice that widgetlightning=0.9.0 is required, and the code is not work when  "
            "widgetlightning=1.1.1 or 1.1.0.\n\nRuntimeError: Expected all tensors to be on the same device\n")
    assert parse_report(text).environment.pins["widgetlightning"].version == "1.1.1"
