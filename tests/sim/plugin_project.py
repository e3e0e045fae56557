"""A small user project with CUDA tests, written outside the repo for `pytest --cuda-sim` runs.

It has what projects' CPU CI skips: a module-level `torch.cuda.is_available()` check, `skipif`
markers, a `needs_cuda` marker applied by its conftest, a device-parametrised generator in the
style of `instantiate_device_type_tests`, a placement bug (a CPU constant meeting a CUDA input), a
path the simulation does not follow (a second GPU) and tests of the `cuda_sim` fixture and marker.
"""

from __future__ import annotations

import subprocess
import textwrap
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path

MIX_MESSAGE = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"

FILES = {
    "conftest.py": '''
        import pytest
        import torch


        def pytest_configure(config):
            config.addinivalue_line("markers", "needs_cuda: the test needs a CUDA device")


        def pytest_collection_modifyitems(config, items):
            if torch.cuda.is_available():
                return
            for item in items:
                if item.get_closest_marker("needs_cuda"):
                    item.add_marker(pytest.mark.skip(reason="needs_cuda: no CUDA device"))
    ''',
    "scaling.py": '''
        import torch


        def scale(x):
            return x * torch.tensor([2.0])  # the bug: a 1-element CPU tensor, not a 0-dim scalar


        def scale_fixed(x):
            return x * torch.tensor([2.0], device=x.device)
    ''',
    "test_devices.py": '''
        import pytest
        import torch

        from scaling import scale, scale_fixed

        HAS_CUDA = torch.cuda.is_available()  # read at collection, as many suites do
        needs_gpu = pytest.mark.skipif(not HAS_CUDA, reason="CUDA not available")


        @needs_gpu
        def test_scale_on_cuda():
            assert scale(torch.ones(3, device="cuda")).device.type == "cuda"


        @needs_gpu
        def test_scale_fixed_on_cuda():
            out = scale_fixed(torch.ones(3, device="cuda"))
            assert out.device == torch.device("cuda", 0) and out.tolist() == [2.0, 2.0, 2.0]


        @pytest.mark.needs_cuda
        def test_second_gpu():
            torch.ones(2, device="cuda:1")


        @pytest.mark.needs_cuda
        def test_needs_cuda_marker_runs():
            model = torch.nn.Linear(4, 2).cuda()
            loss = model(torch.randn(3, 4, device="cuda")).sum()
            loss.backward()
            assert model.weight.grad.device.type == "cuda"


        def test_on_cpu_only():
            assert torch.ones(2).sum().item() == 2.0
    ''',
    "test_generated.py": '''
        import torch


        def instantiate_for_devices(template, scope):
            """One test class per available device, as instantiate_device_type_tests does."""
            devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
            for device in devices:
                name = template.__name__.lstrip("_") + device.upper()
                scope[name] = type(name, (template,), {"device": device})


        class _TestLinear:
            device = "cpu"

            def test_forward_stays_on_device(self):
                layer = torch.nn.Linear(3, 2).to(self.device)
                assert layer(torch.ones(1, 3, device=self.device)).device.type == self.device


        instantiate_for_devices(_TestLinear, globals())
    ''',
    "test_fixture.py": '''
        import pytest
        import torch


        def test_fixture_simulates(cuda_sim):
            layer = torch.nn.Linear(2, 2).to(cuda_sim)
            assert next(layer.parameters()).device == torch.device("cuda", 0)
            with pytest.raises(RuntimeError, match="same device"):
                layer(torch.ones(1, 2))


        @pytest.mark.cuda_sim
        def test_marker_simulates():
            assert torch.cuda.is_available()
            assert torch.zeros(1, device="cuda").is_cuda


        def test_after_the_fixture_nothing_is_left():
            assert not torch.cuda.is_available()
    ''',
    "test_internal.py": '''
        import torch

        from cuda_sim import _activity


        def test_simulator_crash(cuda_sim):
            _activity.placements = None  # breaks the simulator's own bookkeeping: its next placement crashes
            try:
                torch.ones(2, device="cuda")
            finally:
                _activity.placements = 0
    ''',
}


def write_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, text in FILES.items():
        (root / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return root


def run_pytest(python: str, project: Path, *args: str, env: Mapping[str, str],
               timeout: float = 600) -> tuple[subprocess.CompletedProcess[str], dict[str, tuple[str, str]]]:
    """Run pytest in ``project``; return the process and each test's (outcome, message) from its JUnit XML."""
    junit = project / "junit.xml"
    junit.unlink(missing_ok=True)
    proc = subprocess.run([python, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}", *args],
                          cwd=project, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False)
    return proc, (junit_outcomes(junit) if junit.exists() else {})


def junit_outcomes(path: Path) -> dict[str, tuple[str, str]]:
    """``{"test_devices.test_x": ("failed", message), ...}``; outcome: passed, failed, error or skipped."""
    outcomes = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = found.get("message", "")
                break
        outcomes[f"{case.get('classname')}.{case.get('name')}"] = (outcome, message)
    return outcomes
