"""Per-lane expectations (cpu, cuda, cuda-sim) guessed from the exception's message: a device error, a GPU-only
runtime error, a CUDA kernel's, two GPUs, the GPU's generation."""

from __future__ import annotations

import re

from harness.authoring._gpu_host import GPU_HOST_GUESSES, SIM_GAP, gpu_host_lanes
from harness.authoring._signature import MAX_SIGNATURE_SOURCE

# CUDA initialised before a fork or a process start: a CPU run never initialises it.
_CUDA_INIT = re.compile(r"CUDA (?:is|was|has been) already initiali[sz]ed|re-initiali[sz]e CUDA", re.IGNORECASE)
_DEVICE_ERROR = re.compile(
    r"same device|different device|at least two devices|device type"
    # a conv's input and weight types on two devices (torch.FloatTensor, torch.cuda.FloatTensor); the same device
    # with two dtypes (torch.cuda.HalfTensor, torch.cuda.FloatTensor) is a dtype mismatch, read below
    r"|Input type \((?=[^)]*(?:cuda|mps))[^)]*\) and (?:weight|bias) type \((?![^)]*(?:cuda|mps))"
    r"|Input type \((?![^)]*(?:cuda|mps))[^)]*\) and (?:weight|bias) type \((?=[^)]*(?:cuda|mps))"
    # the weight's type cut off ("Input type (torch.cuda.FloatTensor) and weight type"): a device mix, unless Half
    r"|Input type \((?![^)]*Half)[^)]*\) and (?:weight|bias) type\s*(?:\.\.\.|…)?\s*$"
    r"|\bon (?:the )?(?:cpu|cuda|gpu|meta)\b.*\b(?:cpu|cuda|gpu|meta)\b|\bdevices?\b.*\b(?:cpu|cuda:?\d*|gpu)\b"
    r"|\b(?:cpu|cuda:?\d*|gpu)\b.*\bdevices?\b|Cannot access accelerator device"
    r"|expected (?:CPU|CUDA) \(got (?:CPU|CUDA)\)|backend (?:CPU|CUDA) but got backend"
    r"|can't convert (?:CUDA|cuda:?\d*|mps|xpu) (?:device type )?tensor to numpy"
    # torch 0.3's typed tensors: "addcmul_ received an invalid combination of arguments - got (int,
    # torch.cuda.FloatTensor, ...)": a CUDA tensor where the signature takes a CPU one (or the reverse)
    r"|invalid combination of arguments - got \(.*\btorch\.cuda\.\w*Tensor"
    # a CUDA tensor where only a CPU one is taken ("If capturable=False, state_steps should not be CUDA tensors.")
    r"|\b(?:should|must) not be (?:a )?CUDA tensors?", re.IGNORECASE)
_GPU_ONLY = re.compile(
    r"out of memory|CUDA error|CUDNN_STATUS|cuDNN error|CUBLAS_STATUS|NCCL|device-side assert"
    r"|illegal memory access|CUDA driver|no kernel image|" + _CUDA_INIT.pattern +
    r"|\blib(?:cuda|cudart|cublas\w*|cufft|cudnn\w*|nccl|cusparse|curand|cusolver|nvrtc|nvJitLink)\b", re.IGNORECASE)
