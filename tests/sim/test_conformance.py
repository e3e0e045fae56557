"""Placement conformance: each scenario states what real CUDA (one GPU, torch 2.13) does and the
simulation must do the same: the same result device, or the same exception type and exact text.

Sources, cited per scenario:
  [TI]    aten/src/ATen/TensorIterator.cpp: ``TensorIteratorBase::compute_types`` takes the first
          non-CPU operand (outputs first) as the common device; a 0-dim CPU *input* may join a CUDA
          kernel when the op allows CPU scalars (binary/ternary configs, at most one, "Trying to
          pass too many CPU scalars to non-CPU kernel!"), an output never; the message is
          "Expected all tensors to be on the same device, but found at least two devices, C and D!".
          ``build()`` runs ``compute_shape`` before ``compute_types``, so shape errors come first.
  [CG]    torchgen/dest/register_dispatch_key.py ``gen_device_check`` + aten/src/ATen/core/adaption.cpp:
          ops without ``device_check: NoCheck`` check out= then positional tensor args before their
          kernel; torch 2.13's text: "Expected all tensors to be on the same device, but got ARG is
          on D, different from other tensors on C (when checking argument in method WRAPPER)".
  [IDX]   aten/src/ATen/native/TensorAdvancedIndexing.cpp: ``check_indices_on_cpu_or_selfdevice``
          (index meta) and ``_index_put_impl_`` (0-dim values move; accumulate checks the value
          device; otherwise TensorIterator).
  [WHERE] aten/src/ATen/native/TensorCompare.cpp ``where_self_out``: 0-dim CPU inputs move to the
          first non-CPU input's device.
  [MF]    aten/src/ATen/native/cuda/Indexing.cu ``masked_fill__cuda``: "expected self and mask to be
          on the same device, but got mask on M and self on S".
  [CONV]  aten/src/ATen/native/Convolution.cpp ``_convolution``: shape checks, then the backend
          (cuDNN for a CUDA input; for a CPU input what ``torch._C._select_conv_backend`` picks, here
          MKLDNN) and ``check_input_same_type_as_parameters`` with ``Tensor::toString`` types.
  [RNN]   aten/src/ATen/native/RNN.cpp ``check_attributes``: the input's device against each hidden
          state, then each parameter ("Input and parameter tensors are not at the same device, found
          input tensor at cpu and parameter tensor at cuda:0", as posted upstream from ``_VF.lstm``).
  [NP]    torch/csrc/utils/tensor_numpy.cpp ``tensor_to_numpy`` (TypeError).
  [GEN]   aten/src/ATen/core/Generator.h ``check_generator``.
  [DOC]   PyTorch docs: ``Tensor.to``/``copy_`` copy across devices; ``*_like``/``new_*`` inherit
          the input's device unless ``device=`` is given.
  [TYPE]  torch/csrc/autograd/python_variable_methods.cpp ``THPVariable_type``: a ``torch.dtype``
          keeps the device; a type (its ``tp_name``) or a string names dtype and device type
          (``torch.Tensor`` is the default CPU type); anything else "dtype must be a type, str, or
          dtype object" (TypeError), an unknown name "invalid type: 'NAME'" (ValueError).
  [META]  c10/core/DispatchKeySet.h: ``Meta`` is the highest-priority backend bit, so an operator
          with a meta operand runs its meta kernel whatever the other devices are; those kernels
          check little: torch/_prims_common ``check_same_device`` ("Tensor on device D is not on the
          expected device E!"), torch/_prims_common/wrappers ``_safe_copy_out`` ("Attempting to copy
          from device D to device E, but cross-device copies are not allowed!"), C++ meta kernels
          none (``cpu @ meta`` returns a tensor on the first operand's device). Checked on this CPU
          build with CPU operands (``test_without_cuda_the_simulation_is_plain_torch``).
  [COMP]  composite kernels that check devices before they decompose (aten/src/ATen/native/):
          TensorAdvancedIndexing.cpp ``take_along_dim`` (``checkDevice``), Sorting.cpp
          ``quantile_checks``, SpectralOps.cpp ``stft``/``istft``, LinearAlgebra.cpp ``multi_dot_impl``
          and ``tensordot_out``, TensorShape.cpp ``meshgrid``/``block_diag``, ReduceOps.cpp
          ``gradient_helper``/``max_unary_out``, GridSamplerUtils.h, WeightNorm.cpp, Distance.cpp
          ``cdist_impl``, transformers/sdp_utils_cpp.h ``validate_sdpa_input``, TensorCompare.cpp
          ``mode_out``, Blas.cpp ``dot_out``.
  [LA]    aten/src/ATen/native/BatchLinearAlgebra.cpp, LinearAlgebra.cpp: composite linalg ``*_out``
          kernels that copy a temporary into ``out`` start with LinearAlgebraUtils.h ``checkSameDevice``
          ("FN: Expected result and input tensors to be on the same device, but got result on D and
          input on E"); other composite copies raise NotSimulatedError (cuda_sim/_out.py).
  [OUT]   torchgen/dest/register_dispatch_key.py: a structured out= wrapper's ``resize_out``
          ("Expected out tensor to have device D, but got E instead") for reductions and scans,
          whose meta functions build no TensorIterator.
  [FE]    native/cuda/ForeachBinaryOpScalarTensor.cu (fast path: "scalar tensor expected to be on
          D but is on E"; slow path: one op per tensor), native/ForeachUtils.h
          ``convert_tensor_to_scalar_list`` ("Expected scalars to be on CPU"); the Python argument
          parser picks ``_foreach_add.Scalar`` for a 0-dim tensor without grad (``.item()``).
  [CTC]   native/LossCTC.cpp ``ctc_loss``: plain tensors' lengths are read on the host, targets
          move to log_probs' device (``targets.to(log_probs.device(), kLong)``); ``_ctc_loss``
          itself has the generated check.
  [PACK]  native/PackedSequence.cpp: batch sizes and lengths stay on the CPU, the data on the
          input's device.
  [STOR]  torch/storage.py: ``TypedStorage(device=...)`` and ``torch.cuda.FloatStorage`` build an
          ``UntypedStorage(..., device=...)``; a tensor ``set_`` to a storage lives on its device.
  [ASARR] torch/csrc/utils/tensor_new.cpp ``asarray``: a storage becomes a tensor on the storage's own
          device, then ``.to(device)`` copies it when ``device`` differs.
  [SYNC]  c10/cuda/CUDAFunctions.cpp ``warn_or_error_on_sync`` ("called a synchronizing CUDA
          operation"), called where the host waits for the GPU (``_local_scalar_dense``, D2H copies).
  [DEV]   torch/csrc/Device.cpp ``THPDevice_pynew``: a bare index (int or NumPy integer, not bool) is
          that index of ``at::getAccelerator(true)`` (``cuda`` on a GPU host); a negative one raises
          "Device index must not be negative"; a string of digits is an invalid device string.
          accelerate's ``set_module_tensor_to_device`` does ``torch.device(device)`` with device_map ints.
  [SEED]  upstream tracebacks of the five seed bugs (../shared/research/seed-bugs.md): OneTrainer
          #459 (embedding), VAR #127 (fused AdamW state_steps, older message format), LyCORIS #146
          (weight - cpu tensor), diffusers #9895 / ai-toolkit #212 (zeros(cuda) + arange),
          DeepSpeed #5538 stage3.py:2117 (cpu grad ``mul_`` by a cuda 0-dim norm).
"""

from __future__ import annotations

import inspect
import io
import mmap
import os
import pickle
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from cuda_sim import NotSimulatedError, simulate

TI = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def cg(arg: str, device: str, common: str, method: str) -> str:
    return (f"Expected all tensors to be on the same device, but got {arg} is on {device}, different from "
            f"other tensors on {common} (when checking argument in method {method})")


def cuda(*shape, **kwargs):
    return torch.ones(*shape, device="cuda", **kwargs)


def cpu(*shape, **kwargs):
    return torch.ones(*shape, **kwargs)


@dataclass(frozen=True)
class Scenario:
    id: str
    source: str
    run: Callable[[], object]
    device: str | None = None  # the result's device when real CUDA runs it
    error: type[BaseException] | None = None
    message: str | None = None
    dtype: torch.dtype | None = None  # the result's dtype, where the scenario is about it


def _deepspeed_unscale_and_clip() -> None:
    # deepspeed 0.14.2 stage3.py: norm of per-group cuda norms, clip > 1, cpu fp32 partition grad
    norm_groups = [torch.tensor([3.0], device="cuda").squeeze(), torch.tensor([4.0], device="cuda").squeeze()]
    total_norm = torch.norm(torch.stack(norm_groups))
    clip = ((total_norm / 1.0) + 1e-6) / 1e-3
    combined_scale = clip * 1.0
    cpu_grad_partition = torch.ones(676)
    cpu_grad_partition.mul_(1.0 / combined_scale)


