"""Wheelhouses: every wheel a set of requirements needs, made where there is network, used where there is none.

Two users: the docker backend (``pip wheel`` into an image's build context, harness/docker/_build.py) and
``python -m harness wheelhouse`` (``nox -s wheelhouse``), which collects what selected cases need for a
GPU node: a given Python version and platform, the torch family left out (the node's own torch is used,
``cases --python``), sdist-only packages (DeepSpeed) built into wheels, split into parts small enough to
carry. The node then builds its environments with ``cases --find-links DIR --offline``.
"""

from __future__ import annotations

import errno
import json
import os
import re
import shutil
import stat
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness._exceptions import EnvBuildError, UsageError
from harness.containment._process import HelperResult, run_helper
from harness.containment._sandbox import BuildSandbox
from harness.environments._hosttorch import HostTorch, is_family
from harness.environments._index import uv_index_environment

Say = Callable[[str], None]
WHEEL_TIMEOUT_S = 3600
MANIFEST = "wheelhouse.json"
PART = "part-"


def pip_wheel(python: str, requirements: Sequence[str], wheels: Path, log_path: Path, *, root: Path,
              extra: Sequence[str] = ()) -> HelperResult:
    """``pip wheel`` into ``wheels``: it runs code a requirement chose (a setup.py, a build backend, an
    sdist), so it is sealed like the venv backend's build steps (harness/containment/_sandbox.py), writing only
    its wheel folder, copies of local requirement folders and a private /tmp (pip's cache included).

    As root the step runs as a private uid, like them: it builds into a scratch folder of its own, sees
    ``wheels`` read-only (``--find-links``: the wheels already there are reused, not fetched again), and the
    harness then moves the new wheels in (``adopt_wheels``). As a user it writes ``wheels`` itself."""
    wheels = wheels.resolve()  # the step runs in /
    wheels.mkdir(parents=True, exist_ok=True)
    private = os.geteuid() == 0
    with BuildSandbox(env_root=root, private=(), env=os.environ, uses=(Path(python).parent, *_pip_home(python),
                                                                      *([wheels] if private else [])),
                      requires=requirements) as sandbox:
        requires = sandbox.local_copies(requirements)  # in-tree builds write copies, not case folders
        built = sandbox.scratch / "wheels" if private else wheels
        built.mkdir(exist_ok=True)
        links = ["--find-links", str(wheels)] if private else []
        argv = [python, "-m", "pip", "wheel", "--wheel-dir", str(built), *links, "--prefer-binary",
                "--progress-bar", "off", "--disable-pip-version-check", *extra, *requires]
        with log_path.open("a") as log:
            log.write(f"$ {' '.join(argv)}\n")
        proc = run_helper(argv, env=os.environ, timeout=WHEEL_TIMEOUT_S,
                          confinement=sandbox.seal(built, sandbox.sources))
        with log_path.open("a") as log:
            log.write(proc.stdout + proc.stderr + (f"{proc.error}\n" if proc.error else ""))
            if proc.notes:
                log.write(f"[repro-matrix: containment {proc.containment}: {'; '.join(proc.notes)}]\n")
            if private and proc.returncode == 0:
                log.writelines(f"[repro-matrix: {line}]\n" for line in adopt_wheels(built, wheels))
    return proc


def adopt_wheels(source: Path, target: Path) -> list[str]:
    """Move the wheels a private-uid ``pip wheel`` left in ``source`` into ``target``, as the harness (the
    wheel side of environments/_split.py ``move_added``): regular files named ``*.whl`` only, never through a
    link (a link, a FIFO or a hard link to another file stays behind), never over a file already in
    ``target`` (the wheel pip reused from there); each becomes root's, mode 0644. Returns what was left, why."""
    left = []
    for name in sorted(os.listdir(source)):
        try:
            why = _adopt_wheel(source / name, target / name)
        except OSError as error:
            why = f"could not be moved: {error}"
        if why:
            left.append(f"{name} {why}")
    return left


def _adopt_wheel(path: Path, destination: Path) -> str:
    if not path.name.endswith(".whl") or path.name.startswith("."):
        return "left behind: not a wheel"
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)  # ELOOP for a link
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
            return "left behind: not a regular file of its own"
        if os.path.lexists(destination):
            return "left behind: the wheel folder has it already"
        os.fchown(fd, os.geteuid(), os.getegid())
        os.fchmod(fd, 0o644)
        try:
            os.link(path, destination, follow_symlinks=False)  # fails on anything at destination, link or not
        except OSError as error:
            if error.errno != errno.EXDEV:
                raise
            _copy_new(fd, destination)
    finally:
        os.close(fd)
    os.unlink(path)
    return ""