# A check of the GPU's generation ("FlashAttention only supports Ampere GPUs or newer", "compute capability 7.0"):
# the result depends on which GPU runs it, and no lane here has an old one.
_GPU_MODEL = re.compile(r"only supports? \w+ GPUs? or newer|compute capability|\bsm_?\d{2,3}\b", re.IGNORECASE)
# A CUDA kernel failed: the message names the CUDA backend, or the innermost frame calls an extension's kernel
# (flash_attn_cuda.fwd(...), flash_attn_gpu.varlen_fwd(...)): the cpu lane never reaches that call.
# flash-attn's messages ("FlashAttention only support fp16 and bf16 data type") come from its CUDA-only kernels.
_CUDA_BACKEND = re.compile(r"from the 'CUDA' backend|\bCUDA kernel\b|^FlashAttention\b")
_KERNEL_CALL = re.compile(r"\b\w*_(?:cuda|gpu)\w*\.\w+\(")
# The innermost frame calls a compiled extension's op (``ext.dcnv4_backward(*args)``, ``_ext.rasterize(...)``,
# ``ext_module.deform_conv_forward(...)``, a package's own ``_C.op(...)``, never ``torch._C``): research extensions
# build their custom kernels for CUDA only, so the cpu lane cannot run the op (a guess: some ship a CPU path).
_EXTENSION_CALL = re.compile(r"(?<![\w.])(?P<call>(?:_?ext(?:_module)?|\w+_ext|_C)\.\w+)\(")
_EXTENSION_GUESS = "a compiled extension's error"
_EXTENSION_CPU = ("unsupported: a guess — the failing call is a compiled extension's op (`{call}`), whose custom "
                  "kernels such extensions build for CUDA only: the cpu lane cannot run it (say so if it has a CPU "
                  "path)")
# A device given as a str where a torch.device is read ('str' object has no attribute 'type'): every lane shows it
# (the repro passes "cpu" as a str just as "cuda"), and it is a device-handling bug.
_STR_DEVICE = re.compile(r"'str' object has no attribute '(?:type|index)'")
_SIM_GAP = SIM_GAP
# A CUDA kernel's own bounds or value check failing ("CUDA error: device-side assert triggered",
# "...ClassNLLCriterion.cu:106: ... Assertion `t >= 0 && t < n_classes` failed"): an index, a class target or a loss
# input out of range. The CPU kernel runs the same check and raises it with its own words ("Target 5 is out of
# bounds", "index out of range in self", "all elements of input should be between 0 and 1"), so a CPU run is not free
# of the bug: the lane needs a signature widened to those words.
_DEVICE_ASSERT = re.compile(r"device-side assert(?:ion)? triggered|\.cuh?:\d+:.*\bAssertion\b.*\bfailed", re.IGNORECASE)
_ASSERT_GUESS = "a CUDA kernel's bounds or value check (a device-side assert), which the CPU kernel words its own way"
_ASSERT_LANE = ("unsupported: a guess — a device-side assert is a CUDA kernel's bounds or value check (an index, a "
                "class target or a loss input out of range); {lane} raises the same check with the CPU kernel's own "
                "message (widen the signature to it, then expect reproduces)")


_TWO_GPUS = "a device error between two GPUs"
_CUDA_NAMED = re.compile(r"\bcuda\b", re.IGNORECASE)
# The report asked for the CPU (device="cpu" passed to the library, `--device cpu` on its command) yet the message
# names CUDA: the code ignores the device it is given and uses a GPU where one exists. The cpu lane has none, so it
# cannot show the bug: "unsupported" with that reason (the schema takes a reason on no other kind).
_IGNORED_CPU_GUESS = "a device-placement error: the CPU the report asked for is ignored"
_IGNORED_CPU = ("unsupported: the report asked for the CPU ({asked}), yet the message names CUDA: the code ignores the "
                "device argument and uses a GPU where one exists, which the cpu lane does not have (the cuda lane "
                "shows it with the CPU requested)")
_DEVICE_GUESS = "a device-placement error"
_CUDA_INDEX = re.compile(r"\bcuda:(\d{1,3})\b")
# Older torch words a mismatch of two GPUs without "cuda:N": "... but device 0 does not equal 1 (while checking
# arguments for cudnn_convolution)" (torch < 1.8; a CPU tensor there is device -1, never two indices), and torch
# 0.x's THC "arguments are located on different GPUs".
_OLD_TWO_GPUS = re.compile(r"\bdevice (?P<one>\d{1,3}) does not equal (?P<two>\d{1,3})\b"
                           r"|\b(?:arguments|tensors) are (?:located )?on different GPUs\b", re.IGNORECASE)


