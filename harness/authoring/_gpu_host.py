"""Lanes for messages whose cause is the host, with the reason a maintainer gives: an error only a host without CUDA
shows, or one only a GPU host shows (the DataLoader's pin-memory thread, NCCL given a CPU tensor, a device index past
the visible GPUs, a generator on another device than the run's default, an operator with no CUDA kernel, Apple's MPS
backend), a dtype one kernel lacks, and a device string no host takes.

A lane's kind carries a reason only when it is "unsupported" (the case schema's rule): a "passes" or "reproduces"
says its reason in the guess, which the draft writes as the comment above the lanes."""

from __future__ import annotations

import re

SIM_GAP = ("unsupported: a guess — device memory, CUDA kernels and NCCL are not simulated "
           "(cuda-sim computes on the CPU; see README.md)")
Lanes = tuple[dict[str, str], str]

# A CUDA checkpoint, a `.cuda()` or a CUDA query on a host without CUDA (a CPU-only machine or a CPU build of torch):
# code that hard-codes CUDA, run where none is. torch 0.x words a legacy CUDA type on a CPU build as
# "torch.cuda.FloatTensor is not enabled"; a CPU build's torch._C lacks `_cuda_setDevice` (torch.cuda.set_device). The
# inverse of a placement bug: only the cpu lane shows it.
_NO_CUDA_HOST = re.compile(r"torch\.cuda\.is_available\(\) is False|Torch not compiled with CUDA enabled"
                           r"|Found no NVIDIA driver|No CUDA GPUs are available|no CUDA-capable device is detected"
                           r"|\btorch\.cuda\.\w*Tensor is not enabled|Cannot initialize CUDA without ATen_cuda library"
                           r"|CUDA driver initialization failed, you might not have a CUDA gpu"
                           r"|module 'torch\._C' has no attribute '_cuda_\w+'",
                           re.IGNORECASE)
_NO_CUDA_GUESS = ("an error of a host without CUDA (code that hard-codes CUDA, run where none is): only the cpu lane "
                  "shows it; a GPU, real or simulated (cuda-sim places `.cuda()` and CUDA storages on its device), "
                  "takes the CUDA path")
# torch's DataLoader pins batches in a thread only when CUDA is available ("Caught RuntimeError in pin memory thread
# for device 0", a frame of torch/utils/data/_utils/pin_memory.py).
_PIN_MEMORY = re.compile(r"\bpin memory thread\b", re.IGNORECASE)
PIN_MEMORY_FRAME = re.compile(r"torch/utils/data/_utils/pin_memory\.py$")
_PIN_GUESS = "an error in the DataLoader's pin-memory thread, which runs only where CUDA is available"
# A CPU tensor handed to a collective of an NCCL-only process group: gloo (what a CPU-only run uses) takes it.
_NCCL_CPU = re.compile(r"No backend type associated with device type cpu", re.IGNORECASE)
_NCCL_GUESS = "a CPU tensor in a collective of an NCCL process group"
# A device index past the GPUs the process sees (CUDA_VISIBLE_DEVICES set late, `device_map` or a rank's index).
_DEVICE_INDEX = re.compile(r"device >= 0 && device < num_gpus|invalid device ordinal"
                           r"|on CUDA device \d+ but torch\.cuda\.device_count\(\) is \d+", re.IGNORECASE)
_INDEX_GUESS = "a CUDA device index past the visible GPUs"
# The CUDA runtime's own "CUDA error: invalid device ordinal" (a `.to("cuda:1")` on a one-GPU host): a CPU run never
# reaches it, as any CUDA error; the code that picked the index runs on the CPU where no GPU is.
_RUNTIME_INDEX_GUESS = ("a CUDA device index past the visible GPUs, raised by the CUDA runtime (\"CUDA error\"): a "
                        "CPU run never reaches it, so cpu passes")
# A sampler's or a random op's generator on another device than the tensors it draws: the run made CUDA the default
# device (torch.set_default_tensor_type(torch.cuda.FloatTensor), set_default_device("cuda")) or built a CUDA
# generator; with no GPU neither happens.
_GENERATOR = re.compile(r"device type for generator\b|\bgenerator\b[^.]{0,40}\bdevice\b", re.IGNORECASE)
_GENERATOR_GUESS = ("a generator on another device than the run's tensors: the run made CUDA its default device (or "
                    "built a CUDA generator), which happens only where a GPU is; cpu passes for that reason")
