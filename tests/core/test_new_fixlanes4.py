"""Fix round G (fixlanes4): lanes and the device-placement tag of four message shapes seen across projects.

- A negative device index from a CPU tensor's get_device() (-1) handed to `.cuda(i)`: only a CPU run shows it (cpu
  reproduces, cuda and cuda-sim pass), tagged; a rank variable's default of -1 fails on every host.
- A CUDA device string with an index never set ('cuda:None'): every host rejects it, tagged; a word taken for a
  device ('train', '0') stays untagged.
- A device-side assert (a CUDA kernel's bounds or value check): the CPU kernel raises the same check in its own
  words, so cpu is not "passes" but unsupported with that reason; cuda reproduces.
- DataLoader workers out of shared memory (a Bus error): every lane unsupported with the /dev/shm reason, untagged.

The reports are made up, each of a shape seen across projects (not one project's text)."""

from __future__ import annotations

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case


def _report(message: str, source: str, exception: str = "RuntimeError") -> str:
    """A made-up report whose innermost frame, in the reporter's own model code, runs ``source``."""
    return f"""Source: https://github.com/someorg/someproject/issues/3
# error when training

I run `python train.py --config base.yaml` and it fails:

```
Traceback (most recent call last):
  File "train.py", line 40, in <module>
    main()
  File "/home/u/someproject/models/net.py", line 120, in forward
    {source}
{exception}: {message}
```
"""


def _draft(message: str, source: str = "out = self.layer(x)", exception: str = "RuntimeError"
           ) -> tuple[dict[str, str], bool]:
    """The drafted buggy lanes (each kind's first word, or whole when it is a reason) and the device-placement tag."""
    data = yaml.safe_load(draft_case("made-up", parse_report(_report(message, source, exception))).case_yaml)
    lanes = {lane: str(kind) for lane, kind in data["variants"]["buggy"]["expect"].items()}
    return lanes, "device-placement" in data["tags"]


def _kinds(lanes: dict[str, str]) -> tuple[str, str, str]:
    return lanes["cpu"].split(":")[0], lanes["cuda"].split(":")[0], lanes["cuda-sim"].split(":")[0]


@pytest.mark.parametrize("source", [
    "emb = self.end_embedding.cuda(get_device_of(spans))",
    "mask = mask.cuda(x.get_device())",
    "h0 = torch.zeros(2, 4, 8).cuda(device)",
])
def test_a_negative_device_index_from_a_cpu_tensor_reproduces_only_on_the_cpu(source: str) -> None:
    lanes, tagged = _draft("Device index must not be negative", source)
    assert _kinds(lanes) == ("reproduces", "passes", "passes") and tagged


def test_a_negative_index_from_a_rank_default_reproduces_everywhere() -> None:
    lanes, tagged = _draft("Device index must not be negative",
                           "device = torch.device('cuda', args.local_rank)")
    assert _kinds(lanes) == ("reproduces", "reproduces", "reproduces") and tagged


@pytest.mark.parametrize("message", ["Invalid device string: 'cuda:None'", "Invalid device string: 'cuda:'",
                                     "Invalid device string: 'cuda:local_rank'"])
def test_a_cuda_device_string_with_an_unset_index_is_tagged_and_reproduces_everywhere(message: str) -> None:
    lanes, tagged = _draft(message, "batch = batch.to(f'cuda:{local_rank}')")
    assert _kinds(lanes) == ("reproduces", "reproduces", "reproduces") and tagged


@pytest.mark.parametrize("message", [
    "Invalid device string: '0'", "Invalid device string: 'cuda:1'",
    "Expected one of cpu, cuda, xpu device type at start of device string: train"])
def test_a_word_or_number_taken_for_a_device_string_stays_untagged(message: str) -> None:
    lanes, tagged = _draft(message, "device = torch.device(args.mode)")
    assert _kinds(lanes) == ("reproduces", "reproduces", "reproduces") and not tagged