_GPU_MODEL_GUESS = "a check of the GPU's generation"
_KERNEL_GUESS = "a CUDA kernel's error"
_GPU_RUNTIME_GUESS = ("a GPU runtime error (GPU memory, a CUDA library, kernel or NCCL): a CPU run never reaches it, "
                      "so cpu passes")
_STR_DEVICE_GUESS = "a device given as a str"
DEVICE_BOUND_GUESSES = (_DEVICE_GUESS, _IGNORED_CPU_GUESS, _TWO_GPUS, _STR_DEVICE_GUESS,  # tagged device-placement
                        *GPU_HOST_GUESSES)
_EIGHT_BIT_GUESS = "a dtype error in an 8-bit (bitsandbytes) run"


# A command launching one process per GPU over several GPUs (``torchrun --nproc_per_node=2``, ``--num_gpus 4``,
# ``CUDA_VISIBLE_DEVICES=0,1``): the failing run is a GPU training run, so a CPU lane is a guess at best.
_GPU_COUNT = re.compile(r"--(?:nproc[_-]per[_-]node|num[_-]gpus|gpus|num[_-]processes|devices|nnodes|num[_-]nodes)"
                        r"[= ](?P<count>\d+|\$\w+)(?![\w,])"
                        r"|(?:\bCUDA_VISIBLE_DEVICES=|--(?:gpus|gpu[_-]ids|device[_-]ids|devices)[= ])"
                        r"(?P<devices>\d+(?:,\d+)+)")
# What the report's text names (its title, its inline code) that runs only over several GPUs: FSDP's hybrid sharding
# (shards within a node, replicates across nodes), DataParallel given two device ids.
_MULTI_GPU_NAMED = re.compile(r"\b_?HYBRID_SHARD\w*|\bdevice_ids\s*=\s*\[\s*\d+\s*,\s*\d+", re.IGNORECASE)
_LAUNCHED_GUESS = "a training run launched over several GPUs"
# A command-line flag asking for the CPU (`ketos test --device cpu`, `--no_cuda`), in the command or the title.
_CPU_FLAG = re.compile(r"(?<![\w-])--(?:device|accelerator)[= ][\"']?cpu(?![\w-])"
                       r"|(?<![\w-])--(?:cpu|no[-_]cuda|use[-_]cpu)(?![\w-])")


def multi_gpu_launch(command: str, named: tuple[str, ...] = ()) -> str:
    """The part of the report's command that starts it over two or more GPUs (a count, a shell variable or a device
    list), else what ``named`` (its title, its inline code) names that runs only over several GPUs, else ""."""
    for match in _GPU_COUNT.finditer(command):
        count = match["count"] or ""
        if match["devices"] or count.startswith("$") or int(count) >= 2:
            return match.group()
    return next((found.group() for text in named if (found := _MULTI_GPU_NAMED.search(text))), "")


def cpu_flag(*texts: str) -> str:
    """The command-line flag the report's command or title asks for the CPU with (``--device cpu``), else ""."""
    return next((match.group() for text in texts if (match := _CPU_FLAG.search(text))), "")


