"""Cells sealed by bubblewrap: a cell starts with nothing and is given an allow-list.

``bwrap`` (Debian's ``bubblewrap``, the sandbox Flatpak uses) builds each cell's world from nothing: new
user, pid, network (loopback only), IPC, UTS and cgroup namespaces, a new session (no controlling
terminal), no capabilities, no-new-privs, a minimal /dev, a fresh /proc whose /proc/sys is read-only, a
sized /dev/shm, and a filesystem of read-only binds of what the cell needs (the system folders, the
interpreter, its environment, the case folders, the harness package) plus its own folder and a private
/tmp, writable. When the harness runs as root, bwrap runs as a private unprivileged uid per cell (the
supervisor switches to it before exec), so nothing inside is root on the host. Environment build steps get
the same, but keep the host's network (the index) and see uv's and pip's settings; as root, the two that
write uv's shared cache and run no package code (``uv venv``, the install of wheels) and those that write the
environment (``patch``, the bytecode compilation) run as uid 0 without capabilities, every other one as a
private uid. docs/security.md says what each mode guarantees. The harness
decides here which mode a cell or build step gets; ``_supervise.py`` carries it out.
"""

from __future__ import annotations

import functools
import os
import platform
import shutil
import struct
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

BWRAP_VARIABLE = "REPRO_MATRIX_BWRAP"  # a bwrap binary to use, or 0/off for the fallback layer
CELL_PIDS = 2048  # processes and threads per cell, as the docker backend's --pids-limit
PIDS_VARIABLE = "REPRO_MATRIX_CELL_PIDS"  # another bound (the fault tests use a small one)
SHM_BYTES = 1 << 30  # /dev/shm per cell (or the memory limit, when smaller)
UID_BASE = 0x7E000000  # private uids when the harness is root: this + the supervisor's pid (unique while it runs)
_SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
_GPU_DEVICES = ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools", "/dev/nvidia-modeset", "/dev/dri",
                "/dev/nvidia-caps")

