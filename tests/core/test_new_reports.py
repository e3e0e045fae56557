"""Every kept report (tests/fixtures/new-reports/<case id>.txt) still drafts what its confirmed case says.

Each report is the real upstream text a catalogue case was started from with `new`. The draft's exception
class must be the case's, its signature must match the message the case's own signature was written for
(the case's signature is searched in the drafted one's source message), and the blamed distribution must be
pinned by the case's buggy variant: the fields a maintainer kept unedited stay right as `new` changes."""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from harness._exceptions import UsageError
from harness.authoring._bugreport import parse_report
from harness.authoring._draft import Draft, draft_case
from harness.cases._placeholders import MARK

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted((ROOT / "tests" / "fixtures" / "new-reports").glob("*.txt"))
# Reports with no exception line at all (a PR's prose, an issue describing the error in words): `new` drafts them
# with the class and the signature to fill in (the case was written by hand from the report).
# (accelerate-load-state-tied-weights' bare "Missing key(s) in state_dict: ..." line is torch's: drafted as RuntimeError)
NO_EXCEPTION_LINE = {"captum-feature-ablation-mask-device",
                     "torchmetrics-ssim-autocast-dtype", "transformers-interpret-explainer-moves-model"}


def _case(report: Path) -> dict:
    case_file = ROOT / "cases" / report.stem / "case.yaml"
    assert case_file.is_file(), f"{report.name}: no case {report.stem} in cases/ (a kept report names its case)"
    return yaml.safe_load(case_file.read_text())


def _buggy_names(case: dict) -> set[str]:
    pins = [*case.get("requires", []), *(p for v in case["variants"].values() if v["role"] == "buggy"
                                         for p in v.get("requires", []))]
    return {p.split("==")[0].split("[")[0].strip().lower().replace("_", "-") for p in pins if "==" in p}


def test_every_kept_report_names_a_case():
    assert len(REPORTS) >= 16
    for report in REPORTS:
        _case(report)


@pytest.mark.parametrize("report", REPORTS, ids=lambda p: p.stem)
def test_a_kept_report_still_drafts(report: Path):
    case = _case(report)
    if report.stem in NO_EXCEPTION_LINE:
        drafted = yaml.safe_load(draft_case(report.stem, parse_report(report.read_text()), report.name).case_yaml)
        assert drafted["exception"].startswith(MARK) and drafted["signature"].startswith(MARK)
        return
    draft = draft_case(report.stem, parse_report(report.read_text()), report.name)
    data = yaml.safe_load(draft.case_yaml)
    if case.get("exception") and data.get("exception"):
        assert data["exception"] == case["exception"], f"{report.name}: exception drafted {data['exception']}"
    assert data.get("signature"), f"{report.name}: no signature drafted"
    culprit = draft.culprit.lower().replace("_", "-")
    assert culprit == "torch" or culprit in _buggy_names(case), (
        f"{report.name}: blamed {draft.culprit!r}, the case's buggy pins are {sorted(_buggy_names(case))}")


# Report shapes `new` used to refuse although they name the exception (issue 21 §1: no refusal of a report with
# at least an exception line). Each is a real report; what a maintainer would keep from each.
NAMED_ONLY = {
    # raw markdown: <pre>AttributeError: &apos;OneCycleLR&apos; ...</pre>
    "mmengine-1401-raw-html.txt": ("AttributeError", "'OneCycleLR' object has no attribute 'end'", "mmengine"),
    # "Fix AttributeError: module 'torch.nn' has no attribute 'Layernorm' in vit_1d."
    "vit-pytorch-285-inline.txt": ("AttributeError", "module 'torch.nn' has no attribute 'Layernorm'", "vit-pytorch"),
    # IPython's "RuntimeError   Traceback (most recent call last)", cut before the message
    "tabnet-197-ipython-cut.txt": ("RuntimeError", None, "pytorch-tabnet"),
    "timm-913-ipython-cut.txt": ("RuntimeError", None, "timm"),
}


@pytest.mark.parametrize("name", sorted(NAMED_ONLY))
def test_a_report_that_only_names_its_exception_is_drafted(name: str):
    exception, message, library = NAMED_ONLY[name]
    report = parse_report((ROOT / "tests" / "fixtures" / "reports" / name).read_text())
    draft = draft_case("named", report, name)
    data = yaml.safe_load(draft.case_yaml)
    assert data["exception"].startswith(MARK) if exception == MARK else data["exception"] == exception
    if message is None:  # the report cut the message off: the signature is a placeholder, never a regex of nothing
        assert data["signature"].startswith("FILL-IN")
    else:
        assert re.search(data["signature"], message), data["signature"]
    assert draft.culprit == library
    assert report.missing and any("no exception line of its own" in n or "exception line at" in n for n in draft.notes)
    assert "device-placement" not in data.get("tags", [])  # none of these is a device error


def test_a_bug_template_bullet_gives_the_torch_release():
    """GitHub's bug template "Desktop" bullets (" - PyTorch 2.0.1 CUDA", no colon) name the versions the report ran."""
    report = parse_report((ROOT / "tests" / "fixtures" / "new-reports" / "timm-resample-patch-embed-device.txt")
                          .read_text())
    assert report.environment.pins["torch"].version == "2.0.1"
    assert "os" not in report.environment.pins  # " - OS: Debian" names no release


def test_a_project_the_index_does_not_have_is_pinned_by_commit():
    """Code run from its repository (TOOD has no release on any index): both variants draft a commit pin of the
    report's repository, not a release that does not exist. `new` asks the configured index; here a table."""
    report = parse_report((ROOT / "tests" / "fixtures" / "graded3" / "tood-8.txt").read_text())
    asked: list[str] = []
    draft = draft_case("tood", report, "tood-8.txt", released=lambda name: asked.append(name) or False)
    data = yaml.safe_load(draft.case_yaml)
    buggy = " ".join(data["variants"]["buggy"]["requires"])
    fix = " ".join(data["variants"]["fix"]["requires"])
    assert asked == ["tood"]
    assert "tood @ git+https://github.com/fcjian/TOOD@<commit>" in buggy and "git+https://github.com/fcjian/TOOD" in fix
    assert any("no project named tood" in note for note in draft.notes)
    kept = draft_case("tood", report, "tood-8.txt", released=lambda name: None)  # no answer: the release placeholder
    assert "tood==X.Y.Z" in " ".join(yaml.safe_load(kept.case_yaml)["variants"]["buggy"]["requires"])


def test_the_index_lookup_tells_a_released_project_from_a_missing_one():
    """`new`'s question to the configured index (the one cells install from): a 404 everywhere is "no"."""
    from harness.authoring._new import index_released

    released = index_released(deadline_s=20)
    known = released("timm")
    if known is None:
        pytest.skip("the configured package index did not answer (an offline host)")
    assert known is True
    assert released("repro-matrix-no-such-project-4f1c2") is False


def test_the_index_release_listing_gives_a_projects_releases_and_none_without_an_answer(monkeypatch):
    """`new`'s check of a stated release: the releases the configured index lists; an index that does not answer
    is None ("not checked"), never an empty listing that would make every release look missing."""
    from harness.authoring._new import index_versions

    listed = index_versions(deadline_s=20)("timm")
    if listed is None:
        pytest.skip("the configured package index did not answer (an offline host)")
    assert listed and all(isinstance(version, str) for version in listed)
    monkeypatch.setenv("UV_DEFAULT_INDEX", "http://127.0.0.1:9/simple")  # nothing listens on the discard port
    monkeypatch.setattr("harness.uv_index_environment", lambda: {})
    assert index_versions(deadline_s=2.0)("timm") is None


def test_the_index_metadata_lookup_reads_a_projects_urls():
    """`new`'s second question, for the issue's own project: the URLs the index's metadata gives (PyPI's peft
    names huggingface/peft); no answer is "not known"."""
    from harness.authoring._new import index_project_urls

    urls = index_project_urls(deadline_s=20)("peft")
    if urls is None:
        pytest.skip("the configured package index's metadata did not answer (an offline host, or no JSON API)")
    assert any("github.com/huggingface/peft" in url for url in urls), urls


