"""Against a private Docker daemon: it dies mid-run (a fault of the catalogue), and ``harness clean``
prunes its images. Neither may touch the machine's own daemon.

Fault: a private ``dockerd`` (own socket, data and exec roots, so killing it harms nobody) holds the fixture
image; the harness runs against it through ``DOCKER_HOST``; the test SIGKILLs the daemon while a cell's
container runs. The run must still finish and write its results: the running cell and the cells after it
end as ``infra-error`` saying the daemon is gone, cells that finished before keep their verdicts, and
the next run on a healthy daemon sweeps the container the first run could not remove.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
# The docker SDK leaves a client's socket unclosed when its first request fails (docker 7.2): these tests make
# clients while their daemon starts, dies and restarts. Collected here (below), never in another module's test.
SDK_SOCKET_LEAK = r"ignore:Exception ignored in. <socket\.socket .*family=1:pytest.PytestUnraisableExceptionWarning"
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.filterwarnings(SDK_SOCKET_LEAK)]


@pytest.fixture(scope="module", autouse=True)
def _collect_leaked_sockets() -> Iterator[None]:
    yield  # torn down after private_daemon, whose teardown restarts the daemon
    gc.collect()


class PrivateDaemon:
    """A second ``dockerd --bridge=none --iptables=false`` that a test may kill."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.host = f"unix://{root}/docker.sock"
        self.process: subprocess.Popen | None = None

    def start(self, attempts: int = 3) -> None:
        """Start it; a loaded host can make dockerd give up waiting for its containerd, so retry."""
        for _ in range(attempts):
            if self._start_once(timeout=90):
                return
            containerd = self._containerd_pid()  # a failed dockerd may leave its containerd running
            if containerd is not None and _running(containerd):
                os.kill(containerd, signal.SIGTERM)
            _wait_exit(containerd)
        pytest.fail(f"the private dockerd did not start in {attempts} attempts: {self.log_tail()}")

    def _start_once(self, timeout: float) -> bool:
        log = (self.root / "dockerd.log").open("ab")
        self.process = subprocess.Popen(
            ["dockerd", "--bridge=none", "--iptables=false", f"--data-root={self.root}/data",
             f"--exec-root={self.root}/exec", f"--pidfile={self.root}/dockerd.pid", f"--host={self.host}"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.process.poll() is None:
            if self.client_or_none() is not None:
                return True
            time.sleep(0.2)
        self.stop()
        return False

    def ensure_running(self) -> None:
        if self.process is None or self.process.poll() is not None:
            self.start()

    def client_or_none(self):
        import docker
        from docker.errors import DockerException

        try:
            client = docker.DockerClient(base_url=self.host, timeout=600)
            client.ping()
        except DockerException:
            return None
        return client

    def kill(self) -> None:
        """A crash: SIGKILL, no shutdown. Its containers' processes live on in their shims."""
        assert self.process is not None
        containerd = self._containerd_pid()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=60)
        # Its containerd follows it down; a restart before that finds it "still running" and gives up.
        _wait_exit(containerd)

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): dockerd stops its containers; then nothing of it is left mounted."""
        if self.process is not None and self.process.poll() is None:
            containerd = self._containerd_pid()
            self.process.send_signal(signal.SIGTERM)
            self.process.wait(timeout=120)
            _wait_exit(containerd)
        data = str(self.root / "data")
        if any(line.split()[1] == data for line in Path("/proc/mounts").read_text().splitlines()):
            subprocess.run(["umount", data], check=False)

    def _containerd_pid(self) -> int | None:
        pidfile = self.root / "exec" / "containerd" / "containerd.pid"
        text = pidfile.read_text().strip() if pidfile.is_file() else ""
        return int(text) if text.isdigit() else None

    def log_tail(self) -> str:
        return (self.root / "dockerd.log").read_text(errors="replace")[-2000:]


def _wait_exit(pid: int | None, timeout: float = 30) -> None:
    """Wait for ``pid`` to end (a zombie counts as ended); SIGKILL it after ``timeout``."""
    killed_at = None
    while pid is not None and _running(pid):
        time.sleep(0.1)
        timeout -= 0.1
        if timeout <= 0 and killed_at is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            killed_at = time.monotonic()
        elif killed_at is not None and time.monotonic() - killed_at > 30:
            pytest.fail(f"process {pid} of the private daemon survives SIGKILL")


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.fixture(scope="module")
def private_daemon(docker_client) -> Iterator[PrivateDaemon]:
    if os.geteuid() != 0 or shutil.which("dockerd") is None:
        pytest.skip("a private dockerd needs root and Debian's docker.io")
    # Short: the daemon's sockets live under it, and a unix socket path has at most 107 bytes.
    root = Path(tempfile.mkdtemp(prefix="rm-dockerd-", dir="/tmp"))
    daemon = PrivateDaemon(root)
    daemon.start()
    try:
        yield daemon
    finally:
        # A killed daemon left its containers' processes running: a restart reaps them, a stop unmounts.
        daemon.ensure_running()
        daemon.stop()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def private_image(docker_client, fixture_image, private_daemon) -> str:
    """The fixture cases' image (torch==2.13.0), built on the main daemon and copied to the private one."""
    client = private_daemon.client_or_none()
    assert client is not None
    client.images.load(docker_client.images.get(fixture_image).save(chunk_size=1024 * 1024, named=fixture_image))
    return fixture_image