# What a cell's environment may take from the harness's (the case's env: and the harness's own settings are
# added on top). Everything else, GITHUB_TOKEN, AWS_*, PYPI_* and the like, never reaches a cell.
_PASSED = frozenset({"PATH", "LANG", "LANGUAGE", "TZ", "TERM", "NO_COLOR", "CUBLAS_WORKSPACE_CONFIG",
                     "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "NVIDIA_VISIBLE_DEVICES"})
_PASSED_PREFIXES = ("LC_", "OMP_", "MKL_")
PASS_VARIABLE = "REPRO_MATRIX_PASS_ENV"  # comma-separated names the user hands to every cell on purpose
# An environment build also gets what uv, pip and a compiler need (the index, its certificates, a proxy, the
# compiler's flags), never a publishing token. Index credentials in UV_*/PIP_* reach the build: uv needs them.
_BUILD_PASSED = frozenset({"HOME", "TMPDIR", "USER", "LOGNAME", "XDG_CONFIG_HOME", "NETRC", "SSL_CERT_FILE",
                           "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SOURCE_DATE_EPOCH", "CC", "CXX",
                           "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "MAX_JOBS", "CUDA_HOME", "TORCH_CUDA_ARCH_LIST",
                           "CUDA_PATH", "CUDACXX", "CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH", "PKG_CONFIG_PATH",
                           "PYTHONPYCACHEPREFIX", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
                           "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY"})
_BUILD_PREFIXES = ("UV_", "PIP_")
_NEVER_TO_BUILDS = ("UV_PUBLISH_", "PIP_PUBLISH_")
# What uv and pip read of HOME (their settings and credentials), bound read-only into a sealed build.
_BUILD_SETTINGS = (".config/uv", ".config/pip", ".pip", ".netrc", ".local/share/uv/credentials")


def cell_pids() -> int:
    value = os.environ.get(PIDS_VARIABLE, "").strip()
    return int(value) if value.isdigit() and int(value) > 0 else CELL_PIDS


def cell_environment(harness_env: Mapping[str, str]) -> dict[str, str]:
    """The part of the harness's environment a cell may see: the allow-list, plus what the user names in
    ``REPRO_MATRIX_PASS_ENV``."""
    named = {n.strip() for n in harness_env.get(PASS_VARIABLE, "").split(",") if n.strip()}
    return {k: v for k, v in harness_env.items()
            if k in _PASSED or k in named or k.startswith(_PASSED_PREFIXES)}


def build_environment(harness_env: Mapping[str, str]) -> dict[str, str]:
    """The part of the harness's environment an environment build may see: a cell's allow-list plus what
    uv, pip and a compiler need (see ``_BUILD_PASSED``)."""
    return {k: v for k, v in harness_env.items()
            if (k in _BUILD_PASSED or k.startswith(_BUILD_PREFIXES) or k in cell_environment(harness_env))
            and not k.startswith(_NEVER_TO_BUILDS)}


def build_settings(env: Mapping[str, str]) -> list[Path]:
    """The files and folders of uv's and pip's settings (under HOME and XDG_CONFIG_HOME) that exist: bound
    read-only into a sealed build, which sees nothing else of HOME."""
    found = [Path(env["HOME"], name) for name in _BUILD_SETTINGS if env.get("HOME")]
    found += [Path(env["XDG_CONFIG_HOME"], name) for name in ("uv", "pip") if env.get("XDG_CONFIG_HOME")]
    return [path for path in dict.fromkeys(found) if path.is_absolute() and path.exists()]


@functools.cache
def bwrap() -> tuple[str | None, str]:
    """The bwrap binary cells run under, or None and why not (then the fallback layer runs them)."""
    configured = os.environ.get(BWRAP_VARIABLE, "").strip()
    if configured.lower() in ("0", "false", "no", "off"):
        return None, f"{BWRAP_VARIABLE}={configured}"
    binary = configured or shutil.which("bwrap")
    if not binary:
        return None, "bwrap is not installed (Debian: apt-get install bubblewrap)"
    probe = [binary, "--unshare-all", "--die-with-parent", "--cap-drop", "ALL", "--ro-bind", "/", "/",
             "--proc", "/proc", "--dev", "/dev", "true"]
    uid = UID_BASE + os.getpid() if os.geteuid() == 0 else None
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=30, check=False,
                              preexec_fn=(lambda: drop_to(uid)) if uid is not None else None)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"bwrap could not run: {error}"
    if proc.returncode != 0:
        return None, f"bwrap cannot make a sandbox here (user namespaces off?): {proc.stderr.strip()[-200:]}"
    return binary, ""


def unreachable(folders: Sequence[Path]) -> list[Path]:
    """As root, bwrap runs as a private uid: the folders it binds read-only must be readable by other users
    (their parents need not be: the supervisor stages them). The folders that are not."""
    if os.geteuid() != 0:
        return []
    found = []
    for folder in folders:
        try:
            mode = folder.stat().st_mode
        except OSError:
            continue
        if mode & 0o005 != 0o005:
            found.append(folder)
    return found


def drop_to(uid: int) -> None:
    """Become ``uid`` (group too), with no supplementary groups: what bwrap runs as when the harness is root."""
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)


def mode_line(namespaces: bool = True) -> str:
    """One line for the run's output: how cells are contained here (``namespaces``: not turned off)."""
    binary, why = bwrap() if namespaces else (None, "REPRO_MATRIX_NAMESPACES turns the sandbox off")
    if binary:
        who = "a private uid per cell" if os.geteuid() == 0 else "your uid, mapped in a user namespace"
        return (f"sandbox: cells sealed by bubblewrap ({who}; no network, no host devices, an empty environment "
                "plus an allow-list; see docs/security.md); environment builds too, with the network")
    return (f"WARNING: sandbox: cells are NOT sealed by bubblewrap ({why}); they and environment builds run in "
            "the fallback layer, which does not guarantee what docs/security.md lists for bwrap mode")


def sandbox_mode(namespaces: bool = True) -> str:
    """``bwrap`` or ``fallback``: recorded in results.json (run.host.sandbox)."""
    return "bwrap" if namespaces and bwrap()[0] else "fallback"