def _copy_new(fd: int, destination: Path) -> None:
    """Another filesystem: copy into a file that did not exist (O_EXCL: never through a link), mode 0644 as a
    moved wheel has, whatever the harness's umask."""
    out = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        os.fchmod(out, 0o644)
        with os.fdopen(os.dup(fd), "rb") as reader, os.fdopen(out, "wb") as writer:
            shutil.copyfileobj(reader, writer)
    except BaseException:
        destination.unlink(missing_ok=True)
        raise


def host_python(version: str) -> str:
    """An interpreter of ``version`` that has pip, so pip picks (and builds) wheels that version installs.

    The harness's own interpreter first; a uv-made venv (nox sessions) has no pip, so then the interpreter
    the venv was made from, then ``python<version>`` on PATH.
    """
    candidates = [sys.executable, getattr(sys, "_base_executable", ""), shutil.which(f"python{version}")]
    for python in dict.fromkeys(c for c in candidates if c):
        if _python_with_pip(python, version):
            return python
    raise EnvBuildError(f"a wheelhouse for Python {version} needs python{version} with pip on this host to build "
                        "packages that have no wheel (docker backend: or set REPRO_DOCKER_PIP_SOURCE=index to let pip "
                        "run inside the image build)")


def _pip_home(python: str) -> list[Path]:
    """The folder ``python`` imports pip from: the sealed step sees it read-only, wherever it is (a user site
    under HOME, a folder a .pth file names), since the sealed step sees only the interpreter's own folders."""
    proc = run_helper([python, "-c", "import os, pip; print(os.path.dirname(os.path.dirname(pip.__file__)))"],
                      env=dict(os.environ), timeout=60)
    lines = proc.stdout.strip().splitlines()
    return [Path(lines[-1])] if proc.returncode == 0 and lines and Path(lines[-1]).is_dir() else []


def _python_with_pip(python: str, version: str) -> bool:
    code = f"import sys, pip; sys.exit(0 if '%d.%d' % sys.version_info[:2] == {version!r} else 1)"
    return run_helper([python, "-c", code], env=dict(os.environ), timeout=60).returncode == 0


# -- the GPU node's wheelhouse -------------------------------------------------------------------------

@dataclass(frozen=True)
class Target:
    python_version: str  # "3.12"
    platform: str  # "manylinux_2_28_x86_64"

    def uv_platform(self) -> str:
        """uv's --python-platform for a pip platform tag (manylinux_2_28_x86_64 -> x86_64-manylinux_2_28)."""
        found = re.fullmatch(r"(manylinux_\d+_\d+|musllinux_\d+_\d+)_(x86_64|aarch64)", self.platform)
        if found:
            return f"{found.group(2)}-{found.group(1)}"
        if self.platform in ("linux_x86_64", "linux_aarch64"):
            return f"{self.platform.split('_', 1)[1]}-unknown-linux-gnu"
        raise UsageError(f"--platform {self.platform}: give a manylinux or musllinux tag such as "
                         "manylinux_2_28_x86_64")


    def pip_platforms(self) -> list[str]:
        """``--platform`` flags for pip: the tag and every older manylinux one a host with that glibc installs
        (pip does not widen a given tag: a manylinux2014 wheel would be missed for manylinux_2_28)."""
        found = re.fullmatch(r"manylinux_2_(\d+)_(x86_64|aarch64)", self.platform)
        if not found:
            return ["--platform", self.platform]
        minor, arch = int(found.group(1)), found.group(2)
        legacy = {17: "manylinux2014"} if arch != "x86_64" else {17: "manylinux2014", 12: "manylinux2010",
                                                                  5: "manylinux1"}
        tags = [f"manylinux_2_{m}_{arch}" for m in range(minor, 4, -1)]
        tags += [f"{legacy[m]}_{arch}" for m in legacy if m <= minor]
        return [flag for tag in tags for flag in ("--platform", tag)]