# The fourth held-out set (tests/fixtures/graded4): real reports first drafted before `new` was changed on them
# (/work/notes/heldout.md has the strict before/after grading). Per report, what a maintainer keeps:
# (exception, a message the signature must match (None: the report has none: a placeholder), blamed distribution,
#  title start, per-lane expectation kinds, device-placement tag, buggy pin text, skeleton frame lines shown).
GRADED4 = ROOT / "tests" / "fixtures" / "graded4"
DEVICE = {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
# a device error on an XPU or an NPU: no lane has one
OTHER_ACCELERATOR = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}
ALL = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
# A Half/Float mismatch of an fp16 (GPU) run: cpu not claimed to reproduce, with a reason (fixlanes3)
FP16_LANES = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}
NO_KERNEL_LANES = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "unsupported"}
KERNEL = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "unsupported"}
NO_SIM = {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "unsupported"}
GPU_MODEL = {"cpu": "unsupported", "cuda": "unsupported", "cuda-sim": "unsupported"}
GPU_RUN = {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}  # a dtype error seen on a GPU
HELD_OUT_4 = {
    # [rank0]: traceback; the NCCL warning after the exception is a log record, not its message; a str device (every
    # lane: graded5 showed cpu fails too, where the call does not test for "cpu" first as torchrec's does)
    "torchrec-2624": ("AttributeError", "'str' object has no attribute 'type'", "torchrec", "torchrec shard: ", ALL,
                      True, "torchrec==X.Y.Z", 3),
    "deepspeed-6793": ("AssertionError", "no_sync context manager is incompatible with gradient partitioning logic of "
                       "ZeRO stage 3", "deepspeed", "deepspeed no_sync: ", ALL, False, "deepspeed==X.Y.Z", 1),
    # the REPL's flash_attn.__version__ gives the pin; the failing call is the CUDA extension flash_attn_cuda.fwd
    "flash-attention-915": ("RuntimeError", "FlashAttention only support fp16 and bf16 data type", "flash-attn",
                            "flash_attn _flash_attn_forward: ", KERNEL, False, "flash-attn==2.5.7", 3),
    "torchrl-1518": ("RuntimeError", "stack expects each tensor to be equal size, but got [1] at entry 0 and [] at "
                     "entry 1", "torchrl", "torchrl set_info_dict_reader: ", ALL, False, "torchrl==X.Y.Z", 0),
    "torchrl-3137": ("RuntimeError", "stack expects each tensor to be equal size, but got [] at entry 0 and [1] at "
                     "entry 6", "torchrl", "torchrl rollout: ", ALL, False, "torchrl==X.Y.Z", 1),
    # an 80-column console wrap: frames and the message rejoined
    "nnue-pytorch-16": ("MisconfigurationException", "ModelCheckpoint(save_last=True, monitor=None) is not a valid "
                        "configuration. You can save the last checkpoint with ModelCheckpoint(save_top_k=None, "
                        "monitor=None)", "pytorch-lightning",
                        "pytorch_lightning: ModelCheckpoint(save_last=True, monitor=None) is not a valid configuration",
                        ALL, False, "pytorch-lightning==X.Y.Z", 3),
    "bayesian-torch-27": ("RuntimeError", "module must have its parameters and buffers on device cuda:0 "
                          "(device_ids[0]) but found one of them on device: cpu", "bayesian-torch", "bayesian_torch "
                          "quantize: ", DEVICE, True,
                          "bayesian-torch @ git+https://github.com/IntelLabs/bayesian-torch@<commit>", 3),
    # one frame whose 'File "' the paste cut; a GPU-generation check no lane here can show
    "locate-3d-22": ("RuntimeError", "FlashAttention only supports Ampere GPUs or newer.", "flash-attn",
                     "flash_attn _flash_attn_varlen_forward: ", GPU_MODEL, False, "flash-attn==X.Y.Z", 1),
    # the class only, in the title; `yolo checks`' table gives torch and Python
    "ultralytics-17704": ("NotImplementedError", None, "ultralytics",
                          "ultralytics: NotImplementedError while trying to train YoloV8", ALL, False,
                          "ultralytics==X.Y.Z", 0),
    "xformers-489": ("NotImplementedError", "Could not run 'xformers::efficient_attention_forward_cutlass' with "
                     "arguments from the 'CUDA' backend. This could be because the operator doesn't exist for this backend, or "
                     "was omitted during the selective/custom build process", "xformers",
                     "xformers efficient_attention_forward_cutlass: Could not run 'xformers::efficient_attention_forward_cutlass' with arguments from the "
                     "'CUDA' backend.", NO_SIM, False, "xformers==X.Y.Z", 0),
    # a frame in a checkout named as the issue's repository: the project's own code, pinned by commit
    "crat-pred-2": ("AttributeError", "'Trainer' object has no attribute 'accelerator_backend'", "crat-pred",
                    "crat-pred on_train_epoch_start: ", ALL, False, "crat-pred @ git+https://github.com/schmidt-ju/"
                    "crat-pred@<commit>", 1),
    # no frame; the text links bitsandbytes' issue as the same bug and names bitsandbytes: blamed there; the title
    # names the API the prose writes as inline code (its lanes still miss the 8-bit CUDA path: a miss kept visible)
    "axolotl-1236": ("RuntimeError", "size mismatch", "bitsandbytes", "bitsandbytes Linear8bitLt: size mismatch", ALL,
                     False, "bitsandbytes==X.Y.Z", 0),
}
# The fifth set (tests/fixtures/graded5), first drafted after the fourth set's fixes; the same columns.
GRADED5 = ROOT / "tests" / "fixtures" / "graded5"
STR_DEVICE = "'str' object has no attribute 'type'"
HELD_OUT_5 = {
    # the version stated one per line in a comment's fence, torch's as `torch.__version__ == '2.0.1+cu117'`
    "e5-v-23": ("AssertionError", "no_sync context manager is incompatible with gradient partitioning logic of ZeRO "
                "stage 2", "deepspeed", "deepspeed no_sync: ", ALL, False, "deepspeed==0.16.0", 1),
    # a str device fails on every lane, the cpu one too (`.to('cpu')`)
    "k2-479": ("AttributeError", STR_DEVICE, "k2", "k2 to: ", ALL, True, "k2==X.Y.Z", 1),
    # PyPI's limix is github.com/limix/limix's, not the report's limix-ldm-ai/LimiX: commit pins
    "limix-32": ("AttributeError", STR_DEVICE, "limix", "limix predictor.py: ", ALL, True,  # the prose's file
                 "limix @ git+https://github.com/limix-ldm-ai/LimiX@<commit>", 0),
    # the message ends at the backtick closing the inline code; the prose path ffcv/pipeline/graph.py names ffcv
    "ffcv-324": ("AttributeError", STR_DEVICE, "ffcv", f"ffcv graph.py: {STR_DEVICE}", ALL, True, "ffcv==X.Y.Z", 0),
    # the pull request is the fix: its repository's code is the bug's; diffusers (the frame) stays a shared pin; the
    # fenced `model.generate(...)` names the API (fixshown)
    "pyramid-flow-55": ("AttributeError", STR_DEVICE, "pyramid-flow", "pyramid-flow generate: ", ALL, True,
                        "pyramid-flow @ git+https://github.com/jy0205/Pyramid-Flow@<commit>", 1),
    # flash-attn's messages come from CUDA-only kernels
    "veomni-250": ("RuntimeError", "FlashAttention only support fp16 and bf16 data type", "veomni", "veomni: ", KERNEL,
                   False, "veomni==X.Y.Z", 0),
    "unianimate-dit-40": ("RuntimeError", "FlashAttention only support fp16 and bf16 data type", "unianimate-dit",
                          "unianimate-dit DiTBlock: ", KERNEL, False,  # the class the prose names
                          "unianimate-dit @ git+https://github.com/ali-vilab/UniAnimate-DiT@<commit>", 0),
    # an exception quoted in prose ends at its closing quote; still blamed on the issue's repository, not on
    # deepspeed (no frame): a miss kept visible
    "wpo-4": ("AssertionError", "no_sync context manager is incompatible with gradient partitioning logic of ZeRO "
              "stage 3", "wpo", "wpo training: no_sync context manager is incompatible with gradient partitioning logic of "
              "ZeRO stage 3", ALL, False, "wpo @ git+https://github.com/wzhouad/WPO@<commit>", 0),
}
# The sixth set (tests/fixtures/graded6, expectations in its EXPECTED.md), first drafted after heldout2's prose-API
# change; these rows are the drafts after the fixes its misses led to (/work/notes/heldout2.md has both gradings).
GRADED6 = ROOT / "tests" / "fixtures" / "graded6"
HELD_OUT_6 = {
    # the frame that raised is the linked repository's checkout, called back by pytorch-ignite's egg frames
    "aes-lac-2018-5": ("AttributeError", "'Logger' object has no attribute 'DEBUG'", "aes-lac-2018",
                       "aes-lac-2018 _update: ", ALL, False,
                       "aes-lac-2018 @ git+https://github.com/igormq/aes-lac-2018@<commit>", 3),
    "efficientformer-21": ("RuntimeError", "Unknown model (efficientformer_l1)", "efficientformer",
                           "efficientformer Demo.py: Unknown model", ALL, False,
                           "efficientformer @ git+https://github.com/snap-research/EfficientFormer@<commit>", 0),
    # the VS Code panel's frames, innermost first, are read in Python's order (the one shown is trainer.fit's); the
    # prose's `1.5.10` of pytorch-lightning is not read: blamed the link's repository (a miss kept visible)
    "geolayoutlm-33": ("AttributeError", "'VIEDataModule' object has no attribute '_has_setup_TrainerFn.FITTING'",
                       "advancedliteratemachinery", "advancedliteratemachinery fit: 'VIEDataModule'", ALL, False,
                       "advancedliteratemachinery @ git+https://github.com/AlibabaResearch/AdvancedLiterateMachinery",
                       1),
    # the module ignite is PyPI's pytorch-ignite; only the report's own frames: the one that raised is shown
    "ignite-709": ("TypeError", "'Events' object is not callable", "pytorch-ignite", "ignite mnist.py: 'Events'", ALL, False,
                   "pytorch-ignite==X.Y.Z", 1),
    # a message's leading dunder kept; blamed fastai, the frames' library (the fix was the script's: a miss kept)
    "imagenet-fast-9": ("TypeError", "__init__() got an unexpected keyword argument 'sampler'", "fastai",
                        "fastai fit: __init__() got", ALL, False, "fastai==X.Y.Z", 3),
    "latent-composer-4": ("NameError", "name 'trainer' is not defined. Did you mean: 'Trainer'?",
                          "latent-composer-pytorch", "latent-composer-pytorch: name 'trainer'", ALL, False,
                          "latent-composer-pytorch @ git+https://github.com/aartykov/Latent-Composer-pytorch", 1),
    "person-reid-291": ("RuntimeError", "Unknown model (swin_base_patch4_window7_224)", "timm",
                        "timm create_model: ", ALL, False, "timm==0.3.2", 2),
    # blamed peft, the frames' library (SimpleTuner handed it None: a miss kept visible)
    "simpletuner-627": ("AttributeError", "'NoneType' object has no attribute 'peft_config'", "peft",
                        "peft get_peft_model_state_dict: ", ALL, False, "peft==X.Y.Z", 2),
    # frames in typographic quotes, unindented
    "textgen-710": ("UnboundLocalError", "local variable \u2018new_module\u2019 referenced before assignment", "peft",
                    "peft _find_and_replace: ", ALL, False, "peft==X.Y.Z", 3),
}
# The seventh set (tests/fixtures/graded7, expectations in its EXPECTED.md), graded held out on main 32e1495
# (/work/notes/heldout3.md); these rows are the drafts after heldout4's fixes by class, the misses still open kept.
GRADED7 = ROOT / "tests" / "fixtures" / "graded7"
SO = "/elsewhere/site-packages/selective_scan_cuda.cpython-3{}-x86_64-linux-gnu.so: undefined symbol: {}"
HELD_OUT_7 = {
    # the issue title's keyword argument is no API: no API named (the prose's "fused layernorm" is not read); PyPI's
    # apex is another project (its page is not NVIDIA's): commit pins of NVIDIA/apex
    # fixtitle: the title's subject "fusedlayernorm does not work ..." is the API (it was "apex: CUDA error")
    "apex-403": ("RuntimeError", "CUDA error: invalid configuration argument", "apex",
                 "apex fusedlayernorm: CUDA error", NO_SIM, False, "apex @ git+https://github.com/NVIDIA/apex@<commit>", 0),
    # the IPython notebook's frames (a Colab Drive path with a space) are read, but blame stays with the link's
    # fastprogress (course-v3's code passes the dropped argument: a judgement no text states; a miss kept visible)
    "fastprogress-51": ("TypeError", "init() got an unexpected keyword argument 'auto_update'", "fastprogress",
                        "fastprogress do_begin_epoch: init()", ALL, False, "fastprogress==X.Y.Z", 1),
    # the reporter's folders leave the signature: it matches the .so anywhere, with the whole symbol
    "mamba-318": ("ImportError", SO.format("12", "_ZN3c104cuda9SetDeviceEi"), "mamba-ssm",
                  "mamba-ssm: selective_scan_cuda", ALL, False, "mamba-ssm==X.Y.Z", 1),
    "mamba-704": ("ImportError", SO.format("10", "_ZN3c107WarningC1ESt7variantIJNS0_11UserWarningENS0_18Deprecation"
                                           "WarningEEERKNS_14SourceLocationESsb"), "mamba-ssm",
                  "mamba_ssm: selective_scan_cuda", ALL, False, "mamba-ssm==2.2.4", 2),
    # the one frame line, cut at its start ('/trl/trainer/grpo_trainer.py", line 269, in __init__'), is shown
    "medicalgpt-444": ("TypeError", "Trainer.__init__() got an unexpected keyword argument 'processing_class'",
                       "medicalgpt", "medicalgpt grpo_trainer.py: Trainer.__init__()", ALL, False,
                       "medicalgpt @ git+https://github.com/shibing624/MedicalGPT@<commit>", 1),
    # a message with no class anywhere: drafted, the class left to fill in (it was refused)
    "roboflow-notebooks-224": (MARK, "Trainer.__init__() got an unexpected keyword argument 'gpus'",
                               "notebooks", "roboflow/notebooks SegFormer.ipynb: Trainer.__init__()", ALL, False,
                               "notebooks @ git+https://github.com/roboflow/notebooks@<commit>", 0),
    "unsloth-2148": ("TypeError", "_unsloth_get_batch_samples() takes 3 positional arguments but 4 were given",
                     "unsloth", "unsloth _fast_inner_training_loop: ", ALL, False, "unsloth==X.Y.Z", 1),
    "unsloth-2576": ("TypeError", "GRPOConfig.__init__() got an unexpected keyword argument 'top_p'", "unsloth",
                     "unsloth: GRPOConfig", ALL, False, "unsloth==X.Y.Z", 0),
    # apex called from VideoSys (the issue is not apex's: its metadata is not compared), so a release placeholder
    # of PyPI's other apex (a miss kept visible)
    "videosys-113": ("RuntimeError", "memory format option is only supported by strided tensors", "apex",
                     "apex fused_layer_norm: ", KERNEL, False, "apex==X.Y.Z", 2),
}
# The eighth set (tests/fixtures/graded8, expectations in its EXPECTED.md), graded held out at 53/64 on heldout4's code
# (/work/notes/heldout4.md); these rows are the drafts after graded8fix's fixes by class.
GRADED8 = ROOT / "tests" / "fixtures" / "graded8"
SEEDABLE = "Accelerator.__init__() got an unexpected keyword argument 'use_seedable_sampler'"
HELD_OUT_8 = {
    # the exception written as its repr in prose (error:TypeError("...")): class and message read
    "deepspeech-697": ("TypeError", "Trainer.__init__() got an unexpected keyword argument 'num_processes'",
                       "deepspeech-pytorch", "deepspeech-pytorch: Trainer.__init__() got", ALL, False,
                       "deepspeech-pytorch @ git+https://github.com/SeanNaren/deepspeech.pytorch@<commit>", 0),
    # the API named in prose and called in an unfenced code line, never as inline code
    "diffusers-3630": ("RuntimeError", "Sizes of tensors must match except in dimension 1. Expected size 8 but got size "
                       "7 for tensor number 1", "diffusers", "diffusers UNet2DModel: Sizes of tensors", ALL, False,
                       "diffusers==0.16.1", 0),
    # the only library frame is a decorator's wrapper: the title names what the caller's line calls
    "dsi-1": ("TypeError", "__init__() got an unexpected keyword argument 'checkpoint_callback'", "pytorch-lightning",
              "pytorch_lightning Trainer: __init__() got", ALL, False, "pytorch-lightning==X.Y.Z", 2),
    # IPython's header names the class, the paste is cut before the message: the message is the issue title's
    "granite-tsfm-22": ("TypeError", SEEDABLE, "transformers",
                        f"transformers Trainer.create_accelerator_and_postprocess: {SEEDABLE}", ALL, False,
                        "transformers==X.Y.Z", 3),
    "instructlab-2542": ("TypeError", "__init__() got an unexpected keyword argument 'dispatch_batches'",
                         "transformers", "transformers create_accelerator_and_postprocess: __init__() got", ALL, False,
                         "transformers==X.Y.Z", 2),
    "llava-llama3-5": ("TypeError", SEEDABLE, "transformers",
                       f"transformers create_accelerator_and_postprocess: {SEEDABLE}", ALL, False,
                       "transformers==X.Y.Z", 3),
    "mmaudio-6": ("ModuleNotFoundError", "No module named 'timm.layers'", "timm", "timm: No module named 'timm.layers'",
                  ALL, False, "timm==X.Y.Z", 1),
    # the repository's own module file (from slip import ...; /src/slip.py) is not a distribution "slip"
    "pixray-95": ("AttributeError", "module 'timm.models' has no attribute 'registry'", "pixray",
                  "pixray: module 'timm.models' has no attribute 'registry'", ALL, False,
                  "pixray @ git+https://github.com/pixray/pixray@<commit>", 1),
}
# The ninth set (tests/fixtures/graded9, expectations in its EXPECTED.md), graded held out at 59/80 on main 4dbda18
# (/work/notes/graded9.md); these rows are the drafts after graded9fix's fixes by class.
GRADED9 = ROOT / "tests" / "fixtures" / "graded9"
PLACEMENT = "Expected all tensors to be on the same device, but found at least two devices"
ROI_ALIGN = ("Could not run 'torchvision::roi_align' with arguments from the 'CUDA' backend. 'torchvision::roi_align' is "
             "only available for these backends: [CPU, BackendSelect, Named, AutogradOther, AutogradCPU, AutogradCUDA, "
             "AutogradXLA, AutogradPrivateUse1, AutogradPrivateUse2, AutogradPrivateUse3, Tracer, Autocast, Batched, "
             "VmapMode].")
HELD_OUT_9 = {
    # a frameless reply: the class-level call its code makes names the API; "on version 0.23" is darts' release
    "darts-1446": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "darts",
                   "darts TFTModel.load_from_checkpoint: Expected all tensors", DEVICE, True, "darts==0.23", 0),
    # the title's v1.1.0 is a GitHub-only release (PyPI's newest is 0.1.0): commit pins of the repository
    "fish-speech-180": ("RuntimeError", "expected scalar type BFloat16 but found Float", "fish-speech",
                        "fish_speech apply_mel_scale: expected scalar type", ALL, False,
                        "the index has no fish-speech 1.1.0: pin the commit of its tag, e.g. \"fish-speech @ "
                        "git+https://github.com/fishaudio/fish-speech@<commit>\"", 1),
    "flair-1564": ("ValueError", "invalid literal for int() with base 10: '0+cu101'", "flair",
                   "flair load_language_model: invalid literal for int()", ALL, False, "flair==X.Y.Z", 3),
    # no frame; the message names torchvision's operator: torchvision's bug, roi_align its API; no CUDA kernel in the
    # build: cpu passes (L right since fixlanes)
    "gfpgan-6": ("RuntimeError", ROI_ALIGN, "torchvision", "torchvision roi_align: Could not run", NO_SIM, False,
                 "torchvision==X.Y.Z", 0),
    "imitation-870": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "imitation", "imitation train: Expected all",
                      DEVICE, True, "imitation==1.0.1", 1),
    "llama-cookbook-284": ("RuntimeError", "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half",
                           "llama-recipes", "llama_recipes train: expected mat1", GPU_RUN, False, "llama-recipes==X.Y.Z",
                           4),  # a dtype error seen on a GPU: the cpu lane is left unknown (graded9 accepts both)
    "pytorch-forecasting-247": ("AttributeError", "'list' object has no attribute 'device'", "pytorch-forecasting",
                                "pytorch_forecasting step: 'list' object", ALL, False, "pytorch-forecasting==0.8.0", 2),
    "speechbrain-2576": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0! (when checking argument for argument mat1 in "
                         "method wrapper_CUDA_addmm)", "speechbrain",
                         "speechbrain reset: Expected all", DEVICE, True,
                         "speechbrain @ git+https://github.com/speechbrain/speechbrain@<commit>", 2),
    # no class anywhere (an args tuple above a cut traceback): drafted (it was refused), torch's class for its known
    # message (fixframe3);
    # its printed versions line is read; the blame (torch's Adam, not tianshou) is a miss kept visible; a CUDA tensor
    # where a CPU one is taken: cpu passes (L right since fixlanes)
    "tianshou-681": ("AssertionError", "If capturable=False, state_steps should not be CUDA tensors.", "tianshou",
                     "tianshou sac_with_il_if: If capturable=False", DEVICE, True, "tianshou==0.4.8", 1),
    "torchaudio-2795": ("RuntimeError", "expected scalar type ComplexFloat but found Float", "torchaudio",
                        "torchaudio forward: expected scalar type", ALL, False, "torchaudio==X.Y.Z", 3),
}
# graded10 (tests/fixtures/graded10): drafted as below after graded10fix; megatron-lm-4013 (no class, no message
# anywhere) was refused, and is drafted from its frames alone since fixframe3.
GRADED10 = ROOT / "tests" / "fixtures" / "graded10"
REFUSED_10 = {"megatron-lm-4013"}
CPU_RUN = {"cpu": "reproduces", "cuda": "unsupported", "cuda-sim": "unsupported"}
HELD_OUT_10 = {
    # a script at the root of the repository's checkout, whose bundled environment installed whisper: alltalk's bug
    "alltalk-tts-536": ("RuntimeError", "expected scalar type Float but found Half", "alltalk-tts",
                        "alltalk-tts format_audio_list: expected scalar type", GPU_RUN, False,
                        "git+https://github.com/erew123/alltalk_tts@<commit>", 3),
    "conceptexpress-5": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu! (when checking argument for argument index in "
                         "method wrapper__index_select)", "conceptexpress", "conceptexpress training: Expected all",
                         DEVICE, True, "git+https://github.com/haoosz/ConceptExpress@<commit>", 0),
    "d3rlpy-329": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0!", "d3rlpy",
                   "d3rlpy create_discrete_q_function: Expected all", DEVICE, True, "d3rlpy==X.Y.Z", 0),
    "donut-141": ("RuntimeError", "expected scalar type BFloat16 but found Float", "donut",
                  "donut train: expected scalar type BFloat16 but found Float", CPU_RUN, False, "donut==X.Y.Z", 0),
    "ipex-llm-11681": ("RuntimeError", f"{PLACEMENT}, xpu:0 and cpu!", "ipex-llm", "ipex-llm: Expected all",
                       OTHER_ACCELERATOR, True, "ipex-llm==2.1.0b20240726", 0),
    "patchmatchnet-35": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "patchmatchnet",
                         "patchmatchnet train: Expected all", DEVICE, True,
                         "git+https://github.com/FangjinhuaWang/PatchmatchNet@<commit>", 0),
    "setfit-169": ("RuntimeError", "Expected all tensors to be on the same device", "setfit",
                   "setfit SetFitTrainer.train: Expected all", DEVICE, True, "setfit==X.Y.Z", 1),
    "streaming-sensevoice-3": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu! (when checking argument for argument "
                               "index in method wrapper_CUDA__index_select)", "streaming-sensevoice",
                               "streaming-sensevoice: Expected all", DEVICE, True,
                               "git+https://github.com/pengzhendong/streaming-sensevoice@<commit>", 0),
    # no class anywhere, a quoted part of torch's device message: completed to torch's wording and RuntimeError
    "tts-2184": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "tts", "tts train_step: Expected all", DEVICE, True,
                 "tts @ git+https://github.com/coqui-ai/TTS@<commit>", 3),
}
# graded11 (tests/fixtures/graded11): drafted as below after graded11fix (the repositories not on the index get commit
# placeholders: NOT_RELEASED).
BACKWARD_TWICE = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
                  "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
                  "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time "
                  "or if you need to access saved tensors after calling backward.")