# A kernel that lacks a dtype: '"nll_loss_forward_reduce_cuda_kernel_2d_index" not implemented for 'Int''.
_KERNEL_DTYPE = re.compile(r"\"(?P<kernel>\w+)\" not implemented for '(?P<dtype>\w+)'")
# An operator the installed build registers no CUDA kernel for ("Could not run 'torchvision::roi_align' with arguments
# from the 'CUDA' backend": a CPU-only build of the extension, or one built for another CUDA): its CPU kernel runs.
_NO_CUDA_KERNEL = re.compile(r"Could not run '[\w:.]+' with arguments from the 'CUDA' backend")
_NO_CUDA_KERNEL_GUESS = ("an operator the installed build has no CUDA kernel for (a CPU-only build, or one for another "
                         "CUDA): the cpu lane runs its CPU kernel and passes")
# A device string torch cannot parse (`torch.device("train")`): an argument error every host raises alike.
_BAD_DEVICE_STRING = re.compile(r"device type at start of device string|Invalid device string"
                                r"|Device string must not be empty", re.IGNORECASE)
_BAD_DEVICE_GUESS = "a device string torch cannot parse: every host rejects it alike (not a placement error)"
# A CUDA device string whose index is not a number ('cuda:None', 'cuda:', 'cuda:local_rank'): the code formats an index
# variable it never set (a rank a launcher would give). Every host rejects it alike, yet the bug is the run's device
# handling, unlike a word taken for a device ('train', '0').
_UNSET_CUDA_INDEX = re.compile(r"device string: '(?:cuda|gpu):(?!\d+')[^']*'", re.IGNORECASE)
_UNSET_INDEX_GUESS = ("a CUDA device string built from an index variable never set (a rank a launcher would give): "
                      "every host rejects it alike, a device-handling bug")
# A negative device index handed to `.cuda(i)` / torch.device("cuda", i): a CPU tensor's get_device() (or a helper
# like get_device_of) is -1, so code that derives the GPU index from a tensor fails only where that tensor is on the
# CPU; on a GPU, real or simulated, the index is valid. A rank's default of -1 (`args.local_rank`) fails everywhere.
_NEGATIVE_INDEX = re.compile(r"Device index must not be negative|device index must be non-?negative", re.IGNORECASE)
_RANK_SOURCE = re.compile(r"\b\w*rank\b", re.IGNORECASE)
_NEGATIVE_INDEX_GUESS = ("a device index taken from a CPU tensor (get_device() is -1 on the CPU) handed to `.cuda()`: "
                         "only the cpu lane shows it; on a GPU, real or simulated, the tensor's index is valid")
_RANK_INDEX_GUESS = ("a device index of -1 from a rank variable's default (a run without a launcher): every host "
                     "rejects it alike")
# DataLoader workers that die of a Bus error or run out of shared memory: the host's /dev/shm is too small for the
# batches the workers pass (a container's 64 MB default). A cell's /dev/shm is bounded (1 GiB, or half
# --memory-limit), so whether a lane shows it depends on that bound and on num_workers, not on the device.
_SHM = re.compile(r"out of shared memory|insufficient shared memory|\(shm\)|killed by signal: Bus error"
                  r"|Unexpected bus error", re.IGNORECASE)
_SHM_LANE = ("unsupported: a guess — the DataLoader's workers ran out of shared memory (/dev/shm) on the report's "
             "host (a container's small /dev/shm); a cell's /dev/shm is 1 GiB (or half --memory-limit), so the repro "
             "shows it only with /dev/shm limited and num_workers > 0 (say so, then expect reproduces)")
SHM_GUESS = "an environment-bound data-loading failure: DataLoader workers out of shared memory (/dev/shm)"
# Apple's MPS backend (an Apple GPU): an op it lacks, its memory, a tensor left off it ("Placeholder storage has not
# been allocated on MPS device!"). No lane has an Apple GPU; the CPU path runs the op.
_MPS = re.compile(r"\bMPS (?:backend|device|does not support|doesn't support)|\bon MPS\b|\bfor MPS\b|\bMPSGraph\b"
                  r"|\bMPSNDArray\b")
