"""Title and lane classes of graded17-20's misses (issue 21 §1), each on a made-up report of its shape: no junk as
the API (a cloud machine's type, a run word over the code's class call), a bare forward or generic method of a
checkout with its file, a script's top level named by its script, owner/repo for a generic name the index gives
another repository; torch 0.3's typed-tensor TypeError as a device error, a DeepSpeed dtype error as a GPU run's.
Each test fails on main d14b247 (tests/fixtures/graded17..20/EXPECTED.md list the real reports)."""

from __future__ import annotations

from typing import Any

from tests.core.test_new_graded14 import SITE, _draft
from tests.core.test_new_graded16 import PLACED


def _data(report: str, **index: object) -> dict[str, Any]:
    return _draft(report, **{"released": lambda dist: True, **index})[1]


def test_a_cloud_machine_type_is_never_the_api() -> None:
    """Class (nasbench-pytorch-3): a frameless report names its AWS instance (`g4dn.12xlarge`) as inline code: where it
    ran, not code; the title names the script its command runs."""
    report = ("https://github.com/someone/widgetnas/issues/3\n# Got RuntimeError while running the sample code\n\n"
              "I ran `python main.py` on an AWS `g4dn.12xlarge` instance and on my PC.\n\n"
              "RuntimeError: expected device cpu but got device cuda:0\n")
    title = str(_data(report)["title"])
    assert "xlarge" not in title and title.startswith("widgetnas main.py: "), title


def test_a_run_word_in_the_title_is_no_api_when_the_code_names_one() -> None:
    """Class (speechbrain-2804): the title says the model "cannot run inference"; the report's code calls
    `WidgetASR.from_hparams(...)`: the code names the API, the run word does not."""
    report = ("https://github.com/someone/widgetspeech/issues/4\n"
              "# pre-trained model cannot run inference on cuda\n\n"
              "```python\nfrom widgetspeech.pretrained import WidgetASR\n"
              "asr = WidgetASR.from_hparams(source='m', run_opts={'device': 'cuda:0'})\n```\n\n"
              f"RuntimeError: {PLACED}\n")
    title = str(_data(report)["title"])
    assert not title.startswith("widgetspeech inference"), title
    assert "WidgetASR" in title.partition(":")[0] or "from_hparams" in title.partition(":")[0], title


def test_a_traceback_of_only_a_scripts_top_level_names_the_script() -> None:
    """Class (llama2c-148): the only frame is the checkout's ``train.py`` at its top level (``<module>``): the
    script names the run; a package module's import (``pkg/ops/x.py``, ``<module>``) does not."""
    report = ("https://github.com/someone/widget-llm/issues/148\n# KeyError: 'optimizer'\n\n"
              "Traceback (most recent call last):\n"
              '  File "train.py", line 183, in <module>\n    optimizer.load_state_dict(checkpoint["optimizer"])\n'
              "KeyError: 'optimizer'\n")
    assert str(_data(report)["title"]).startswith("widget-llm train.py: KeyError 'optimizer'"), _data(report)["title"]
    imported = report.replace('File "train.py"', 'File "/home/me/widget_llm/ops/scan.py"')
    assert "scan.py" not in str(_data(imported)["title"]), _data(imported)["title"]


def test_a_checkouts_generic_method_is_named_with_its_file() -> None:
    """Class (clearervoice-studio-5): the report's own checkout (no package), ``train.py main`` -> ``solver.py
    train``: a bare "train" says nothing; its file does."""
    report = ("https://github.com/someone/widgetvoice/issues/5\n# restore model fail\n\n"
              "Traceback (most recent call last):\n"
              '  File "/home/me/code/enhance/train.py", line 40, in <module>\n    main(args)\n'
              '  File "/home/me/code/enhance/train.py", line 35, in main\n    solver.train()\n'
              '  File "/home/me/code/enhance/solver.py", line 236, in train\n'
              "    self.optimizer.param_groups[0]['lr'] *= 0.5\n"
              "KeyError: 'lr'\n")
    assert str(_data(report)["title"]).startswith("widgetvoice solver.py train: KeyError 'lr'"), _data(report)["title"]