GRADED11_DRAFTS = ROOT / "tests" / "fixtures" / "graded11"
GIT = "@ git+https://github.com/"
HELD_OUT_11 = {
    "colossalai-2834": ("AssertionError", "fp32 param and grad have different shape torch.Size([279245825]) vs "
                        "torch.Size([1025])", "colossalai", "colossalai step: fp32 param", GPU_RUN, False,
                        "colossalai==X.Y.Z", 2),
    "dgl-1594": ("RuntimeError", "Expected object of device type cuda but got device type cpu for argument #1 'self' in "
                 "call to _th_mm", "dgl", "dgl in_degrees: Expected object", DEVICE, True, "dgl==X.Y.Z", 0),
    "dsnerf-93": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "dsnerf", "dsnerf train: Expected all", DEVICE, True,
                  f"dsnerf {GIT}dunbar12138/DSNeRF@<commit>", 1),
    # the title's quoted exception ends the sentence's; the env bullet "espnet version: `espnet 0.9.5`" is the pin
    "espnet-2725": ("RuntimeError", "Format is invalid", "espnet", "espnet csmsc/tts1 training: Format is invalid", ALL, False,
                    "espnet==0.9.5", 0),
    # a quoted debugger dump, innermost first: the script's main calls accelerator.backward
    "moore-animateanyone-92": ("RuntimeError", BACKWARD_TWICE, "moore-animateanyone",
                               "moore-animateanyone accelerator.backward: Trying", ALL, False,
                               f"moore-animateanyone {GIT}MooreThreads/Moore-AnimateAnyone@<commit>", 1),
    # the setup's `pip install git+...nerfstudio.git@<sha>` is the pin; the launcher frames give the console command
    "nerfstudio-3222": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "nerfstudio", "nerfstudio ns-train: Expected",
                        DEVICE, True, f"nerfstudio {GIT}nerfstudio-project/nerfstudio@290f3fa028dc21da1a00dd9684e1a36c5"
                        "361452f", 3),
    # Lightning's `_run` in the checkout's own .venv, run by piper_train from piper-master: piper's (PyPI's piper is
    # another project, which these tables cannot say: a piper placeholder)
    "piper-779": ("RuntimeError", "DataLoader worker (pid(s) 700895) exited unexpectedly", "piper",
                  "piper fit: DataLoader worker", ALL, False, f"piper {GIT}rhasspy/piper@<commit>", 2),
    "rxn-yield-context-3": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu! (when checking argument for argument mat1 "
                            "in method wrapper_CUDA_addmm)", "rxn-yield-context", "rxn-yield-context fast use code: Expected all",
                            DEVICE, True, f"rxn-yield-context {GIT}Lung-Yi/rxn_yield_context@<commit>", 0),
    "sfa3d-48": ("KeyError", "'optimizer'", "sfa3d", "sfa3d main_worker: KeyError 'optimizer'", ALL, False,
                 f"sfa3d {GIT}maudzung/SFA3D@<commit>", 1),
    "threestudio-236": ("RuntimeError", "Expected all tensors to be on the same device", "threestudio",
                        "threestudio: Expected all", DEVICE, True,
                        f"threestudio {GIT}threestudio-project/threestudio@<commit>", 0),
    # /home/ljf/ljf/... is the user's folder, Time-LLM-main the repository's archive
    "time-llm-101": ("RuntimeError", "expected scalar type BFloat16 but found Float", "time-llm",
                     "time-llm forecast: expected scalar type", ALL, False,
                     f"time-llm {GIT}KimMeen/Time-LLM@<commit>", 1),
    # accelerate's launcher frames only: the [rank2] worker's failure is the linked project's
    "x-r1-21": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:2! (when checking argument for argument tensors in method "
                "wrapper_CUDA_cat)", "x-r1", "x-r1 api.py: Expected all", DEVICE, True, f"x-r1 {GIT}dhcode-cpp/X-R1@<commit>", 2),
}
# The index's (PyPI's) project URLs for names whose project is another's, as PyPI's JSON metadata gave them on
# 2026-11-29: the drafts' commit pins depend on them.
INDEX_URLS = {"apex": ("http://thesoftwarestudio.com/apex/",), "limix": ("https://github.com/limix/limix",),
              "cream": ("https://giordonstark.com.com",), "brats": (),  # PyPI's brats ("BraTS algorithms") links nowhere
              # graded14's, as pypi.org's JSON gave them to `new` on 2026-11-29 (openrlhf's and pyannote.audio's list
              # no URL; fairseq's name the repository's old owner, pytorch)
              "openrlhf": (), "pyannote-audio": (), "fairseq": ("https://github.com/pytorch/fairseq",),
              # graded15's, as pypi.org's JSON gave them to `new` on 2026-11-29 (cleanrl's lists no URL; PyPI's slime
              # is zhengp0's, not SLiMe's; PyPI's prollama, asked by fix15 on 2026-11-29, is softreck's, not ProLLaMA's)
              "cleanrl": (), "slime": ("https://github.com/zhengp0/SLIME",),
              "prollama": ("https://github.com/softreck/prollama", "https://prollama.dev"),
              # graded16's, as the index's JSON gave it to `new` on 2026-11-29 (PyPI's mase is another project)
              "mase": ("https://github.com/Marco-Christiani/MASE",),
              # PyPI's TTS is coqui-ai's (graded20's notes: the index's answer to `new`)
              "tts": ("https://github.com/coqui-ai/TTS",)}
# Names the index has no project of (pixray and deepspeech-pytorch: absent from this workplace's list of PyPI's
# packages, /work/.library/env/packages/pypi.tsv, whose "slip" is another project).
NOT_RELEASED = {"pixor", "explain-metric-learning", "heartmula", "heartmula-studio", "ace-step-1-5", "cotr", "egoplan",
                "stereo-transformer", "score-sde-pytorch", "tr-misr", "cogvideo", "dsnerf", "rxn-yield-context", "threestudio", "x-r1", "sfa3d", "time-llm", "moore-animateanyone",
                "piper-train", "conceptexpress", "patchmatchnet", "streaming-sensevoice", "alltalk-tts", "medicalgpt", "pixray", "deepspeech-pytorch", "notebooks", "crat-pred", "locate-3d", "pyramid-flow", "unianimate-dit", "wpo", "aes-lac-2018", "efficientformer",
                "advancedliteratemachinery", "latent-composer-pytorch",
                # graded13's checkouts (absent from /work/.library/env/packages/pypi.tsv)
                "srgan-pytorch", "face-transformer", "dreamartist-sd-webui-extension", "yolov5face-torchserve-tensorrt",
                "multigrain", "yolodet-pytorch", "lawgpt",
                # graded14's console-wrapped "site-packages/p" + "ytorch_lightning/..." (pypi.org: 404)
                "ytorch-lightning",
                # its checkout, blamed once the wrap is undone (fix14; pypi.org: 404)
                "imagecaptioning-pytorch",
                # graded15's checkouts (pypi.org: 404 to `new`)
                "t-gcn", "ta-lbf",
                # graded16's checkouts (the index: 404 to `new`)
                "stable-diffusion-webui-forge", "phrasenode", "transformer"}
# The releases the index has, where a draft's stated release is checked: fish-speech's newest on PyPI is 0.1.0 (this
# workplace's list of PyPI's packages, /work/.library/env/packages/pypi.tsv, which gives only the newest).
INDEX_VERSIONS = {"fish-speech": ("0.1.0",)}
# graded13 (tests/fixtures/graded13), held out: drafted as below on main 6052656 (EXPECTED.md's Results); the rows
# assert what is drafted now, known misses included (marked), so a change to any of them is seen.
GRADED13 = ROOT / "tests" / "fixtures" / "graded13"
TWO_GPUS = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}
HELD_OUT_13 = {
    "allennlp-4646": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "allennlp",
                      "allennlp bidirectional_lm_token_embedder: Expected all", DEVICE, True, "allennlp==X.Y.Z", 0),
    # no frame of boxmot's (torch's layer_norm only): the title names the script its command runs (titles branch)
    "boxmot-1820": ("RuntimeError", "expected scalar type Float but found Half", "boxmot", "boxmot track.py: expected",
                    FP16_LANES, False, "boxmot==X.Y.Z", 1),
    # the description's line, not the review note's (titles branch); PyPI's brats links no repository: commit pins;
    # the PR title's utils.py is the title's API. Known miss (S): no frame, the skeleton names nothing of utils.py
    "brats-10": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "brats", "brats utils.py: Expected all", DEVICE, True,
                 f"brats {GIT}cv-lee/BraTs@<commit>", 0),
    "cream-2": ("RuntimeError", f"{PLACEMENT}, cuda:2 and cpu!", "cream", "cream train_epoch: Expected all", DEVICE, True,
                f"cream {GIT}microsoft/Cream@<commit>", 3),
    # the title's "click train" is the run; the device check's wording is elided to fit 200 characters, its method kept
    "dreamartist-41": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu! (when checking argument for argument weight in "
                       "method wrapper__native_layer_norm_backward)", "dreamartist-sd-webui-extension",
                       "dreamartist-sd-webui-extension training: Expected all", DEVICE, True,
                       f"dreamartist-sd-webui-extension {GIT}IrisRainbowNeko/DreamArtist-sd-webui-extension@<commit>", 0),
    "face-transformer-37": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cuda:1! (when checking argument for argument index "
                            "in method wrapper_CUDA_scatter__value)", "face-transformer", "face-transformer: Expected all",
                            TWO_GPUS, True, f"face-transformer {GIT}zhongyy/Face-Transformer@<commit>", 0),
    # the one sentence's finetune.py is the run (titles branch)
    "lawgpt-60": ("RuntimeError", "expected scalar type Half but found Float", "lawgpt", "lawgpt finetune.py: expected",
                  FP16_LANES,
                  False, f"lawgpt {GIT}pengxiao-song/LaWGPT@<commit>", 0),
    # known miss (T): the bare load_state_dict
    "multigrain-4": ("AttributeError", "'str' object has no attribute 'items'", "multigrain",
                     "multigrain load_state_dict: 'str' object", ALL, False,
                     f"multigrain {GIT}facebookresearch/multigrain@a8e5bbfd5caeeaeb61631b63659a5381d1d3aed9", 3),
    # the package's loss.py forward, called only from the checkout's script, is named with its file (titles branch)
    "srgan-pytorch-22": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "srgan-pytorch",
                         "srgan-pytorch loss.py forward: Expected all", DEVICE, True,
                         f"srgan-pytorch {GIT}Lornatang/SRGAN-PyTorch@<commit>", 3),
    # the ERROR record's message (the logger's "Error in diarize: " dropped), the title's class; whisperlivekit's
    # installed diarize hands nemo the CPU chunk: blamed over nemo's get_features (titles branch)
    "whisperlivekit-197": ("RuntimeError", "Expected all tensors to be on the same device, but got mat2 is on cuda:0, "
                           "different from other tensors on cpu (when checking argument in method wrapper_CUDA_bmm)",
                           "whisperlivekit", "whisperlivekit diarize: Expected all", DEVICE, True,
                           "whisperlivekit==X.Y.Z", 3),
    "yolodet-pytorch-22": ("RuntimeError", "stack expects each tensor to be equal size, but got [3, 640, 640] at entry 0 "
                           "and [3, 1280, 1280] at entry 6", "yolodet-pytorch", "yolodet-pytorch collate: stack expects",
                           ALL, False, f"yolodet-pytorch {GIT}wuzhihao7788/yolodet-pytorch@<commit>", 2),
    # known miss (T): cut before the method, no API
    "yolov5face-torchserve-1": ("RuntimeError", f"{PLACEMENT}, cuda:1 and cuda:0! (when checking argument for argument "
                                "weight in method wrapper__cudnn_convolution)", "yolov5face-torchserve-tensorrt",
                                "yolov5face-torchserve-tensorrt: Expected all", TWO_GPUS, True,
                                f"yolov5face-torchserve-tensorrt {GIT}pallashadow/yolov5face_torchserve_tensorrt@<commit>",
                                0),
}
# graded14 (tests/fixtures/graded14), held out: drafted as below on main 9f5627b (EXPECTED.md's Results); the rows
# assert what is drafted now, known misses included (marked), so a change to any of them is seen.
GRADED14 = ROOT / "tests" / "fixtures" / "graded14"
HELD_OUT_14 = {
    # known miss (T): the bare backward (fix14: the title's " on a CPU" no longer in the signature)
    "accelerate-1420": ("RuntimeError", "Found dtype Float but expected BFloat16 on a CPU", "accelerate",
                        "accelerate backward: Found dtype", ALL, False, "accelerate==X.Y.Z", 3),
    # fix14: the copied detectron2 script the title names is blamed over Lightning's frames; the collect_env table's
    # Python row read; detectron2==0.6 pinned from that table (though pypi.org has no detectron2: 404)
    "detectron2-5078": ("TypeError", "TrainingModule.on_validation_epoch_end() missing 1 required positional argument: "
                        "'_outputs'", "detectron2", "detectron2 lightning_train_net.py train: TrainingModule", ALL, False, "detectron2==0.6", 3),
    "fairseq-986": ("RuntimeError", "Expected object of backend CPU but got backend CUDA for argument #4 'mat1'", "fairseq",
                    "fairseq train: Expected object", DEVICE, True, f"fairseq {GIT}facebookresearch/fairseq@<commit>", 0),
    # undone by fix14: the reply's console wrap; the relative tools/train_pl.py frame is the checkout's
    "imagecaptioning-pytorch-113": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cuda:1!", "imagecaptioning-pytorch",
                                    "imagecaptioning-pytorch validation_epoch_end: Expected all", TWO_GPUS, True,
                                    f"imagecaptioning-pytorch {GIT}ruotianluo/ImageCaptioning.pytorch@<commit>", 2),
    # fix14: the relative `mmaction/...` checkout frames blamed over mmcv's
    "mmaction2-1456": ("RuntimeError", PLACEMENT, "mmaction2", "mmaction2 forward_train: Expected all", DEVICE, True,
                       "mmaction2==X.Y.Z", 3),
    "mmengine-1538": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "mmengine", "mmengine resuming training: Expected all",
                      DEVICE, True, "mmengine==X.Y.Z", 0),  # fixtitle6: the CJK title's 恢复训练 (resume training)
    "openrlhf-325": ("RuntimeError", f"{PLACEMENT}, cuda:3 and cpu!", "openrlhf", "openrlhf train_ppo_llama: Expected all",
                     DEVICE, True, "openrlhf==X.Y.Z", 0),  # fix14: the URL-less entry is OpenRLHF's own
    # fix14: the URL-less index entry is the repository's (its owner is named after it): release placeholders;
    # the title's "Training fails" over torch's instance_norm
    "pyannote-audio-1538": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu! (when checking argument for argument weight in "
                            "method wrapper_CUDA__cudnn_batch_norm)", "pyannote-audio",
                            "pyannote-audio training: Expected all", DEVICE, True, "pyannote-audio==X.Y.Z", 1),
    # fix14: the listed package typing_extensions no longer taken for the API; the title's [Tune] label is the API
    "ray-33011": ("RuntimeError", "Expected all tensors to be on the same device", "ray",
                  "ray Tune: Expected all", DEVICE, True, "ray==2.3.0", 0),
    # fix14: the maintainer's "you can use trl==0.7.9" is the fix's pin; the title's "from 0.7.5 to 0.7.8" the buggy's
    "trl-1202": ("RuntimeError", "expected scalar type Float but found BFloat16", "trl", "trl DPOTrainer: expected scalar", ALL,
                 False, "trl==0.7.8", 0),
    # fix14: verl's checkout frames (its own package) keep the blame past ray's get_objects re-raise
    "verl-3669": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "verl", "verl fit: Expected all", DEVICE, True,
                  f"verl {GIT}verl-project/verl@<commit>", 2),
    # fix14: xturing's installed finetune frame blamed over lightning_fabric's; cpu passes
    "xturing-231": ("RuntimeError", "Lightning can't create new processes if CUDA is already initialized.",
                    "xturing", "xturing finetune: Lightning", {"cpu": "passes", "cuda": "reproduces"}, False,
                    "xturing==X.Y.Z", 3),
}
# graded15 (tests/fixtures/graded15), held out: drafted as below on main 2acab11 (EXPECTED.md's Results); the rows
# assert what is drafted now, known misses included (marked), so a change to any of them is seen.
GRADED15 = ROOT / "tests" / "fixtures" / "graded15"
FABRIC = ("You requested to find -1 devices but only 1 are currently available. The devices [] are occupied by other "
          "processes and can't be used at the moment.")
