"""Cell processes: timeouts kill the whole group, logs stay bounded, leftovers are swept."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from harness.containment import _launch, _log, _process
from harness.containment._process import RunningProcess


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is dead for our purposes.
    try:
        return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
    except OSError:
        return False


def _python(tmp_path: Path, source: str, timeout: float, **kw):
    log = tmp_path / "cell.log"
    proc = RunningProcess([sys.executable, "-c", source], env=dict(os.environ), cwd=tmp_path, log_path=log,
                          timeout=timeout, **kw)
    return proc.wait(), log


def test_timeout_kills_the_process_group_including_grandchildren(tmp_path):
    pidfile = tmp_path / "grandchild.pid"
    source = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
        "time.sleep(600)\n"
    )
    result, _ = _python(tmp_path, source, timeout=2)
    assert result.timed_out
    grandchild = int(pidfile.read_text())
    deadline = time.time() + 5
    while _alive(grandchild) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(grandchild)


def test_a_daemon_forked_by_a_clean_run_is_swept(tmp_path):
    pidfile = tmp_path / "daemon.pid"
    source = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'],"
        " stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"
        f"open({str(pidfile)!r}, 'w').write(str(p.pid))\n"
    )
    result, _ = _python(tmp_path, source, timeout=30)
    assert result.returncode == 0 and not result.timed_out
    daemon = int(pidfile.read_text())
    deadline = time.time() + 5
    while _alive(daemon) and time.time() < deadline:
        time.sleep(0.1)
    assert not _alive(daemon)


def test_huge_output_is_truncated_with_a_marker(tmp_path, monkeypatch):
    monkeypatch.setattr(_log, "LOG_HEAD_BYTES", 10_000)
    monkeypatch.setattr(_log, "LOG_TAIL_BYTES", 10_000)
    source = "import sys\nfor i in range(200_000): sys.stdout.write(f'line {i}\\n')\nsys.stdout.write('THE END\\n')"
    result, log = _python(tmp_path, source, timeout=60)
    text = log.read_text()
    assert result.dropped_bytes > 1_000_000
    assert "[repro-matrix: log truncated" in text and text.rstrip().endswith("THE END")
    assert len(text) < 40_000


def test_invalid_utf8_is_kept_as_bytes(tmp_path):
    result, log = _python(tmp_path, "import sys; sys.stdout.buffer.write(b'\\xff\\xfe bad bytes\\n')", timeout=30)
    assert result.returncode == 0 and b"\xff\xfe bad bytes" in log.read_bytes()


def test_signal_death_is_named(tmp_path):
    result, _ = _python(tmp_path, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)", timeout=30)
    assert _process.signal_name(result.returncode) == "SIGSEGV"


def test_exit_is_noticed_at_once_not_at_a_poll_tick(tmp_path):
    # Popen.wait(timeout=...) sleeps up to 50 ms between polls; past 0.3 s a child's exit was noticed
    # 0-50 ms late (median ~25 ms). Compare with an independent pidfd waiter on the same exit.
    lateness = []
    for _ in range(8):
        proc = RunningProcess([sys.executable, "-c", "import time; time.sleep(0.3)"], env=dict(os.environ),
                              cwd=tmp_path, log_path=tmp_path / "cell.log", timeout=30)
        exited = _exit_time_in_thread(proc._proc.pid)
        proc.wait()
        returned = time.monotonic()
        exited.join()
        lateness.append(returned - exited.at)
    assert sorted(lateness)[len(lateness) // 2] < 0.010, lateness


def _exit_time_in_thread(pid: int):
    import select
    import threading

    class Waiter(threading.Thread):
        at = 0.0

        def run(self) -> None:
            fd = os.pidfd_open(pid)
            select.select([fd], [], [], 30)
            self.at = time.monotonic()
            os.close(fd)

    waiter = Waiter(daemon=True)
    waiter.start()
    return waiter


def test_a_child_ignoring_sigterm_is_killed_after_the_grace_period(tmp_path, monkeypatch):
    monkeypatch.setattr(_launch, "_GRACE_S", 0.5)
    source = "import signal, time\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\nprint('ready', flush=True)\ntime.sleep(600)\n"
    started = time.monotonic()
    result, _ = _python(tmp_path, source, timeout=1.5)
    assert result.timed_out and _process.signal_name(result.returncode) == "SIGKILL"
    assert time.monotonic() - started < 10


def test_interrupt_from_another_thread_ends_the_wait(tmp_path):
    import threading

    proc = RunningProcess([sys.executable, "-c", "import time; time.sleep(600)"], env=dict(os.environ),
                          cwd=tmp_path, log_path=tmp_path / "cell.log", timeout=600)
    threading.Timer(0.5, proc.interrupt).start()
    started = time.monotonic()
    result = proc.wait()
    assert result.interrupted and not result.timed_out
    assert _process.signal_name(result.returncode) == "SIGTERM"
    assert time.monotonic() - started < 10


def test_waits_without_pidfd_support_keep_timeouts(tmp_path, monkeypatch):
    # Kernels before 5.3 (or a seccomp filter) refuse pidfd_open: Popen's own wait takes over.
    def refuse(pid: int, flags: int = 0) -> int:
        raise OSError(38, "Function not implemented")

    monkeypatch.setattr(_process.os, "pidfd_open", refuse)
    result, _ = _python(tmp_path, "print('ok')", timeout=30)
    assert result.returncode == 0 and not result.timed_out
    result, _ = _python(tmp_path, "import time; time.sleep(600)", timeout=1)
    assert result.timed_out


def test_a_timeout_longer_than_a_poll_slice_works(tmp_path):
    result, _ = _python(tmp_path, "print('ok')", timeout=10 * 86400)
    assert result.returncode == 0 and not result.timed_out