@dataclass
class Wheelhouse:
    folder: Path
    target: Target
    per_case: dict[str, list[str]] = field(default_factory=dict)  # case -> pinned requirements
    files: dict[str, str] = field(default_factory=dict)  # pinned requirement -> wheel file (relative)
    built: list[str] = field(default_factory=list)  # requirements that had no wheel: built from sdist
    missing: dict[str, str] = field(default_factory=dict)  # requirement -> why it has no wheel here

    def size(self, case: str | None = None) -> int:
        names = {self.files[r] for r in (self.per_case[case] if case else self.files) if r in self.files}
        return sum((self.folder / name).stat().st_size for name in names)

    def manifest(self, torch_requires: Sequence[str]) -> dict[str, Any]:
        return {"version": 1, "python_version": self.target.python_version, "platform": self.target.platform,
                "excluded": "the torch family (torch, torchvision, torchaudio, triton, nvidia-*): the host's",
                "torch_requires": list(torch_requires), "built_from_sdist": self.built, "missing": self.missing,
                "cases": {case: {"requires": pins, "bytes": self.size(case)} for case, pins in self.per_case.items()},
                "files": self.files, "bytes": self.size()}


def resolve(requires: Sequence[str], target: Target, torch: HostTorch, scratch: Path) -> list[str]:
    """``uv pip compile`` for the target, the torch family kept out: the pinned list to fetch."""
    if not requires:
        return []
    from harness.environments._venv_build import find_uv

    _, overrides = torch.requirements(())
    (scratch / "requirements.in").write_text("\n".join(requires) + "\n")
    (scratch / "overrides.txt").write_text("\n".join(overrides) + "\n")
    argv = [find_uv(), "pip", "compile", "--quiet", "--no-header", "--no-annotate", "--python-version",
            target.python_version, "--python-platform", target.uv_platform(), "--override",
            str(scratch / "overrides.txt"), str(scratch / "requirements.in")]
    proc = run_helper(argv, env={**os.environ, **uv_index_environment()}, timeout=WHEEL_TIMEOUT_S)
    if proc.returncode != 0:
        raise EnvBuildError(f"could not resolve {' '.join(requires)} for Python {target.python_version} on "
                            f"{target.platform}:\n{(proc.stderr.strip() or proc.error or 'timed out')[-1500:]}")
    pins = [line.split(" ;")[0].strip() for line in proc.stdout.splitlines() if line and not line.startswith("#")]
    return [p for p in pins if not is_family(p)]


def fetch(pins: Sequence[str], house: Wheelhouse, log: Path, say: Say) -> None:
    """Each pin's wheel for the target (``pip download``, all at once, else one by one), else built from
    its sdist (``pip wheel``)."""
    todo = [pin for pin in pins if pin not in house.files]
    if len(todo) > 1 and _download(todo, house, log):
        todo = _record(todo, house)
    for pin in todo:
        before = set(os.listdir(house.folder))
        if not _download([pin], house, log) and not _build_sdist(pin, house, log, say):
            continue
        new = sorted(set(os.listdir(house.folder)) - before) or _existing(house.folder, pin)
        if new:
            house.files[pin] = new[0]


def _download(pins: Sequence[str], house: Wheelhouse, log: Path) -> bool:
    argv = [sys.executable, "-m", "pip", "download", "--no-deps", "--disable-pip-version-check", "--progress-bar",
            "off", "--dest", str(house.folder), *house.target.pip_platforms(), "--python-version",
            house.target.python_version, "--implementation", "cp", "--only-binary", ":all:", *pins]
    proc = run_helper(argv, env=dict(os.environ), timeout=WHEEL_TIMEOUT_S)
    with log.open("a") as handle:
        handle.write(f"$ {' '.join(argv)}\n{proc.stdout}{proc.stderr}")
    return proc.returncode == 0


def _record(pins: Sequence[str], house: Wheelhouse) -> list[str]:
    """Note each pin's wheel; return the pins whose wheel cannot be told by its name (fetched again alone)."""
    unknown = []
    for pin in pins:
        found = _existing(house.folder, pin)
        if found:
            house.files[pin] = found[0]
        else:
            unknown.append(pin)
    return unknown