HELD_OUT_15 = {
    # known miss (S), held out; fix15 (not held out): the cut traceback's transformers frame no longer blamed over the
    # pinned linked project, and cuda-sim is unsupported for bitsandbytes' 8-bit kernels
    "bitsandbytes-392": ("RuntimeError", "expected scalar type BFloat16 but found Float", "bitsandbytes",
                         "bitsandbytes: expected", NO_KERNEL_LANES, False, "bitsandbytes==0.37.2", 1),
    # known miss (S): the PR's "Fix RuntimeError" line. The index's URL-less cleanrl is taken for another project
    # (commit pins: accepted). fix15 (not held out): the title's script, not "py", is the API
    "cleanrl-396": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "cleanrl",
                    "cleanrl rpo_continuous_action.py: Expected all", DEVICE,
                    True, f"cleanrl {GIT}vwxyzjn/cleanrl@<commit>", 0),
    # known miss (F): no "no fix known"; fix15 (not held out): coati's _train (the ColossalAI checkout) names the API,
    # not colossalai's wrapper forward
    "colossalai-6169": ("RuntimeError", "mat1 and mat2 must have the same dtype, but got Float and BFloat16",
                        "colossalai", "colossalai _train: mat1", ALL, False,
                        f"colossalai {GIT}hpcaitech/ColossalAI@<commit>", 3),
    # known miss (T): no "num_devices=-1"/"default" decoration; fix15 (not held out): the cut "and c" copy's message is
    # taken whole from the report's earlier copy
    "lightning-16816": ("RuntimeError", FABRIC, "lightning-fabric", "lightning_fabric find_usable_cuda_devices: You",
                        ALL, False, "lightning-fabric==X.Y.Z", 2),
    # known miss (T): the script, not the LoRA/int8 decoration; fix15 (not held out): "peft 0.2.0/peft 0.3.0.dev0" read,
    # cpu and cuda-sim unsupported for the 8-bit run
    "peft-175": ("RuntimeError", "expected scalar type Half but found Float", "peft",
                 "peft clm_finetune_peft_imdb.py: expected", NO_KERNEL_LANES, False, "peft==0.2.0", 0),
    # fix15 (not held out): the checkout's copy of peft (ProLLaMA-main/peft/) above a cut traceback is ProLLaMA's
    "prollama-15": ("RuntimeError", "expected scalar type BFloat16 but found Float", "prollama",
                    "prollama generate: expected", ALL, False, f"prollama {GIT}PKU-YuanGroup/ProLLaMA@<commit>", 3),
    # known miss (S): the quoted torch.where line not in the skeleton; fix15 (not held out): the line the prose quotes
    # as failing names the API, not "training"
    "slime-7": ("RuntimeError", "expected scalar type float but found long int", "slime",
                "slime pixel_weights: expected",
                ALL, False, f"slime {GIT}aliasgharkhani/SLiMe@<commit>", 0),
    "spacy-partial-tagger-25": ("RuntimeError", "Expected all tensors to be on the same device", "spacy-partial-tagger",
                                "spacy-partial-tagger: Expected all", DEVICE, True, "spacy-partial-tagger==X.Y.Z", 0),
    # known miss (S): the frame quoted inline in prose (best_epoch.py line 51) not in the skeleton; fix15 (not held
    # out): its function is named with its file in the title
    "t-gcn-56": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "t-gcn",
                 "t-gcn best_epoch.py on_validation_batch_end: Expected all",
                 DEVICE, True, f"t-gcn {GIT}lehaifeng/T-GCN@<commit>", 0),
    # fix15 (not held out): attack_one.py's <listcomp> frame names the script in the title; the fix placeholder says the
    # reply's "replacing labels_cuda"
    "ta-lbf-2": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "ta-lbf", "ta-lbf attack_one.py: Expected all", DEVICE,
                 True,
                 f"ta-lbf {GIT}jiawangbai/TA-LBF@<commit>", 2),
}
# graded16 (tests/fixtures/graded16), held out: drafted as below on main 0df96df (EXPECTED.md's Results); the rows
# assert what is drafted now, known misses included (marked), so a change to any of them is seen.
GRADED16 = ROOT / "tests" / "fixtures" / "graded16"
EINOPS = ("Error while processing rearrange-reduction pattern \"(b f) d c -> (b d) f c\". Input tensor shape: "
          "torch.Size([2, 6144, 320]). Additional info: {'f': 16}. Shape mismatch, can't divide axis of length 2 in chunks "
          "of 16")
NUMPY_CUDA = "can't convert CUDA tensor to numpy. Use Tensor.cpu() to copy the tensor to host memory first."
HELD_OUT_16 = {
    # known misses: T (no CLIP call; fixtitle: the title's "FID clip" subject, not CLIP's call); S's `import cleanfid` and F (the reply's "resolved in the latest release
    # 0.1.32") right after fix16
    "clean-fid-41": ("RuntimeError", f"{PLACEMENT}, cpu and cuda:0! (when checking argument for argument weight in method "
                     "wrapper___slow_conv2d_forward)", "clean-fid", "cleanfid FID clip: Expected all",
                     {"cpu": "unsupported", "cuda": "reproduces", "cuda-sim": "reproduces"}, True,
                     "clean-fid==X.Y.Z", 0),
    # known misses: P, F (a didi-instruct placeholder, not a commit pin), T; B (the bare metrics.py frame keeps the
    # linked repository) and V (the bullet's "PyTorch 2.4.x") right after fix16
    "didi-instruct-1": ("RuntimeError", "Expected all tensors to be on the same device, but found cuda:0 and cpu!",
                        "didi-instruct", "didi-instruct NLL.update: Expected all", DEVICE, True,
                        f"didi-instruct {GIT}haoyangzheng-ai/didi-instruct@<commit>", 1),
    "fastai-4007": ("RuntimeError", f"{PLACEMENT}, cuda:1 and cuda:0!", "fastai", "fastai encodes: Expected all", TWO_GPUS,
                    True, "fastai==X.Y.Z", 3),
    # known misses: T (the sysinfo JSON's pip_packages key as the API; fixtitle: apply_model, the cause kept), P (the
    # sysinfo's Commit not read), S; V (its Python and torch_version) right after fix16
    "forge-621": ("EinopsError", EINOPS, "stable-diffusion-webui-forge", "stable-diffusion-webui-forge apply_model: Error",
                  ALL, False,
                  f"stable-diffusion-webui-forge {GIT}lllyasviel/stable-diffusion-webui-forge@"
                  "5bea443d94f3a85f819cb8541c1bba0aac208d83", 2),
    "mase-40": ("AttributeError", "'tuple' object has no attribute 'model'", "mase", "mase transform.py transform: 'tuple' object",
                ALL, False, f"mase {GIT}DeepWok/mase@<commit>", 1),
    "mmdeploy-682": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "mmdeploy", "mmdeploy: Expected all", DEVICE, True,
                     "mmdeploy==X.Y.Z", 0),
    # known misses: T and S (the script's seed_everything import as the API; fixtitle: the command's train.py, S
    # speaker_reco); P and F (nemo-toolkit) right after fix16
    "nemo-2712": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "nemo-toolkit", "nemo train.py: Expected all",
                  DEVICE, True, "nemo-toolkit==X.Y.Z", 0),
    # known misses: T (the middle frame _process_examples; fixtitle: encoding.py forward); L, D and V (torch 1.3.1, not the 1.1.0 a question asks
    # about) right after fix16
    "phrasenode-2": ("TypeError", NUMPY_CUDA, "phrasenode", "phrasenode encoding.py forward (np.isfinite): can't convert",
                     DEVICE, True,
                     f"phrasenode {GIT}stanfordnlp/phrasenode@<commit>", 4),
    # known misses (after fix16): P and F (py4cast==X.Y.Z, not a commit pin of the checkout), T (no climate_means)
    "py4cast-6": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "py4cast",
                  "py4cast metrics.py update: Expected all", DEVICE, True, f"py4cast {GIT}meteofrance/py4cast@<commit>", 3),
    "transformer-samlynnevans-30": ("RuntimeError", f"{PLACEMENT}, cuda:0 and cpu!", "transformer",
                                    "SamLynnEvans/Transformer create_masks: Expected all", DEVICE, True,
                                    f"transformer {GIT}SamLynnEvans/Transformer@<commit>", 1),
}
HELD_OUT = {**{(GRADED4, name): row for name, row in HELD_OUT_4.items()},
            **{(GRADED5, name): row for name, row in HELD_OUT_5.items()},
            **{(GRADED6, name): row for name, row in HELD_OUT_6.items()},
            **{(GRADED7, name): row for name, row in HELD_OUT_7.items()},
            **{(GRADED8, name): row for name, row in HELD_OUT_8.items()},
            **{(GRADED9, name): row for name, row in HELD_OUT_9.items()},
            **{(GRADED10, name): row for name, row in HELD_OUT_10.items()},
            **{(GRADED11_DRAFTS, name): row for name, row in HELD_OUT_11.items()},
            **{(GRADED13, name): row for name, row in HELD_OUT_13.items()},
            **{(GRADED14, name): row for name, row in HELD_OUT_14.items()},
            **{(GRADED15, name): row for name, row in HELD_OUT_15.items()},
            **{(GRADED16, name): row for name, row in HELD_OUT_16.items()}}


def _graded(folder: Path, name: str):
    report = parse_report((folder / f"{name}.txt").read_text())
    draft = draft_case(name, report, f"{name}.txt", released=lambda dist: dist not in NOT_RELEASED,
                       project_urls=lambda dist: INDEX_URLS.get(dist),  # None: not answered
                       versions=lambda dist: INDEX_VERSIONS.get(dist))
    return draft, yaml.safe_load(draft.case_yaml)


def test_the_fourth_and_fifth_held_out_sets_are_complete():
    assert sorted(p.stem for p in GRADED4.glob("*.txt")) == sorted(HELD_OUT_4)
    assert sorted(p.stem for p in GRADED5.glob("*.txt")) == sorted(HELD_OUT_5)
    assert sorted(p.stem for p in GRADED6.glob("*.txt")) == sorted(HELD_OUT_6)
    assert sorted(p.stem for p in GRADED7.glob("*.txt")) == sorted(HELD_OUT_7)
    assert sorted(p.stem for p in GRADED8.glob("*.txt")) == sorted(HELD_OUT_8)
    assert sorted(p.stem for p in GRADED9.glob("*.txt")) == sorted(HELD_OUT_9)
    assert sorted(p.stem for p in GRADED10.glob("*.txt")) == sorted([*HELD_OUT_10, *REFUSED_10])


@pytest.mark.parametrize(("folder", "name"), sorted(HELD_OUT), ids=lambda value: getattr(value, "name", value))
def test_a_held_out_report_drafts_what_a_maintainer_keeps(folder: Path, name: str):
    assert_drafted(*_graded(folder, name), HELD_OUT[folder, name])


