"""The API a frameless report shows as code, not as a frame (issue 21 §1, graded19..23's title misses: composer-1092's
fenced `train_and_eval(...)`, geektime's reply `forward` body, mllmseg's bare source line above its error line), each
on a made-up report of its shape; and the code that names no API: a reply's fix, an environment dump, a config, a
torch-only snippet, the reporter's own helper, a cut traceback's first source line. The shape tests fail on main
f6eabb5 (no report field carried the calls)."""

from __future__ import annotations

import time

from harness.authoring._bugreport import parse_report
from harness.authoring._shown import shown_api
from tests.core.test_new_graded14 import _draft
from tests.core.test_new_graded16 import PLACED

_HEAD = "https://github.com/someone/widgetkit/issues/7\n# RuntimeError: " + PLACED + "\n\n"
_ERROR = f"RuntimeError: {PLACED}\n"


def _drafted(report: str) -> tuple[str, str]:
    """The draft's title and repro skeleton."""
    draft, data = _draft(report, released=lambda dist: True)
    return str(data["title"]), str(draft.repro_py)


def _title(report: str) -> str:
    return _drafted(report)[0]


def test_a_fenced_blocks_statement_call_is_the_api() -> None:
    """Class (composer-1092): the description shows the run as fenced code (a model built, then the project's
    function called with it) and quotes the error: the statement's call is the API, in the title and the skeleton."""
    report = (_HEAD + "After executing the following lines\n\n```\nmodel = Net()\nfit_and_score(model, trainloader, "
              f"testloader)\n```\n\nI got the following error:\n\n`{_ERROR.strip()}`\n")
    title, skeleton = _drafted(report)
    assert title.startswith("widgetkit fit_and_score: "), title
    assert "the API it names: fit_and_score" in skeleton


def test_an_instance_method_and_an_interpreter_prompt_name_the_method() -> None:
    """``>>> forecaster.fit_series(df)``, or an indented block's: the method the run called, not the builder."""
    report = _HEAD + f">>> forecaster = make_forecaster()\n>>> forecaster.fit_series(df)\n{_ERROR}"
    assert _title(report).startswith("widgetkit fit_series: "), _title(report)
    loaded = _HEAD + f"    net = restore_net('ckpt')\n    net.predict_all(batch)\n\n{_ERROR}"
    assert _title(loaded).startswith("widgetkit predict_all: "), _title(loaded)


def test_a_bare_source_line_above_a_frameless_exception_line_names_its_call() -> None:
    """Class (mllmseg-2): the report kept only the failing source line (no ``File`` line) and the error line."""
    report = _HEAD.replace("# RuntimeError: " + PLACED, "# 训练错误") + f"out = self.blend_masks(x) * 0.5\n{_ERROR}"
    assert _title(report).startswith("widgetkit blend_masks: "), _title(report)


def test_a_replys_method_body_names_the_method() -> None:
    """Class (geektime-semantic-segmentation-1): the reporter's follow-up shows the project's method body it changed;
    its method (with the class the code names) is the API, its torch calls are not."""
    report = (_HEAD + "It runs on both devices.\n\nangleboy · comment · 2024-01-04\nSolved!\n```\nclass Block(nn.Module):"
              "\n    def forward(self, x):\n        x = nn.BatchNorm2d(num_features=self.features)(x)\n        return "
              "nn.ReLU(inplace=True)(x)\n```\n")
    assert _title(report).startswith("widgetkit Block.forward: "), _title(report)


def test_another_librarys_call_gives_way_to_the_projects() -> None:
    """The code loads a model with another library the code imports, then calls the project: the project's call."""
    report = (_HEAD + "```python\nimport otherlib\nimport widgetkit\n"
              "model = otherlib.load_backbone('x')\nwidgetkit.attach_adapter(model)\n```\n" + _ERROR)
    assert _title(report).startswith("widgetkit attach_adapter: "), _title(report)
    # only another library's call shown: the run's call all the same (a torch call never)
    assert shown_api(("otherlib:otherlib.load_backbone",), "widgetkit", ("otherlib",), frozenset()) == "load_backbone"
    assert shown_api(("torch:torch.hub.load_model",), "widgetkit", ("torch",), frozenset()) == ""


