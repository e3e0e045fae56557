"""`new` graded field by field on real reports held out while it was built (issue 21 §1's measure).

tests/fixtures/graded/*.txt are real GitHub reports (source URL on the first line) first read after the drafting
code was written; EXPECTED is what a maintainer would write for each field, decided before the drafts were
seen. The test prints the table and fails when the score drops below the one measured (a regression guard,
not a goal: the misses are listed in /work/notes/author.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from harness.authoring._bugreport import parse_report
from harness.authoring._draft import draft_case

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ALL_REPRODUCE = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}
DEVICE = {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}
TWO_GPUS = {"cpu": "passes", "cuda": "unsupported", "cuda-sim": "unsupported"}
GPU_LIBRARIES = {"cpu": "passes", "cuda": "reproduces"}
# report -> (library, symptom in the title, exception, message, blamed distribution, lanes, torch, python)
EXPECTED = {
    "spikingresformer-1.txt": ("spikingresformer", "Unknown model", "RuntimeError",
                               "Unknown model (spikingtransformer_ti)", "spikingresformer", ALL_REPRODUCE, None, None),
    "mil-vt-5.txt": ("mil-vt", "Unknown model", "RuntimeError", "Unknown model (MIL_VT_small_patch16_384)", "mil-vt",
                     ALL_REPRODUCE, None, None),
    "pytorch-91049.txt": ("torch", "Failed to load model", "RuntimeError", "Failed to load model 'bad_model_name'",
                          "torch", ALL_REPRODUCE, None, None),
    "bitsandbytes-1615.txt": ("bitsandbytes", "not available in CPU-only version", "RuntimeError",
                              "Method 'cquantize_blockwise_fp16_nf4' not available in CPU-only version of bitsandbytes.",
                              "bitsandbytes", {"cpu": "reproduces", "cuda": "passes"}, None, None),
    "mistral-inference-215.txt": ("xformers", "should be on the same device", "ValueError",
                                  "Attention bias and Query/Key/Value should be on the same device", "xformers",
                                  TWO_GPUS, None, None),
    "open-r1-278.txt": ("vllm", "should be on the same device", "ValueError",
                        "Error in model execution (input dumped to /tmp/err_execute_model_input_20250211-033220.pkl): "
                        "Attention bias and Query/Key/Value should be on the same device", "vllm", TWO_GPUS,
                        "2.5.1+cu124", None),
    "deepspeed-6827.txt": ("torch", "cannot read file data", "ImportError",
                           "/root/miniconda3/envs/deepspeed/lib/python3.10/site-packages/torch/lib/../../../../"
                           "libcufft.so.10: cannot read file data", "torch", GPU_LIBRARIES, None, None),
    "deepspeed-3386.txt": ("torch", "cublasLtGetStatusString", "OSError",
                           "/opt/conda/envs/python35-paddle120-env/lib/python3.7/site-packages/torch/lib/../../nvidia/"
                           "cublas/lib/libcublas.so.11: symbol cublasLtGetStatusString, version libcublasLt.so.11 not "
                           "defined in file libcublasLt.so.11 with link time reference", "torch", GPU_LIBRARIES,
                           None, None),
    "dmasif-30.txt": ("dmasif", "legacy constructor", "RuntimeError", "legacy constructor e", "dmasif", DEVICE,
                      None, None),
    "ham2pose-6.txt": ("ham2pose", "same device", "RuntimeError",
                       "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! "
                       "(when checking argument for argument mat2 in method wrapper_CUDA_mm)", "ham2pose", DEVICE,
                       None, None),
}
# The second set: read after the first was graded and `new` was changed on what the first showed.
EXPECTED_2 = {
    "silero-vad-113.txt": ("silero-vad", "expected CPU (got CUDA)", "TypeError", "expected CPU (got CUDA)",
                           "silero-vad", DEVICE, None, None),
    "ultralight-digital-human-156.txt": (
        "ultralight-digital-human", "same device", "RuntimeError",
        "Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking "
        "argument for argument tensors in method wrapper_cat)", "ultralight-digital-human", DEVICE, None, None),
    "r-yolov4-6.txt": ("r-yolov4", "same device", "RuntimeError",
                       "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                       "r-yolov4", DEVICE, None, None),
    "hotshot-xl-42.txt": ("hotshot-xl", "rearrange-reduction pattern", "EinopsError",
                          'Error while processing rearrange-reduction pattern "(b f) c h w -> b c f h w".', "hotshot-xl",
                          ALL_REPRODUCE, None, None),
    "prov-gigapath-94.txt": ("prov-gigapath", "rearrange-reduction pattern", "EinopsError",
                             'Error while processing rearrange-reduction pattern "b (r h) l -> b l h r".',
                             "prov-gigapath", ALL_REPRODUCE, None, None),
    "casmvsnet-38.txt": ("casmvsnet-pl", "rearrange-reduction pattern", "EinopsError",
                         'Error while processing rearrange-reduction pattern "b -> b 1".', "casmvsnet-pl",
                         ALL_REPRODUCE, "1.8.1", None),  # "I am doing it with pytorch 1.8.1" (prose)
    "torchmetrics-2965.txt": ("torchmetrics", "different devices", "RuntimeError",
                              "Encountered different devices in metric calculation (see stacktrace for details). This "
                              "could be due to the metric class not being on the same device as input. Instead of "
                              "'metric=R2Score(...)' try to do 'metric=R2Score(...).to(device)' where device "
                              "corresponds to the device of the input.",
                              "torchmetrics", DEVICE, None, None),
    "andromeda-4.txt": ("andromeda", "DummyScheduler", "ValueError",
                        "You cannot create a DummyScheduler without specifying a scheduler in the config file.\\",
                        "andromeda", ALL_REPRODUCE, None, None),
    "accelerate-2564.txt": ("accelerate", "distributed_type", "AttributeError",
                            "'AcceleratorState' object has no attribute 'distributed_type'", "accelerate",
                            ALL_REPRODUCE, "2.2.1", "3.8.18"),
}
# The third set: 12 reports from projects no fixture or case used, read after the second set's changes; the table
# was written and committed before `new` drafted any of them (see /work/notes/grade.md for the per-field misses).
EXPECTED_3 = {
    "fairseq-detect-hallucination-1.txt": ("fairseq", "token_prediction", "KeyError", "'token_prediction'", "fairseq",
                                           ALL_REPRODUCE, None, None),
    "prophetnet-3.txt": ("fairseq", "best_loss", "KeyError", "'best_loss'", "fairseq", ALL_REPRODUCE, "1.4.0", None),
    "detectron2-5099.txt": ("detectron2", "expected scalar type Half", "RuntimeError",
                            "expected scalar type Half but found Float", "detectron2", ALL_REPRODUCE, None, "3.7.8"),
    "tood-8.txt": ("tood", "same device", "RuntimeError",
                   "Expected all tensors to be on the same device, but found at least two devices, cuda:2 and cuda:0!",
                   "tood", TWO_GPUS, None, None),
    "tokenlearner-pytorch-4.txt": ("tokenlearner-pytorch", "should be the same", "RuntimeError",
                                   "Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be "
                                   "the same", "tokenlearner-pytorch", DEVICE, None, None),
    "normuon-7.txt": ("normuon", "expected dtype float", "RuntimeError",
                      "expected dtype float for end but got dtype c10::BFloat16.", "normuon", ALL_REPRODUCE, None, None),
    "vista-21.txt": ("vista", "same device", "RuntimeError",
                     "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! "
                     "(when checking argument for argument index in method wrapper_CUDA__index_select)", "vista",
                     DEVICE, None, None),
    "aurora-1.txt": ("monai", "applying transform", "RuntimeError",
                     "applying transform <monai.transforms.compose.Compose object at 0x00000190C0038130>", "monai",
                     ALL_REPRODUCE, None, None),
    "minicpm-v-308.txt": ("minicpm-v", "floating point dtype", "RuntimeError",
                          "only Tensors of floating point dtype can require gradients", "minicpm-v", ALL_REPRODUCE,
                          None, None),
    "torchtune-2561.txt": ("torchtune", "world_size", "AttributeError",
                           "'LoRAFinetuneRecipeDistributed' object has no attribute 'world_size'", "torchtune",
                           ALL_REPRODUCE, None, None),
    "torch-audiomentations-137.txt": ("torch-audiomentations", "same device", "RuntimeError",
                                      "Expected all tensors to be on the same device, but found at least two devices, "
                                      "cuda:0 and cpu", "torch-audiomentations", DEVICE, None, None),
    "yolov3-1586.txt": ("yolov3", "same device", "RuntimeError",
                        "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!",
                        "yolov3", DEVICE, None, None),
}
SETS = {"graded": EXPECTED, "graded2": EXPECTED_2, "graded3": EXPECTED_3}
FIELDS = ("title", "exception", "message", "blamed", "buggy pin", "fix placeholder", "lanes", "python/torch")


def grade(folder: str, name: str) -> dict[str, bool]:
    library, symptom, exception, message, blamed, lanes, torch, python = SETS[folder][name]
    draft = draft_case("graded", parse_report((FIXTURES / folder / name).read_text()), name)
    data = yaml.safe_load(draft.case_yaml)
    buggy = " ".join(data["variants"]["buggy"].get("requires", []))
    fix = " ".join(data["variants"]["fix"]["requires"])
    expect = data["variants"]["buggy"]["expect"]
    notes = " ".join(draft.notes)
    torch_read = (f"the report ran torch {torch}" in notes) if torch else "the report ran torch" not in notes
    python_read = (f"the report ran Python {python}" in notes) if python else "the report ran Python" not in notes
    return {
        "title": data["title"].lower().startswith(library) and symptom.lower() in data["title"].lower(),
        "exception": data["exception"] == exception,
        "message": bool(re.search(data["signature"], message)),
        "blamed": draft.culprit == blamed,
        "buggy pin": (blamed in buggy) if blamed != "torch" else buggy == "",
        # a commit placeholder of the blamed project (a checkout run) asks for its fix too, as later rubrics accept
        "fix placeholder": (f"{blamed}==" in fix or f"{blamed} @ git+" in fix) if blamed != "torch"
        else "the fix as requirements" in fix,
        "lanes": all(expect[lane].split(":")[0] == kind for lane, kind in lanes.items()),
        "python/torch": torch_read and python_read,
    }


# fields right when each set was first graded (see /work/notes/author.md); the first set's figure rose to 62/80
# after `new` was changed on what it showed (wrapped frames, torch's failed import, GPU libraries). The third set
# scored 92/96 by these checks; graded strictly by hand (a field right only if a maintainer keeps it unedited) it
# is 72/96: the checks above do not see addresses or markup in titles, nor pins of names PyPI lacks or gives to
# an unrelated project (/work/notes/grade.md).
MEASURED = {"graded": 62, "graded2": 56, "graded3": 92}


@pytest.mark.parametrize("folder", sorted(SETS))
def test_held_out_reports_graded_field_by_field(folder):
    expected = SETS[folder]
    rows = {name: grade(folder, name) for name in sorted(expected)}
    right = sum(sum(row.values()) for row in rows.values())
    table = "\n".join(f"{name:34} " + " ".join("+" if row[f] else "-" for f in FIELDS) for name, row in rows.items())
    print(f"\n{'report':34} {' '.join(FIELDS)}\n{table}\n{right}/{len(rows) * len(FIELDS)} fields right")
    assert sorted(p.name for p in (FIXTURES / folder).iterdir()) == sorted(expected)
    assert right >= MEASURED[folder], table