def assert_drafted(draft: Draft, data: dict[str, Any], row: tuple[Any, ...]) -> None:
    """A HELD_OUT row: exception, a message the signature matches, blamed, title start, lanes, tag, pin, frames shown."""
    exception, message, blamed, title, lanes, device, pin, shown = row
    assert data["exception"].startswith(MARK) if exception == MARK else data["exception"] == exception
    if message is None:
        assert data["signature"].startswith("FILL-IN")
    else:
        assert re.search(data["signature"], message), data["signature"]
    assert draft.culprit == blamed
    assert data["title"].startswith(title), data["title"]
    expect = data["variants"]["buggy"]["expect"]
    assert {lane: expect[lane].split(":")[0] for lane in lanes} == lanes
    assert ("device-placement" in data["tags"]) is device
    assert pin in " ".join(data["variants"]["buggy"]["requires"])
    assert sum(line.startswith("    #   File") for line in draft.repro_py.splitlines()) == shown


def test_versions_a_report_states_outside_a_listing_are_read():
    """A REPL's `x.__version__` answer, a bug template's "### Python Version" heading, `yolo checks`' table."""
    assert parse_report((GRADED4 / "flash-attention-915.txt").read_text()).environment.pins["flash-attn"].version \
        == "2.5.7"
    assert parse_report((GRADED4 / "axolotl-1236.txt").read_text()).environment.python == "3.10"
    e5v = parse_report((GRADED5 / "e5-v-23.txt").read_text()).environment
    assert (e5v.python, e5v.pins["torch"].version, e5v.pins["deepspeed"].version) == ("3.9.18", "2.0.1+cu117", "0.16.0")
    ultralytics = parse_report((GRADED4 / "ultralytics-17704.txt").read_text()).environment
    assert (ultralytics.python, ultralytics.pins["torch"].version) == ("3.11.6", "2.5.1+cu124")
    assert ultralytics.pins["torchvision"].version == "0.20.1"


def test_a_console_wrap_is_undone_only_where_a_frame_shows_it():
    from harness.authoring._bugreport import unwrap_console

    wrapped = ['  File "C:\\a\\b\\' + "c" * 60, '_d.py", line 3, in f', "x" * 73, "y"]
    assert unwrap_console(wrapped) == ['  File "C:\\a\\b\\' + "c" * 60 + '_d.py", line 3, in f', "", "x" * 73, "y"]
    prose = ["x" * 73, "y"]  # lines of one width, no cut frame: a paragraph, left alone
    assert unwrap_console(prose) == prose


@pytest.mark.parametrize("name", ["flash-attention-915", "torchrec-2624", "nnue-pytorch-16"])
def test_validate_refuses_a_filled_draft_that_still_cannot_run(name: str, tmp_path: Path):
    """Issue 21 §1: validate passes no draft that cannot run. On real drafts: the skeleton's raise kept with its
    mark edited away, and a buggy variant that pins another library than the one the skeleton imports."""
    from harness._exceptions import CaseFileError
    from harness.authoring._new import create_case
    from harness.cases._load import load_case
    from tests.core.test_new import fill_in

    written = create_case(name, tmp_path, GRADED4 / f"{name}.txt", released=lambda dist: True)
    with pytest.raises(CaseFileError, match="placeholder"):
        load_case(written.folder)  # as drafted: its FILL-INs
    fill_in(written.folder)
    load_case(written.folder)  # filled in honestly, it loads
    repro = written.folder / "repro.py"
    filled = repro.read_text()
    repro.write_text(filled.replace("pass  # the author's call", 'raise NotImplementedError("call the library")'))
    with pytest.raises(CaseFileError, match="still raises the skeleton's NotImplementedError"):
        load_case(written.folder)
    repro.write_text(filled)
    case_file = written.folder / "case.yaml"
    data = yaml.safe_load(case_file.read_text())
    data["variants"]["buggy"]["requires"] = ["scikit-learn==1.4.2"]  # the table knows it installs sklearn only
    case_file.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CaseFileError, match=r"variant 'buggy' does not pin [\w-]+, yet repro\.py imports"):
        load_case(written.folder)


# graded8 scored against what a maintainer keeps (its EXPECTED.md, accepted alternatives included), not against what
# `new` drafts: per report, (title regex, exception, message, accepted blamed distributions, buggy pin text, fix
# text (None: the blamed one's placeholder or commit pin), python the report ran (None: none read)). The 8 fields of
# the rubric T E M B P F L V; the floor is the count measured after graded8fix (53 held out, before the fixes).
MAINTAINER_8 = {
    "deepspeech-697": (r"^deepspeech[.-]pytorch(?: Trainer)?: Trainer\.__init__\(\) got an unexpected keyword argument "
                       r"'num_processes'$", "TypeError", "Trainer.__init__() got an unexpected keyword argument "
                       "'num_processes'", {"deepspeech-pytorch"}, "git+https://github.com/SeanNaren/deepspeech.pytorch@",
                       None, None),
    "diffusers-3630": (r"^diffusers (?:UNet2DModel|forward): Sizes of tensors must match except in dimension 1\b",
                       "RuntimeError", "Sizes of tensors must match except in dimension 1. Expected size 8 but got size 7"
                       " for tensor number 1", {"diffusers"}, "diffusers==0.16.1", None, None),
    "dsi-1": (r"^(?:pytorch_lightning|pytorch-lightning|transformer-memory-as-a-differentiable-search-index)"
              r"(?: Trainer)?: __init__\(\) got an unexpected keyword argument 'checkpoint_callback'$", "TypeError",
              "__init__() got an unexpected keyword argument 'checkpoint_callback'",
              {"pytorch-lightning", "transformer-memory-as-a-differentiable-search-index"}, "", None, "3.8"),
    "granite-tsfm-22": (rf"^(?:transformers|accelerate)(?: [\w.]+)?: {re.escape(SEEDABLE)}$", "TypeError", SEEDABLE,
                        {"transformers", "accelerate"}, "", None, None),
    "instructlab-2542": (r"^(?:transformers|instructlab)(?: [\w.]+)?: __init__\(\) got an unexpected keyword argument "
                         r"'dispatch_batches'$", "TypeError",
                         "__init__() got an unexpected keyword argument 'dispatch_batches'",
                         {"transformers", "instructlab"}, "", None, "3.9"),
    "llava-llama3-5": (rf"^(?:transformers|accelerate)(?: [\w.]+)?: {re.escape(SEEDABLE)}$", "TypeError", SEEDABLE,
                       {"transformers", "accelerate"}, "", None, "3.10"),
    "mmaudio-6": (r"^(?:ComfyUI-MMAudio|comfyui-mmaudio|timm)(?: \w+)?: No module named 'timm\.layers'$",
                  "ModuleNotFoundError", "No module named 'timm.layers'", {"comfyui-mmaudio", "timm"}, "", None, None),
    "pixray-95": (r"^pixray(?: \w+)?: module 'timm\.models' has no attribute 'registry'$", "AttributeError",
                  "module 'timm.models' has no attribute 'registry'", {"pixray"},
                  "git+https://github.com/pixray/pixray@", "git+https://github.com/pixray/pixray", None),
}
GRADED8_FLOOR = 64  # of 64: 53 held out (heldout4's code); 62 after graded8fix's four classes, 64 with the fifth


def _maintainer_fields(name: str) -> dict[str, bool]:
    title, exception, message, blamed, pin, fix, python = MAINTAINER_8[name]
    draft, data = _graded(GRADED8, name)
    buggy = " ".join(data["variants"]["buggy"]["requires"])
    fixed = " ".join(data["variants"]["fix"]["requires"])
    notes = " ".join(draft.notes)
    mine = draft.culprit in blamed
    return {
        "T": bool(re.search(title, data["title"])),
        "E": data["exception"] == exception,
        "M": not data["signature"].startswith(MARK) and bool(re.search(data["signature"], message)),
        "B": mine,
        "P": mine and (pin in buggy if pin else re.search(rf"{draft.culprit}(?:==| @ git\+)", buggy) is not None),
        "F": mine and (fix in fixed if fix else re.search(rf"{draft.culprit}(?:==| @ git\+)", fixed) is not None),
        "L": all(kind.split(":")[0] == "reproduces" for kind in data["variants"]["buggy"]["expect"].values()),
        # the path's pythonX.Y is optional (the rubric's V): wrong only when a version is read that the run did not have
        "V": "the report ran torch" not in notes and ("the report ran Python" not in notes
                                                      or f"the report ran Python {python}" in notes),
    }


def _scored(rows: dict[str, dict[str, bool]]) -> tuple[int, str]:
    """Fields right and the printed table (one row per report, + or - per field)."""
    right = sum(sum(row.values()) for row in rows.values())
    width = max(map(len, rows)) + 1
    table = "\n".join(f"{name:{width}}" + " ".join("+" if ok else "-" for ok in row.values()) for name, row in rows.items())
    print(f"\n{'report':{width}}T E M B P F L V\n{table}\n{right}/{len(rows) * 8} fields right")
    return right, table


def test_the_eighth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields(name) for name in sorted(MAINTAINER_8)})
    assert sorted(MAINTAINER_8) == sorted(HELD_OUT_8)
    assert right >= GRADED8_FLOOR, table


# graded9/EXPECTED.md's accepted values: title, exception, message, blamed projects, buggy pin (None: a placeholder
# naming the project, or its commit pin), fix pin (None: likewise), lanes (cpu and cuda: the kinds accepted), the
# torch version the report states (None: none may be read), the Python versions accepted and whether one is required.
DEV_LANES = {"cpu": {"passes"}, "cuda": {"reproduces"}}
ALL_LANES = {"cpu": {"reproduces"}, "cuda": {"reproduces"}}
GPU_LANES = {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}
MAINTAINER_9 = {
    "darts-1446": (rf"^darts (?:TFTModel(?:\.load_from_checkpoint)?|fit): {PLACEMENT}, cuda:0 and cpu!$", "RuntimeError",
                   f"{PLACEMENT}, cuda:0 and cpu!", {"darts"}, "darts==0.23", None, DEV_LANES, None, (), False),
    "fish-speech-180": (r"^(?:fish-speech|fish_speech) apply_mel_scale: expected scalar type BFloat16 but found Float$",
                        "RuntimeError", "expected scalar type BFloat16 but found Float", {"fish-speech"},
                        "git+https://github.com/fishaudio/fish-speech@", "git+https://github.com/fishaudio/fish-speech",
                        GPU_LANES, "2.3.0", ("3.11", "3.10"), False),
    "flair-1564": (r"^flair (?:FlairEmbeddings|load_language_model|__init__): invalid literal for int\(\) with base 10: "
                   r"'0\+cu101'$", "ValueError", "invalid literal for int() with base 10: '0+cu101'", {"flair"}, None,
                   None, ALL_LANES, None, (), False),
    "gfpgan-6": (r"^torchvision roi_align: Could not run 'torchvision::roi_align' with arguments from the 'CUDA' "
                 r"backend\.", "RuntimeError", ROI_ALIGN, {"torchvision"}, None, None, DEV_LANES, None, (), False),
    "imitation-870": (rf"^imitation (?:BC|train|__call__|loss)[\w. ]*: {PLACEMENT}, cuda:0 and cpu!$", "RuntimeError",
                      f"{PLACEMENT}, cuda:0 and cpu!", {"imitation"}, "imitation==1.0.1", None, DEV_LANES, None,
                      ("3.9",), True),
    "llama-cookbook-284": (r"^(?:llama-recipes|llama_recipes) (?:train|main|finetuning): expected mat1 and mat2 to have "
                           r"the same dtype, but got: float != c10::Half$", "RuntimeError",
                           "expected mat1 and mat2 to have the same dtype, but got: float != c10::Half", {"llama-recipes"},
                           None, None, GPU_LANES, None, (), False),
    "pytorch-forecasting-247": (r"^(?:pytorch-forecasting|pytorch_forecasting) (?:step|TemporalFusionTransformer|"
                                r"pack_padded_sequence): 'list' object has no attribute 'device'$", "AttributeError",
                                "'list' object has no attribute 'device'", {"pytorch-forecasting"},
                                "pytorch-forecasting==0.8.0", None, ALL_LANES, "1.7.1", ("3.8.3", "3.8"), True),
    "speechbrain-2576": (rf"^speechbrain (?:transcribe_file|reset_scorer_mem|reset|transcribe_batch): {PLACEMENT}, cpu "
                         r"and cuda:0! \(when checking argument for argument mat1 in method wrapper_CUDA_addmm\)$",
                         "RuntimeError", f"{PLACEMENT}, cpu and cuda:0! (when checking argument for argument mat1 in "
                         "method wrapper_CUDA_addmm)", {"speechbrain"}, None, None, DEV_LANES, None, (), False),
    "tianshou-681": (r"^torch (?:Adam(?:\.step)?|step): If capturable=False, state_steps should not be CUDA tensors\.?$",
                     "AssertionError", "If capturable=False, state_steps should not be CUDA tensors.", {"torch"},
                     "torch==1.12.0", "torch==1.12.1", DEV_LANES, "1.12.0", ("3.8.8", "3.8"), True),
    "torchaudio-2795": (r"^torchaudio (?:MelSpectrogram|MelScale|forward): expected scalar type ComplexFloat but found "
                        r"Float$", "RuntimeError", "expected scalar type ComplexFloat but found Float", {"torchaudio"},
                        None, None, ALL_LANES, None, (), False),
}
HERE_PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"  # a Python read equal to it is noted nowhere
# of 80: 59 held out (main 4dbda18), 61 on main 6847807; 73 after graded9fix, 75 after fixlanes, 76 after fixframe3
GRADED9_FLOOR = 76
# (not held out)


def _maintainer_fields_9(name: str) -> dict[str, bool]:
    return _maintainer_row(GRADED9, name, MAINTAINER_9[name])


def _maintainer_row(folder: Path, name: str, row: tuple) -> dict[str, bool]:
    """The 8 fields of one report against its accepted values (MAINTAINER_9's columns)."""
    title, exception, message, blamed, pin, fix, lanes, torch, pythons, python_required = row
    draft, data = _graded(folder, name)
    buggy = " ".join(data["variants"]["buggy"]["requires"])
    fixed = " ".join(data["variants"]["fix"]["requires"])
    notes = " ".join(draft.notes)
    mine = draft.culprit in blamed
    placeholder = rf"{draft.culprit}(?:==| @ git\+)"
    expect = data["variants"]["buggy"]["expect"]
    # notes name a Python only when it differs from this machine's; a version read equal to it is written nowhere
    python_read = re.search(r"the report ran Python (\S+);", notes)
    return {
        "T": bool(re.search(title, data["title"])),
        "E": data["exception"] == exception,
        "M": not data["signature"].startswith(MARK) and bool(re.search(data["signature"], message)),
        "B": mine,
        "P": mine and (pin in buggy if pin else re.search(placeholder, buggy) is not None),
        "F": mine and (fix in fixed if fix else re.search(placeholder, fixed) is not None),
        "L": all(expect[lane].split(":")[0] in kinds for lane, kinds in lanes.items()),
        "V": (f"the report ran torch {torch}" in notes if torch else "the report ran torch" not in notes)
        and ((python_read is None and (not python_required or HERE_PYTHON in pythons))
             or (python_read is not None and python_read[1] in pythons)),
    }