_MPS_PLACED = re.compile(r"Placeholder storage has not been allocated on MPS device")
_MPS_PLACED_GUESS = "a tensor left off Apple's MPS device: the cpu lane never uses MPS; no lane has an Apple GPU"
_MPS_GUESS = "an error of Apple's MPS backend (an op or memory it lacks): the cpu lane runs the CPU op; no lane has MPS"
# cuDNN's own check of how it is called ("cudnn RNN backward can only be called in training mode": backward through a
# cuDNN RNN in eval mode): only a CUDA run goes through cuDNN; torch's CPU kernels take the same call. Not torch's op
# names (`wrapper_cudnn_convolution` in a device message) nor the runtime's "cuDNN error: CUDNN_STATUS_..." (GPU
# runtime errors, read in _expect).
_CUDNN_CHECK = re.compile(r"(?<![\w.])cudnn(?![\w.])(?! error\b)", re.IGNORECASE)
_CUDNN_GUESS = ("a cuDNN-only error: only a CUDA run calls cuDNN (the code hands it a call it refuses); the CPU "
                "kernels take the same call, so cpu passes")
# Another vendor's accelerator named as a device (Intel's "xpu:0", Ascend's "npu:0", Gaudi's "hpu", a TPU's "xla:0",
# torch's "wrapper_XPU_cat"): no lane has one; the CUDA analogue of the same code may show it (the author says).
_OTHER_ACCELERATOR = re.compile(r"\b(?P<device>xpu|npu|hpu|xla):\d+\b|\bwrapper_(?P<op>XPU|NPU|HPU|XLA)_",
                                re.IGNORECASE)
_ACCELERATOR_GUESS = "a device error on another vendor's accelerator, which no lane has"
GPU_HOST_GUESSES = (_NO_CUDA_GUESS, _PIN_GUESS, _NCCL_GUESS, _INDEX_GUESS, _RUNTIME_INDEX_GUESS, _GENERATOR_GUESS,
                    _MPS_PLACED_GUESS, _CUDNN_GUESS, _ACCELERATOR_GUESS, _UNSET_INDEX_GUESS, _NEGATIVE_INDEX_GUESS,
                    _RANK_INDEX_GUESS)
_ALL_REPRODUCE = {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}


def gpu_host_lanes(message: str, pinned: bool, asked: str, source: str = "") -> Lanes | None:
    """The lanes of a message whose cause is the host (``pinned``: a frame is the pin-memory thread's; ``asked``: the
    report asked for the CPU, as its flag or argument says; ``source``: the innermost frame's line), else None."""
    if _BAD_DEVICE_STRING.search(message):
        return dict(_ALL_REPRODUCE), _UNSET_INDEX_GUESS if _UNSET_CUDA_INDEX.search(message) else _BAD_DEVICE_GUESS
    if _MPS.search(message):
        gap = "unsupported: the message is about Apple's MPS backend (an Apple GPU); {}"
        return {"cpu": "passes", "cuda": gap.format("this lane runs CUDA"),
                "cuda-sim": gap.format("cuda-sim simulates CUDA, not MPS")}, \
            _MPS_PLACED_GUESS if _MPS_PLACED.search(message) else _MPS_GUESS
    if _NO_CUDA_KERNEL.search(message):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": SIM_GAP}, _NO_CUDA_KERNEL_GUESS
    if _NO_CUDA_HOST.search(message):
        return {"cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}, _NO_CUDA_GUESS
    if pinned or _PIN_MEMORY.search(message):
        why = f"the report asked for the CPU ({asked}), yet its DataLoader pinned batches to the GPU; " if asked else ""
        return {"cpu": f"unsupported: {why}the error is raised in the DataLoader's pin-memory thread, which runs only "
                       "where CUDA is available: the cpu lane pins nothing",
                "cuda": "reproduces", "cuda-sim": SIM_GAP if _memory(message) else "reproduces"}, _PIN_GUESS
    if _NCCL_CPU.search(message):
        return {"cpu": "unsupported: a guess — the process group's backend is NCCL, which takes CUDA tensors only; a "
                       "CPU-only run's group is gloo, which takes the CPU tensor",
                "cuda": "reproduces", "cuda-sim": "unsupported: NCCL is not simulated (init_process_group('nccl') "
                                                  "raises NotSimulatedError)"}, _NCCL_GUESS
    if _DEVICE_INDEX.search(message) and re.search(r"\bCUDA error\b", message, re.IGNORECASE):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": SIM_GAP}, _RUNTIME_INDEX_GUESS
    if _DEVICE_INDEX.search(message):
        return {"cpu": "unsupported: the message is about a CUDA device index; the cpu lane has no GPU to index",
                "cuda": "reproduces",
                "cuda-sim": "unsupported: cuda-sim simulates one device and not CUDA's lazy initialisation"}, \
            _INDEX_GUESS
    if _GENERATOR.search(message):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}, _GENERATOR_GUESS
    return _negative_index(message, source) or _shm(message) or _cudnn_check(message) or _other_accelerator(message) \
        or _kernel_dtype(message)