def _expectations(exception: str, message: str, source: str = "", ran_on: str = "",
                  eight_bit: bool = False, launch: str = "", *, cpu_flag: str = "",
                  pinned: bool = False, under: str = "", half: str = "") -> tuple[dict[str, str], str]:
    """Per-lane expectations from the message (and the innermost frame's source line; for a dtype message, where the
    report ran: ``ran_on``, and whether it ran bitsandbytes' 8-bit code: ``eight_bit``; for any other message,
    whether its command launched it over several GPUs: ``launch``; the command-line flag that asked for the CPU:
    ``cpu_flag``; whether a frame is the DataLoader's pin-memory thread: ``pinned``; the GPU-only framework the run
    was under, said in a dtype reason: ``under``; what says the run used fp16: ``half``): a guess, said so."""
    message = message[:MAX_SIGNATURE_SOURCE * 4]  # the message's head decides; its patterns scan it more than once
    asked = cpu_flag or ('device="cpu"' if ran_on == "cpu-arg" else "")
    if (host := gpu_host_lanes(message, pinned, asked, source)) is not None:
        return host
    if named := _two_gpus_named(message):
        gap = "unsupported: needs two GPUs (the message names {}); {}"
        return {"cpu": "passes", "cuda": gap.format(named, "the cuda lane has one"),
                "cuda-sim": gap.format(named, "cuda-sim simulates one device")}, _TWO_GPUS
    if _GPU_MODEL.search(message):
        gap = "unsupported: the message is about the GPU's generation; {}"
        return {"cpu": gap.format("the cpu lane has no GPU kernel to run"),
                "cuda": gap.format("the cuda lane's GPU may be newer than the report's (say which GPU shows it)"),
                "cuda-sim": gap.format("cuda-sim runs no GPU kernel")}, _GPU_MODEL_GUESS
    if asked and (_CUDA_NAMED.search(message) or _GPU_ONLY.search(message)):
        return {"cpu": _IGNORED_CPU.format(asked=asked), "cuda": "reproduces",
                "cuda-sim": _SIM_GAP if _GPU_ONLY.search(message) else "reproduces"}, _IGNORED_CPU_GUESS
    if (runtime := _gpu_runtime(exception, message)) is not None:
        return runtime
    if (kernel := _kernel_lanes(message, source)) is not None:
        return kernel
    if _STR_DEVICE.search(message):
        return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, _STR_DEVICE_GUESS
    if _DEVICE_ERROR.search(message):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}, _DEVICE_GUESS
    if eight_bit and _DTYPE.search(message):
        gap = "unsupported: a guess — the run's 8-bit layers are bitsandbytes' CUDA kernels; {}"
        return {"cpu": gap.format("the cpu lane has none to run"), "cuda": "reproduces",
                "cuda-sim": gap.format("cuda-sim computes on the CPU and runs no CUDA kernel")}, _EIGHT_BIT_GUESS
    return _by_run(message, ran_on.removesuffix("-arg"), launch, under, half)


def _two_gpus_named(message: str) -> str:
    """What in the message names two different GPUs ("cuda:0 and cuda:1", "device 0 ... 1", "different GPUs"), else
    ""."""
    if len(indices := set(_CUDA_INDEX.findall(message))) >= 2:
        return " and ".join(sorted(f"cuda:{i}" for i in indices)[:2])
    old = _OLD_TWO_GPUS.search(message)
    if old is None or (old["one"] is not None and old["one"] == old["two"]):
        return ""
    return f"devices {old['one']} and {old['two']}" if old["one"] is not None else f"'{old.group()}'"


def _gpu_runtime(exception: str, message: str) -> tuple[dict[str, str], str] | None:
    """Lanes of a CUDA runtime error (a device-side assert first: the CPU runs the same check), else None."""
    if _DEVICE_ASSERT.search(message):
        return {"cpu": _ASSERT_LANE.format(lane="the cpu lane"), "cuda": "reproduces",
                "cuda-sim": _ASSERT_LANE.format(lane="cuda-sim (torch's CPU kernels)")}, _ASSERT_GUESS
    if _GPU_ONLY.search(message) or exception in ("OutOfMemoryError", "CudaError"):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": _SIM_GAP}, _GPU_RUNTIME_GUESS
    return None


def _kernel_lanes(message: str, source: str) -> tuple[dict[str, str], str] | None:
    """Lanes of an error raised in a CUDA kernel (the message names the CUDA backend, the innermost frame calls a
    kernel) or inside a compiled extension's op; None for any other."""
    if _CUDA_BACKEND.search(message) or _KERNEL_CALL.search(source):
        return {"cpu": "unsupported: the failing call is a CUDA kernel; the cpu lane does not reach it",
                "cuda": "reproduces", "cuda-sim": _SIM_GAP}, _KERNEL_GUESS
    if extension := _EXTENSION_CALL.search(source):
        return {"cpu": _EXTENSION_CPU.format(call=extension["call"]), "cuda": "reproduces",
                "cuda-sim": _SIM_GAP}, _EXTENSION_GUESS
    return None