def test_an_egg_built_from_a_checkout_names_its_forward_with_the_file() -> None:
    """Class (mozilla-tts-491): the failing ``forward`` is in an egg built from a checkout
    (``Widget-0.0.3+6d6dca0-py3.6.egg``): a bare "forward" names no module; its file does. An installed wheel's
    forward stays as the previous sets accept it."""
    egg = "/usr/local/lib/python3.6/dist-packages/Widgettts-0.0.3+6d6dca0-py3.6.egg/widgettts/layers/losses.py"
    report = ("https://github.com/someone/widgettts/issues/491\n# RuntimeError\n\nTraceback (most recent call last):\n"
              '  File "train.py", line 9, in train\n    loss = criterion(x)\n'
              "  File \"/usr/local/lib/python3.6/dist-packages/torch/nn/modules/module.py\", line 722, in _call_impl\n"
              "    result = self.forward(*input, **kwargs)\n"
              f'  File "{egg}", line 30, in forward\n    mask = self.mask(x) * x\n'
              f"RuntimeError: {PLACED}\n")
    assert str(_data(report)["title"]).startswith("widgettts losses.py forward: "), _data(report)["title"]
    wheel = report.replace(egg, f"{SITE}/widgettts/layers/losses.py")
    assert str(_data(wheel)["title"]).startswith("widgettts forward: "), _data(wheel)["title"]


def test_a_generic_repository_name_the_index_gives_another_repository_is_owner_repo() -> None:
    """Class (mozilla-tts-491 against coqui-ai/TTS): the repository's name is a generic word ("TTS") and the index's
    project of that name links another repository: the title names owner/repo; when the index links this one, its
    released name is the project's own."""
    report = ("https://github.com/someone/TTS/issues/7\n# RuntimeError\n\nTraceback (most recent call last):\n"
              f'  File "{SITE}/TTS-0.0.3-py3.6.egg/TTS/layers/losses.py", line 30, in compute\n'
              "    mask = mask * x\n"
              f"RuntimeError: {PLACED}\n")
    other = _data(report, project_urls=lambda dist: ("https://github.com/other/TTS",))
    assert str(other["title"]).startswith("someone/TTS "), other["title"]
    same = _data(report, project_urls=lambda dist: ("https://github.com/someone/TTS",))
    assert str(same["title"]).startswith("TTS "), same["title"]