def _flux_latent_image_ids() -> None:
    # diffusers@5588725e8e FluxPipeline._prepare_latent_image_ids
    height, width = 4, 4
    latent_image_ids = torch.zeros(height, width, 3, device=torch.device("cuda"), dtype=torch.float32)
    latent_image_ids[..., 1] = latent_image_ids[..., 1] + torch.arange(height)[:, None]


def _lycoris_extract_diff() -> None:
    # lycoris 2.1.0.dev7 extract_diff: module moved to extract_device, einsum result moved to cpu
    conv = torch.nn.Conv2d(16, 16, 3).to("cuda")
    root_weight = conv.weight
    extract_c = torch.randn(16, 16, 3, 3, device="cuda")
    up, down = torch.randn(16, 16, device="cuda"), torch.randn(16, 16, device="cuda")
    _ = root_weight - torch.einsum("i j k l, j r, p i -> p r k l", extract_c, up, down).detach().cpu().contiguous()


def _onetrainer_clip_tokens(weight_device: str, ids_device: str) -> None:
    embedding = torch.nn.Embedding(49408, 8).to(weight_device)
    embedding(torch.tensor([[49406, 320, 49407]], device=ids_device))


def _fused_adamw(step_device: str) -> None:
    params = [torch.ones(4, device="cuda")]
    grads = [torch.ones(4, device="cuda")]
    exp_avgs, exp_avg_sqs = [torch.zeros(4, device="cuda")], [torch.zeros(4, device="cuda")]
    steps = [torch.tensor(1.0, device=step_device)]
    torch._fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, [], steps, lr=1e-3, beta1=0.9, beta2=0.999,
                        weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)


def _var_resume_step() -> None:
    # VAR #127: torch.load(map_location="cpu") left state['step'] on the CPU for a fused AdamW
    model = torch.nn.Linear(4, 4).cuda()
    optimizer = torch.optim.AdamW(model.parameters(), fused=True)
    model(cuda(2, 4)).sum().backward()
    optimizer.step()
    for state in optimizer.state.values():
        state["step"] = state["step"].cpu()
    optimizer.step()


def meta(*shape, **kwargs):
    return torch.ones(*shape, device="meta", **kwargs)


def _meta_message(device: str, expected: str) -> str:
    return f"Tensor on device {device} is not on the expected device {expected}!"


def _copy_message(source: str, target: str) -> str:
    return f"Attempting to copy from device {source} to device {target}, but cross-device copies are not allowed!"


