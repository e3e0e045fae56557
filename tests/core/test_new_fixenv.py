"""Fix round (fixenv): validate refuses a buggy or fix variant whose own requirement floats (a bare name)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from harness._exceptions import CaseFileError
from harness.cases._load import load_case


def _variants(folder: Path, buggy: list[str], fixed: list[str], shared: list[str] | None = None,
              latest: list[str] | None = None) -> None:
    path = folder / "case.yaml"
    data: dict[str, Any] = yaml.safe_load(path.read_text())
    data["variants"]["buggy"]["requires"] = buggy
    data["variants"]["fixed"]["requires"] = fixed
    if shared is not None:
        data["requires"] = ["torch==2.13.0", *shared]
    if latest is not None:
        data["variants"]["latest"] = {**data["variants"]["fixed"], "requires": latest}
    path.write_text(yaml.safe_dump(data, sort_keys=False))


@pytest.mark.parametrize(("buggy", "fixed", "named"), [
    (["alignment-handbook"], ["alignment-handbook==0.4.0"], "'buggy' requires 'alignment-handbook'"),
    (["ms-swift", "deepspeed==0.14.0"], ["ms-swift==3.6.0", "deepspeed==0.14.0"], "'buggy' requires 'ms-swift'"),
    (["somelib==1.0"], ["somelib"], "'fixed' requires 'somelib'"),
    (["somelib[extra]"], ["somelib==1.1"], "'buggy' requires 'somelib[extra]'"),
])
def test_a_floating_variant_requirement_is_refused_naming_the_file_and_the_fix(fixture_cases, buggy, fixed, named):
    folder = fixture_cases / "confirmed"
    _variants(folder, buggy, fixed)
    with pytest.raises(CaseFileError) as info:
        load_case(folder)
    assert info.value.path == folder / "case.yaml" and info.value.line is not None
    assert named in str(info.value) and "no version and no commit" in str(info.value)
    assert "==X.Y.Z" in str(info.value) and "git+https://github.com/" in str(info.value)


@pytest.mark.parametrize(("buggy", "fixed", "shared", "latest"), [
    (["somelib==1.0"], ["somelib==1.1"], [], None),  # both pinned
    (["somelib @ git+https://github.com/o/r@0123abc"], ["somelib==1.1"], [], None),  # a commit pin
    (["somelib==1.0", "numpy<2"], ["somelib==1.1", "numpy<2"], [], None),  # a range is a decision, not a float
    (["somelib==1.0"], ["somelib==1.1"], [], ["somelib"]),  # a `latest` fix beside the first fixed release
    (["somelib==1.0"], ["somelib==1.1"], ["numpy==1.26.4"], ["somelib", "numpy"]),  # latest overrides a shared pin
    (["somelib==1.0"], ["somelib==1.1"], ["einops"], None),  # a case-level helper may float
])
def test_pinned_variants_and_a_latest_companion_still_load(fixture_cases, buggy, fixed, shared, latest):
    folder = fixture_cases / "confirmed"
    _variants(folder, buggy, fixed, shared, latest)
    assert load_case(folder).variants["buggy"].requires


def test_a_latest_variant_alone_is_not_a_fix_for_a_library_pinned_nowhere(fixture_cases):
    folder = fixture_cases / "confirmed"
    _variants(folder, ["somelib==1.0"], ["otherlib==2.0"], [], ["somelib"])
    with pytest.raises(CaseFileError, match="'latest' requires 'somelib'"):
        load_case(folder)


def _pins(text: str) -> dict[str, str]:
    from harness.authoring._envlist import parse_environment
    return {name: pin.version for name, pin in parse_environment(text.splitlines()).pins.items()}


@pytest.mark.parametrize(("report", "expected"), [
    # an environment pasted as one inline-code span over several lines
    ("**Your hardware and system info**\n`mylib.version: 3.5.0\nGPU: H20, \ncuda:12.4, \ntorch:2.6`\n",
     {"mylib": "3.5.0", "torch": "2.6"}),
    ("Env:\n`otherlib_version: 0.4.1,\ntorch: 2.1.0`\n", {"otherlib": "0.4.1", "torch": "2.1.0"}),
    # torch's release quoted in a sentence
    ('I have torch  "1.10.0+cu113" on 2080Ti and Ubuntu20.\n', {"torch": "1.10.0+cu113"}),
    ("Running with PyTorch `2.3.1` on a laptop.\n", {"torch": "2.3.1"}),
])
def test_versions_in_inline_code_and_quoted_prose_are_read(report, expected):
    pins = _pins(report)
    assert {name: pins.get(name) for name in expected} == expected


@pytest.mark.parametrize("report", [
    "```python\nmodel = build(cfg)\n```\n",  # a fence is no inline span
    "It fails when I call `trainer.fit(model)` on 2 GPUs.\n",  # a code span in a sentence names no release
    'Upgrading to torch "2.4.0" fixed it.\n',  # a release said to fix it is not the run's
])
def test_other_shapes_read_no_version(report):
    assert "torch" not in _pins(report) and "trainer" not in _pins(report)


def test_an_environment_pasted_as_a_python_dict_is_read():
    report = ("**Environment**\n{'sys.platform': 'linux', 'Python': '3.9.7 (default, Sep 16 2021, 13:09:58) [GCC 7.5.0]', "
              "'CUDA available': True, 'GPU 0': 'Tesla V100', 'NVCC': 'Cuda compilation tools, release 11.3, V11.3.109', "
              "'PyTorch': '1.12.1+cu113', 'PyTorch compiling details': 'PyTorch built with:\\n  - GCC 9.3\\n  - "
              "Intel(R) MKL-DNN v2.6.0 (Git Hash 52b5f1)\\n', 'TorchVision': '0.13.1+cu113', 'OpenCV': '4.6.0', "
              "'SomeLib': '1.0.0rc2'}\n")
    from harness.authoring._envlist import parse_environment
    environment = parse_environment(report.splitlines())
    assert environment.python == "3.9.7"
    assert {n: p.version for n, p in environment.pins.items()} == {
        "torch": "1.12.1+cu113", "torchvision": "0.13.1+cu113", "opencv-python": "4.6.0", "somelib": "1.0.0rc2"}


def test_a_config_dict_with_version_like_strings_is_not_an_environment():
    assert _pins("cfg = {'lr': '0.001', 'schedule': '1.5.2', 'name': 'run'}\n") == {}


@pytest.mark.parametrize(("frame", "commit"), [
    ('  File "/usr/local/lib/python3.6/dist-packages/TTS-0.0.3+6d6dca0-py3.6.egg/TTS/layers/losses.py", line 231',
     ("/TTS", "6d6dca0")),
    ('  File "/opt/venv/lib/python3.8/site-packages/mylib-1.2.dev4+g0a1b2c3d-py3.8.egg/mylib/train.py", line 9',
     ("/mylib", "0a1b2c3d")),
    ('  File "C:\\\\Py\\\\lib\\\\site-packages\\\\mylib-1.2+0a1b2c3.d20240101-py3.9.egg\\\\mylib\\\\x.py", line 9',
     ("/mylib", "0a1b2c3")),
    ('  File "/usr/lib/python3/site-packages/mylib-1.2.0-py3.8.egg/mylib/x.py", line 3', ("", "")),  # a release egg
    ('  File "/usr/lib/python3/site-packages/mylib-1.2.0+cu118-py3.8.egg/mylib/x.py", line 3', ("", "")),  # a build tag
])
def test_a_commit_in_an_installed_eggs_version_is_read_with_the_eggs_name(frame, commit):
    from harness.authoring._envlist import parse_environment
    assert parse_environment(["Traceback (most recent call last):", frame]).commit == commit


@pytest.mark.parametrize(("url", "sha"), [
    ("https://github.com/someone/TTS/issues/1", "6d6dca0"),  # the egg is the linked repository's
    ("https://github.com/someone/other-project/issues/1", ""),  # another project's egg: not the run's commit
])
def test_an_eggs_commit_is_the_runs_only_for_the_linked_repository(url, sha):
    from harness.authoring._bugreport import parse_report
    from harness.authoring._index import _run_commit
    text = (f"Source: {url}\n# RuntimeError: boom\n\n```\nTraceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.6/dist-packages/TTS-0.0.3+6d6dca0-py3.6.egg/TTS/layers/losses.py", '
            "line 231, in forward\n    x = y\nRuntimeError: boom\n```\n")
    assert _run_commit(parse_report(text)) == sha


_CHECKOUT_REPORT = '''Source: https://github.com/someone/graph-attention-pytorch/issues/7
# RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!

Running `python main.py --epochs 3` gives:

```
Traceback (most recent call last):
  File "main.py", line 40, in <module>
    train(model, loader)
  File "main.py", line 22, in train
    out = model(x)
  File "/home/me/venv/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl
    return forward_call(*args, **kwargs)
  File "/home/me/venv/lib/python3.10/site-packages/torch/nn/functional.py", line 2210, in embedding
    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)
RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!
```

I think it comes from {module}.nn.functional.embedding on recent versions.
'''


def _culprit(text: str) -> str:
    from harness.authoring._bugreport import parse_report
    from harness.authoring._draft import draft_case
    draft = draft_case("x", parse_report(text), "x.txt", released=lambda dist: None, project_urls=lambda dist: None,
                       versions=lambda dist: None)
    return draft.culprit


def test_pytorch_dotted_in_prose_is_torch_not_a_project_so_the_repository_is_blamed():
    assert _culprit(_CHECKOUT_REPORT.replace("{module}", "pytorch")) == "graph-attention-pytorch"


def test_another_dotted_module_in_prose_still_names_its_project():
    assert _culprit(_CHECKOUT_REPORT.replace("{module}", "dgl")) == "dgl"


def test_a_module_version_attribute_names_the_distribution_that_installs_the_module():
    assert _pins("`sklearn.version: 1.3.2\ntorch:2.1.0`\n") == {"scikit-learn": "1.3.2", "torch": "2.1.0"}