def test_the_ninth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields_9(name) for name in sorted(MAINTAINER_9)})
    assert sorted(MAINTAINER_9) == sorted(HELD_OUT_9)
    assert right >= GRADED9_FLOOR, table


@pytest.mark.parametrize("name", sorted(REFUSED_10))
def test_a_held_out_report_with_no_class_and_no_message_drafts_its_frames_inventing_no_message(name: str):
    """Refused when graded (scored 0 either way); drafted since fixframe3 from the cut traceback's frames, the class
    and the signature left to fill in (no message invented: the title is a question)."""
    draft, data = _graded(GRADED10, name)
    assert data["exception"].startswith(MARK) and data["signature"].startswith(MARK)
    assert draft.repro_py.count("    #   File") > 0


# graded10/EXPECTED.md's accepted values, as MAINTAINER_9's columns. Titles: the project's name is matched without
# case (the draft writes the distribution, "patchmatchnet", where the expectation writes "PatchmatchNet"), the API
# and message as written there. A refused report scores 0 on every field.
CPU_OR_NOT = {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}
ON_CPU = {"cpu": {"reproduces"}, "cuda": {"passes", "unsupported"}}
XPU_LANES = {"cpu": {"passes"}, "cuda": {"reproduces", "unsupported"}}
TWO_AT = "Expected all tensors to be on the same device, but found at least two devices, "
MAINTAINER_10 = {
    "alltalk-tts-536": (r"^(?i:alltalk[_-]tts) (?:format_audio_list|finetune|preprocess_dataset|transcribe): expected "
                        r"scalar type Float but found Half$", "RuntimeError", "expected scalar type Float but found Half",
                        {"alltalk-tts"}, "git+https://github.com/erew123/alltalk_tts@",
                        "git+https://github.com/erew123/alltalk_tts", CPU_OR_NOT, None, ("3.11",), False),
    "conceptexpress-5": (rf"^(?i:conceptexpress) (?:training|train): {re.escape(TWO_AT)}cuda:0 and cpu! \(when checking "
                         r"argument for argument index in method wrapper__index_select\)$", "RuntimeError",
                         f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument index in method "
                         "wrapper__index_select)", {"conceptexpress"}, "git+https://github.com/haoosz/ConceptExpress@",
                         "git+https://github.com/haoosz/ConceptExpress", DEV_LANES, None, (), False),
    "d3rlpy-329": (rf"^d3rlpy (?:create_discrete_q_function|DiscreteCQLConfig\.create|compute_output_size): "
                   rf"{re.escape(TWO_AT)}cpu and cuda:0!$", "RuntimeError", f"{TWO_AT}cpu and cuda:0!", {"d3rlpy"}, None,
                   None, DEV_LANES, None, (), False),
    "donut-141": (r"^(?:donut|donut-python) train: expected scalar type BFloat16 but found Float$", "RuntimeError",
                  "expected scalar type BFloat16 but found Float", {"donut", "donut-python", "transformers"},
                  "donut-python", "transformers==4.25.1", ON_CPU, None, (), False),
    "ipex-llm-11681": (rf"^ipex-llm (?:all-in-one|benchmark)[^:]*: {re.escape(TWO_AT)}xpu:0 and cpu!$", "RuntimeError",
                       f"{TWO_AT}xpu:0 and cpu!", {"ipex-llm"}, "ipex-llm==2.1.0b20240726", None, XPU_LANES, None, (),
                       False),
    "megatron-lm-4013": (r"^$", "", "", set(), None, None, {}, None, (), False),
    "patchmatchnet-35": (rf"^(?i:patchmatchnet) (?:train|loss|smooth_l1_loss)[\w. ]*: {re.escape(TWO_AT)}cuda:0 and "
                         r"cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"patchmatchnet"},
                         "git+https://github.com/FangjinhuaWang/PatchmatchNet@",
                         "git+https://github.com/FangjinhuaWang/PatchmatchNet", DEV_LANES, "1.8.1", (), False),
    "setfit-169": (r"^setfit (?:SetFitTrainer(?:\.train)?|SetFitModel[\w.]*|unfreeze|train): Expected all tensors to be "
                   r"on the same device$", "RuntimeError", "Expected all tensors to be on the same device", {"setfit"},
                   None, None, DEV_LANES, None, ("3.8",), False),
    "streaming-sensevoice-3": (rf"^streaming[-_]sensevoice: {re.escape(TWO_AT)}cuda:0 and cpu! \(when checking argument "
                               r"for argument index in method wrapper_CUDA__index_select\)$", "RuntimeError",
                               f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument index in method "
                               "wrapper_CUDA__index_select)", {"streaming-sensevoice"}, None,
                               "git+https://github.com/pengzhendong/streaming-sensevoice@c077bf1ce37ea6530c84d175f0a02ae"
                               "c8d31d51a", DEV_LANES, None, (), False),
    "tts-2184": (rf"^(?i:tts) (?:Tacotron2\.train_step|train_step|TacotronCapacitronTrainTest|criterion)[^:]*: "
                 rf"{re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"tts"}, None,
                 None, DEV_LANES, None, ("3.8",), False),
}
# of 80: 47 held out (main eda7f17, this scorer); 70 after graded10fix, 72 after fixframe3 (not held out)
GRADED10_FLOOR = 72


def _maintainer_fields_10(name: str) -> dict[str, bool]:
    try:
        return _maintainer_row(GRADED10, name, MAINTAINER_10[name])
    except UsageError:
        return dict.fromkeys("TEMBPFLV", False)  # refused: 0 on every field


def test_the_tenth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields_10(name) for name in sorted(MAINTAINER_10)})
    assert sorted(MAINTAINER_10) == sorted([*HELD_OUT_10, *REFUSED_10])
    assert right >= GRADED10_FLOOR, table


# graded11/EXPECTED.md's accepted values, as MAINTAINER_9's columns (judgement calls as EXPECTED.md graded them: a bare
# method of an accepted API is right, "colossalai step", "dgl in_degrees", "dsnerf train").
GRADED11 = ROOT / "tests" / "fixtures" / "graded11"
NOT_ON_CPU = {"cpu": {"unsupported"}, "cuda": {"reproduces"}}
MAINTAINER_11 = {
    "colossalai-2834": (r"^(?i:colossalai) (?:ChatGPT reward model|RewardModelTrainer\.fit|LowLevelZeroOptimizer\.step|"
                        r"step)[^:]*: fp32 param and grad have different shape", "AssertionError",
                        "fp32 param and grad have different shape torch.Size([279245825]) vs torch.Size([1025])",
                        {"colossalai"}, None, None, NOT_ON_CPU, None, ("3.8",), False),
    "dgl-1594": (r"^dgl (?:DGLGraph\.)?in_degrees[^:]*: Expected object of device type cuda but got device type cpu for "
                 r"argument #1 'self' in call to _th_mm$", "RuntimeError", "Expected object of device type cuda but got "
                 "device type cpu for argument #1 'self' in call to _th_mm", {"dgl", "dgl-cu102"}, None, None,
                 DEV_LANES, None, (), False),
    "dsnerf-93": (rf"^(?i:dsnerf) (?:run_nerf\.py )?train[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                  f"{TWO_AT}cuda:0 and cpu!", {"dsnerf"}, "git+https://github.com/dunbar12138/DSNeRF@",
                  "git+https://github.com/dunbar12138/DSNeRF", DEV_LANES, None, ("3.10",), False),
    "espnet-2725": (r"^espnet [^:]*(?:csmsc|tts1|training)[^:]*: Format is invalid$", "RuntimeError", "Format is invalid",
                    {"espnet"}, "espnet==0.9.5", None, ALL_LANES, "1.7.0", ("3.7.9", "3.7"), True),
    "moore-animateanyone-92": (r"^(?i:moore-animateanyone) (?:train_stage_1|accelerator\.backward|backward)[^:]*: Trying "
                               r"to backward through the graph a second time", "RuntimeError", BACKWARD_TWICE,
                               {"moore-animateanyone"}, "git+https://github.com/MooreThreads/Moore-AnimateAnyone@",
                               "git+https://github.com/MooreThreads/Moore-AnimateAnyone", GPU_LANES, None, (), False),
    "nerfstudio-3222": (r"^nerfstudio (?:ns-train|Trainer\.train|VanillaPipeline\.get_eval_image_metrics_and_images|"
                        rf"splatfacto|eval)[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                        f"{TWO_AT}cuda:0 and cpu!", {"nerfstudio"},
                        "git+https://github.com/nerfstudio-project/nerfstudio@290f3fa028dc21da1a00dd9684e1a36c5361452f",
                        None, CPU_OR_NOT, "2.0.1", ("3.10.12", "3.10"), True),
    "piper-779": (r"^(?i:piper[_-]train|piper) (?:trainer\.fit|fit)[^:]*: DataLoader worker \(pid\(s\) "
                  r"700895\) exited unexpectedly$", "RuntimeError", "DataLoader worker (pid(s) 700895) exited unexpectedly",
                  {"piper", "piper-train"}, "git+https://github.com/rhasspy/piper@", "git+https://github.com/rhasspy/piper",
                  {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"}}, None, ("3.10",), False),
    "rxn-yield-context-3": (rf"^(?i:rxn[_-]yield[_-]context) (?:evaluation_utils|fast use)[^:]*: {re.escape(TWO_AT)}cuda:0 "
                            r"and cpu! \(when checking argument for argument mat1 in method wrapper_CUDA_addmm\)$",
                            "RuntimeError", f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument mat1 in "
                            "method wrapper_CUDA_addmm)", {"rxn-yield-context"},
                            "git+https://github.com/Lung-Yi/rxn_yield_context@",
                            "git+https://github.com/Lung-Yi/rxn_yield_context", DEV_LANES, None, (), False),
    "sfa3d-48": (r"^(?i:sfa3d) (?:train\.py|main_worker)[^:]*: (?:KeyError )?'optimizer'", "KeyError", "'optimizer'",
                 {"sfa3d"}, "git+https://github.com/maudzung/SFA3D@", "git+https://github.com/maudzung/SFA3D", ALL_LANES,
                 None, (), False),
    "threestudio-236": (r"^threestudio (?:example|launch(?:\.py)?|training)[^:]*: Expected all tensors to be on the same "
                        r"device$", "RuntimeError", "Expected all tensors to be on the same device", {"threestudio"},
                        "git+https://github.com/threestudio-project/threestudio@",
                        "git+https://github.com/threestudio-project/threestudio", CPU_OR_NOT, "2.0.1", ("3.0",), False),
    "time-llm-101": (r"^(?i:time-llm) (?:TimeLLM\.forecast|forecast|TokenEmbedding|Embed\.py|patch_embedding)[^:]*: "
                     r"expected scalar type BFloat16 but found Float$", "RuntimeError",
                     "expected scalar type BFloat16 but found Float", {"time-llm"},
                     "git+https://github.com/KimMeen/Time-LLM@", "git+https://github.com/KimMeen/Time-LLM", GPU_LANES,
                     "1.12.1", (), False),
    "x-r1-21": (rf"^(?i:x-r1) [^:]*(?:GRPO|grpo|train)[^:]*: {re.escape(TWO_AT)}cpu and cuda:2! \(when checking argument "
                r"for argument tensors in method wrapper_CUDA_cat\)$", "RuntimeError", f"{TWO_AT}cpu and cuda:2! (when "
                "checking argument for argument tensors in method wrapper_CUDA_cat)", {"x-r1", "trl"},
                "git+https://github.com/dhcode-cpp/X-R1@", "git+https://github.com/dhcode-cpp/X-R1", CPU_OR_NOT, None,
                ("3.11",), False),
}
GRADED11_FLOOR = 94  # of 96: 73 held out (main bbee29f, this scorer; 72 by hand), 91 after graded11fix, 93 after
# fixpins (piper-779's checkout run pinned by commit; not held out), 94 after fixrest (colossalai-2834's torchrun lanes)


def test_the_eleventh_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_row(GRADED11, name, row) for name, row in sorted(MAINTAINER_11.items())})
    assert sorted(MAINTAINER_11) == sorted(HELD_OUT_11) == sorted(p.stem for p in GRADED11.glob("*.txt"))
    assert right >= GRADED11_FLOOR, table


