"""The process supervisor: containment by namespaces (where the host allows) or by a subreaper."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from harness.containment._process import Confinement, RunningProcess, run_helper
from harness.containment._seal import bwrap
from tests.checkout import in_private_tmp
from tests.faults.processes import new_token, processes_with, wait_until


def _run(tmp_path: Path, source: str, confinement: Confinement | None, timeout: float = 60, **env: str):
    log = tmp_path / "cell.log"
    result = RunningProcess([sys.executable, "-c", source], env={**os.environ, **env}, cwd=tmp_path / "cwd",
                            log_path=log, timeout=timeout, confinement=confinement).wait()
    return result, log.read_text()


@pytest.fixture
def layout(tmp_path):
    for name in ("cwd", "output/run", "repo/cache", "repo/code"):
        (tmp_path / name).mkdir(parents=True)
    (tmp_path / "output" / "run" / "results.json").write_text("{}")
    return tmp_path


def _namespaces(tmp_path: Path) -> bool:
    result, _ = _run(tmp_path, "pass", Confinement())
    return result.containment == "namespaces"


PROBE = """
import ctypes, os, sys
root = sys.argv[1]
print("pid", os.getpid(), "procs", sorted(int(p) for p in os.listdir("/proc") if p.isdigit()))
print("output", sorted(os.listdir(root + "/output")))
for target in ("/output/forged", "/repo/code/changed", "/repo/cache/ok", "/cwd/ok"):
    try:
        open(root + target, "w").write("x")
        print("wrote", target)
    except OSError as error:
        print("refused", target, error.errno)
libc = ctypes.CDLL(None, use_errno=True)
print("umount", libc.umount2((root + "/output").encode(), 2))
"""


def test_namespaces_hide_the_output_and_lock_read_only_folders(layout):
    if not _namespaces(layout):
        pytest.skip("no namespaces on this host (not root, no unprivileged user namespaces)")
    confinement = Confinement(hide=(layout / "output",), readonly=(layout / "repo",),
                              writable=(layout / "repo" / "cache", layout / "cwd"))
    source = PROBE.replace("sys.argv[1]", repr(str(layout)))
    result, log = _run(layout, source, confinement)
    assert result.returncode == 0 and result.containment == "namespaces", log
    assert "pid 2 procs [1, 2]" in log  # its own pid namespace, its own /proc: the harness is invisible
    assert "output []" in log and "refused /output/forged" in log
    assert "refused /repo/code/changed 30" in log  # EROFS
    assert "wrote /repo/cache/ok" in log and "wrote /cwd/ok" in log
    assert "umount -1" in log  # locked: it cannot uncover the output, even as root
    assert (layout / "output" / "run" / "results.json").read_text() == "{}"
    assert not (layout / "output" / "forged").exists() and not (layout / "repo" / "code" / "changed").exists()


def test_a_hidden_folder_that_holds_the_cwd_is_not_hidden(layout):
    confinement = Confinement(hide=(layout,)).usable([layout / "cwd"])
    assert confinement.hide == ()


@pytest.mark.parametrize("namespaces", ["1", "0"])
def test_every_descendant_dies_with_the_command(layout, monkeypatch, namespaces):
    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", namespaces)
    token = new_token()
    source = (
        "import os, subprocess, sys\n"
        "subprocess.Popen(['setsid', sys.executable, '-c', 'import time; time.sleep(600)', sys.argv[1]])\n"
        "subprocess.Popen([sys.executable, '-c', 'import os, time\\nif os.fork(): os._exit(0)\\nos.setsid(); "
        "time.sleep(600)', sys.argv[1]])\n"
        "import time; time.sleep(0.5)\n"
    )
    log = layout / "cell.log"
    started = time.monotonic()
    result = RunningProcess([sys.executable, "-c", source, token], env=dict(os.environ), cwd=layout, log_path=log,
                            timeout=60, confinement=Confinement()).wait()
    assert result.returncode == 0 and time.monotonic() - started < 20
    assert wait_until(lambda: not processes_with(token), timeout=5)


def test_helpers_keep_stdout_and_stderr_apart_and_time_out(tmp_path):
    done = run_helper(["sh", "-c", "echo out; echo err >&2; exit 3"], env=dict(os.environ), timeout=30)
    assert (done.returncode, done.stdout, done.stderr, done.timed_out) == (3, "out\n", "err\n", False)
    started = time.monotonic()
    stuck = run_helper(["sleep", "600"], env=dict(os.environ), timeout=1)
    assert stuck.timed_out and time.monotonic() - started < 15


def test_output_held_open_by_a_process_outside_the_cell_does_not_stall_it(tmp_path, monkeypatch):
    """A repro can hand its stdout to a process it did not start (SCM_RIGHTS over a unix socket): no
    containment kills that one, so the log pump stops reading shortly after the cell is over."""
    import socket

    from harness.containment import _process

    monkeypatch.setattr(_process, "_DRAIN_S", 0.5)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(tmp_path / "holder.sock"))
    server.listen(1)
    (tmp_path / "cwd").mkdir()
    source = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); s.connect(sys.argv[1])\n"
        "socket.send_fds(s, [b'x'], [1])\n"
        "print('handed over', flush=True)\n"
    )
    started = time.monotonic()
    proc = RunningProcess([sys.executable, "-c", source, str(tmp_path / "holder.sock")], env=dict(os.environ),
                          cwd=tmp_path / "cwd", log_path=tmp_path / "cell.log", timeout=60)
    connection, _ = server.accept()
    _, fds, _, _ = socket.recv_fds(connection, 1, 1)  # this test process now holds the cell's stdout
    try:
        result = proc.wait()
    finally:
        for fd in fds:
            os.close(fd)
        connection.close()
        server.close()
    assert result.returncode == 0 and time.monotonic() - started < 20
    log = (tmp_path / "cell.log").read_text()
    assert "handed over" in log and "held its output open" in log


def test_a_writable_folder_inside_a_hidden_one_stays_reachable(layout):
    """Cells running side by side: each sees its own scratch folder, not its neighbours'."""
    if not _namespaces(layout):
        pytest.skip("no namespaces on this host (not root, no unprivileged user namespaces)")
    base = layout / "scratch"
    (base / "mine").mkdir(parents=True)
    (base / "neighbour").mkdir()
    (base / "neighbour" / "outcome.json").write_text('{"status": "passed"}')
    confinement = Confinement(hide=(base,), writable=(base / "mine",)).usable([base / "mine"])
    assert confinement.hide == (base,)
    source = (
        "import os\n"
        f"print('listing', sorted(os.listdir({str(base)!r})))\n"
        "open('outcome.json', 'w').write('mine')\n"
        "try:\n"
        f"    open({str(base / 'neighbour' / 'outcome.json')!r}, 'w').write('forged')\n"
        "except OSError as error:\n"
        "    print('refused', error.errno)\n"
    )
    log = layout / "cell.log"
    result = RunningProcess([sys.executable, "-c", source], env=dict(os.environ), cwd=base / "mine", log_path=log,
                            timeout=60, confinement=confinement).wait()
    text = log.read_text()
    assert result.returncode == 0, text
    assert "listing ['mine']" in text and "refused" in text
    assert (base / "mine" / "outcome.json").read_text() == "mine"
    assert (base / "neighbour" / "outcome.json").read_text() == '{"status": "passed"}'