def hang_state(client) -> list[str]:
    from harness.docker import labelled_containers

    return [c.state for c in labelled_containers(client) if c.labels.get("repro-matrix.cell", "").startswith("hangs/")]


def _hang_printed(output: Path) -> bool:
    """The hanging repro runs: its first line is in its cell log (streamed from the container)."""
    logs = output.glob("*/logs/hangs/cpu/buggy.log")
    return any("behaviour=hang" in log.read_text(encoding="utf-8", errors="replace") for log in logs)


@pytest.mark.fault("docker daemon gone mid-run (docker backend)")
@pytest.mark.parametrize("how", ["crash", "stop"])
def test_daemon_gone_mid_cell_ends_in_clear_infra_errors(private_daemon, private_image, local_base,
                                                          fixture_cases, tmp_path, how):
    """``crash``: SIGKILL, the connection breaks at once. ``stop``: SIGTERM, dockerd first stops the
    container (the cell must not read as a repro killed by SIGTERM) and then goes away."""
    private_daemon.ensure_running()
    hangs = fixture_cases / "hangs" / "case.yaml"
    hangs.write_text(hangs.read_text().replace("timeout: 3", "timeout: 600"))
    env = {**os.environ, "DOCKER_HOST": private_daemon.host, "REPRO_DOCKER_BASE": local_base, "COLUMNS": "200"}
    command = [sys.executable, "-m", "harness", "cases", "--backend", "docker", "--lane", "cpu", "--jobs", "1",
               "--cases-dir", str(fixture_cases), "--case", "confirmed", "--case", "hangs"]
    run = subprocess.Popen([*command, "--output", str(tmp_path / "first")], cwd=REPO, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 600  # a hang guard: the wait ends when the repro has printed its first line
        while not _hang_printed(tmp_path / "first"):
            if run.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"the hanging cell never started: {run.communicate(timeout=60)[0][-3000:]}")
            time.sleep(0.2)
        private_daemon.kill() if how == "crash" else private_daemon.stop()
        output, _ = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, output[-3000:]
    (results_path,) = (tmp_path / "first").glob("*/results.json")
    results = json.loads(results_path.read_text())
    assert results["run"]["status"] == "completed"
    cells = {(c["case"], c["variant"]): c for c in results["cells"]}
    for variant in ("buggy", "fixed"):  # the one running when the daemon died, and the one after it
        cell = cells[("hangs", variant)]
        assert (cell["status"], cell["judgement"]) == ("infra-error", "infra-error"), cell
    fixed = cells[("hangs", "fixed")]["reason"]
    if how == "crash" or "is gone" in fixed:
        assert f"the Docker daemon at {private_daemon.host} is gone" in fixed, fixed
        assert "dockerd --bridge=none" in fixed  # how to start one again
    else:  # a daemon still shutting down may take the create and refuse the start
        assert fixed.startswith("docker could not run the cell"), fixed
    running = cells[("hangs", "buggy")]["reason"]
    if how == "crash":
        assert "stopped answering while the cell ran" in running, running
    else:  # whichever the harness saw first: the daemon's SIGTERM to the container, or the closed socket
        assert ("stopped answering while the cell ran" in running
                or "stopped from outside the harness (the Docker daemon sent SIGTERM" in running), running
    # Cells that finished before the crash keep their real verdict.
    assert {c["judgement"] for k, c in cells.items() if k[0] == "confirmed"} == {"confirmed"}
    verdicts = {v["case"]: v["verdict"] for v in results["verdicts"]}
    assert verdicts == {"confirmed": "confirmed", "hangs": "infra-error"}
    assert "is gone" in output or how == "stop"

    # The daemon comes back: the next run works and removes the container the dead run left behind.
    private_daemon.start()
    from harness.docker import labelled_containers

    left = [c for c in labelled_containers(private_daemon.client_or_none())
            if c.labels.get("repro-matrix.cell", "").startswith("hangs/")]
    # Labelled with the dead run's id (after a stop the harness may have removed it before the socket closed).
    assert [c.labels["repro-matrix.run"] for c in left] == [results["run"]["id"]] * (1 if how == "crash" else len(left))
    again = subprocess.run([*command[:-2], "--output", str(tmp_path / "second")], cwd=REPO, env=env,
                           capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert hang_state(private_daemon.client_or_none()) == []


def test_clean_command_prunes_images_no_case_uses(private_daemon, private_image, tmp_path):
    private_daemon.ensure_running()
    cases = tmp_path / "cases"
    shutil.copytree(REPO / "tests" / "fixtures" / "cases" / "confirmed", cases / "confirmed")
    case_file = cases / "confirmed" / "case.yaml"
    case_file.write_text(case_file.read_text().replace("requires: [torch==2.13.0]", "requires: [torch==2.13.0, six]"))
    env = {**os.environ, "DOCKER_HOST": private_daemon.host, "REPRO_MATRIX_ENVS": str(tmp_path / "envs"),
           "FORCE_COLOR": "0"}
    command = [sys.executable, "-m", "harness", "clean", "--cases-dir", str(cases)]
    client = private_daemon.client_or_none()

    dry = subprocess.run([*command, "--dry-run"], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert f"would remove image {private_image}" in dry.stdout and "would remove 1 image(s)" in dry.stdout
    assert client.images.list(name=private_image.split(":")[0])  # still there

    real = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert real.returncode == 0, real.stdout + real.stderr
    assert f"removing image {private_image}" in real.stdout and "removed 1 image(s)" in real.stdout
    assert not client.images.list(name=private_image.split(":")[0])