def test_torch_03s_typed_tensor_type_error_is_a_device_error() -> None:
    """Class (allennlp-1102): torch 0.3's "received an invalid combination of arguments - got (int,
    torch.cuda.FloatTensor, ...)": a CUDA tensor against a signature of CPU ones (optimizer state restored on the
    CPU): the cpu lane passes, the device-placement tag is set; a TypeError naming no CUDA type stays as it was."""
    report = ("https://github.com/someone/widgetnlp/issues/1102\n"
              "    exp_avg_sq.addcmul_(1 - beta2, grad, grad)\n"
              "TypeError: addcmul_ received an invalid combination of arguments - got (int, torch.cuda.FloatTensor, "
              "torch.cuda.FloatTensor), but expected one of:\n")
    data = _data(report)
    assert data["variants"]["buggy"]["expect"] == {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
    assert "device-placement" in data["tags"], data["tags"]
    plain = _data(report.replace("torch.cuda.FloatTensor", "torch.FloatTensor"))
    assert set(plain["variants"]["buggy"]["expect"].values()) == {"reproduces"}


def test_a_half_precision_dtype_error_of_a_gpu_run_expects_no_cpu_reproduction_without_a_reason() -> None:
    """Class (stable-audio-tools-198, instructdiffusion-22): "Found dtype Float but expected Half" from a run on a GPU
    (the text says so) or under DeepSpeed (GPU-only training): the cpu lane is "unsupported" with the reason, never a
    bare "reproduces"."""
    said = ("https://github.com/someone/widgetaudio/issues/198\n# deepspeed not support?\n\n"
            "Training on my NVIDIA GPU fails: RuntimeError: Found dtype Float but expected Half\n")
    cpu = _data(said)["variants"]["buggy"]["expect"]["cpu"]
    assert cpu.startswith("unsupported: ") and "GPU" in cpu, cpu
    framed = ("https://github.com/someone/widgetdiff/issues/22\n# RuntimeError\n\nTraceback (most recent call last):\n"
              f'  File "{SITE}/deepspeed/runtime/engine.py", line 1, in forward\n    loss = self.module(*inputs)\n'
              '  File "/home/me/widgetdiff/ldm/ddpm.py", line 605, in get_input\n    x = x * mask\n'
              "RuntimeError: expected scalar type Half but found Float\n")
    assert _data(framed)["variants"]["buggy"]["expect"]["cpu"].startswith("unsupported: ")


def test_a_stated_torch_before_2_0_asks_the_author_which_torch_the_case_runs() -> None:
    """Class (trackformer-85's 1.13.1+cu117, phrasenode-2's 1.3.1): a report that ran a torch before 2.0 gets a torch
    placeholder naming it beside the torch that runs here (the bug may need the old one); a 2.x torch, which has a
    wheel here, is pinned as stated (fixlanes5)."""
    report = ("https://github.com/someone/widgettrack/issues/85\n# RuntimeError\n\nTraceback (most recent call last):\n"
              '  File "/home/me/widgettrack/src/train.py", line 9, in train\n    out = model(x)\n'
              "RuntimeError: indices should be either on cpu or on the same device as the indexed tensor (cpu)\n\n"
              "Collecting environment information...\nPyTorch version: {}\n")
    old = _data(report.format("1.13.1+cu117"))["requires"]
    assert old[0].startswith("FILL-IN") and "torch 1.13.1+cu117" in old[0] and "torch==2.13.0" in old[0], old
    assert _data(report.format("2.7.0+cu128"))["requires"][0] == "torch==2.7.0"


def test_a_skeleton_keeps_no_turn_marker_or_link_bracket_as_the_frames_code() -> None:
    """Class (cgccp-2023-1, finetuningllms-1; skeletons): a stored thread's "[turn 0 by someone, continued]" marker
    where a frame's source line would be is not code, and a Jupyter frame pasted as a markdown link's text
    ("[~/venv/.../memory.py:158](http://localhost:8889/...)") has no "[" in its path."""
    from harness.authoring._bugreport import Frame
    from harness.authoring._skeleton import repro_py

    frame = Frame(path="[~/venv/lib/python3.9/site-packages/accelerate/utils/memory.py", line=158, function="",
                  source="[turn 0 by someone, continued]", report_line=3)
    text = repro_py("t", "report.txt", ["accelerate"], [("The innermost library frame", frame)], "RuntimeError: x")
    assert "[turn 0" not in text and 'File "~/venv/lib/python3.9/site-packages/accelerate' in text, text
    kept = repro_py("t", "report.txt", [], [("Here", Frame(path="/a/b.py", line=1, function="f", source="x = 1", report_line=1))], "")
    assert "#     x = 1" in kept


def test_a_skeleton_keeps_the_command_without_the_sentence_after_it() -> None:
    """Class (chatglm3-base-tuning-8; skeletons): "python train.py 的时候报错" ("errors when running python train.py"):
    the command the skeleton keeps ends before the CJK sentence; a CJK argument followed by flags stays."""
    from harness.authoring._skeleton import repro_py

    text = repro_py("t", "report.txt", [], [], "", command="python train.py 的时候报错")
    assert "#   python train.py\n" in text and "报错" not in text, text
    kept = repro_py("t", "report.txt", [], [], "", command="python gen.py --prompt 一只猫 --steps 2")
    assert "--prompt 一只猫 --steps 2" in kept
