"""BuildKit through a docker CLI: the default builder when a CLI has it (``REPRO_DOCKER_BUILDER``).

The SDK only drives the legacy builder, which commits the ~1 GB build stage and then copies /venv
again. BuildKit builds the same Dockerfile several times faster, but the Python SDK cannot drive it,
so this shells out to a CLI that has it: one with the buildx plugin, or a 20.10 CLI with the built-in
client (Debian's ``/usr/bin/docker``), pointed at the daemon the SDK uses. Output is handled as the SDK
path does: steps to the user, everything to the log, the failing step and the log tail on failure.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from harness._exceptions import EnvBuildError
from harness.containment._process import RunningProcess, run_helper
from harness.docker._client import ImageBuildError, endpoint
from harness.docker._plan import ImagePlan

_STEP = re.compile(r"^#\d+ \[([^\]]+ \d+/\d+)\] (.*)$")
_FAILED = re.compile(r"^ > \[([^\]]+)\] (.*):$")
_BUILD_TIMEOUT_S = 3600


def buildkit_cli() -> str:
    """A docker CLI that can build with BuildKit, or :class:`EnvBuildError` saying what is missing."""
    candidates = [os.environ.get("REPRO_DOCKER_CLI"), "/usr/bin/docker", shutil.which("docker")]
    for cli in dict.fromkeys(c for c in candidates if c and Path(c).is_file()):
        if _runs([cli, "buildx", "version"]) or _major_version(cli) in range(18, 23):
            return cli
    raise EnvBuildError("REPRO_DOCKER_BUILDER=buildkit needs a docker CLI with the buildx plugin or a 20.10 CLI "
                        "(Debian's docker.io: /usr/bin/docker); set REPRO_DOCKER_CLI, or use the default SDK builder")


def buildkit_build(cli: str, plan: ImagePlan, context: Path, labels: dict[str, str], log_path: Path,
                   say: Callable[[str], None], verbose: bool) -> None:
    argv = [cli, "--host", endpoint(), "build", "--progress=plain", "--network", plan.settings.network(),
            "-f", str(context / plan.dockerfile.name), "-t", plan.tag]
    if plan.target:
        argv += ["--target", plan.target]
    for key, value in plan.build_args().items():
        argv += ["--build-arg", f"{key}={value}"]
    for key, value in labels.items():
        argv += ["--label", f"{key}={value}"]
    argv.append(str(context))
    steps_seen: set[str] = set()
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ DOCKER_BUILDKIT=1 {' '.join(argv[:8])} ...\n")
    # Under the process supervisor: the timeout holds even while the output stays open, and the CLI (with
    # anything it started) is killed when it fires, on Ctrl-C, or when the harness dies.
    lines = _Lines(lambda line: _show(line, steps_seen, say, verbose))
    process = RunningProcess(argv, env={**os.environ, "DOCKER_BUILDKIT": "1"}, cwd=context, log_path=log_path,
                             timeout=_BUILD_TIMEOUT_S, on_output=lines.feed)
    try:
        result = process.wait()
    except BaseException:
        process.interrupt()
        raise
    lines.flush()
    if result.timed_out:
        raise ImageBuildError(f"docker build {plan.tag} did not finish within {_BUILD_TIMEOUT_S}s: stopped", log_path)
    if result.returncode != 0:
        raise ImageBuildError(_failure(plan, log_path, result.returncode, result.error), log_path)


class _Lines:
    """Whole lines out of a byte stream's chunks."""

    def __init__(self, take: Callable[[str], None]) -> None:
        self._take = take
        self._rest = b""

    def feed(self, chunk: bytes) -> None:
        *whole, self._rest = (self._rest + chunk).split(b"\n")
        for line in whole:
            self._take(line.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        if self._rest:
            self._take(self._rest.decode("utf-8", errors="replace"))
            self._rest = b""


def _show(line: str, steps_seen: set[str], say: Callable[[str], None], verbose: bool) -> None:
    step = _STEP.match(line)
    if step and step.group(1) not in steps_seen:
        steps_seen.add(step.group(1))
        say(f"[{step.group(1)}] {step.group(2)}")
    elif verbose or any(mark in line for mark in ("Successfully installed", "applying /patches",
                                                  "[repro-matrix: compat")):
        say(f"  {line.split(' ', 2)[-1] if line.startswith('#') else line}")


def _failure(plan: ImagePlan, log_path: Path, code: int | None, error: str = "") -> str:
    from harness.docker._build import failure_message

    text = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    failed = [f"[{m.group(1)}] {m.group(2)}" for m in map(_FAILED.match, text) if m]
    errors = [line for line in text if line.startswith(("ERROR", "error:", "executor failed", "failed to"))]
    message = errors[-1] if errors else error or f"docker build exited with {code}"
    return failure_message(plan, failed[-1] if failed else "(unknown step)", message, log_path)


def _runs(argv: list[str]) -> bool:
    return run_helper(argv, env=dict(os.environ), timeout=60).returncode == 0


def _major_version(cli: str) -> int:
    proc = run_helper([cli, "version", "--format", "{{.Client.Version}}"], env=dict(os.environ), timeout=60)
    try:
        return int(proc.stdout.strip().split(".")[0])
    except ValueError:
        return 0