def _by_run(message: str, ran_on: str, launch: str, under: str = "", half: str = "") -> tuple[dict[str, str], str]:
    """Lanes for a message no rule above reads, from how the report ran: a dtype error on one device, a Half/Float
    mismatch (``half``: what says the run used fp16), a run launched over several GPUs, else every lane reproduces."""
    if ran_on and _DTYPE.search(message):  # which kernels (and autocast) run depends on the device
        other = "cpu" if ran_on == "gpu" else "cuda"
        setup = f" under {under}" if under and ran_on == "gpu" else ""
        gap = (f"unsupported: a guess — the report ran on the {ran_on.upper()}{setup} and a dtype error depends on the "
               f"device's kernels (say whether the {other} lane shows it)")
        lanes = {"cpu": gap, "cuda": "reproduces", "cuda-sim": "reproduces"} if ran_on == "gpu" else \
            {"cpu": "reproduces", "cuda": gap, "cuda-sim": gap}
        return lanes, f"a dtype error seen on the {ran_on.upper()}"
    if _HALF_FLOAT.search(message) and (_DTYPE.search(message) or "type" in message):
        return {"cpu": _HALF_CPU.format(run=f"the report's run uses fp16 (`{half}`)" if half else
                                        "fp16 math is a GPU run's (`--fp16`, autocast, a `.half()` model on a GPU)"),
                "cuda": "reproduces", "cuda-sim": "reproduces"}, _HALF_GUESS
    if launch:
        how = (f"uses FSDP's hybrid sharding (`{launch}`: shards within a node, replicates across nodes over NCCL "
               "groups), which runs over GPUs" if "hybrid" in launch.lower() else
               f"is a GPU training run launched over several GPUs (`{launch}`)")
        return {"cpu": f"unsupported: a guess — the report's run {how}; say whether one CPU process shows it",
                "cuda": "reproduces", "cuda-sim": "reproduces"}, _LAUNCHED_GUESS
    if _DTYPE.search(message):
        return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, _DTYPE_GUESS
    return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, "not a device error"


_DTYPE_GUESS = ("a dtype mismatch, which the op raises on every device alike (not a device error; say so if the "
               "report's GPU run made it: autocast, a GPU-only kernel, an 8-bit load)")
_DTYPE = re.compile(r"expected scalar type|same dtype|\bdtype\b|\b(?:Half|BFloat16)\b")
# A Half/Float mismatch ("expected scalar type Half but found Float", "float != c10::Half"): fp16 is a GPU run's
# precision (`--fp16`, AMP's autocast, a `.half()` model on a GPU); a CPU run of the same code computes in float32 or
# takes other kernels, so the cpu lane is not claimed to reproduce. bf16 (which CPUs run) keeps every device alike.
_HALF_FLOAT = re.compile(r"\bHalf(?:Tensor)?\b(?=.*\b[Ff]loat(?:Tensor)?\b)"
                         r"|\b[Ff]loat(?:Tensor)?\b(?=.*\bHalf(?:Tensor)?\b)")
_HALF_GUESS = "a Half/Float mismatch of an fp16 run, which runs on a GPU"
_HALF_CPU = ("unsupported: a guess — {run}; a Half/Float mismatch comes from fp16 on a GPU, and a CPU run of the "
             "same code computes in float32 or takes other kernels (say whether the cpu lane shows it)")
# What says a run used fp16: its flags, autocast/AMP, a `.half()` model (the command, the title, inline code, frames).
_HALF_RUN = re.compile(r"--(?:fp16|half|amp)\b|--mixed[_-]precision[= ]['\"]?fp16|\bprecision[= ]['\"]?16\b"
                       r"|\bautocast|\bGradScaler\b|\bgrad_scaler\b|\bcuda[./]amp\b|\.half\(\)|\bfp16\b", re.IGNORECASE)


def half_run(*texts: str) -> str:
    """What in ``texts`` (the command, the title, inline code, frames' paths and lines) says the run used fp16."""
    return next((match.group() for text in texts if (match := _HALF_RUN.search(text))), "")