def plan(*, readonly: Sequence[Path], writable: Sequence[Path], hide: Sequence[Path], tmp: Path, cwd: Path,
         gpu: bool, shm_bytes: int, network: bool = False, files: Sequence[Path] = (),
         copies: Mapping[Path, Path] | None = None) -> dict[str, Any]:
    """The bwrap command line before the command, as (option, arguments...) steps. ``system``: sources
    every uid can reach (as root, the supervisor stages the others where bwrap's private uid can).
    ``network``: the host's network stays (an environment build: uv needs the index); ``files``: single
    files or folders bound read-only (a build's uv and pip settings); ``copies``: what to bind at one of
    those places instead (a copy its private uid may read)."""
    steps: list[list[str]] = []
    for folder in _SYSTEM:
        if os.path.islink(folder):
            steps.append(["--symlink", os.readlink(folder), folder])
        elif os.path.isdir(folder):
            steps.append(["--ro-bind", folder, folder])
    # The private /tmp first: what the cell reads under the host's /tmp is bound on top of it.
    steps += [["--dev", "/dev"], ["--proc", "/proc"], ["--ro-bind", "/proc/sys", "/proc/sys"],
              ["--size", str(shm_bytes), "--tmpfs", "/dev/shm"], ["--bind", str(tmp), "/tmp"]]
    bound: list[Path] = []
    for place in dict.fromkeys(readonly):
        if place.is_dir() and not any(place == Path(s) or Path(s) in place.parents for s in _SYSTEM) \
                and not any(place == b or b in place.parents for b in bound):
            steps.append(["--ro-bind", str(place), str(place)])
            bound.append(place)
    for place in hide:  # only what lies inside a read-only bind is there to hide
        if any(b in place.parents for b in bound) and place.is_dir():
            steps += [["--tmpfs", str(place)], ["--remount-ro", str(place)]]
    steps += [["--ro-bind", str((copies or {}).get(place, place)), str(place)] for place in files if place.exists()]
    steps += _host_views(gpu) + (_resolver() if network else [])
    steps += [["--bind", str(folder), str(folder)] for folder in dict.fromkeys(writable) if folder.is_dir()]
    # bwrap's root is a tmpfs holding the mount points it made (/root for a bind of /root/.cache/uv): read-only,
    # or a write to a host path that does not exist in here would seem to succeed (and vanish with the cell).
    steps.append(["--remount-ro", "/"])
    inside = [*bound, *writable, *(Path(s) for s in _SYSTEM)]
    there = cwd == Path("/") or any(cwd == p or p in cwd.parents for p in inside)
    steps.append(["--chdir", str(cwd) if there else "/tmp"])
    options = ["--unshare-all", *(["--share-net"] if network else []), "--die-with-parent", "--new-session",
               "--cap-drop", "ALL"]
    binary = bwrap()[0]
    if binary and _disables_userns(binary):  # no nested user namespace: no capabilities to regain in one
        options += ["--unshare-user", "--disable-userns"]
    return {"options": options, "outer_seccomp": (seccomp_program(inner=False) or b"").hex(),
            "steps": steps, "system": ["/proc/sys", "/sys", *_SYSTEM],
            "seccomp": (seccomp_program() or b"").hex()}


# seccomp: calls a repro never needs that reach into other processes or widen the kernel's surface fail with
# EPERM, as under docker's default profile: ptrace and the cross-process memory calls (a cell could otherwise
# take over its namespace's init, a process of its own uid), the kernel keyrings, userfaultfd, perf events,
# bpf, io_uring, kexec and modules, file handles; so does every other ABI (x32, 32-bit), where numbers differ.
# The inner program (bwrap's --seccomp, the command only) also refuses namespaces and mounts; the outer one is
# installed by the supervisor before bwrap starts (bwrap needs those), so it holds for bwrap's init as well.
_SUID, _SGID = 0o4000, 0o2000
# Creating or marking a file setuid or setgid fails too (a file mode argument with those bits): some build steps
# run as uid 0 when the harness is root, and a setuid file one left in an environment would give root to any user
# who runs it. (syscall, argument holding the mode, refused bits); setgid stays allowed on new folders.
_MODE_CALLS = {
    "x86_64": ((90, 1, _SUID | _SGID), (91, 1, _SUID | _SGID), (268, 2, _SUID | _SGID), (452, 2, _SUID | _SGID),
               (2, 2, _SUID | _SGID), (257, 3, _SUID | _SGID), (85, 1, _SUID | _SGID), (133, 1, _SUID | _SGID),
               (259, 2, _SUID | _SGID), (83, 1, _SUID), (258, 2, _SUID)),
    "aarch64": ((52, 1, _SUID | _SGID), (53, 2, _SUID | _SGID), (452, 2, _SUID | _SGID), (56, 3, _SUID | _SGID),
                (33, 2, _SUID | _SGID), (34, 2, _SUID)),
}
_SECCOMP_ARCHES: dict[str, tuple[int, bool, tuple[int, ...], tuple[int, ...]]] = {
    # refused always (openat2's mode is in a struct no filter can read: refused), then namespaces and mounts
    "x86_64": (0xC000003E, True,
               (101, 310, 311, 250, 248, 249, 323, 298, 321, 425, 426, 427, 246, 320, 175, 313, 176, 304, 212, 163,
                437),
               (272, 308, 165, 166, 155, 428, 429, 430, 431, 432, 433, 442)),
    "aarch64": (0xC00000B7, False,
                (117, 270, 271, 219, 217, 218, 282, 241, 280, 425, 426, 427, 104, 294, 105, 273, 106, 265, 18, 89,
                 437),
                (97, 268, 40, 39, 41, 428, 429, 430, 431, 432, 433, 442)),
}