@pytest.mark.parametrize("message", [
    "CUDA error: device-side assert triggered",
    "CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API "
    "call, so the stacktrace below might be incorrect.",
    "/pytorch/aten/src/THCUNN/ClassNLLCriterion.cu:106: block: [0,0,0], thread: [0,0,0] Assertion `t >= 0 && t < "
    "n_classes` failed.",
])
def test_a_device_side_assert_is_not_claimed_to_pass_on_the_cpu(message: str) -> None:
    lanes, tagged = _draft(message, "loss = F.cross_entropy(logits, target)")
    assert _kinds(lanes) == ("unsupported", "reproduces", "unsupported") and not tagged
    assert "own message" in lanes["cpu"] and "widen the signature" in lanes["cpu"]


@pytest.mark.parametrize("message", [
    "CUDA error: out of memory",
    "CUDA error: an illegal memory access was encountered\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side "
    "assertions.",
    "CUDA error: invalid device ordinal\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.",
])
def test_other_cuda_errors_with_the_device_side_assertion_advice_keep_their_lanes(message: str) -> None:
    lanes, _ = _draft(message)
    assert lanes["cpu"] == "passes" and lanes["cuda"] == "reproduces"


@pytest.mark.parametrize("message", [
    "DataLoader worker (pid 4711) is killed by signal: Bus error. It is possible that dataloader's workers are out of "
    "shared memory. Please try to raise your shared memory limit.",
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
])
def test_dataloader_workers_out_of_shared_memory_give_every_lane_the_shm_reason(message: str) -> None:
    lanes, tagged = _draft(message, "data = next(iterator)")
    assert _kinds(lanes) == ("unsupported", "unsupported", "unsupported") and not tagged
    assert all("/dev/shm" in kind and "num_workers" in kind for kind in lanes.values())


@pytest.mark.parametrize("message", [
    "DataLoader worker (pid(s) 4711) exited unexpectedly",  # a worker killed for another cause (OOM, a segfault)
    "DataLoader worker (pid 4711) is killed by signal: Killed.",
    "Caught RuntimeError in DataLoader worker process 0.",
])
def test_other_dataloader_worker_deaths_are_not_read_as_shared_memory(message: str) -> None:
    lanes, _ = _draft(message, "data = next(iterator)")
    assert "/dev/shm" not in "".join(lanes.values())


def _cli_report(innermost: str, message: str) -> str:
    """A made-up report: a console script dispatched by click into a project's command, failing in ``innermost``."""
    return f"""Source: https://github.com/someorg/voicetool/issues/12
# train fails

```
Traceback (most recent call last):
  File "/home/u/env/bin/vtool", line 8, in <module>
    sys.exit(cli())
  File "/home/u/env/lib/python3.10/site-packages/click/core.py", line 1130, in __call__
    return self.main(*args, **kwargs)
  File "/home/u/env/lib/python3.10/site-packages/click/core.py", line 760, in invoke
    return __callback(*args, **kwargs)
  File "/home/u/env/lib/python3.10/site-packages/voicetool/__main__.py", line 140, in train
    load_checkpoint(path)
{innermost}
ValueError: {message}
```
"""


def _pins(text: str) -> str:
    draft = draft_case("made-up", parse_report(text))
    data = yaml.safe_load(draft.case_yaml)
    return " ".join([*data["requires"], *data["variants"]["buggy"]["requires"]])


def test_a_cli_dispatcher_between_the_console_script_and_the_project_is_not_pinned() -> None:
    pins = _pins(_cli_report('  File "/home/u/env/lib/python3.10/site-packages/voicetool/utils.py", line 9, in '
                             "load_checkpoint\n    raise ValueError(path)", "bad checkpoint"))
    assert "voicetool" in pins and "click" not in pins


def test_a_cli_dispatcher_that_raises_is_still_pinned() -> None:
    pins = _pins(_cli_report('  File "/home/u/env/lib/python3.10/site-packages/click/types.py", line 50, in '
                             "convert\n    self.fail(value)", "invalid choice"))
    assert "click" in pins
