"""The op table read with a line parser agrees with torchgen's own parse of the same file."""

from __future__ import annotations

import os

import pytest
import torch
from cuda_sim import _native


def test_known_ops():
    assert _native.op_info("index_select").device_check
    assert not _native.op_info("add.Tensor").device_check
    assert _native.op_info("add.Tensor").tensor_iterator
    assert _native.op_info("embedding").composite
    assert _native.wrapper_name(torch.ops.aten._fused_adamw_.default, False) == "wrapper_CUDA___fused_adamw_"
    assert _native.wrapper_name(torch.ops.aten.index_select.default, False) == "wrapper_CUDA__index_select"
    assert _native.wrapper_name(torch.ops.aten.addmm.default, True) == "wrapper_CUDA_addmm"


def test_agrees_with_torchgen():
    yaml = pytest.importorskip("yaml")
    from torchgen.gen import parse_native_yaml
    from torchgen.model import DeviceCheckType, DispatchKey

    path = _native._yaml_path()
    if path is None:
        pytest.skip("torchgen's native_functions.yaml is not installed")
    assert yaml is not None
    parsed = parse_native_yaml(path, os.path.join(os.path.dirname(path), "tags.yaml"))
    cuda = parsed.backend_indices[DispatchKey.CUDA]
    checked = 0
    for function in parsed.native_functions:
        name = str(function.func.name)
        info = _native.op_info(name)
        assert info is not None, name
        assert info.device_check == (function.device_check == DeviceCheckType.ExactSame), name
        if cuda.get_kernel(function) is not None:
            assert info.cuda_kernel, name
        checked += 1
    assert checked > 2000


def test_older_torch_message_format_is_the_var_127_text(monkeypatch):
    # torch releases before the adaption.cpp rewording print the VAR #127 text
    monkeypatch.setattr(_native, "new_device_check_message", lambda: False)
    message = _native.device_check_message("state_steps", torch.device("cpu"), torch.device("cuda", 0),
                                           "wrapper_CUDA___fused_adamw_")
    assert message == ("Expected all tensors to be on the same device, but found at least two devices, cuda:0 and "
                       "cpu! (when checking argument for argument state_steps in method wrapper_CUDA___fused_adamw_)")