# graded12/EXPECTED.md's accepted values, as MAINTAINER_9's columns (a tuple of pins: any of them is accepted). Titles
# as EXPECTED.md's strict grading: the project's own API or run (a bare method of an accepted API is right, as graded11's
# "colossalai step"); torch's method where the project's function is accepted is wrong (score-sde-pytorch).
GRADED12 = ROOT / "tests" / "fixtures" / "graded12"
HUB = "git+https://github.com/"
MAINTAINER_12 = {
    "ace-step-1.5-308": (rf"^(?i:ace-step-1[.-]5) (?:tensor preprocessing|preprocess)[^:]*: {re.escape(TWO_AT)}cpu and "
                         r"cuda:0!", "RuntimeError", f"{TWO_AT}cpu and cuda:0! (when checking argument for argument index "
                         "in method wrapper_CUDA__index_select)", {"ace-step-1-5", "ace-step-1.5"},
                         f"{HUB}ace-step/ACE-Step-1.5@", f"{HUB}ace-step/ACE-Step-1.5", DEV_LANES, None, (), False),
    "audiocraft-209": (rf"^audiocraft MultiBandDiffusion[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                       f"{TWO_AT}cuda:0 and cpu!", {"audiocraft"}, None, None, DEV_LANES, None, (), False),
    "cogvideo-775": (r"^(?i:cogvideo) (?:finetune|trainer|Trainer\.train|train|clip_grad_norm_)[^:]*: Attempting to "
                     r"unscale FP16 gradients\.?$", "ValueError", "Attempting to unscale FP16 gradients.", {"cogvideo"},
                     f"{HUB}zai-org/CogVideo@", f"{HUB}zai-org/CogVideo", GPU_LANES, None, ("3.10",), False),
    "cotr-15": (rf"^(?i:cotr) (?:tools/)?train_occ(?:\.py)?[^:]*: {re.escape(TWO_AT)}cuda:1 and cpu!$", "RuntimeError",
                f"{TWO_AT}cuda:1 and cpu!", {"cotr"}, f"{HUB}NotACracker/COTR@", f"{HUB}NotACracker/COTR", CPU_OR_NOT,
                None, ("3.8",), False),
    "egoplan-15": (rf"^(?i:egoplan) (?:train\.py|train)\b(?!ing)[^:]*: {re.escape(TWO_AT)}", "RuntimeError",
                   f"{TWO_AT}cuda:3 and cuda:0! (when checking argument for argument index in method "
                   "wrapper_CUDA__index_select)", {"egoplan"}, f"{HUB}ChenYi99/EgoPlan@", f"{HUB}ChenYi99/EgoPlan",
                   CPU_OR_NOT, None, (), False),
    "explain-metric-learning-1": (rf"^(?i:explain[_-]metric[_-]learning) (?:Face_Verification|demo)[^:]*: "
                                  rf"{re.escape(TWO_AT)}cuda:0 and cpu!", "RuntimeError", f"{TWO_AT}cuda:0 and cpu! (when "
                                  "checking argument for argument weight in method wrapper__native_batch_norm_backward)",
                                  {"explain-metric-learning"}, f"{HUB}Jeff-Zilence/Explain_Metric_Learning@",
                                  f"{HUB}Jeff-Zilence/Explain_Metric_Learning", DEV_LANES, None, (), False),
    "heartmula-studio-32": (rf"^(?i:heartmula-studio) _embed_tokens[^:]*: {re.escape(TWO_AT)}cpu and cuda:0!",
                            "RuntimeError", f"{TWO_AT}cpu and cuda:0! (when checking argument for argument index in "
                            "method wrapper_CUDA__index_select)", {"heartmula", "heartmula-studio"},
                            f"{HUB}fspecii/HeartMuLa-Studio@", f"{HUB}fspecii/HeartMuLa-Studio", DEV_LANES, None,
                            ("3.10",), False),
    "lerobot-1377": (r"^lerobot (?:lerobot/scripts/)?train(?:\.py)?[^:]*: Expected all tensors to be on the same device$",
                     "RuntimeError", "Expected all tensors to be on the same device", {"lerobot"},
                     (f"{HUB}huggingface/lerobot@a5727e37b4ff405f9d8de424e07dcc441aa2c82f", "lerobot==0.1.0"), None,
                     CPU_OR_NOT, "2.7.1", ("3.10.18", "3.10"), True),
    "pixor-6": (r"^(?i:pixor) evaluate_model(?:\.py)?[^:]*: Input type \(torch\.cuda\.FloatTensor\) and weight type "
                r"\(torch\.FloatTensor\) should be the same$", "RuntimeError", "Input type (torch.cuda.FloatTensor) and "
                "weight type (torch.FloatTensor) should be the same", {"pixor"}, f"{HUB}matssteinweg/PIXOR@",
                f"{HUB}matssteinweg/PIXOR", DEV_LANES, None, ("3.6",), False),
    "score-sde-pytorch-63": (r"^(?i:score[_-]sde[_-]pytorch) restore_checkpoint[^:]*: loaded state dict contains a "
                             r"parameter group", "ValueError", "loaded state dict contains a parameter group that doesn't "
                             "match the size of optimizer's group", {"score-sde-pytorch"},
                             f"{HUB}yang-song/score_sde_pytorch@", f"{HUB}yang-song/score_sde_pytorch", ALL_LANES, None,
                             ("3.8",), False),
    "stereo-transformer-58": (r"^stereo-transformer (?:main\.py|main|resume|(?:optimizer\.)?load_state_dict)[^:]*: "
                              r"loaded state dict contains a parameter group that doesn't match the size of optimizer's "
                              r"group$", "ValueError", "loaded state dict contains a parameter group that doesn't match "
                              "the size of optimizer's group", {"stereo-transformer"}, f"{HUB}mli0603/stereo-transformer@",
                              f"{HUB}mli0603/stereo-transformer", ALL_LANES, None, ("3.7",), False),
    "tr-misr-3": (r"^(?i:tr-misr) collateFunction[^:]*: stack expects each tensor to be equal size, but got \[24, 32, 64\] "
                  r"at entry 0 and \[24, 64, 32\] at entry 1$", "RuntimeError", "stack expects each tensor to be equal "
                  "size, but got [24, 32, 64] at entry 0 and [24, 64, 32] at entry 1", {"tr-misr"}, f"{HUB}Suanmd/TR-MISR@",
                  f"{HUB}Suanmd/TR-MISR", ALL_LANES, None, (), False),
}
GRADED12_FLOOR = 93  # of 96: 61 held out (main 31388e4, this scorer; 61 by hand), 91 after graded12fix, 93 after titles
# (frameless titles name what the report's words say ran: MultiBandDiffusion, Face_Verification; not held out)


def _maintainer_fields_12(name: str, folder: Path = GRADED12, table: dict[str, tuple] = MAINTAINER_12) -> dict[str, bool]:
    title, exception, message, blamed, pins, *rest = table[name]
    try:
        if not isinstance(pins, tuple):
            return _maintainer_row(folder, name, table[name])
        rows = [_maintainer_row(folder, name, (title, exception, message, blamed, pin, *rest)) for pin in pins]
        return {field: any(row[field] for row in rows) for field in rows[0]}
    except UsageError:
        return dict.fromkeys("TEMBPFLV", False)  # refused: 0 on every field


def test_the_twelfth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields_12(name) for name in sorted(MAINTAINER_12)})
    assert sorted(MAINTAINER_12) == sorted(p.stem for p in GRADED12.glob("*.txt"))
    assert right >= GRADED12_FLOOR, table


# graded13/EXPECTED.md's accepted values, as MAINTAINER_12's columns, graded strictly as its Results: a title's
# decoration the expectation writes is required (allennlp's crf_tagger), a bare method of an accepted API is wrong
# (multigrain load_state_dict), the caller instead of the fixed function is wrong (srgan-pytorch train_gan).
TWO_GPU_LANES = {"cpu": {"passes"}, "cuda": {"unsupported"}}
MAINTAINER_13 = {
    "allennlp-4646": (rf"^(?i:allennlp(?:-models)?) [^:]*crf_tagger[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!?$",
                      "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"allennlp", "allennlp-models"},
                      (None, "allennlp==1.1.0"), None, DEV_LANES, None, (), False),
    "boxmot-1820": (r"^boxmot (?:track\.py|CLIP ?ReID|clip)[^:]*: expected scalar type Float but found Half$",
                    "RuntimeError", "expected scalar type Float but found Half", {"boxmot"}, None, None, GPU_LANES, None,
                    (), False),
    "brats-10": (rf"^(?i:brats) (?:Update )?utils\.py[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                 f"{TWO_AT}cuda:0 and cpu!", {"brats"}, f"{HUB}cv-lee/BraTs@", f"{HUB}cv-lee/BraTs", DEV_LANES, None, (),
                 False),
    "cream-2": (rf"^(?i:cream) (?:tools/train\.py|train\.py|resume|train_epoch)[^:]*: {re.escape(TWO_AT)}cuda:[12] and "
                r"cpu!$", "RuntimeError", f"{TWO_AT}cuda:2 and cpu!", {"cream"}, f"{HUB}microsoft/Cream@",
                f"{HUB}microsoft/Cream", DEV_LANES, None, (), False),
    "dreamartist-41": (rf"^(?i:dreamartist-sd-webui-extension) train[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu! \(when "
                       r"checking argument for argument weight in method wrapper__native_layer_norm_backward\)$",
                       "RuntimeError", f"{TWO_AT}cuda:0 and cpu! (when checking argument for argument weight in method "
                       "wrapper__native_layer_norm_backward)", {"dreamartist-sd-webui-extension"},
                       f"{HUB}IrisRainbowNeko/DreamArtist-sd-webui-extension@",
                       f"{HUB}IrisRainbowNeko/DreamArtist-sd-webui-extension", DEV_LANES, None, (), False),
    "face-transformer-37": (rf"^(?i:face-transformer) train[^:]*: {re.escape(TWO_AT)}cuda:0 and cuda:1! \(when checking "
                            r"argument for argument index in method wrapper_CUDA_scatter__value\)$", "RuntimeError",
                            f"{TWO_AT}cuda:0 and cuda:1! (when checking argument for argument index in method "
                            "wrapper_CUDA_scatter__value)", {"face-transformer"}, f"{HUB}zhongyy/Face-Transformer@",
                            f"{HUB}zhongyy/Face-Transformer", TWO_GPU_LANES, None, (), False),
    "lawgpt-60": (r"^(?i:lawgpt) finetune(?:\.py)?[^:]*: expected scalar type Half but found Float$", "RuntimeError",
                  "expected scalar type Half but found Float", {"lawgpt"}, f"{HUB}pengxiao-song/LaWGPT@",
                  f"{HUB}pengxiao-song/LaWGPT", GPU_LANES, None, (), False),
    "multigrain-4": (r"^multigrain (?:checkpoints?\.resume|resume|MultiOptim\.load_state_dict)[^:]*: 'str' object has no "
                     r"attribute 'items'$", "AttributeError", "'str' object has no attribute 'items'", {"multigrain"},
                     f"{HUB}facebookresearch/multigrain@", f"{HUB}facebookresearch/multigrain", ALL_LANES, None, (),
                     False),
    "srgan-pytorch-22": (rf"^(?i:srgan-pytorch) (?:content loss|ContentLoss|loss\.py|forward)[^:]*: {re.escape(TWO_AT)}"
                         r"cuda:0 and cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"srgan-pytorch"},
                         f"{HUB}Lornatang/SRGAN-PyTorch@", f"{HUB}Lornatang/SRGAN-PyTorch", DEV_LANES, None, (), False),
    "whisperlivekit-197": (r"^(?i:whisperlivekit) [^:]*diarize[^:]*: Expected all tensors to be on the same device, but "
                           r"got mat2 is on cuda:0", "RuntimeError", "Expected all tensors to be on the same device, but "
                           "got mat2 is on cuda:0, different from other tensors on cpu (when checking argument in method "
                           "wrapper_CUDA_bmm)", {"whisperlivekit"}, None, None, DEV_LANES, None, (), False),
    "yolodet-pytorch-22": (r"^yolodet-pytorch (?:collate|build_dataloader(?:\.py)?)[^:]*: stack expects each tensor to be "
                           r"equal size, but got \[3, 640, 640\] at entry 0 and \[3, 1280, 1280\] at entry 6$",
                           "RuntimeError", "stack expects each tensor to be equal size, but got [3, 640, 640] at entry 0 "
                           "and [3, 1280, 1280] at entry 6", {"yolodet-pytorch"}, f"{HUB}wuzhihao7788/yolodet-pytorch@",
                           f"{HUB}wuzhihao7788/yolodet-pytorch", ALL_LANES, None, (), False),
    "yolov5face-torchserve-1": (rf"^(?i:yolov5face[_-]torchserve[_-]tensorrt)[^:]*: {re.escape(TWO_AT)}cuda:1 and cuda:0! "
                                r"\(when checking argument for argument weight in method wrapper__cudnn_convolution\)$",
                                "RuntimeError", f"{TWO_AT}cuda:1 and cuda:0! (when checking argument for argument weight "
                                "in method wrapper__cudnn_convolution)", {"yolov5face-torchserve-tensorrt"},
                                f"{HUB}pallashadow/yolov5face_torchserve_tensorrt@",
                                f"{HUB}pallashadow/yolov5face_torchserve_tensorrt", TWO_GPU_LANES, None, (), False),
}
GRADED13_FLOOR = 91  # of 96: 78 held out (main 6052656, this scorer; 78 by hand, strict); 91 after the titles branch's
# classes (logged error records, reply notes, link-less index names, an installed caller's device mix, titles; not held out)


def test_the_thirteenth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields_12(name, GRADED13, MAINTAINER_13) for name in sorted(MAINTAINER_13)})
    assert sorted(MAINTAINER_13) == sorted(HELD_OUT_13) == sorted(p.stem for p in GRADED13.glob("*.txt"))
    assert right >= GRADED13_FLOOR, table


