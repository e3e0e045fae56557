"""A stub CUDA toolkit, so import-time probes see the CUDA version a GPU host would report.

Some libraries ask ``nvcc -V`` for the toolkit version while importing (DeepSpeed 0.14's op
builders call ``installed_cuda_version()`` from ``is_compatible()`` at import); a CPU build of
torch reports neither ``torch.version.cuda`` nor ``CUDA_HOME``. The stub answers the version
query and refuses to compile anything, loudly: nothing is ever built for the simulated GPU.
``torch.utils.cpp_extension.load``/``load_inline`` of CUDA code raise NotSimulatedError before
compiling anything.
"""

from __future__ import annotations

import functools
import importlib.abc
import importlib.util
import inspect
import os
import shutil
import stat
import sys
import tempfile
import weakref
from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from cuda_sim._cuda_api import CUDA_VERSION
from cuda_sim._errors import NotSimulatedError
from cuda_sim._patch import Patcher

_NVCC = """#!/bin/sh
for arg in "$@"; do
  case "$arg" in
    -V|--version)
      echo "nvcc: NVIDIA (R) Cuda compiler driver"
      echo "Cuda compilation tools, release {version}, V{version}.0"
      echo "Build cuda_{version} (cuda-sim stub toolkit: it compiles nothing)"
      exit 0;;
  esac
done
echo "not simulated: CUDA compilation (nvcc) under cuda-sim; the stub toolkit compiles nothing" >&2
exit 1
"""


class Toolkit:
    def __init__(self) -> None:
        self.home = tempfile.mkdtemp(prefix="cuda-sim-toolkit-")
        # a process that never stops its simulation (the plugin, CUDA_SIM=1 children) removes it at exit
        self._remove = weakref.finalize(self, shutil.rmtree, self.home, ignore_errors=True)
        bin_dir = os.path.join(self.home, "bin")
        os.makedirs(bin_dir)
        nvcc = os.path.join(bin_dir, "nvcc")
        with open(nvcc, "w", encoding="utf-8") as handle:
            handle.write(_NVCC.format(version=CUDA_VERSION))
        os.chmod(nvcc, os.stat(nvcc).st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
        with open(os.path.join(self.home, "version.txt"), "w", encoding="utf-8") as handle:
            handle.write(f"CUDA Version {CUDA_VERSION}.0\n")
        self._env: dict[str, str | None] = {}
        self._finder: _CppExtensionFinder | None = None

    def activate(self, patcher: Patcher) -> None:
        patcher.set(torch.version, "cuda", CUDA_VERSION)
        for name in ("CUDA_HOME", "CUDA_PATH"):
            self._env[name] = os.environ.get(name)
            os.environ[name] = self.home
        module = sys.modules.get("torch.utils.cpp_extension")
        if module is not None:
            _point_at(module, self.home, patcher)
        else:
            self._finder = _CppExtensionFinder(self.home, patcher)
            sys.meta_path.insert(0, self._finder)

    def deactivate(self) -> None:
        if self._finder is not None and self._finder in sys.meta_path:
            sys.meta_path.remove(self._finder)
        for name, value in self._env.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._remove()


def _point_at(module: ModuleType, home: str, patcher: Patcher) -> None:
    patcher.set(module, "CUDA_HOME", home)
    for name in ("load", "load_inline"):
        original = getattr(module, name, None)
        if callable(original):
            patcher.set(module, name, _refusing_cuda(module, name, original))


def _refusing_cuda(module: ModuleType, name: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """``cpp_extension.load``/``load_inline`` of CUDA code stop before compiling: the stub nvcc
    would refuse the CUDA half anyway, after the host half has been compiled against torch's headers
    (half a minute of CPU per attempt: peft retries its BOFT kernel at every layer). C++-only
    extensions build as on any host."""
    signature = inspect.signature(original)

    @functools.wraps(original)
    def build(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(*args, **kwargs).arguments
        except TypeError:
            return original(*args, **kwargs)  # torch's own error for a bad call
        if _compiles_cuda(module, name, bound):
            raise NotSimulatedError(f"compiling the CUDA extension {bound.get('name')!r} "
                                    f"(torch.utils.cpp_extension.{name}): the stub toolkit compiles nothing")
        return original(*args, **kwargs)

    return build


def _compiles_cuda(module: ModuleType, name: str, bound: dict[str, Any]) -> bool:
    with_cuda = bound.get("with_cuda")
    if with_cuda is not None:
        return bool(with_cuda)
    if name == "load_inline":
        return bool(bound.get("cuda_sources"))
    sources = bound.get("sources") or []
    if isinstance(sources, str):
        sources = [sources]
    is_cuda = getattr(module, "_is_cuda_file", lambda path: str(path).endswith((".cu", ".cuh")))
    return any(is_cuda(str(source)) for source in sources)


class _CppExtensionFinder(importlib.abc.MetaPathFinder):
    """Sets ``torch.utils.cpp_extension.CUDA_HOME`` once that module is first imported (a CPU
    build computes None there whatever the environment says)."""

    def __init__(self, home: str, patcher: Patcher) -> None:
        self.home = home
        self.patcher = patcher

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "torch.utils.cpp_extension":
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original = loader.exec_module
        home, patcher = self.home, self.patcher

        def exec_module(module: ModuleType) -> None:
            original(module)
            _point_at(module, home, patcher)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