def _build_sdist(pin: str, house: Wheelhouse, log: Path, say: Say) -> bool:
    """No wheel for the target: build one from the sdist with a local interpreter of the target's version."""
    say(f"{pin}: no wheel for Python {house.target.python_version} on {house.target.platform}; building its sdist")
    try:
        python = host_python(house.target.python_version)
    except EnvBuildError as error:
        house.missing[pin] = f"no wheel, and no build: {error}"
        return False
    built = pip_wheel(python, [pin], house.folder, log, root=house.folder, extra=["--no-deps"])
    if built.returncode != 0:
        house.missing[pin] = "no wheel, and its sdist did not build (see wheelhouse.log)"
        return False
    house.built.append(pin)
    return True


def _existing(folder: Path, pin: str) -> list[str]:
    """pip does not download again what the folder already holds: find it by name and version."""
    name, _, version = pin.partition("==")
    stem = re.sub(r"[-_.]+", "_", name).lower()
    return sorted(p.name for p in folder.glob("*.whl") if p.name.lower().startswith(f"{stem}-{version}-"))


def split_parts(house: Wheelhouse, limit_mib: int) -> list[Path]:
    """Move the wheels into ``part-NN/`` folders of at most ``limit_mib`` MiB each (largest first)."""
    limit = limit_mib * 1024 * 1024
    wheels = sorted(house.folder.glob("*.whl"), key=lambda p: (-p.stat().st_size, p.name))
    too_big = [p.name for p in wheels if p.stat().st_size > limit]
    if too_big:
        raise UsageError(f"--split-mib {limit_mib}: {', '.join(too_big)} alone is larger; raise the limit")
    parts: list[tuple[Path, int]] = []
    for wheel in wheels:
        size = wheel.stat().st_size
        slot = next((i for i, (_, used) in enumerate(parts) if used + size <= limit), None)
        if slot is None:
            parts.append((house.folder / f"{PART}{len(parts) + 1:02d}", 0))
            slot = len(parts) - 1
            parts[slot][0].mkdir(exist_ok=True)
        folder, used = parts[slot]
        wheel.rename(folder / wheel.name)
        parts[slot] = (folder, used + size)
    house.files = {pin: _placed(house.folder, name) for pin, name in house.files.items()}
    return [folder for folder, _ in parts]


def _placed(root: Path, name: str) -> str:
    found = [p for p in root.glob(f"{PART}*/{name}")] or [root / name]
    return str(found[0].relative_to(root))


def link_folders(folder: Path) -> list[Path]:
    """A wheelhouse folder and its ``part-NN`` folders: what ``--find-links`` reads."""
    return [folder, *sorted(p for p in folder.glob(f"{PART}*") if p.is_dir())]


def make_wheelhouse(cases: Mapping[str, Sequence[Sequence[str]]], output: Path, target: Target, torch: HostTorch,
                    say: Say, split_mib: int | None = None) -> Wheelhouse:
    """Collect the wheels of ``cases`` (id -> each variant's pins) into ``output``; write its manifest."""
    output.mkdir(parents=True, exist_ok=True)
    house = Wheelhouse(output, target)
    log = output / "wheelhouse.log"
    with tempfile.TemporaryDirectory(prefix="repro-wheelhouse-") as scratch:
        for case, requires_sets in cases.items():
            pins: list[str] = []
            for requires in dict.fromkeys(tuple(r) for r in requires_sets):  # variants resolve one by one
                wanted, _ = torch.requirements(requires)
                pins += [p for p in resolve(wanted, target, torch, Path(scratch)) if p not in pins]
            house.per_case[case] = pins
            fetch(pins, house, log, say)
            say(f"{case}: {len(pins)} wheel(s), {house.size(case) / 2**20:.1f} MiB")
    if split_mib:
        parts = split_parts(house, split_mib)
        say(f"split into {len(parts)} part(s) of at most {split_mib} MiB: {', '.join(p.name for p in parts)}")
    (output / MANIFEST).write_text(json.dumps(house.manifest(torch.requires), indent=1))
    say(f"wheelhouse {output}: {len(set(house.files.values()))} wheel(s), {house.size() / 2**20:.1f} MiB "
        f"(the torch family left out: the node's own)")
    for pin, why in house.missing.items():
        say(f"missing: {pin}: {why}")
    return house



def harness_requirements() -> tuple[str, ...]:
    """What the harness itself needs on a node that has only Python and torch: its dependencies (less the simulator,
    which the checkout holds), uv, pytest."""
    from harness._requirements import node_requirements

    return node_requirements()