def _negative_index(message: str, source: str) -> Lanes | None:
    if not _NEGATIVE_INDEX.search(message):
        return None
    if _RANK_SOURCE.search(source):
        return dict(_ALL_REPRODUCE), _RANK_INDEX_GUESS
    return {"cpu": "reproduces", "cuda": "passes", "cuda-sim": "passes"}, _NEGATIVE_INDEX_GUESS


def _shm(message: str) -> Lanes | None:
    if not _SHM.search(message):
        return None
    return {"cpu": _SHM_LANE, "cuda": _SHM_LANE, "cuda-sim": _SHM_LANE}, SHM_GUESS


def _other_accelerator(message: str) -> Lanes | None:
    match = _OTHER_ACCELERATOR.search(message)
    if match is None or re.search(r"\bcuda\b", message, re.IGNORECASE):
        return None
    device = (match["device"] or match["op"]).upper()
    gap = (f"unsupported: the message is about a {device} device (another vendor's accelerator); {{}} (say so if the "
           "same code shows it with CUDA tensors, then expect reproduces)")
    return {"cpu": "passes", "cuda": gap.format("this lane runs CUDA"),
            "cuda-sim": gap.format(f"cuda-sim simulates CUDA, not {device}")}, _ACCELERATOR_GUESS


def _cudnn_check(message: str) -> Lanes | None:
    if not _CUDNN_CHECK.search(message) or re.search(r"CUDNN_STATUS", message, re.IGNORECASE):
        return None
    return {"cpu": "passes", "cuda": "reproduces",
            "cuda-sim": "unsupported: a guess — cuDNN is not simulated (cuda-sim computes with torch's CPU kernels, "
                        "which take the call)"}, _CUDNN_GUESS


def _memory(message: str) -> bool:
    return re.search(r"out of memory|CUDA error", message, re.IGNORECASE) is not None


def _kernel_dtype(message: str) -> Lanes | None:
    """A dtype a named CUDA or CPU kernel lacks: the other device runs another kernel, whose dtypes may differ."""
    match = _KERNEL_DTYPE.search(message)
    if match is None or not re.search(r"cuda|cpu", match["kernel"], re.IGNORECASE):
        return None
    kernel, dtype = match["kernel"], match["dtype"]
    if "cuda" in kernel.lower():
        return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, (
            f"a dtype the CUDA kernel {kernel} lacks ('{dtype}'): the CPU kernel checks the dtype too, under its own "
            "name, so cpu and cuda-sim (CPU kernels) show it with another kernel in the message (widen the signature "
            "past the kernel's name, or expect passes where the CPU kernel takes the dtype)")
    return {"cpu": "reproduces", "cuda": "passes",
            "cuda-sim": f"unsupported: cuda-sim computes with the CPU kernels, which lack '{dtype}'; a GPU's kernel "
                        "has it"}, f"a dtype the CPU kernel {kernel} lacks ('{dtype}'): GPU kernels implement it"
