"""simulate() restores everything; install() is process-wide and idempotent; the CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch
from cuda_sim import is_active, simulate

from tests.checkout import SOURCE_PATH

REPO = Path(__file__).resolve().parents[2]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([SOURCE_PATH, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def _state():
    return (torch.cuda.is_available, torch.cuda.device_count, torch.Generator, torch.version.cuda,
            torch.UntypedStorage.__dict__.get("device"), torch._C._group_tensors_by_device_and_dtype,
            list(torch.serialization._package_registry), torch._C._len_torch_function_stack(),
            os.environ.get("CUDA_HOME"))


def test_simulate_restores_everything():
    before = _state()
    with simulate():
        assert is_active() and torch.cuda.is_available()
        kept = torch.ones(2, device="cuda")
    assert _state() == before
    assert not is_active()
    assert not torch.cuda.is_available()
    assert kept.device.type == "cpu"  # outside the simulation every value is what it is: CPU


def test_simulate_restores_after_an_exception():
    before = _state()
    with pytest.raises(RuntimeError), simulate():
        torch.ones(2, device="cuda") + torch.ones(2)
    assert _state() == before


def test_nested_simulate():
    with simulate():
        with simulate():
            assert torch.cuda.is_available()
        assert torch.cuda.is_available()
    assert not torch.cuda.is_available()


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args], capture_output=True, text=True,
                          env=_env(), timeout=300, check=False)


@pytest.mark.slow  # a fresh interpreter importing torch: over 10 s on a loaded 2-core host
def test_install_is_process_wide_and_idempotent():
    result = _run("""
        import threading, torch, cuda_sim
        cuda_sim.install(); cuda_sim.install()
        with cuda_sim.simulate():
            pass
        out = {}
        t = threading.Thread(target=lambda: out.setdefault("d", torch.ones(1, device="cuda").device))
        t.start(); t.join()
        print(torch.cuda.is_available(), out["d"], torch._C._len_torch_function_stack())
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "cuda:0", "1"]


# A thread that ends with Python objects on its C++ mode stacks has torch's thread-local
# destructors drop them after join() returned; if the interpreter is finalizing by then, taking the
# GIL there ends the thread with pthread_exit inside a noexcept destructor: std::terminate, an abort
# at exit. The race is narrow (a CI flake under load); the prelude makes it certain: each worker
# sleeps 0.5 s in its thread-local destructors before torch's run (they run last-registered first)
# while the main thread's last atexit callback holds the GIL for 1.5 s (a PyDLL call runs no bytecode,
# so it never hands the GIL over) until finalization has begun.
_EXIT_RACE = """
    import atexit, ctypes, sys, threading
    libc = ctypes.PyDLL(None)
    atexit.register(libc.usleep, 1_500_000)
    usleep = ctypes.cast(libc.usleep, ctypes.c_void_p).value
    at_thread_exit = ctypes.CDLL(None).__cxa_thread_atexit_impl
    at_thread_exit.argtypes = [ctypes.c_void_p] * 3
    import torch, cuda_sim

    def slow_thread_end():
        at_thread_exit(usleep, 500_000, None)
"""


@pytest.mark.slow  # fresh interpreters importing torch
@pytest.mark.parametrize("how", ["control", "started-after-install", "installs-itself"])
def test_a_simulated_thread_leaves_nothing_for_exit(how):
    result = _run(_EXIT_RACE + """
    out, ready = {}, threading.Event()

    def work():
        if how == "control":  # a plain mode left pushed: the prelude must make this abort
            torch.overrides.TorchFunctionMode().__enter__()
        elif how == "installs-itself":  # a thread that existed before install() and calls it
            ready.wait(60)
            cuda_sim.install()
        out["d"] = str(torch.ones(1, device="cuda").device) if how != "control" else "cpu"
        slow_thread_end()

    how = sys.argv[1]
    t = threading.Thread(target=work)
    if how != "started-after-install":
        t.start()
    if how != "control":
        cuda_sim.install()
    if how == "started-after-install":
        t.start()
    ready.set(); t.join()
    print(out["d"])
    """, how)
    if how == "control":
        assert result.returncode == -6 and "terminate called" in result.stderr, (result.returncode, result.stderr)
        return
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["cuda:0"]
    assert "terminate called" not in result.stderr


@pytest.mark.slow  # a fresh interpreter importing torch: over 10 s on a loaded 2-core host
def test_cli_runs_a_script_as_main(tmp_path):
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys, torch
        import helper
        assert __name__ == "__main__"
        print(sys.argv[1:], helper.VALUE, torch.cuda.is_available(), torch.zeros(1, device="cuda").device)
        if "--fail" in sys.argv:
            torch.zeros(2, device="cuda") + torch.arange(2)
        sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
    """))
    (tmp_path / "helper.py").write_text("VALUE = 'local import'\n")
    ok = subprocess.run([sys.executable, "-m", "cuda_sim", str(script), "--lr", "0.1", "3"],
                        capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300, check=False)
    assert ok.returncode == 3, ok.stderr
    assert ok.stdout.strip() == "['--lr', '0.1', '3'] local import True cuda:0"
    failed = subprocess.run([sys.executable, "-m", "cuda_sim", str(script), "--fail"],
                            capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300, check=False)
    assert failed.returncode == 1
    last = failed.stderr.strip().splitlines()[-1]
    assert last == ("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, "
                    "cuda:0 and cpu!")


@pytest.mark.slow  # a fresh interpreter importing torch: over 10 s on a loaded 2-core host
def test_cli_usage_errors(tmp_path):
    missing = subprocess.run([sys.executable, "-m", "cuda_sim", str(tmp_path / "nope.py")],
                             capture_output=True, text=True, env=_env(), cwd=REPO, timeout=300, check=False)
    assert missing.returncode == 2 and "nope.py" in missing.stderr
    bare = subprocess.run([sys.executable, "-m", "cuda_sim"], capture_output=True, text=True, env=_env(),
                          cwd=REPO, timeout=300, check=False)
    assert bare.returncode == 2 and "usage" in bare.stderr


def test_simulate_in_a_thread_that_existed_before():
    import threading

    ready, go, seen = threading.Event(), threading.Event(), {}

    def worker():
        ready.set()
        go.wait(60)
        with simulate():
            seen["device"] = torch.ones(1, device="cuda").device
        seen["after"] = torch.cuda.is_available()

    thread = threading.Thread(target=worker)
    thread.start()
    ready.wait(60)
    with simulate():
        go.set()
        thread.join(120)
        assert torch.cuda.is_available()
    assert seen["device"] == torch.device("cuda", 0)
    assert seen["after"] is True  # the main thread's simulation was still on
    assert not torch.cuda.is_available()