# graded14/EXPECTED.md's accepted values, as MAINTAINER_12's columns, graded strictly as its Results: a title's
# decoration the expectation writes is required (openrlhf's ZeRO-3 PPO, fairseq's --restore-file), the project's name
# before torch's function is wrong (pyannote-audio instance_norm), and a signature that stops inside a word is wrong
# (imagecaptioning's "but foun": the console wrap not undone).
ANY_CUDA = {"cpu": {"passes"}, "cuda": {"unsupported", "reproduces"}}
MAINTAINER_14 = {
    "accelerate-1420": (r"^accelerate Accelerator\.backward[^:]*bf16[^:]*: Found dtype Float but expected BFloat16$",
                        "RuntimeError", "Found dtype Float but expected BFloat16", {"accelerate"}, None, None,
                        {"cpu": {"reproduces"}}, None, ("3.8",), False),
    "detectron2-5078": (r"^detectron2 (?:tools/)?lightning_train_net(?:\.py)? [^:]*on_validation_epoch_end[^:]*"
                        r"(?:pytorch_lightning|pytorch-lightning|Lightning) 2[^:]*: (?:TrainingModule\."
                        r"on_validation_epoch_end\(\) )?missing 1 required positional argument: '_outputs'$", "TypeError",
                        "TrainingModule.on_validation_epoch_end() missing 1 required positional argument: '_outputs'",
                        {"detectron2"}, None, None, ALL_LANES, "2.0.0+cu117", ("3.10.12",), True),
    "fairseq-986": (r"^fairseq train(?:\.py)? --restore-file[^:]*: Expected object of backend CPU but got backend CUDA for "
                    r"argument #4 'mat1'$", "RuntimeError",
                    "Expected object of backend CPU but got backend CUDA for argument #4 'mat1'", {"fairseq"}, None,
                    None, DEV_LANES, None, (), False),
    "imagecaptioning-pytorch-113": (rf"^(?i:imagecaptioning[.-]pytorch) [^:]*validation_epoch_end[^:]*: "
                                    rf"{re.escape(TWO_AT)}cuda:0 and cuda:1!$", "RuntimeError",
                                    f"{TWO_AT}cuda:0 and cuda:1!", {"imagecaptioning-pytorch", "imagecaptioning.pytorch"},
                                    "pytorch-lightning==1.1.", None, TWO_GPU_LANES, None, ("3.7",), False),
    "mmaction2-1456": (r"^mmaction2 [^:]*(?:CrossEntropyLoss|class_weight)[^:]*: Expected all tensors to be on the same "
                       r"device, but found at least two devices$", "RuntimeError", PLACEMENT, {"mmaction2"}, None, None,
                       DEV_LANES, None, ("3.6",), False),
    "mmengine-1538": (rf"^mmengine [^:]*[Rr]esum[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                      f"{TWO_AT}cuda:0 and cpu!", {"mmengine"}, None, None, DEV_LANES, "1.9.1+cu111", ("3.8.19",), True),
    "openrlhf-325": (rf"^(?i:openrlhf) (?:examples/)?train_ppo(?:\.py)?\b[^:]*(?:ZeRO|zero_stage|actor_init_on_gpu)[^:]*: "
                     rf"{re.escape(TWO_AT)}cuda:3 and cpu!$", "RuntimeError", f"{TWO_AT}cuda:3 and cpu!", {"openrlhf"},
                     None, None, DEV_LANES, None, (), False),
    "pyannote-audio-1538": (rf"^pyannote[.-]audio (?:training|train)\b[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu! \(.*"
                            r"wrapper_CUDA__cudnn_batch_norm\)$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu! (when checking "
                            "argument for argument weight in method wrapper_CUDA__cudnn_batch_norm)", {"pyannote-audio"},
                            "pyannote-audio==", "pyannote-audio==", DEV_LANES, None, ("3.8",), False),
    "ray-33011": (r"^ray (?:Tune|Train)\b[^:]*: Expected all tensors to be on the same device$", "RuntimeError",
                  "Expected all tensors to be on the same device", {"ray"}, "ray==2.3.0", None, DEV_LANES, "1.13.0",
                  ("3.10.0",), True),
    "trl-1202": (r"^trl DPOTrainer[^:]*0\.7\.8[^:]*: expected scalar type Float but found BFloat16$", "RuntimeError",
                 "expected scalar type Float but found BFloat16", {"trl"}, "trl==0.7.8", "trl==0.7.9", GPU_LANES, None,
                 (), False),
    "verl-3669": (rf"^verl (?:RayPPOTrainer\.fit|ray_trainer(?:\.py)? fit)[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$",
                  "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"verl"}, None, None, DEV_LANES, None, ("3.10",), False),
    "xturing-231": (r"^(?i:xturing) (?:BaseModel\.finetune|causal\.py finetune)[^:]*: Lightning can't create new processes "
                    r"if CUDA is already initialized\.?$", "RuntimeError",
                    "Lightning can't create new processes if CUDA is already initialized.", {"xturing"}, None, None,
                    ANY_CUDA, None, ("3.10",), False),
}
GRADED14_FLOOR = 87  # of 96: 61 held out (main 9f5627b, this scorer; 61 by hand, strict); 86 after fix14, 87 after
# fixtitle6 (mmengine-1538 T) (not held out)


def _maintainer_fields_14(name: str, folder: Path = GRADED14, table: dict[str, tuple] = MAINTAINER_14) -> dict[str, bool]:
    fields = _maintainer_fields_12(name, folder, table)
    signature = _graded(folder, name)[1]["signature"]
    # a signature cut inside a word ("but foun") matches the message's start, yet is not what a maintainer keeps
    fields["M"] = fields["M"] and re.search(rf"(?:{signature})(?!\w)", table[name][2]) is not None
    return fields


def test_the_fourteenth_held_out_set_scores_at_least_its_measured_fields():
    right, table = _scored({name: _maintainer_fields_14(name) for name in sorted(MAINTAINER_14)})
    assert sorted(MAINTAINER_14) == sorted(HELD_OUT_14) == sorted(p.stem for p in GRADED14.glob("*.txt"))
    assert right >= GRADED14_FLOOR, table


# graded15/EXPECTED.md's accepted values, as MAINTAINER_12's columns (lanes may name cuda-sim), graded strictly as its
# Results: a title's decoration the expectation writes is required (lightning's default num_devices=-1, peft's LoRA
# int8, spacy-partial-tagger's device), a bare method is wrong (t-gcn on_validation_batch_end, colossalai's wrapper
# forward), a fix placeholder must say what the expectation asks (colossalai: no fix known; ta-lbf: the reporter's
# labels_cuda change), and a signature cut inside a word is wrong (lightning's "and c", as graded14's).
NO_KERNELS = {"cpu": {"unsupported"}, "cuda": {"reproduces"}, "cuda-sim": {"unsupported"}}
MAINTAINER_15 = {
    "bitsandbytes-392": (r"^bitsandbytes(?: [^:]*)?: expected scalar type BFloat16 but found Float$", "RuntimeError",
                         "expected scalar type BFloat16 but found Float", {"bitsandbytes"}, "bitsandbytes==0.37.2", None,
                         NO_KERNELS, "1.13.1", ("3.9.16",), True),
    "cleanrl-396": (rf"^cleanrl rpo_continuous_action(?:\.py)?[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                    f"{TWO_AT}cuda:0 and cpu!", {"cleanrl"}, None, f"{HUB}vwxyzjn/cleanrl", DEV_LANES, None, (), False),
    "colossalai-6169": (r"^(?i:colossalchat|coati|colossalai)\b[^:]*(?:SFTTrainer|_train)[^:]*: mat1 and mat2 must have "
                        r"the same dtype, but got Float and BFloat16$", "RuntimeError",
                        "mat1 and mat2 must have the same dtype, but got Float and BFloat16",
                        {"colossalai", "coati", "colossalchat"}, None, "no fix", GPU_LANES, None, ("3.11",), False),
    "lightning-16816": (r"^(?:lightning_fabric|lightning\.fabric|lightning-fabric) find_usable_cuda_devices[^:]*"
                        r"(?:num_devices=-1|default)[^:]*: You requested to find -1 devices but only 1 are currently "
                        r"available\.", "RuntimeError", FABRIC, {"lightning-fabric", "lightning"}, None, None,
                        {"cpu": {"reproduces", "unsupported"}, "cuda": {"reproduces"},
                         "cuda-sim": {"reproduces", "unsupported"}}, "1.13.1", (), False),
    "peft-175": (r"^(?:peft|trl) [^:]*(?:LoRA|int8|8-bit)[^:]*: expected scalar type Half but found Float$",
                 "RuntimeError", "expected scalar type Half but found Float", {"peft", "trl"},
                 ("peft==0.2.0", f"{HUB}huggingface/peft@"), None, NO_KERNELS, "1.13.1", ("3.10",), False),
    "prollama-15": (r"^(?i:prollama) [^:]*(?:lora_infer|generate)[^:]*: expected scalar type BFloat16 but found Float$",
                    "RuntimeError", "expected scalar type BFloat16 but found Float", {"prollama"},
                    f"{HUB}PKU-YuanGroup/ProLLaMA@", f"{HUB}PKU-YuanGroup/ProLLaMA", GPU_LANES, None, ("3.8",), False),
    "slime-7": (r"^(?i:slime) [^:]*(?:pixel_weights|torch\.where)[^:]*: expected scalar type float but found long int$",
                "RuntimeError", "expected scalar type float but found long int", {"slime"},
                f"{HUB}aliasgharkhani/SLiMe@", f"{HUB}aliasgharkhani/SLiMe",
                {"cpu": {"reproduces"}, "cuda": {"reproduces"}, "cuda-sim": {"reproduces"}}, None, (), False),
    "spacy-partial-tagger-25": (r"^spacy-partial-tagger [^:]*device[^:]*: Expected all tensors to be on the same device",
                                "RuntimeError", "Expected all tensors to be on the same device",
                                {"spacy-partial-tagger"}, None, None, DEV_LANES, None, (), False),
    "t-gcn-56": (rf"^(?i:t-gcn) (?:BestEpochCallback\.on_validation_batch_end|best_epoch(?:\.py)?)[^:]*: "
                 rf"{re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"t-gcn"},
                 f"{HUB}lehaifeng/T-GCN@", f"{HUB}lehaifeng/T-GCN", DEV_LANES, None, (), False),
    "ta-lbf-2": (rf"^(?i:ta-lbf) attack_one(?:\.py)?[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                 f"{TWO_AT}cuda:0 and cpu!", {"ta-lbf"}, f"{HUB}jiawangbai/TA-LBF@", "labels_cuda", DEV_LANES, None,
                 ("3.7",), False),
}
GRADED15_FLOOR = 76  # of 80: 58 held out (main 2acab11, this scorer; 58 by hand, strict; 67 lenient); 76 after fix15
# (not held out)


def test_the_fifteenth_held_out_set_scores_at_least_its_measured_fields() -> None:
    right, table = _scored({name: _maintainer_fields_14(name, GRADED15, MAINTAINER_15) for name in sorted(MAINTAINER_15)})
    assert sorted(MAINTAINER_15) == sorted(HELD_OUT_15) == sorted(p.stem for p in GRADED15.glob("*.txt"))
    assert right >= GRADED15_FLOOR, table


# graded16/EXPECTED.md's accepted values, as MAINTAINER_12's columns, graded strictly as its Results: a title's
# decoration the expectation writes is required (fastai's multi-GPU training, mmdeploy's torch2onnx), a fix the thread
# states is required (clean-fid 0.1.32; mase's PR #43), a placeholder must name the distribution (NeMo's nemo_toolkit),
# and STATED_16 adds what these columns cannot say.
MAINTAINER_16 = {
    "clean-fid-41": (rf"^clean-fid [^:]*(?i:clip)[^:]*: {re.escape(TWO_AT)}cpu and cuda:0! \(.*"
                     r"wrapper___slow_conv2d_forward\)$", "RuntimeError", f"{TWO_AT}cpu and cuda:0! (when checking argument "
                     "for argument weight in method wrapper___slow_conv2d_forward)", {"clean-fid"}, None,
                     "clean-fid==0.1.32", {"cpu": {"passes", "unsupported"}, "cuda": {"reproduces"}}, None, (), False),
    "didi-instruct-1": (r"^didi-instruct [^:]*NLL\.update[^:]*sample_eval[^:]*: Expected all tensors to be on the same "
                        r"device, but found (?:at least two devices, )?cuda:0 and cpu!$", "RuntimeError",
                        "Expected all tensors to be on the same device, but found cuda:0 and cpu!", {"didi-instruct"},
                        f"{HUB}haoyangzheng-ai/didi-instruct@", f"{HUB}haoyangzheng-ai/didi-instruct", DEV_LANES, "2.4",
                        (), False),
    "fastai-4007": (rf"^fastai [^:]*Normalize\.encodes[^:]*(?i:multi-GPU)[^:]*: {re.escape(TWO_AT)}cuda:1 and cuda:0!$",
                    "RuntimeError", f"{TWO_AT}cuda:1 and cuda:0!", {"fastai"}, None, None,
                    {"cpu": {"passes"}, "cuda": {"unsupported"}, "cuda-sim": {"unsupported"}}, None, ("3.10",), False),
    "forge-621": (r"^(?=.*(?i:animatediff))(?i:animatediff|sd-webui-animatediff|stable-diffusion-webui-forge)\b.*rearrange.*"
                  r"can't divide axis of length 2 in chunks of 16$", "EinopsError", EINOPS,
                  {"stable-diffusion-webui-forge", "sd-webui-animatediff", "animatediff"},
                  "5bea443d94f3a85f819cb8541c1bba0aac208d83", None, GPU_LANES, "2.1.2+cu121", ("3.10.6",), True),
    "mase-40": (r"^mase chop transform[^:]*transform\.py[^:]*graph\.model[^:]*: 'tuple' object has no attribute 'model'$",
                "AttributeError", "'tuple' object has no attribute 'model'", {"mase"}, f"{HUB}DeepWok/mase@", "#43",
                ALL_LANES, None, (), False),
    "mmdeploy-682": (rf"^mmdeploy .*torch2onnx.*: {re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError",
                     f"{TWO_AT}cuda:0 and cpu!", {"mmdeploy", "mmdet"}, None, None, DEV_LANES, None, (), False),
    # the fix column is a substring: "toolkit" of nemo_toolkit or nemo-toolkit
    "nemo-2712": (rf"^(?i:nemo)(?:[_-]toolkit)? [^:]*EncDecSpeakerLabelModel[^:]*train[^:]*: {re.escape(TWO_AT)}cuda:0 and "
                  r"cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"nemo", "nemo-toolkit", "nemo_toolkit"},
                  ("nemo_toolkit", "nemo-toolkit"), "toolkit", DEV_LANES, None, (), False),
    "phrasenode-2": (r"^phrasenode (?:model/)?encoding\.py forward[^:]*np\.isfinite[^:]*: can't convert CUDA tensor to numpy",
                     "TypeError", NUMPY_CUDA, {"phrasenode"}, f"{HUB}stanfordnlp/phrasenode@",
                     f"{HUB}stanfordnlp/phrasenode", DEV_LANES, "1.3.1", ("2.7",), False),
    "py4cast-6": (rf"^py4cast metrics\.py update[^:]*climate_means[^:]*: {re.escape(TWO_AT)}cuda:0 and cpu!$",
                  "RuntimeError", f"{TWO_AT}cuda:0 and cpu!", {"py4cast"}, f"{HUB}meteofrance/py4cast@",
                  f"{HUB}meteofrance/py4cast", DEV_LANES, None, ("3.10",), False),
    "transformer-samlynnevans-30": (rf"^(?i:SamLynnEvans/Transformer) create_masks[^:]*Batch\.py[^:]*torchtext[^:]*: "
                                    rf"{re.escape(TWO_AT)}cuda:0 and cpu!$", "RuntimeError", f"{TWO_AT}cuda:0 and cpu!",
                                    {"transformer", "samlynnevans-transformer"}, f"{HUB}SamLynnEvans/Transformer@",
                                    f"{HUB}SamLynnEvans/Transformer", DEV_LANES, None, (), False),
}


def _pinned(data: dict[str, Any]) -> str:
    return " ".join([*data["requires"], *data["variants"]["buggy"]["requires"]])


# What the expectation asks beyond MAINTAINER_16's columns: clean-fid's cpu "passes" only with a reason, phrasenode's
# stated torch==1.3.1 in P, the Transformer case's torchtext placeholder in P.
STATED_16: dict[str, dict[str, Callable[[dict[str, Any]], bool]]] = {
    "clean-fid-41": {"L": lambda data: "ignores the device argument" in data["case.yaml"]},  # the cpu reason
    "phrasenode-2": {"P": lambda data: "torch==1.3.1" in _pinned(data)},
    "transformer-samlynnevans-30": {"P": lambda data: "torchtext" in _pinned(data)},
}
GRADED16_FLOOR = 70  # of 80: 52 held out (main 0df96df, this scorer; 52 by hand, strict; 60 lenient); 61 after fix16,
# 68 after fixpins, 69 after fixtitle (phrasenode's T: encoding.py forward (np.isfinite)), 70 after fixtitle2
# (phrasenode's P: a placeholder for its stated torch 1.3.1); not held out


Stated = dict[str, dict[str, Callable[[dict[str, Any]], bool]]]


def maintainer_fields(name: str, folder: Path, table: dict[str, tuple[Any, ...]], stated: Stated) -> dict[str, bool]:
    """A set's 8 fields of one report: table's columns, then what the expectation states beyond them (graded16 on)."""
    try:
        draft, data = _graded(folder, name)
    except UsageError:
        return dict.fromkeys("TEMBPFLV", False)  # refused: 0 on every field
    data = {**data, "case.yaml": draft.case_yaml}  # its comments too: a lane's reason when it passes
    fields = _maintainer_fields_14(name, folder, table)
    for field, kept in stated.get(name, {}).items():
        fields[field] = fields[field] and kept(data)
    return fields


def answer_for(monkeypatch: pytest.MonkeyPatch, not_released: set[str], urls: dict[str, tuple[str, ...]]) -> None:
    """A held-out set's index answers for its own names, beside the other sets' (`_graded` reads them)."""
    monkeypatch.setattr(sys.modules[__name__], "NOT_RELEASED", NOT_RELEASED | not_released)
    monkeypatch.setattr(sys.modules[__name__], "INDEX_URLS", {**INDEX_URLS, **urls})


def assert_set_scores(folder: Path, table: dict[str, tuple[Any, ...]], held_out: dict[str, Any], stated: Stated,
                      floor: int) -> None:
    """A held-out set (graded16 on): every report has its expectation and its drafted row, and the strict 8-field
    score is at least the floor measured."""
    right, scores = _scored({name: maintainer_fields(name, folder, table, stated) for name in sorted(table)})
    assert sorted(table) == sorted(held_out) == sorted(p.stem for p in folder.glob("*.txt"))
    assert right >= floor, scores


def test_the_sixteenth_held_out_set_scores_at_least_its_measured_fields() -> None:
    assert_set_scores(GRADED16, MAINTAINER_16, HELD_OUT_16, STATED_16, GRADED16_FLOOR)