SEALED_HELPER = """
import os, sys
home, hidden = sys.argv[1], sys.argv[2]
print("env", os.environ["HOME"] == home, os.environ["TMPDIR"], os.environ["XDG_CACHE_HOME"])
for target in (home + "/.repro-matrix-sealed-probe", "/tmp/ok", sys.argv[3] + "/ok"):
    try:
        open(target, "w").write("x")
        print("wrote", target)
    except OSError as error:
        print("refused", target, error.errno)
print("hidden", os.path.isdir(hidden) and os.listdir(hidden))
"""


def test_a_sealed_helper_keeps_home_read_only_and_writes_only_its_folders(layout):
    """Environment builds: HOME stays (uv's settings) but read-only, /tmp is private, the output hidden."""
    if not _namespaces(layout):
        pytest.skip("no namespaces on this host (not root, no unprivileged user namespaces)")
    scratch = layout / "scratch"
    scratch.mkdir()
    # The interpreter read-only, as the harness's callers list it (harness/containment/_sandbox.py): a checkout or venv under
    # /tmp is otherwise covered by the private /tmp.
    interpreter = (Path(sys.prefix), Path(sys.base_prefix))
    confinement = Confinement(hide=(layout / "output",), readonly=(layout / "cwd", *interpreter),
                              writable=(layout / "repo" / "cache",), sealed=True, scratch=scratch, private_home=False)
    home = os.environ["HOME"]
    done = run_helper([sys.executable, "-c", SEALED_HELPER, home, str(layout / "output"), str(layout / "repo" / "cache")],
                      env=dict(os.environ), timeout=60, cwd=layout / "cwd", confinement=confinement)
    # sealed by bwrap where it runs (the network kept), else by the namespace layer
    assert done.returncode == 0 and done.containment == ("bwrap" if bwrap()[0] else "namespaces"), done
    assert "env True /tmp /tmp/.cache" in done.stdout
    # refused (read-only), or under /tmp written into the step's own throwaway /tmp (never the host's HOME, below)
    assert f"refused {home}/.repro-matrix-sealed-probe 30" in done.stdout or in_private_tmp(home)
    assert "wrote /tmp/ok" in done.stdout and f"wrote {layout}/repo/cache/ok" in done.stdout
    assert "hidden []" in done.stdout or "hidden False" in done.stdout  # empty, or (under /tmp) not there at all
    assert not Path(home, ".repro-matrix-sealed-probe").exists()
    assert list(scratch.iterdir()) == []  # its private /tmp is gone with it


def test_without_namespaces_a_helper_runs_as_before(layout, monkeypatch):
    """The subreaper fallback is unchanged: no seal, the same HOME and TMPDIR."""
    monkeypatch.setenv("REPRO_MATRIX_NAMESPACES", "0")
    confinement = Confinement(hide=(layout / "output",), sealed=True, scratch=layout, private_home=False)
    done = run_helper([sys.executable, "-c", "import os; print(os.environ.get('TMPDIR'), os.listdir(os.sys.argv[1]))",
                       str(layout / "output")], env={**os.environ, "TMPDIR": str(layout)}, timeout=60,
                      confinement=confinement)
    assert done.returncode == 0 and done.containment == "subreaper", done
    assert done.stdout.strip() == f"{layout} ['run']"