def test_code_off_the_failing_path_names_no_api() -> None:
    """A reply's fix (``x.to(get_device())``), an environment dump, an install command, a config, a torch-only
    snippet, Python's builtins and setup calls, printed reprs, C++, a model instance, the reporter's own workaround
    helper: no API; the title keeps the project and the symptom."""
    plain = f"widgetkit: {PLACED}"
    shapes = [
        "\nsomeone · comment · 2023-10-05\nFixed:\n```\nreturn torch.from_numpy(enc).float().to(get_device())\n"
        "sent1_inputs.to('cuda')\n```\n",
        "```\nPyTorch version: 2.1.0\nIs CUDA available: True\n    numpy==1.26.2\n```\n",
        "```\npip install widgetkit==0.3\npython -m venv .venv\n```\n",
        "```yaml\nmodel:\n  name: widget\n  layers: 4\ntrain_cfg = dict(type='Runner', max_epochs=12)\n```\n",
        "```\nx = torch.zeros(3).cuda()\ny = np.ones(3)\nprint(x + y)\nseed_everything(0)\nmodel.to(device)\n```\n",
        "```\nCommand line arguments:\nNamespace(checkpoint=None, config_file='a.yaml')\narray([1, 2])\n```\n",
        "```\nat::Tensor out = at::empty(sizes, options);\nTORCH_CHECK(x.is_cuda(), \"x must be cuda\");\n```\n",
        "```\nwith torch.no_grad():\n    y = net(x)\nloader = DataLoader(ds)\n```\n",
        "```\ndef to_cuda(i):\n    return i.cuda()\n```\n\n```\nto_cuda(inputs)\n```\n",
    ]
    for shape in shapes:
        assert _title(_HEAD + shape + _ERROR) == plain, shape


def test_a_cut_tracebacks_source_lines_are_the_frames_own() -> None:
    """Class (unsloth-zoo-129): a traceback cut at its start begins with a source line above torch's frame
    (``broadcast(...)``): torch's call, never the project's API."""
    report = ("https://github.com/someone/widgetkit/issues/9\n# RuntimeError: No backend type associated with device "
              "type cpu\n\n[rank2]:     broadcast(sizes, src=src, group=group)\n[rank2]:   File \"/env/lib/python3.10/"
              "site-packages/torch/distributed/distributed_c10d.py\", line 2417, in broadcast\n[rank2]:     work = "
              "default_pg.broadcast([tensor], opts)\n[rank2]: RuntimeError: No backend type associated with device "
              "type cpu\n")
    assert parse_report(report).shown_calls == ()


def test_shown_calls_keep_the_statement_call_first_and_the_reporters_code_first() -> None:
    """The order a title reads them in: the bare source line's call, the code's statement calls, its assigned calls,
    then the methods a reply shows."""
    report = (_HEAD + "```\nmodel = build_widget()\nrun_widget(model)\n```\n\nme · comment · 2024-01-01\n```\n"
              "class Head(nn.Module):\n    def __init__(self):\n        pass\n```\n" + _ERROR)
    assert parse_report(report).shown_calls == ("run_widget", "build_widget", "Head")
    assert shown_api(("torch:torch.arange", "einops:reduce"), "einops", ("torch", "einops"), frozenset()) == "reduce"


def test_a_long_odd_code_line_is_read_in_linear_time() -> None:
    """A pasted line of MAX_LINE characters shaped to make the call patterns backtrack (an annotation followed by a
    run of spaces, a long tuple, an import list ending in junk) is read at once (the first pattern took minutes)."""
    odd = ["a: " + " " * 4990 + "x", "a" + ", a" * 1600 + " x", "from a import b" + " " * 4900 + "!"]
    started = time.monotonic()
    assert parse_report(_HEAD + "```\n" + "\n".join(odd) + "\n```\n" + _ERROR).shown_calls == ()
    assert time.monotonic() - started < 5