def seccomp_program(*, inner: bool = True) -> bytes | None:
    """A classic BPF program (bwrap's --seccomp when ``inner``, else the supervisor's own before bwrap), or
    None on an architecture it does not know."""
    known = _SECCOMP_ARCHES.get(platform.machine())
    if known is None:
        return None
    arch, x32, refused, namespaces = known
    numbers = (*refused, *namespaces) if inner else refused
    modes = _MODE_CALLS.get(platform.machine(), ())
    errno, allow = 0x00050000 | 1, 0x7FFF0000  # SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_ALLOW
    body = [(0x20, 0, 0, 4)]  # load the architecture
    refuse_at = 3 + int(x32) + len(numbers) + 4 * len(modes) + 1  # index of the refusing return
    body.append((0x15, 0, refuse_at - 2, arch))  # another ABI: refuse
    body.append((0x20, 0, 0, 0))  # load the syscall number
    if x32:
        body.append((0x45, refuse_at - 4, 0, 0x40000000))  # the x32 ABI
    for number in numbers:
        body.append((0x15, refuse_at - len(body) - 1, 0, number))
    for number, argument, bits in modes:  # not this call: skip its 3 checks (the number stays loaded)
        body.append((0x15, 0, 3, number))
        body.append((0x20, 0, 0, 16 + 8 * argument))  # the argument's low 32 bits (little-endian)
        body.append((0x45, refuse_at - len(body) - 1, 0, bits))
        body.append((0x06, 0, 0, allow))
    body += [(0x06, 0, 0, allow), (0x06, 0, 0, errno)]
    assert len(body) == refuse_at + 1
    return b"".join(struct.pack("<HBBI", *instruction) for instruction in body)


@functools.cache
def _disables_userns(binary: str) -> bool:
    """bwrap 0.8+ can forbid new user namespaces inside (``--disable-userns``)."""
    try:
        return "--disable-userns" in subprocess.run([binary, "--help"], capture_output=True, text=True,
                                                    timeout=30, check=False).stdout
    except (OSError, subprocess.TimeoutExpired):
        return False


def _resolver() -> list[list[str]]:
    """/etc/resolv.conf where it is a link out of /etc (systemd-resolved's stub in /run): its target too."""
    target = Path("/etc/resolv.conf").resolve()
    if target.is_file() and not any(Path(s) in target.parents for s in _SYSTEM):
        return [["--ro-bind", str(target), str(target)]]
    return []


def _host_views(gpu: bool) -> list[list[str]]:
    """What torch reads of the host: the CPU topology; on a GPU lane the NVIDIA devices and /sys."""
    if gpu:
        devices = [d for d in _GPU_DEVICES if os.path.exists(d)]
        devices += sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))
        return [["--ro-bind", "/sys", "/sys"], *(["--dev-bind", d, d] for d in devices)]
    return [["--ro-bind", f, f] for f in ("/sys/devices/system/cpu", "/sys/devices/system/node") if os.path.isdir(f)]
