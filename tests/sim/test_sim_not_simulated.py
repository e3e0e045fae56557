"""Where the simulation cannot follow, it stops with NotSimulatedError("not simulated: ...")."""

from __future__ import annotations

import pytest
import torch
from cuda_sim import NotSimulatedError


def test_is_a_runtime_error():
    error = NotSimulatedError("X")
    assert isinstance(error, RuntimeError) and str(error) == "not simulated: X"


@pytest.mark.parametrize("call", [
    lambda: torch.ones(1, device="cuda:1"),
    lambda: torch.ones(1).cuda(1),
    lambda: torch.cuda.set_device(1),
    lambda: torch.cuda.CUDAGraph(),
    lambda: torch.cuda.Event(interprocess=True),
    lambda: torch.ones(1, device="cuda").__dlpack__(),
    lambda: torch.ones(1, device="cuda").untyped_storage()._share_cuda_(),
], ids=["factory cuda:1", ".cuda(1)", "set_device(1)", "CUDA graphs", "IPC events", "DLPack", "CUDA IPC"])
def test_refused(sim, call):
    with pytest.raises(NotSimulatedError, match=r"^not simulated: "):
        call()


def test_nccl_is_refused(sim):
    import torch.distributed as dist

    if not dist.is_available():
        pytest.skip("torch.distributed is not built")
    with pytest.raises(NotSimulatedError, match="NCCL"):
        dist.init_process_group("nccl", rank=0, world_size=1, init_method="tcp://127.0.0.1:1")


def test_custom_operator_on_cuda_tensors(sim):
    library = torch.library.Library("cuda_sim_test", "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CPU")
    assert torch.ops.cuda_sim_test.twice(torch.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(NotSimulatedError, match=r"custom operator cuda_sim_test::twice"):
        torch.ops.cuda_sim_test.twice(torch.ones(2, device="cuda"))


def test_stub_toolkit_compiles_nothing(sim):
    import os
    import subprocess

    nvcc = os.path.join(os.environ["CUDA_HOME"], "bin", "nvcc")
    version = subprocess.run([nvcc, "-V"], capture_output=True, text=True, check=True)
    assert f"release {torch.version.cuda}," in version.stdout
    compile_ = subprocess.run([nvcc, "-c", "kernel.cu"], capture_output=True, text=True, check=False)
    assert compile_.returncode != 0 and "not simulated" in compile_.stderr


def test_cuda_extensions_are_refused_before_anything_compiles(sim, tmp_path):
    # peft's BOFT layer JIT-builds fbd_cuda (a .cpp + a .cu) whenever cuda is available: the host half
    # used to compile against torch's headers before the stub nvcc refused the other half
    from cuda_sim import _toolkit
    from torch.utils import cpp_extension

    build = tmp_path / "build"
    build.mkdir()
    (tmp_path / "ext.cpp").write_text("int twice(int x) { return 2 * x; }\n")
    (tmp_path / "ext.cu").write_text("__global__ void kernel() {}\n")
    sources = [str(tmp_path / "ext.cpp"), str(tmp_path / "ext.cu")]
    with pytest.raises(NotSimulatedError, match="compiling the CUDA extension 'ext' "):
        cpp_extension.load(name="ext", sources=sources, build_directory=str(build))
    with pytest.raises(NotSimulatedError, match="load_inline"):
        cpp_extension.load_inline(name="inline", cpp_sources="", cuda_sources="__global__ void k() {}",
                                  build_directory=str(build))
    with pytest.raises(NotSimulatedError):
        cpp_extension.load(name="forced", sources=sources[:1], with_cuda=True, build_directory=str(build))
    assert list(build.iterdir()) == []  # no ninja file, no object: refused before the build
    # a C++-only extension is built as on any host (not compiled here: that is half a minute)
    assert not _toolkit._compiles_cuda(cpp_extension, "load", {"name": "cpu", "sources": sources[:1]})
    assert not _toolkit._compiles_cuda(cpp_extension, "load_inline", {"name": "cpu", "cpp_sources": "int f();"})