def _index_put(value: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    target = torch.zeros(4, device="cuda")
    return target.index_put_((torch.tensor([0, 1]),), value, accumulate=accumulate)


def _set_item_cpu_scalar() -> torch.Tensor:
    target = torch.zeros(4, device="cuda")
    target[torch.tensor([0, 1])] = torch.tensor(5.0)
    return target


def _conv(input_device: str, weight_device: str, bias_device: str | None = None) -> torch.Tensor:
    conv = torch.nn.Conv2d(3, 4, 3).to(weight_device)
    if bias_device is not None:
        conv.bias.data = conv.bias.data.to(bias_device)
    return conv(torch.randn(2, 3, 8, 8, device=input_device))


SCENARIOS = [
    # --- TensorIterator (elementwise) ops
    Scenario("add cuda + cpu", "[TI]", lambda: cuda(3) + cpu(3), error=RuntimeError, message=TI),
    Scenario("add cpu + cuda (common device named first)", "[TI]", lambda: cpu(3) + cuda(3),
             error=RuntimeError, message=TI),
    Scenario("add cuda + cpu 0-dim scalar", "[TI] allow_cpu_scalars", lambda: cuda(3) + torch.tensor(2.0),
             device="cuda:0"),
    Scenario("mul cpu 0-dim * cuda", "[TI] allow_cpu_scalars", lambda: torch.tensor(2.0) * cuda(3),
             device="cuda:0"),
    Scenario("add cpu + cuda 0-dim (only CPU scalars are exempt)", "[TI]",
             lambda: cpu(3) + torch.tensor(2.0, device="cuda"), error=RuntimeError, message=TI),
    Scenario("cuda add_ cpu 0-dim (input scalar, in-place)", "[TI]",
             lambda: cuda(3).add_(torch.tensor(1.0)), device="cuda:0"),
    Scenario("cpu mul_ cuda 0-dim (output never exempt)", "[TI]",
             lambda: cpu(3).mul_(torch.tensor(0.5, device="cuda")), error=RuntimeError, message=TI),
    Scenario("seed DeepSpeed #5538: cpu grad mul_ by 1/torch.norm of cuda norms", "[SEED] [TI]",
             _deepspeed_unscale_and_clip, error=RuntimeError, message=TI),
    Scenario("add out= on the cpu", "[TI] outputs", lambda: torch.add(cuda(3), cuda(3), out=cpu(3)),
             error=RuntimeError, message=TI),
    Scenario("two cpu scalars into a cuda out=", "[TI] max_cpu_scalars_on_non_cpu = 1",
             lambda: torch.add(torch.tensor(1.0), torch.tensor(2.0), out=torch.zeros((), device="cuda")),
             error=RuntimeError, message="Trying to pass too many CPU scalars to non-CPU kernel!"),
    Scenario("python scalar", "[TI] wrapped numbers", lambda: cuda(3) * 2, device="cuda:0"),
    Scenario("shape mismatch is reported before the device mix", "[TI] build() order",
             lambda: cuda(3) + cpu(4), error=RuntimeError,
             message="The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 0"),
    Scenario("lerp_ cpu self, cuda end", "[TI]", lambda: cpu(3).lerp_(cuda(3), 0.5),
             error=RuntimeError, message=TI),
    Scenario("seed diffusers #9895: zeros(cuda) + arange (cpu)", "[SEED] [TI]", _flux_latent_image_ids,
             error=RuntimeError, message=TI),
    Scenario("seed LyCORIS #146: cuda weight - cpu tensor", "[SEED] [TI]", _lycoris_extract_diff,
             error=RuntimeError, message=TI),
    Scenario("where cuda cond, cuda x, cpu 0-dim y", "[WHERE]",
             lambda: torch.where(cuda(3, dtype=torch.bool), cuda(3), torch.tensor(0.0)), device="cuda:0"),
    Scenario("where cuda cond, cuda x, cpu y", "[WHERE] [TI]",
             lambda: torch.where(cuda(3, dtype=torch.bool), cuda(3), cpu(3)), error=RuntimeError, message=TI),
    # --- ops with the generated (codegen) device check
    Scenario("mm cuda @ cpu: device before shapes", "[CG]", lambda: torch.mm(cuda(2, 3), cpu(4, 5)),
             error=RuntimeError, message=cg("mat2", "cpu", "cuda:0", "wrapper_CUDA_mm")),
    Scenario("matmul 2-D cpu @ cuda", "[CG]", lambda: cpu(2, 3) @ cuda(3, 2),
             error=RuntimeError, message=cg("mat2", "cuda:0", "cpu", "wrapper_CUDA_mm")),
    Scenario("bmm cuda, cpu", "[CG]", lambda: torch.bmm(cuda(1, 2, 3), cpu(1, 3, 2)),
             error=RuntimeError, message=cg("mat2", "cpu", "cuda:0", "wrapper_CUDA_bmm")),
    Scenario("linear: cpu input, cuda weight and bias", "[CG] linear -> addmm(bias, input, weight.t())",
             lambda: torch.nn.Linear(3, 2).cuda()(cpu(4, 3)), error=RuntimeError,
             message=cg("mat1", "cpu", "cuda:0", "wrapper_CUDA_addmm")),
    Scenario("linear all cuda", "[CG]", lambda: torch.nn.Linear(3, 2).cuda()(cuda(4, 3)), device="cuda:0"),
    Scenario("seed OneTrainer #459: embedding cuda ids, cpu weight", "[SEED] [CG] embedding -> index_select",
             lambda: _onetrainer_clip_tokens("cpu", "cuda"), error=RuntimeError,
             message=cg("index", "cuda:0", "cpu", "wrapper_CUDA__index_select")),
    Scenario("embedding cpu ids, cuda weight (vice versa)", "[SEED] [CG]",
             lambda: _onetrainer_clip_tokens("cuda", "cpu"), error=RuntimeError,
             message=cg("index", "cpu", "cuda:0", "wrapper_CUDA__index_select")),
    Scenario("embedding all cuda", "[CG]", lambda: F.embedding(torch.tensor([1, 2], device="cuda"), cuda(4, 3)),
             device="cuda:0"),
    Scenario("index_select cuda self, cpu index", "[CG]",
             lambda: torch.index_select(cuda(4), 0, torch.tensor([0])), error=RuntimeError,
             message=cg("index", "cpu", "cuda:0", "wrapper_CUDA__index_select")),
    Scenario("cat [cuda, cpu]", "[CG]", lambda: torch.cat([cuda(2), cpu(2)]), error=RuntimeError,
             message=cg("tensors", "cpu", "cuda:0", "wrapper_CUDA_cat")),
    Scenario("stack [cuda, cpu] (stack -> cat)", "[CG]", lambda: torch.stack([cuda(2), cpu(2)]),
             error=RuntimeError, message=cg("tensors", "cpu", "cuda:0", "wrapper_CUDA_cat")),
    Scenario("cross_entropy cuda logits, cpu target", "[CG] cross_entropy -> nll_loss_forward",
             lambda: F.cross_entropy(cuda(2, 3), torch.tensor([0, 1])), error=RuntimeError,
             message=cg("target", "cpu", "cuda:0", "wrapper_CUDA_nll_loss_forward")),
    Scenario("layer_norm cuda input, cpu weight", "[CG]",
             lambda: F.layer_norm(cuda(2, 4), (4,), cpu(4), cpu(4)), error=RuntimeError,
             message=cg("weight", "cpu", "cuda:0", "wrapper_CUDA__native_layer_norm")),
    Scenario("seed VAR #127: _fused_adamw_ with cpu state_steps", "[SEED] [CG]", lambda: _fused_adamw("cpu"),
             error=RuntimeError, message=cg("state_steps", "cpu", "cuda:0", "wrapper_CUDA___fused_adamw_")),
    Scenario("_fused_adamw_ with cuda state_steps", "[CG]", lambda: _fused_adamw("cuda"), device=None),
    Scenario("AdamW(fused=True) step after step moved to cpu", "[SEED] [CG]", _var_resume_step,
             error=RuntimeError, message=cg("state_steps", "cpu", "cuda:0", "wrapper_CUDA___fused_adamw_")),
    # --- indexing
    Scenario("cuda tensor indexed by cpu indices", "[IDX]", lambda: cuda(4)[torch.tensor([0, 2])],
             device="cuda:0"),
    Scenario("cpu tensor indexed by cuda indices", "[IDX]",
             lambda: cpu(4)[torch.tensor([0, 2], device="cuda")], error=RuntimeError,
             message="indices should be either on cpu or on the same device as the indexed tensor (cpu)"),
    Scenario("index_put_ cpu 0-dim value", "[IDX]", lambda: _index_put(torch.tensor(5.0)), device="cuda:0"),
    Scenario("setitem cuda[cpu idx] = cpu 0-dim", "[IDX]", _set_item_cpu_scalar, device="cuda:0"),
    Scenario("index_put_ cpu values", "[IDX] TensorIterator", lambda: _index_put(cpu(2)),
             error=RuntimeError, message=TI),
    Scenario("index_put_ accumulate cpu values", "[IDX]", lambda: _index_put(cpu(2), accumulate=True),
             error=RuntimeError, message="expected device cuda:0 but got device cpu for value tensor"),
    Scenario("masked_fill_ cuda self, cpu mask", "[MF]",
             lambda: cuda(3).masked_fill_(torch.tensor([True, False, True]), 0.0), error=RuntimeError,
             message="expected self and mask to be on the same device, but got mask on cpu and self on cuda:0"),
    # --- convolution
    Scenario("conv2d cpu input, cuda weight", "[CONV] MKLDNN backend", lambda: _conv("cpu", "cuda"),
             error=RuntimeError, message="Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) "
             "should be the same or input should be a MKLDNN tensor and weight is a dense tensor"),
    Scenario("conv2d cuda input, cpu weight", "[CONV] cuDNN backend", lambda: _conv("cuda", "cpu"),
             error=RuntimeError,
             message="Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"),
    Scenario("conv2d cuda input and weight, cpu bias", "[CONV]", lambda: _conv("cuda", "cuda", "cpu"),
             error=RuntimeError,
             message="Input type (torch.cuda.FloatTensor) and bias type (torch.FloatTensor) should be the same"),
    Scenario("conv2d all cuda", "[CONV]", lambda: _conv("cuda", "cuda"), device="cuda:0"),
    # --- recurrent layers
    Scenario("LSTM cpu input, cuda parameters", "[RNN]", lambda: torch.nn.LSTM(3, 4).cuda()(cpu(2, 1, 3)),
             error=RuntimeError, message="Input and parameter tensors are not at the same device, found input "
             "tensor at cpu and parameter tensor at cuda:0"),
    Scenario("GRU cuda input and parameters, cpu h0", "[RNN]",
             lambda: torch.nn.GRU(3, 4).cuda()(cuda(2, 1, 3), torch.zeros(1, 1, 4)), error=RuntimeError,
             message="Input and hidden tensors are not at the same device, found input tensor at cuda:0 and hidden "
             "tensor at cpu"),
    Scenario("LSTM all cuda", "[RNN]", lambda: torch.nn.LSTM(3, 4).cuda()(cuda(2, 1, 3))[0], device="cuda:0"),
    # --- copies, factories, conversions
    Scenario("cuda copy_ from cpu", "[DOC]", lambda: cuda(3).copy_(cpu(3)), device="cuda:0"),
    Scenario("cpu copy_ from cuda", "[DOC]", lambda: cpu(3).copy_(cuda(3)), device="cpu"),
    Scenario("to('cuda')", "[DOC]", lambda: cpu(3).to("cuda"), device="cuda:0"),
    Scenario("to(other cuda tensor)", "[DOC]", lambda: cpu(3).to(cuda(1, dtype=torch.float16)), device="cuda:0"),
    Scenario("cuda to(float16) keeps the device", "[DOC]", lambda: cuda(3).to(torch.float16), device="cuda:0"),
    Scenario(".cuda(0) then .cpu()", "[DOC]", lambda: cpu(3).cuda(0).cpu(), device="cpu"),
    Scenario("ones_like(cuda)", "[DOC]", lambda: torch.ones_like(cuda(3)), device="cuda:0"),
    Scenario("zeros_like(cuda, device='cpu')", "[DOC]", lambda: torch.zeros_like(cuda(3), device="cpu"),
             device="cpu"),
    Scenario("new_zeros of a cuda tensor", "[DOC]", lambda: cuda(3).new_zeros(2), device="cuda:0"),
    Scenario("as_tensor(cpu tensor, device='cuda') copies", "[DOC]",
             lambda: torch.as_tensor(cpu(3), device="cuda"), device="cuda:0"),
    Scenario("arange(device=0) means cuda:0", "[DOC]", lambda: torch.arange(3, device=0), device="cuda:0"),
    Scenario("numpy() of a cuda tensor", "[NP]", lambda: cuda(3).numpy(), error=TypeError,
             message="can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu() to copy the tensor "
             "to host memory first."),
    Scenario("cuda randn with a cpu generator", "[GEN]",
             lambda: torch.randn(3, device="cuda", generator=torch.Generator()), error=RuntimeError,
             message="Expected a 'cuda' device type for generator but found 'cpu'"),
    Scenario("cpu randn with a cuda generator", "[GEN]",
             lambda: torch.randn(3, generator=torch.Generator("cuda")), error=RuntimeError,
             message="Expected a 'cpu' device type for generator but found 'cuda'"),
]


TYPE_SCENARIOS = [
    Scenario("cpu type(torch.float64) keeps the cpu", "[TYPE]", lambda: cpu(2).type(torch.float64), device="cpu",
             dtype=torch.float64),
    Scenario("cuda type(torch.float64) keeps the gpu", "[TYPE]", lambda: cuda(2).type(torch.float64),
             device="cuda:0", dtype=torch.float64),
    Scenario("cuda type(dtype=..., non_blocking=True)", "[TYPE]",
             lambda: cuda(2).type(dtype=torch.float16, non_blocking=True), device="cuda:0", dtype=torch.float16),
    Scenario("cuda type(torch.float64, True) positional", "[TYPE]", lambda: cuda(2).type(torch.float64, True),
             device="cuda:0", dtype=torch.float64),
    Scenario("cuda type(dtype, memory_format=channels_last)", "[TYPE]",
             lambda: cuda(1, 2, 3, 4).type(torch.float64, memory_format=torch.channels_last).contiguous(
                 memory_format=torch.channels_last), device="cuda:0", dtype=torch.float64),
    Scenario("cpu type('torch.cuda.HalfTensor')", "[TYPE]", lambda: cpu(2).type("torch.cuda.HalfTensor"),
             device="cuda:0", dtype=torch.float16),
    Scenario("cuda type('torch.FloatTensor') moves to the cpu", "[TYPE]", lambda: cuda(2).type("torch.FloatTensor"),
             device="cpu", dtype=torch.float32),
    Scenario("cpu type(torch.cuda.DoubleTensor)", "[TYPE]", lambda: cpu(2).type(torch.cuda.DoubleTensor),
             device="cuda:0", dtype=torch.float64),
    Scenario("cuda type(torch.DoubleTensor)", "[TYPE]", lambda: cuda(2).type(torch.DoubleTensor), device="cpu",
             dtype=torch.float64),
    Scenario("cuda half type(torch.Tensor): the default cpu type", "[TYPE]",
             lambda: cuda(2, dtype=torch.float16).type(torch.Tensor), device="cpu", dtype=torch.float32),
    Scenario("type() names the cuda type", "[TYPE]", lambda: torch.tensor([cuda(1).type() == "torch.cuda.FloatTensor"]),
             device="cpu"),
    Scenario("type(3)", "[TYPE]", lambda: cuda(2).type(3), error=TypeError,
             message="dtype must be a type, str, or dtype object"),
    Scenario("type('torch.cuda.Foo')", "[TYPE]", lambda: cuda(2).type("torch.cuda.Foo"), error=ValueError,
             message="invalid type: 'torch.cuda.Foo'"),
    Scenario("type(int)", "[TYPE]", lambda: cuda(2).type(int), error=ValueError, message="invalid type: 'int'"),
    Scenario("to(dtype=..., device='cuda') keywords in any order", "[DOC]",
             lambda: cpu(2).to(dtype=torch.float16, device="cuda"), device="cuda:0", dtype=torch.float16),
    Scenario("to('cuda', memory_format=channels_last)", "[DOC]",
             lambda: cpu(1, 2, 3, 4).to("cuda", memory_format=torch.channels_last).contiguous(
                 memory_format=torch.channels_last), device="cuda:0"),
    Scenario("cuda(device=0, non_blocking=True, memory_format=...)", "[DOC]",
             lambda: cpu(1, 2, 3, 4).cuda(device=0, non_blocking=True, memory_format=torch.channels_last),
             device="cuda:0"),
    Scenario("module.type(torch.cuda.HalfTensor)", "[TYPE] nn.Module.type",
             lambda: torch.nn.Linear(2, 2).type(torch.cuda.HalfTensor).weight, device="cuda:0", dtype=torch.float16),
    Scenario("module.to(cuda half tensor)", "[DOC]",
             lambda: torch.nn.Linear(2, 2).to(cuda(1, dtype=torch.float16)).weight, device="cuda:0",
             dtype=torch.float16),
]

META_SCENARIOS = [
    Scenario("cuda + meta", "[META] prims elementwise meta", lambda: cuda(2) + meta(2), error=RuntimeError,
             message=_meta_message("meta", "cuda:0")),
    Scenario("meta + cuda", "[META]", lambda: meta(2) + cuda(2), error=RuntimeError,
             message=_meta_message("cuda:0", "meta")),
    Scenario("cuda input @ meta weight: the meta kernel checks nothing", "[META] mm meta",
             lambda: cuda(2, 2) @ meta(2, 2), device="cuda:0"),
    Scenario("F.linear(cuda input, meta weight)", "[META]",
             lambda: F.linear(cuda(2, 2), meta(2, 2)), device="cuda:0"),
    Scenario("cuda.add_(meta)", "[META]", lambda: cuda(2).add_(meta(2)), device="cuda:0"),
    Scenario("add(meta, out=cuda)", "[META] _safe_copy_out", lambda: torch.add(meta(2), 1, out=cuda(2)),
             error=RuntimeError, message=_copy_message("meta", "cuda:0")),
    Scenario("cat [meta, cuda]", "[META]", lambda: torch.cat([meta(2), cuda(2)]), error=RuntimeError,
             message=_meta_message("cuda:0", "meta")),
    Scenario("cuda.copy_(meta)", "[META]", lambda: cuda(2).copy_(meta(2)), error=NotImplementedError,
             message="Cannot copy out of meta tensor; no data!"),
    Scenario("meta module .to('cuda')", "[META] torch/nn/modules/module.py _apply",
             lambda: torch.nn.Linear(2, 2, device="meta").to("cuda"), error=NotImplementedError,
             message="Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of "
             "torch.nn.Module.to() when moving module from meta to a different device."),
    Scenario("meta module .to_empty(device='cuda')", "[DOC]",
             lambda: torch.nn.Linear(2, 2, device="meta").to_empty(device="cuda").weight, device="cuda:0"),
    Scenario("cuda tensor .to('meta')", "[DOC]", lambda: cuda(2).to("meta"), device="meta"),
]

class Wrapped:
    """A non-tensor with its own ``__torch_function__`` (a small vector/scalar wrapper class)."""

    def __init__(self, data: torch.Tensor) -> None:
        self.data = data

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        unwrap = [a.data if isinstance(a, Wrapped) else a for a in args]
        return func(*unwrap, **(kwargs or {}))


class Marked(torch.Tensor):
    """A subclass with torch's default handler: results keep the subclass."""


class PlainRun(torch.Tensor):
    """An index-like subclass whose handler runs the plain operator with torch function off."""

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        with torch._C.DisableTorchFunction():
            return func(*args, **(kwargs or {}))


def _dynamo_reset() -> None:
    import torch._dynamo

    torch._dynamo.reset()  # imports torch._inductor.cudagraph_trees when cuda is available


def _traced_conv(device: str) -> tuple[tuple[str, ...], torch.Tensor]:
    """The traced graph's operators and the traced module's result (einops' test_torch_layer traces a CPU
    model with a convolution: the tracer records ``_convolution``, the part ``convolution`` calls)."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Conv2d(1, 2, 3), torch.nn.ReLU(), torch.nn.ConvTranspose2d(2, 1, 2)).to(device)
    traced = torch.jit.trace(model, torch.randn(1, 1, 5, 5, device=device))  # check_trace: runs it again
    out = traced(torch.randn(2, 1, 5, 5, device=device))
    kinds = tuple(node.kind() for node in traced.inlined_graph.nodes() if node.kind().startswith("aten::"))
    return kinds, out


def _type_name(value: object) -> str:
    return type(value).__name__


# programs that never touch cuda: the simulation must be invisible (run plain and simulated)
WITHOUT_CUDA = {
    "meta + cpu": lambda: meta(2) + cpu(2),
    "cpu + meta": lambda: cpu(2) + meta(2),
    "cpu @ meta": lambda: cpu(2, 2) @ meta(2, 2),
    "linear(cpu, meta weight)": lambda: F.linear(cpu(2, 2), meta(2, 2)),
    "add(meta, out=cpu)": lambda: torch.add(meta(2), 1, out=cpu(2)),
    "sum(meta, out=cpu)": lambda: torch.sum(meta(2, 2), 0, out=cpu(2)),
    "cat [meta, cpu]": lambda: torch.cat([meta(2), cpu(2)]),
    "cpu.copy_(meta)": lambda: cpu(2).copy_(meta(2)),
    "meta.copy_(cpu)": lambda: meta(2).copy_(cpu(2)),
    "where(cpu, meta, cpu)": lambda: torch.where(cpu(2) > 0, meta(2), cpu(2)),
    "embedding(cpu ids, meta weight)": lambda: F.embedding(torch.tensor([0]), meta(4, 2)),
    "cpu type(torch.float64)": lambda: cpu(2).type(torch.float64),
    "cpu type(dtype=torch.int32)": lambda: cpu(2).type(dtype=torch.int32),
    "to(1.5)": lambda: cpu(2).to(1.5),
    "to('cpu', torch.float16, False, True)": lambda: cpu(2).to("cpu", torch.float16, False, True),
    "to(dtype=..., memory_format=...)": lambda: cpu(1, 2, 3, 4).to(dtype=torch.half, memory_format=torch.channels_last),
    "module.to('cpu', torch.float64, non_blocking=True)":
        lambda: torch.nn.Linear(2, 2).to("cpu", torch.float64, non_blocking=True).weight,
    "torch.device('0') (not an index)": lambda: torch.device("0"),
    "torch.device(-1)": lambda: torch.device(-1),
    "torch.device(True)": lambda: torch.device(True),
    "torch.device('cpu', 0)": lambda: torch.device("cpu", 0),
    "torch.load(map_location=0)": lambda: _load_to(0),
    "torch.load(map_location={'cpu': 0})": lambda: _load_to({"cpu": 0}),
    "add(wrapper object, cpu)": lambda: torch.add(Wrapped(cpu(2)), cpu(2)),
    "mul(cpu, wrapper object)": lambda: torch.mul(cpu(2), Wrapped(cpu(2))),
    "F.relu(wrapper object)": lambda: F.relu(Wrapped(cpu(2))),
    "subclass + 1 keeps the subclass": lambda: _type_name(cpu(2).as_subclass(Marked) + 1),
    "subclass.to(float64) keeps the subclass": lambda: _type_name(cpu(2).as_subclass(Marked).to(torch.float64)),
    "cpu[subclass index] keeps the subclass": lambda: _type_name(cpu(3)[torch.tensor([0]).as_subclass(Marked)]),
    "torch._dynamo.reset()": _dynamo_reset,
    "linalg.pinv(cpu, out=cpu)": lambda: torch.linalg.pinv(torch.eye(2), out=cpu(2, 2)),
    "linalg.matrix_norm(cpu, out=cpu)": lambda: torch.linalg.matrix_norm(torch.eye(2), out=cpu(())),
    "linalg.lstsq(cpu, driver='gelsd')": lambda: torch.linalg.lstsq(torch.eye(2), cpu(2, 1), driver="gelsd").solution,
    "scripted x @ zeros(device=x.device) on cpu": lambda: _scripted_zeros_matmul(cpu(3, 3)),
    "type_as(cpu)": lambda: cpu(2).type_as(torch.ones(1, dtype=torch.float64)),
    "jit.trace(Conv2d) on cpu": lambda: _traced_conv("cpu"),  # the recorded operators too
    "scripted a / b.to(a) on cpu": lambda: _scripted_divide_by_other(cpu(3), torch.tensor([1, 2, 3])),
    "scripted x.is_cuda on cpu": lambda: _scripted_is_cuda(cpu(2)),
    "scripted x.cpu() on cpu": lambda: _scripted_to_the_cpu(cpu(2)),
    "scripted shape error on cpu (the message)": lambda: _scripted_divide_by_other(cpu(2), torch.tensor([1, 2, 3])),
}

def _device_check_of(name: str, device: str) -> str:
    return (f"Expected tensor to have cuda:0 Device, but got tensor with {device} Device (while checking "
            f"arguments for {name})")


def _ctc(lengths_as_tensors: bool) -> torch.Tensor:
    log_probs = torch.randn(5, 2, 4, device="cuda").log_softmax(2).detach().requires_grad_()
    lengths: object = torch.tensor([5, 5]) if lengths_as_tensors else [5, 5]
    targets_lengths: object = torch.tensor([2, 2]) if lengths_as_tensors else [2, 2]
    F.ctc_loss(log_probs, torch.tensor([[1, 2], [1, 1]]), lengths, targets_lengths).backward()
    return log_probs.grad


def _packed_lstm() -> torch.Tensor:
    lstm = torch.nn.LSTM(3, 4).cuda()
    packed = torch.nn.utils.rnn.pack_padded_sequence(torch.randn(5, 2, 3, device="cuda"), torch.tensor([5, 3]))
    assert packed.batch_sizes.device.type == "cpu"
    padded, lengths = torch.nn.utils.rnn.pad_packed_sequence(lstm(packed)[0])
    assert lengths.device.type == "cpu"
    padded.sum().backward()
    return lstm.weight_ih_l0.grad


COMPOSITE_SCENARIOS = [
    Scenario("take_along_dim cuda, cpu indices", "[COMP]",
             lambda: torch.take_along_dim(cuda(3), torch.tensor([0])), error=RuntimeError,
             message=_device_check_of("torch.take_along_dim():", "cpu")),
    Scenario("Tensor.take_along_dim(cuda indices)", "[COMP]",
             lambda: cuda(3).take_along_dim(torch.tensor([0], device="cuda")), device="cuda:0"),
    Scenario("quantile cuda, cpu q", "[COMP]", lambda: torch.quantile(cuda(3), torch.tensor([0.5])),
             error=RuntimeError, message="quantile() q tensor must be on the same device as the input tensor"),
    Scenario("quantile cuda, float q", "[COMP]", lambda: torch.quantile(cuda(3), 0.5), device="cuda:0"),
    Scenario("quantile out= on the cpu", "[COMP]",
             lambda: torch.quantile(cuda(3), 0.5, out=torch.empty(())), error=RuntimeError,
             message="quantile() out tensor must be on the same device as the input tensor"),
    Scenario("quantile dtype before device", "[COMP]",
             lambda: torch.quantile(cuda(3), torch.tensor([0.5], dtype=torch.float64)), error=RuntimeError,
             message="quantile() q tensor must be same dtype as the input tensor"),
    Scenario("stft cuda, cpu window", "[COMP]",
             lambda: torch.stft(cuda(64), 16, window=torch.hann_window(16), return_complex=True), error=RuntimeError,
             message="stft input and window must be on the same device but got self on cuda:0 and window on cpu"),
    Scenario("istft cuda, cpu window", "[COMP]",
             lambda: torch.istft(torch.stft(cuda(64), 16, window=torch.hann_window(16, device="cuda"),
                                            return_complex=True), 16, window=torch.hann_window(16)),
             error=RuntimeError,
             message="istft input and window must be on the same device but got self on cuda:0 and window on cpu"),
    Scenario("linalg.multi_dot [cuda, cpu, cpu]", "[COMP]",
             lambda: torch.linalg.multi_dot([cuda(2, 2), cpu(2, 2), cpu(2, 2)]), error=RuntimeError,
             message="multi_dot(): all tensors must be on the same device but tensor 0 is on cuda:0 and tensor 1 on "
             "cpu"),
    Scenario("linalg.multi_dot out= on the cpu", "[COMP]",
             lambda: torch.linalg.multi_dot([cuda(2, 2), cuda(2, 2)], out=cpu(2, 2)), error=RuntimeError,
             message="multi_dot(): expected out tensor to be on device cuda:0 but got cpu"),
    Scenario("tensordot out= on the cpu", "[COMP]",
             lambda: torch.tensordot(cuda(2, 2), cuda(2, 2), dims=1, out=cpu(2, 2)), error=RuntimeError,
             message="tensordot: Expected the output and input tensors to be on the same device, but got the output "
             "tensor on cpu, input tensor a on cuda:0, and input tensor b on cuda:0"),
    Scenario("block_diag [cuda, cpu]", "[COMP] (no error before)", lambda: torch.block_diag(cuda(2, 2), cpu(2, 2)),
             error=RuntimeError, message="torch.block_diag: input tensors must all be on the same device. Input 0 is "
             "on device cuda:0 and input 1 is on device cpu"),
    Scenario("meshgrid [cuda, cpu]", "[COMP]", lambda: torch.meshgrid(cuda(2), cpu(2), indexing="ij"),
             error=RuntimeError, message="meshgrid expects all tensors to have the same device"),
    Scenario("gradient cuda, cpu spacing", "[COMP]", lambda: torch.gradient(cuda(4), spacing=[cpu(4)]),
             error=RuntimeError,
             message="torch.gradient expected each tensor to be on the same device, but got devices cuda:0 and cpu!"),
    Scenario("grid_sample cuda input, cpu grid", "[COMP]",
             lambda: F.grid_sample(cuda(1, 1, 2, 2), torch.zeros(1, 1, 1, 2), align_corners=False), error=RuntimeError,
             message="grid_sampler(): expected input and grid to be on same device, but input is on cuda:0 and grid "
             "is on cpu"),
    Scenario("_weight_norm cuda v, cpu g", "[COMP]", lambda: torch._weight_norm(cuda(2, 2), cpu(2, 1), 0),
             error=RuntimeError, message="weight_norm: expected v_in and g_in to be on the same device, but v_in is "
             "on cuda:0 and g_in is on cpu"),
    Scenario("cdist, matrix-multiplication path", "[COMP]", lambda: torch.cdist(cuda(30, 3), cpu(30, 3)),
             error=RuntimeError, message="X1 and X2 must have the same device type. X1: cuda X2: cpu"),
    Scenario("cdist, _cdist_forward path", "[COMP] [CG]", lambda: torch.cdist(cuda(3, 3), cpu(3, 3)),
             error=RuntimeError, message=cg("x2", "cpu", "cuda:0", "wrapper_CUDA___cdist_forward")),
    Scenario("scaled_dot_product_attention cpu key", "[COMP]",
             lambda: F.scaled_dot_product_attention(cuda(1, 2, 4), cpu(1, 2, 4), cuda(1, 2, 4)), error=RuntimeError,
             message="Expected query, key, and value to have the same device type, but got query.device: cuda:0 "
             "key.device: cpu and value.device: cuda:0 instead."),
    Scenario("mode(cpu, out=(cuda values, cpu indices))", "[COMP] (no error before)",
             lambda: torch.mode(cpu(3), out=(torch.empty(0, device="cuda"), torch.empty(0, dtype=torch.long))),
             error=RuntimeError, message="expected device 'cpu' but got 'cuda:0' for values output"),
    Scenario("dot(cuda, cuda, out=cpu)", "[COMP]", lambda: torch.dot(cuda(2), cuda(2), out=torch.empty(())),
             error=RuntimeError, message="dot: Expected the output and input tensors to be on the same device, but "
             "got the output tensor on cpu, the 'input' tensor on cuda:0, and the 'other' tensor on cuda:0"),
    Scenario("max(cuda, out=cpu)", "[COMP]", lambda: torch.max(cuda(2), out=torch.empty(())), error=RuntimeError,
             message="Expected self.device() == out.device() to be true, but got false.  (Could this error message be "
             "improved?  If so, please report an enhancement request to PyTorch.)"),
    Scenario("sum(cuda, 0, out=cpu)", "[OUT]", lambda: torch.sum(cuda(2, 2), 0, out=cpu(2)), error=RuntimeError,
             message="Expected out tensor to have device cuda:0, but got cpu instead"),
    Scenario("max(cuda, 0, out=(cuda, cpu))", "[OUT]",
             lambda: torch.max(cuda(2, 2), 0, out=(cuda(2), torch.empty(2, dtype=torch.long))), error=RuntimeError,
             message="Expected out tensor to have device cuda:0, but got cpu instead"),
    Scenario("cumsum(cuda, 0, out=cpu)", "[OUT]", lambda: torch.cumsum(cuda(2), 0, out=cpu(2)), error=RuntimeError,
             message="Expected out tensor to have device cuda:0, but got cpu instead"),
    Scenario("add(cuda, cuda, out=cpu) stays TensorIterator's", "[OUT] [TI]",
             lambda: torch.add(cuda(2), cuda(2), out=cpu(2)), error=RuntimeError, message=TI),
    Scenario("_foreach_mul(cuda list, cpu 0-dim): fast path", "[FE]",
             lambda: torch._foreach_mul([cuda(2)], torch.tensor(2.0)), error=RuntimeError,
             message="scalar tensor expected to be on cuda:0 but is on cpu"),
    Scenario("_foreach_add(cuda list, cpu 0-dim with grad): .Tensor fast path", "[FE]",
             lambda: torch._foreach_add([cuda(2)], torch.tensor(1.0, requires_grad=True)), error=RuntimeError,
             message="scalar tensor expected to be on cuda:0 but is on cpu"),
    Scenario("_foreach_add(cuda list, cpu 0-dim): .Scalar overload", "[FE]",
             lambda: torch._foreach_add([cuda(2)], torch.tensor(1.0))[0], device="cuda:0"),
    Scenario("_foreach_mul([cuda, cpu], cpu 0-dim): slow path", "[FE]",
             lambda: torch._foreach_mul([cuda(2), cpu(2)], torch.tensor(2.0))[0], device="cuda:0"),
    Scenario("_foreach_addcmul with cuda scalars", "[FE]",
             lambda: torch._foreach_addcmul([cuda(2)], [cuda(2)], [cuda(2)], torch.tensor([1.0], device="cuda")),
             error=RuntimeError, message="Expected scalars to be on CPU, got cuda:0 instead."),
]

def _same_device(label: str) -> str:
    return f"{label}: Expected result and input tensors to be on the same device, but got result on cpu and input on cuda:0"


def _square() -> torch.Tensor:
    return torch.eye(3, device="cuda") * 2


OUT_SCENARIOS = [
    Scenario("linalg.pinv(cuda, out=cpu)", "[LA] BatchLinearAlgebra.cpp linalg_pinv_out checkSameDevice",
             lambda: torch.linalg.pinv(_square(), out=cpu(1)), error=RuntimeError, message=_same_device("linalg.pinv")),
    Scenario("linalg.cond(cuda, out=cpu)", "[LA]", lambda: torch.linalg.cond(_square(), out=cpu(1)),
             error=RuntimeError, message=_same_device("linalg.cond")),
    Scenario("linalg.matrix_rank(cuda, out=cpu)", "[LA]",
             lambda: torch.linalg.matrix_rank(_square(), out=cpu(1).long()), error=RuntimeError,
             message=_same_device("torch.linalg.matrix_rank")),
    Scenario("linalg.tensorinv(cuda, out=cpu)", "[LA]", lambda: torch.linalg.tensorinv(_square(), ind=1, out=cpu(1)),
             error=RuntimeError, message=_same_device("tensorinv")),
    Scenario("linalg.tensorsolve(cuda, out=cpu)", "[LA]",
             lambda: torch.linalg.tensorsolve(_square(), cuda(3), out=cpu(1)), error=RuntimeError,
             message=_same_device("tensorsolve")),
    Scenario("cholesky_solve(cuda, out=cpu)", "[LA]",
             lambda: torch.cholesky_solve(cuda(3, 2), _square(), out=cpu(1)), error=RuntimeError,
             message=_same_device("cholesky_solve")),
    Scenario("linalg.cholesky(cuda, out=cpu): structured cholesky_ex.L", "[CG]",
             lambda: torch.linalg.cholesky(_square(), out=cpu(1)), error=RuntimeError,
             message=cg("info", "cuda:0", "cpu", "wrapper_CUDA_linalg_cholesky_ex_out_L")),
    Scenario("linalg.eigvals(cuda, out=cpu)", "[CG]",
             lambda: torch.linalg.eigvals(_square(), out=cpu(1).cfloat()), error=RuntimeError,
             message=cg("self", "cuda:0", "cpu", "wrapper_CUDA_out_linalg_eigvals_out")),
    Scenario("triangular_solve(cuda, out=cpu)", "[CG]",
             lambda: torch.triangular_solve(cuda(3, 2), _square(), out=(cpu(1), cpu(1))), error=RuntimeError,
             message=cg("self", "cuda:0", "cpu", "wrapper_CUDA_triangular_solve_out_X")),
    Scenario("linalg.matrix_norm(cuda, out=cpu): a composite copy", "[OUT] not simulated",
             lambda: torch.linalg.matrix_norm(_square(), out=cpu(1)), error=NotSimulatedError,
             message="not simulated: linalg_matrix_norm(..., out=...) with inputs on cuda:0 and an out= tensor on "
             "cpu: its composite kernel copies the result into out, and whether a GPU checks the device first "
             "depends on that kernel (PyTorch's own out= tests expect an error)"),
    Scenario("linalg.pinv(cuda, out=cuda) of the wrong shape", "[DOC] resize_output",
             lambda: torch.linalg.pinv(_square(), out=cuda(1)), device="cuda:0"),
]

def _script(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit.script is deprecated in 2.13
        warnings.simplefilter("ignore", FutureWarning)  # and in 2.14
        return torch.jit.script(fn)


def _zeros_matmul(x: torch.Tensor) -> torch.Tensor:
    return x @ torch.zeros(x.shape[1], 2, device=x.device, dtype=x.dtype)


def _arange_add(x: torch.Tensor) -> torch.Tensor:
    return torch.arange(x.shape[-1], device=x.device).to(x.dtype) + x


def _divide_by_other(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return a / b.to(a)  # torchkbnufft interp.py: grid_size.to(omega)


def _is_cuda(x: torch.Tensor) -> bool:
    return x.is_cuda


def _to_the_cpu(x: torch.Tensor) -> torch.Tensor:
    return x.cpu() * 2


_scripted_zeros_matmul = _script(_zeros_matmul)
_scripted_arange_add = _script(_arange_add)
_scripted_divide_by_other = _script(_divide_by_other)
_scripted_is_cuda = _script(_is_cuda)


def _converts_message(scripted: torch.jit.ScriptFunction, fn: Callable[..., object]) -> str:
    lines, first = inspect.getsourcelines(fn)
    return (f"not simulated: TorchScript {scripted.qualified_name} converts a tensor to another tensor's device "
            f"(File \"{inspect.getsourcefile(fn)}\", line {first + len(lines) - 1}): where the dtype does not "
            "change, C++ reads the other's real device, the CPU, and returns the tensor itself, unmoved, where a GPU "
            "moves it")
_scripted_to_the_cpu = _script(_to_the_cpu)


SCRIPT_SCENARIOS = [
    Scenario("scripted a / b.to(a)", "[DOC] aten::to.other takes a's device and dtype",
             lambda: _scripted_divide_by_other(cuda(3), torch.tensor([1, 2, 3])), device="cuda:0",
             dtype=torch.float32),
    Scenario("scripted a / b.to(a), same dtype", "[DOC] a GPU moves b; C++ returns b itself: not simulated",
             lambda: _scripted_divide_by_other(cuda(3), torch.tensor([1.0, 2.0, 3.0])), error=NotSimulatedError,
             message=_converts_message(_scripted_divide_by_other, _divide_by_other)),
    Scenario("jit.trace(Conv2d) on cuda", "[DOC] the traced module runs where its parameters are",
             lambda: _traced_conv("cuda")[1], device="cuda:0"),
    Scenario("scripted x @ zeros(device=x.device)", "[DOC] TorchScript: C++ reads x.device",
             lambda: _scripted_zeros_matmul(cuda(3, 3)), device="cuda:0"),
    Scenario("scripted arange(device=x.device) + x", "[DOC]", lambda: _scripted_arange_add(cuda(2, 3)),
             device="cuda:0"),
]

CUDA_ONLY_CHECK_SCENARIOS = [
    Scenario("linalg.lstsq(cuda, driver='gelsd')", "[COMP] BatchLinearAlgebra.cpp get_and_check_lstsq_driver",
             lambda: torch.linalg.lstsq(_square(), cuda(3, 1), driver="gelsd"), error=RuntimeError,
             message="torch.linalg.lstsq: `driver` other than `gels` is not supported on CUDA"),
    Scenario("linalg.lstsq(cuda, driver='gels')", "[COMP]",
             lambda: torch.linalg.lstsq(_square(), cuda(3, 1), driver="gels").solution, device="cuda:0"),
    Scenario("linalg.lstsq(cuda, driver='gelsd') of mismatched shapes: the shape first", "[COMP]",
             lambda: torch.linalg.lstsq(_square(), cuda(2, 1), driver="gelsd"), error=RuntimeError,
             message="torch.linalg.lstsq: input.size(-2) should match other.size(-2)"),
    Scenario("grid_sample cpu input, cuda grid, 5-d, align_corners", "[COMP]",
             lambda: F.grid_sample(cpu(1, 1, 2, 2, 2), torch.zeros(1, 1, 1, 1, 3, device="cuda"), align_corners=True),
             error=RuntimeError, message="grid_sampler(): expected input and grid to be on same device, but input is "
             "on cpu and grid is on cuda:0"),
]

ACCEPTS_CPU_SCENARIOS = [
    Scenario("ctc_loss backward, cpu targets and list lengths", "[CTC]", lambda: _ctc(False), device="cuda:0"),
    Scenario("ctc_loss backward, cpu targets and tensor lengths", "[CTC]", lambda: _ctc(True), device="cuda:0"),
    Scenario("_ctc_loss itself with cpu targets", "[CTC] [CG]",
             lambda: torch._ctc_loss(cuda(5, 2, 4).log_softmax(2), torch.tensor([[1, 2], [1, 1]]), [5, 5], [2, 2]),
             error=RuntimeError, message=cg("targets", "cpu", "cuda:0", "wrapper_CUDA___ctc_loss")),
    Scenario("packed LSTM with cpu lengths, backward", "[PACK] [RNN]", _packed_lstm, device="cuda:0"),
    Scenario("pack_padded_sequence(enforce_sorted=False): batch sizes on the cpu", "[PACK]",
             lambda: torch.nn.utils.rnn.pack_padded_sequence(cuda(3, 4, 2), torch.tensor([4, 2, 1]), batch_first=True,
                                                            enforce_sorted=False).batch_sizes, device="cpu"),
    Scenario("pack_padded_sequence with cuda lengths", "[PACK] checkLongTensor",
             lambda: torch.nn.utils.rnn.pack_padded_sequence(cuda(3, 4, 2), torch.tensor([4, 2, 1], device="cuda"),
                                                            batch_first=True, enforce_sorted=False),
             error=RuntimeError,
             message="'lengths' argument should be a 1D CPU int64 tensor, but got 1D cuda:0 Long tensor"),
    Scenario("_foreach_addcmul(cuda lists, cpu scalars)", "[FE]",
             lambda: torch._foreach_addcmul([cuda(2)], [cuda(2)], [cuda(2)], torch.tensor([1.0]))[0], device="cuda:0"),
    Scenario("fused Adam, cpu tensor lr", "[DOC] optim/adam.py: a CPU lr is read on the host",
             lambda: _adam_cpu_lr(), device="cuda:0"),
]


def _adam_cpu_lr() -> torch.Tensor:
    model = torch.nn.Linear(3, 3).cuda()
    optimizer = torch.optim.Adam(model.parameters(), lr=torch.tensor(0.01), fused=True)
    model(cuda(2, 3)).sum().backward()
    optimizer.step()
    return model.weight


def _item_under_sync_error() -> object:
    torch.cuda.set_sync_debug_mode("error")
    try:
        return cuda(2).sum().item()
    finally:
        torch.cuda.set_sync_debug_mode("default")


def _checkpointed_dropout_masks_agree() -> torch.Tensor:
    x = torch.ones(128, device="cuda", requires_grad=True)
    out = torch.utils.checkpoint.checkpoint(lambda t: F.dropout(t, 0.5, training=True), x, use_reentrant=False)
    out.sum().backward()
    assert torch.equal((out != 0).cpu(), (x.grad != 0).cpu())
    return x.grad


def _cuda_is_shared() -> torch.Tensor:
    t = cuda(2)
    assert t.is_shared() and t.untyped_storage().is_shared() and not cpu(2).is_shared()
    return t


def _cuda_storage_values() -> torch.Tensor:
    t = torch.arange(3, dtype=torch.uint8, device="cuda")
    assert t.untyped_storage().tolist() == [0, 1, 2] == list(t.untyped_storage())
    assert t.storage().tolist() == [0, 1, 2]
    part = t.untyped_storage()[1:3]
    assert part.device == torch.device("cuda", 0) and part.tolist() == [1, 2]
    t.untyped_storage()[0] = 7
    assert t.tolist() == [7, 1, 2]
    return t


STORAGE_SCENARIOS = [
    Scenario("cuda is_shared() is True", "torch/csrc/StorageMethods.cpp THPStorage_isShared", _cuda_is_shared,
             device="cuda:0"),
    Scenario("cuda storage tolist(), iteration, slices, item assignment", "torch/csrc/StorageMethods.cpp",
             _cuda_storage_values, device="cuda:0"),
    Scenario("item() under set_sync_debug_mode('error')", "[SYNC]", _item_under_sync_error, error=RuntimeError,
             message="called a synchronizing CUDA operation"),
    Scenario("checkpoint recompute replays the cuda RNG (dropout masks agree)",
             "[DOC] torch/utils/checkpoint.py get_device_states / set_device_states", _checkpointed_dropout_masks_agree,
             device="cuda:0"),
    Scenario("tensor on a UntypedStorage(n, device='cuda')", "[STOR]",
             lambda: torch.empty(0, device="cuda").set_(torch.UntypedStorage(8, device="cuda")), device="cuda:0"),
    Scenario("cuda tensor set_ to a cpu storage (generated check)", "[STOR] [CG]",
             lambda: torch.empty(0, device="cuda").set_(torch.UntypedStorage(8)).device, error=RuntimeError,
             message="Attempted to set the storage of a tensor on device \"cuda:0\" to a storage on different "
             "device \"cpu\".  This is no longer allowed; the devices must match."),
    Scenario("torch.asarray(cpu storage, device='cuda') (safetensors safe_open(device=0))", "[STOR] [ASARR]",
             lambda: torch.asarray(torch.UntypedStorage(8), dtype=torch.uint8, device="cuda"), device="cuda:0"),
    Scenario("torch.asarray(cuda storage) stays on cuda", "[STOR] [ASARR]",
             lambda: torch.asarray(torch.UntypedStorage(8, device="cuda"), dtype=torch.uint8), device="cuda:0"),
    Scenario("torch.asarray(cuda storage, device='cpu') copies to the host", "[STOR] [ASARR]",
             lambda: torch.asarray(torch.UntypedStorage(8, device="cuda"), dtype=torch.uint8, device="cpu"),
             device="cpu"),
]



def _index_device_is_cuda0() -> torch.Tensor:
    assert torch.device(0) == torch.device("cuda", 0) and torch.device(0).type == "cuda"
    assert isinstance(torch.device(0), torch.device) and pickle.loads(pickle.dumps(torch.device(0))) == torch.device(0)
    return torch.ones(1, device=torch.device(0))


def _load_to(map_location: object) -> torch.Tensor:
    buffer = io.BytesIO()
    torch.save({"w": torch.ones(2)}, buffer)
    buffer.seek(0)
    return torch.load(buffer, map_location=map_location)["w"]


def _default_device_index() -> torch.Tensor:
    with torch.device(0):
        return torch.ones(1)


DEVICE_INDEX_SCENARIOS = [
    Scenario("torch.device(0) is cuda:0", "[DEV]", _index_device_is_cuda0, device="cuda:0"),
    Scenario("torch.device(numpy.int64(0))", "[DEV]", lambda: cpu(1).to(torch.device(np.int64(0))), device="cuda:0"),
    Scenario("param.to(torch.device(0)) (accelerate set_module_tensor_to_device)", "[DEV]",
             lambda: torch.nn.Parameter(cpu(2)).to(torch.device(0)), device="cuda:0"),
    Scenario("with torch.device(0): factory", "[DEV] [DOC]", _default_device_index, device="cuda:0"),
    Scenario("torch.load(map_location=torch.device(0))", "[DEV] [DOC]", lambda: _load_to(torch.device(0)),
             device="cuda:0"),
    Scenario("torch.device(1) on a one-GPU host, then used", "[DEV]", lambda: cpu(1).to(torch.device(1)),
             error=NotSimulatedError, message="not simulated: device cuda:1 (the simulated host has a single GPU, "
             "cuda:0)"),
    Scenario("cuda(0) + cpu(torch.device(0)) mix still raises", "[DEV] [TI]",
             lambda: cuda(2) + cpu(2).to(torch.device(0)).cpu(), error=RuntimeError, message=TI),
]

def _disable_torch_function_cuda() -> torch.Tensor:
    return torch.ones(2, device="cuda").as_subclass(PlainRun).cuda()


OVERRIDE_SCENARIOS = [
    Scenario("cpu.type_as(cuda)", "[DOC] native type_as: self.to(other.options())",
             lambda: cpu(2).type_as(cuda(1)), device="cuda:0"),
    Scenario("cuda.type_as(cpu double)", "[DOC]", lambda: cuda(2).type_as(torch.ones(1, dtype=torch.float64)),
             device="cpu", dtype=torch.float64),
    Scenario("cpu.type_as(cuda) + cuda", "[DOC] [TI]", lambda: cpu(2).type_as(cuda(1)) + cuda(2), device="cuda:0"),
    Scenario("add(wrapper of cuda, cuda)", "[DOC] torch/overrides.py: a non-tensor's __torch_function__ runs",
             lambda: torch.add(Wrapped(cuda(2)), cuda(2)), device="cuda:0"),
    Scenario("add(wrapper of cuda, cpu)", "[TI]", lambda: torch.add(Wrapped(cuda(2)), cpu(2)), error=RuntimeError,
             message=TI),
    Scenario("cuda[subclass index on cuda]", "[IDX]", lambda: cuda(3)[torch.tensor([0], device="cuda").as_subclass(
        Marked)], device="cuda:0"),
    Scenario("subclass on cuda [0]", "[DOC]", lambda: cuda(3).as_subclass(Marked)[0], device="cuda:0"),
    Scenario("subclass running with DisableTorchFunction: .cuda()", "[DOC] torch._C.DisableTorchFunction",
             _disable_torch_function_cuda, device="cuda:0"),
    Scenario("subclass running with DisableTorchFunction: new_zeros", "[DOC]",
             lambda: cuda(2).as_subclass(PlainRun).new_zeros(2), device="cuda:0"),
]

SCENARIOS += (OVERRIDE_SCENARIOS + OUT_SCENARIOS + CUDA_ONLY_CHECK_SCENARIOS + SCRIPT_SCENARIOS + STORAGE_SCENARIOS + TYPE_SCENARIOS + META_SCENARIOS + COMPOSITE_SCENARIOS + ACCEPTS_CPU_SCENARIOS
              + DEVICE_INDEX_SCENARIOS)


def _twice(run: Callable[[], object]) -> Callable[[], object]:
    """The second call of a torch function, served from the simulation's per-function caches."""
    def both() -> object:
        run()
        return run()
    return both


def _cpu_scalar_grad_of_a_cuda_product() -> torch.Tensor:
    scale = torch.tensor(2.0, requires_grad=True)
    (cuda(3, requires_grad=True) * scale).sum().backward()
    return scale.grad


# the function mode's fast path (generated bindings with nothing to do but re-enter, cached per
# function) and the dispatch mode's (operand lists cached per operator): keyword arguments that
# take a call off it, tensor attributes, a second call of the same function
FAST_PATH_SCENARIOS = [
    Scenario("bernoulli(cuda) with a cpu generator", "[GEN]",
             lambda: torch.bernoulli(cuda(3) * 0.5, generator=torch.Generator()), error=RuntimeError,
             message="Expected a 'cuda' device type for generator but found 'cpu'"),
    Scenario("cuda.normal_ with a cpu generator", "[GEN]", lambda: cuda(3).normal_(generator=torch.Generator()),
             error=RuntimeError, message="Expected a 'cuda' device type for generator but found 'cpu'"),
    Scenario("bernoulli(cuda), called twice", "[DOC]", _twice(lambda: torch.bernoulli(cuda(3) * 0.5)),
             device="cuda:0"),
    Scenario("full_like(cuda, device='cpu') after full_like(cuda)", "[DOC]",
             lambda: (torch.full_like(cuda(2), 1.0), torch.full_like(cuda(2), 1.0, device="cpu"))[1], device="cpu"),
    Scenario("cuda.add(cpu), called twice", "[TI]", _twice(lambda: cuda(3).add(cpu(3))), error=RuntimeError,
             message=TI),
    Scenario("where(cpu condition, cuda, cuda)", "[WHERE] [TI] (a 1-d condition does not move)",
             lambda: torch.where(cpu(3).bool(), cuda(3), cuda(3)), error=RuntimeError, message=TI),
    Scenario("cuda.T", "[DOC] views share their base's storage", lambda: cuda(2, 3).T, device="cuda:0"),
    Scenario("cuda.mT", "[DOC] views share their base's storage", lambda: cuda(2, 3).mT, device="cuda:0"),
    Scenario("cuda.real", "[DOC] views share their base's storage", lambda: cuda(2, dtype=torch.complex64).real,
             device="cuda:0"),
    Scenario("grad of a cpu 0-dim factor of a cuda product", "torch/csrc/autograd/engine.cpp validate_outputs",
             _cpu_scalar_grad_of_a_cuda_product, device="cpu"),
]
SCENARIOS += FAST_PATH_SCENARIOS


def _outcome(run: Callable[[], object]) -> tuple[object, ...]:
    try:
        result = run()
    except Exception as error:
        return (type(error), str(error))
    if isinstance(result, torch.Tensor):
        return (str(result.device), result.dtype, tuple(result.shape))
    if isinstance(result, tuple) and result and isinstance(result[-1], torch.Tensor):
        return (*result[:-1], *_outcome(lambda: result[-1]))
    return (repr(result),)


# torch's own warnings (deprecations, "was resized") are part of the behaviour compared, not a leak of ours
@pytest.mark.filterwarnings("default")
@pytest.mark.parametrize("name", list(WITHOUT_CUDA))
def test_without_cuda_the_simulation_is_plain_torch(name: str):
    plain = _outcome(WITHOUT_CUDA[name])
    with simulate():
        simulated = _outcome(WITHOUT_CUDA[name])
    assert simulated == plain


def test_out_of_the_wrong_shape_still_warns_that_it_was_resized():
    with simulate(), pytest.warns(UserWarning, match="An output with one or more elements was resized"):
        assert torch.linalg.pinv(_square(), out=cuda(1)).shape == (3, 3)


def test_at_least_forty_scenarios():
    assert len(SCENARIOS) >= 40
    assert len({s.id for s in SCENARIOS}) == len(SCENARIOS)


def test_installed_torch_uses_the_message_format_the_table_expects():
    # torch 2.13's adaption.cpp prints "but got ARG is on D, different from other tensors on C"
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    if not os.path.exists(lib):
        pytest.skip("no libtorch_cpu.so to read")
    with open(lib, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as data:
        assert data.find(b", different from other tensors on ") >= 0


# torch's own warnings (deprecations, "was resized") are part of the behaviour compared, not a leak of ours
@pytest.mark.filterwarnings("default")
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_scenario(scenario: Scenario):
    with simulate():
        if scenario.error is not None:
            with pytest.raises(scenario.error) as raised:
                scenario.run()
            assert type(raised.value) is scenario.error
            assert str(raised.value) == scenario.message
        else:
            result = scenario.run()
            if scenario.device is not None:
                assert isinstance(result, torch.Tensor)
                assert str(result.device) == scenario.device
            if scenario.dtype is not None:
                assert result.dtype == scenario.dtype
