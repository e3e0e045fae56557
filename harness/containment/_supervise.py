"""Per-process supervisor: runs one command and makes sure nothing it started outlives it.

``harness.containment._launch`` starts it for every cell and every helper (uv, patch, probes) as
``python -I -S -B _supervise.py LIFELINE_FD STATUS_FD`` with its configuration (JSON) on stdin; no
path of the run is on its command line. LIFELINE_FD is the read end of a pipe whose write end only
the harness holds: end of file there means the harness died, however it died (even SIGKILL).
STATUS_FD receives one JSON object when everything is over. Standard library only.

Containment, strongest first:

* bwrap (``harness.containment._seal`` decided the cell gets it): the command is bubblewrap, started here as a
  subreaped child; bwrap builds the cell's namespaces and filesystem from the steps in the configuration.
  When this process is root, bwrap runs as a private uid, and every host folder bwrap binds is staged
  first where that uid can reach it (see _stage). Per-cell cgroups
  (memory, pids; cgroup v1, when root and writable) bound the cell as a whole.
* namespaces (root, or unprivileged user namespaces): the command runs as pid 2 of a private pid
  namespace whose init is a fork of this supervisor. When that init exits or is killed, the kernel
  kills every process of the namespace, daemons that called setsid included. The namespace gets its
  own /proc (the harness's processes are invisible), the output folder is covered by an empty
  read-only tmpfs, chosen folders are read-only, and the command runs in a nested user namespace so
  those mounts are locked: it cannot unmount them or setns out of them, even as root.
* subreaper (namespaces refused: no privilege, a seccomp filter, an old kernel): every orphaned
  descendant becomes a child of this process (PR_SET_CHILD_SUBREAPER); at the end it SIGKILLs and
  reaps all descendants until none is left.

Either way the supervisor enforces the timeout (SIGTERM, a grace period, SIGKILL), stops on SIGTERM
from the harness (Ctrl-C) and kills everything at once when the lifeline breaks.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import resource
import select
import signal
import sys
import time
from typing import Any

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWPID = 0x00020000, 0x10000000, 0x20000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_REMOUNT = 1, 2, 4, 8, 32
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
_KEPT_FLAGS = MS_NOSUID | MS_NODEV | MS_NOEXEC | 16 | 64 | 1024 | 2048 | 4096  # sync, mand, *atime: locked
PR_SET_PDEATHSIG, PR_SET_CHILD_SUBREAPER = 1, 36

_libc = ctypes.CDLL(None, use_errno=True)
_signals: list[int] = []
_reaped: dict[int, int] = {}  # pid -> wait status, for every child this process reaped


def _check(result: int, what: str) -> None:
    if result != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{what}: {os.strerror(error)}")


def _prctl(option: int, value: int) -> None:
    _check(_libc.prctl(option, ctypes.c_ulong(value), 0, 0, 0), "prctl")


def _unshare(flags: int) -> None:
    _check(_libc.unshare(flags), "unshare")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    def encode(text: str | None) -> bytes | None:
        return text.encode() if text is not None else None

    _check(_libc.mount(encode(source), encode(target), encode(fstype), ctypes.c_ulong(flags), encode(data)),
           f"mount {target}")


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


# -- namespaces ------------------------------------------------------------------------------------
def _map_self(uid: int, gid: int, pid: str = "self") -> None:
    """Map only our own ids (what an unprivileged process may do)."""
    _write(f"/proc/{pid}/setgroups", "deny")
    _write(f"/proc/{pid}/uid_map", f"{uid} {uid} 1")
    _write(f"/proc/{pid}/gid_map", f"{gid} {gid} 1")


def _enter_namespaces(notes: list[str]) -> bool:
    """Unshare mount and pid namespaces (with a user namespace when not root); False: not allowed here."""
    uid, gid = os.geteuid(), os.getegid()
    try:
        if uid == 0:
            _unshare(CLONE_NEWNS | CLONE_NEWPID)
        else:
            _unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID)
            _map_self(uid, gid)
    except OSError as error:
        notes.append(f"namespaces unavailable ({error.strerror}); containment by subreaper")
        return False
    return True


def _confine(config: dict[str, Any], notes: list[str]) -> None:
    """Read-only folders, then writable ones, then hidden ones, in our (private) mount namespace. A
    writable folder inside a hidden one stays reachable at its path (a cell's own scratch folder among
    those of the cells running beside it). ``sealed``: everything else read-only too, with a private
    /tmp and /dev/shm (see :func:`_seal`)."""
    try:
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
    except OSError as error:  # without private propagation our mounts would reach the host: do none
        notes.append(f"mounts skipped: {error}")
        return
    writable, readonly = config.get("writable", []), config.get("readonly", [])
    for path in _ancestors([*writable, *readonly, *config.get("hide", [])]):
        _try(notes, lambda p=path: _mount(p, p, None, MS_BIND | MS_REC))
    # Opened before anything is covered: a folder under /tmp is bound back from here once /tmp is private.
    handles = {path: os.open(path, os.O_PATH | os.O_DIRECTORY) for path in dict.fromkeys([*writable, *readonly])
               if os.path.isdir(path)}
    if config.get("sealed"):
        _seal(config, notes)
    for path in readonly:
        _try(notes, lambda p=path: _bind(handles.get(p), p, writable=False))
    for path in writable:  # exceptions inside read-only folders: on top of them
        _try(notes, lambda p=path: _bind(handles.get(p), p, writable=True))
    for path in config.get("hide", []):
        _try(notes, lambda p=path: _hide(p, {w: handles[w] for w in writable
                                             if w in handles and w.startswith(p.rstrip("/") + "/")}))
    for fd in handles.values():
        os.close(fd)


MOUNT_ATTR_RDONLY, AT_RECURSIVE, AT_FDCWD = 0x1, 0x8000, -100
_SYS_MOUNT_SETATTR = 442  # the same number on every architecture (Linux 5.12+)


def _seal(config: dict[str, Any], notes: list[str]) -> None:
    """Every mount read-only, then a private /tmp (the folder ``config["tmp"]``) and /dev/shm: nothing the
    command writes reaches what the harness, another cell or a later run reads or executes (the Python
    installation, the user's site-packages and dotfiles, uv's cache and configuration, other cells' /tmp).
    HOME and TMPDIR then point at the private /tmp, as in the docker backend's containers; an environment
    build (``keep_home``) keeps its HOME, read-only, and gets XDG_CACHE_HOME and TMPDIR there instead."""
    try:
        _read_only_tree("/", True)
        _read_only_tree("/proc", False)  # the supervisor maps the namespace's ids through /proc/PID
    except OSError as error:
        notes.append(f"the filesystem stays writable ({error})")
        return
    if os.path.isdir("/dev/shm"):
        _try(notes, lambda: _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777"))
    tmp = config.get("tmp")
    if tmp and os.path.isdir(tmp):
        fd = os.open(tmp, os.O_PATH | os.O_DIRECTORY)
        try:
            _bind(fd, "/tmp", writable=True, recursive=False)
        except OSError as error:
            notes.append(f"no private /tmp: {error}")
            return
        finally:
            os.close(fd)
        env = config["env"]
        if config.get("keep_home"):  # an environment build: uv reads its settings there (read-only, as all else)
            env["XDG_CACHE_HOME"] = "/tmp/.cache"  # what a build backend caches stays in the private /tmp
        elif env.get("HOME") == config.get("home"):  # unless the case gave the command a HOME of its own
            env["HOME"] = "/tmp"
        env["TMPDIR"] = "/tmp"


def _read_only_tree(path: str, read_only: bool) -> None:
    """Set or clear read-only on the mount at ``path`` and every mount below it."""
    flag = MOUNT_ATTR_RDONLY.to_bytes(8, "little")
    attr = ctypes.create_string_buffer((flag + bytes(8) if read_only else bytes(8) + flag) + bytes(16))
    _check(_libc.syscall(ctypes.c_long(_SYS_MOUNT_SETATTR), ctypes.c_int(AT_FDCWD), path.encode(),
                         ctypes.c_uint(AT_RECURSIVE), attr, ctypes.c_size_t(32)), f"mount_setattr {path}")


def _bind(fd: int | None, target: str, *, writable: bool, recursive: bool = True) -> None:
    """Bind the folder open at ``fd`` (or ``target`` itself) onto ``target``, read-only or writable. The
    target is made first when it is missing (a folder under a private /tmp)."""
    source = f"/proc/self/fd/{fd}" if fd is not None else target
    if fd is not None and not os.path.isdir(target):
        os.makedirs(target)
    _mount(source, target, None, MS_BIND | (MS_REC if recursive else 0))
    flags = os.statvfs(target).f_flag
    if writable and not flags & os.ST_RDONLY:
        return  # writable already (a bind of a sealed tree is read-only until remounted)
    kept = flags & _KEPT_FLAGS  # a remount must repeat the flags it may not clear
    _mount(None, target, None, MS_REMOUNT | MS_BIND | kept | (0 if writable else MS_RDONLY))


def _ancestors(paths: list[str]) -> list[str]:
    """Every folder above a confined one, outermost first. Bound onto itself, each becomes a mount point,
    which no process of the namespace can rename or remove (EBUSY): otherwise a cell could move a parent
    of the output folder away (the harness then writes the run where the cell put it) and make a folder
    of its own, with a forged run, at the output's path."""
    found: set[str] = set()
    for path in paths:
        parent = os.path.dirname(os.path.normpath(path))
        while parent not in ("/", "") and parent not in found:
            found.add(parent)
            parent = os.path.dirname(parent)
    return sorted(found, key=lambda p: (p.count("/"), p))


def _hide(path: str, inside: dict[str, int]) -> None:
    """Cover ``path`` with an empty tmpfs, bind the writable folders ``inside`` it back, make it read-only."""
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    _mount("tmpfs", path, "tmpfs", flags, "size=64k,nr_inodes=64,mode=0755")
    for target, fd in inside.items():
        os.makedirs(target, exist_ok=True)
        _bind(fd, target, writable=True)
    _mount(None, path, None, MS_REMOUNT | MS_RDONLY | flags, "size=64k,nr_inodes=64,mode=0755")


def _try(notes: list[str], action: Any) -> None:
    try:
        action()
    except OSError as error:
        if error.errno != 2:  # a folder that does not exist needs no hiding
            notes.append(str(error))


def _namespace_init(config: dict[str, Any], report_w: int, ready_w: int, sync_r: int) -> None:
    """Pid 1 of the cell's pid namespace: private /proc, locked mounts, then runs and reaps the command."""
    signal.set_wakeup_fd(-1)
    for sig in (signal.SIGCHLD, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)
    notes: list[str] = []
    try:
        _unshare(CLONE_NEWNS)
        _mount(None, "/", None, MS_REC | MS_PRIVATE)
        _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    except OSError as error:
        notes.append(f"private /proc: {error}")
    uid, gid = os.geteuid(), os.getegid()
    try:
        _unshare(CLONE_NEWUSER | CLONE_NEWNS)  # mounts copied into a less privileged namespace are locked
    except OSError as error:
        notes.append(f"mounts not locked: {error}")
        os.write(ready_w, b"0")
    else:  # from here on, an unmapped user namespace would leave the command without an identity: fatal
        if uid == 0:
            os.write(ready_w, b"1")  # the supervisor, root outside, maps every id through unchanged
            if os.read(sync_r, 1) != b"1":
                raise OSError(1, "the supervisor could not map the user namespace")
        else:
            _map_self(uid, gid)
    os.close(ready_w)
    os.close(sync_r)
    # Signals from the supervisor are forwarded to every process of the namespace.
    signal.signal(signal.SIGTERM, lambda *_: _kill_quietly(-1, signal.SIGTERM))
    main = _spawn(config)
    while True:
        try:
            pid, status = os.wait()
        except ChildProcessError:
            break
        if pid == main:
            os.write(report_w, json.dumps({"status": status, "notes": notes}).encode())
            break
    os._exit(0)  # the kernel now kills whatever is left in the namespace


class _Namespaced:
    """The namespace init, seen from the supervisor."""

    def __init__(self, config: dict[str, Any], notes: list[str]) -> None:
        report_r, report_w = os.pipe()
        ready_r, ready_w = os.pipe()
        sync_r, sync_w = os.pipe()
        parent = os.pidfd_open(os.getpid())  # getppid() says 0 inside the new pid namespace
        pid = os.fork()
        if pid == 0:
            try:
                _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
                if select.select([parent], [], [], 0)[0]:  # the supervisor died before the line above
                    os._exit(1)
                for fd in (parent, report_r, ready_r, sync_w, config["lifeline"], config["status"]):
                    os.close(fd)
                _namespace_init(config, report_w, ready_w, sync_r)
            except BaseException as error:  # say why on the cell's output, then leave
                os.write(2, f"repro-matrix supervisor: namespace init failed: {error!r}\n".encode())
            finally:
                os._exit(1)
        for fd in (parent, report_w, ready_w, sync_r):
            os.close(fd)
        self.pid, self.report_r, self.notes = pid, report_r, notes
        if os.geteuid() == 0 and os.read(ready_r, 1) == b"1":
            try:
                _write(f"/proc/{pid}/uid_map", "0 0 4294967295")
                _write(f"/proc/{pid}/gid_map", "0 0 4294967295")
                os.write(sync_w, b"1")
            except OSError as error:
                notes.append(f"user namespace map: {error}")
                os.write(sync_w, b"0")
        os.close(ready_r)
        os.close(sync_w)

    def terminate(self) -> None:
        _kill_quietly(self.pid, signal.SIGTERM)

    def kill(self) -> None:
        _kill_quietly(self.pid, signal.SIGKILL)

    def command_status(self, killed: bool) -> int | None:
        """The command's wait status, as the init reported it (None: it died before it could)."""
        data = b""
        while chunk := os.read(self.report_r, 65536):
            data += chunk
        if not data:
            return signal.SIGKILL if killed else None  # the kernel killed it with the namespace
        report = json.loads(data)
        self.notes.extend(report["notes"])
        return int(report["status"])


class _Subreaped:
    """The command as a direct child; orphaned descendants are re-parented to us."""

    def __init__(self, config: dict[str, Any]) -> None:
        _prctl(PR_SET_CHILD_SUBREAPER, 1)
        self.pid = _spawn(config)
        self.notes: list[str] = []

    def terminate(self) -> None:
        for pid in _descendants(os.getpid()):
            _kill_quietly(pid, signal.SIGTERM)

    def kill(self) -> None:
        _kill_tree()

    def command_status(self, killed: bool) -> int | None:
        return None  # read by the main loop from waitpid


# -- the command -----------------------------------------------------------------------------------
def _spawn(config: dict[str, Any]) -> int:
    pid = os.fork()
    if pid != 0:
        return pid
    try:
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGTERM, signal.SIGCHLD, signal.SIGHUP, signal.SIGINT, signal.SIGPIPE, signal.SIGXFSZ):
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        os.setsid()
        for path in config.get("cgroups", ()):  # joined while still root: the cell cannot leave them
            _write(os.path.join(path, "cgroup.procs"), "0")
        if config.get("memory_limit") and not config.get("memory_cgroup"):
            resource.setrlimit(resource.RLIMIT_AS, (config["memory_limit"], config["memory_limit"]))
        # No core dumps, and none to turn on: the host's core_pattern may pipe a core to a host program.
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.chdir(config["cwd"] if not config.get("bwrap") else "/")
        os.closerange(3, 1 << 16)
        argv = _bwrap_argv(config) if config.get("bwrap") else config["argv"]
        if config.get("uid") is not None:
            os.setgroups([])
            os.setresgid(config["uid"], config["uid"], config["uid"])
            os.setresuid(config["uid"], config["uid"], config["uid"])
        # bwrap's outer filter (bwrap and its init too, not only the command), or the fallback layers' own
        program = config.get("bwrap", {}).get("outer_seccomp") or config.get("seccomp")
        if program:
            _install_seccomp(bytes.fromhex(program))
        os.execvpe(argv[0], argv, config["env"])
    except BaseException as error:  # report any failure to start, then leave
        os.write(2, f"repro-matrix: could not start {config['argv'][0]}: {error}\n".encode())
    os._exit(127)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def _install_seccomp(program: bytes) -> None:
    """Load a classic BPF seccomp program into this process (inherited across exec), no-new-privs first."""
    PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _SockFprog(len(program) // 8, ctypes.addressof(buffer))
    _check(_libc.prctl(PR_SET_NO_NEW_PRIVS, ctypes.c_ulong(1), 0, 0, 0), "prctl(no_new_privs)")
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0),
           "prctl(seccomp)")


def _chown_tree(path: str, uid: int) -> None:
    """Give a folder the harness made for the cell (and what the harness put in it) to the cell's uid."""
    os.chown(path, uid, uid, follow_symlinks=False)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            os.chown(os.path.join(root, name), uid, uid, follow_symlinks=False)


_STAGES = ("/mnt", "/run", "/media", "/srv")  # an existing folder to stage binds under (root only)


def _bwrap_argv(config: dict[str, Any]) -> list[str]:
    """bwrap's command line; its seccomp program (ptrace refused) is handed over in a memfd."""
    plan = config["bwrap"]
    argv = [plan["binary"], *plan["options"], *(arg for step in plan["steps"] for arg in step)]
    if plan.get("seccomp"):
        fd = os.memfd_create("repro-matrix-seccomp", 0)
        os.set_inheritable(fd, True)  # bwrap reads it
        os.write(fd, bytes.fromhex(plan["seccomp"]))
        os.lseek(fd, 0, os.SEEK_SET)
        argv += ["--seccomp", str(fd)]
    return [*argv, "--", *config["argv"]]


def _stage(config: dict[str, Any]) -> None:
    """Root only: bwrap runs as a private uid that could not traverse to folders under /root or a 0700
    scratch folder. In a private mount namespace of this supervisor, each host folder bwrap binds is bound
    first under a fresh tmpfs it can traverse, and bwrap binds it from there (bwrap resolves every source
    path as the uid it runs as, so a file descriptor would not do)."""
    _unshare(CLONE_NEWNS)
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    base = next(folder for folder in _STAGES if os.path.isdir(folder))
    _mount("tmpfs", base, "tmpfs", MS_NOSUID | MS_NODEV, "size=64k,mode=0755")
    for index, step in enumerate(config["bwrap"]["steps"]):
        if step[0] in ("--ro-bind", "--bind") and step[1] not in config["bwrap"]["system"]:
            target = f"{base}/{index}"
            if os.path.isdir(step[1]):
                os.mkdir(target)
            else:  # a single file (a build's uv or pip settings): bound onto a file
                os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            _mount(step[1], target, None, MS_BIND | MS_REC)
            step[1] = target


# -- cgroups (v1, root): one per cell, so the bounds hold for the cell as a whole ----------------------
def _own_cgroup(controller: str) -> str | None:
    """This process's cgroup folder for a v1 controller, when it is mounted and writable here."""
    try:
        with open("/proc/self/cgroup", encoding="ascii") as handle:
            lines = handle.read().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        folder = f"/sys/fs/cgroup/{controller}{path}"
        if controller in names.split(",") and os.path.isdir(folder) and os.access(folder, os.W_OK):
            return folder
    return None


def _make_cgroups(config: dict[str, Any], notes: list[str]) -> dict[str, str]:
    """A memory cgroup (when a limit is asked for) and a pids cgroup for the cell; what is missing is said."""
    made: dict[str, str] = {}
    wanted = {"pids": ("pids.max", config.get("pids"))}
    if config.get("memory_limit"):
        wanted["memory"] = ("memory.limit_in_bytes", config["memory_limit"])
    for controller, (knob, value) in wanted.items():
        if not value:
            continue
        parent = _own_cgroup(controller) if os.geteuid() == 0 else None
        folder = parent and os.path.join(parent, f"repro-cell-{os.getpid()}")
        try:
            if folder is None:
                raise OSError(1, "no writable cgroup v1 controller (not root, or cgroup v2)")
            os.mkdir(folder)
            made[controller] = folder
            _write(os.path.join(folder, knob), str(value))
        except OSError as error:
            notes.append(_no_cgroup(controller, bool(config.get("build")), error))
    if "pids" in made and not config.get("build"):  # a build's log names only what it could not do
        notes.append(f"pids bound: cgroup {config['pids']}")
    if "memory" in made:
        notes.append(f"memory bound: cgroup {config['memory_limit']} bytes for the whole cell")
    elif config.get("memory_limit"):
        notes.append("memory bound: RLIMIT_AS per process (no memory cgroup)")
    return made


def _no_cgroup(controller: str, build: bool, error: OSError) -> str:
    why = error.strerror or str(error)
    if controller == "pids" and build:
        return f"no pids bound for this build step (no pids cgroup: {why})"
    if controller == "pids":  # the child runner's RLIMIT_NPROC in the cell's user namespace still holds
        return f"pids bound: RLIMIT_NPROC in the cell's user namespace only (no pids cgroup: {why})"
    return f"no {controller} cgroup ({why})"


def _remove_cgroups(cgroups: dict[str, str]) -> bool:
    """Kill what is left in the cell's cgroups and remove them; True when the memory cgroup OOM-killed."""
    oom = False
    with contextlib.suppress(OSError):
        if "memory" in cgroups:
            with open(os.path.join(cgroups["memory"], "memory.oom_control"), encoding="ascii") as handle:
                oom = any(line.split()[:1] == ["oom_kill"] and line.split()[1] != "0" for line in handle)
    for folder in cgroups.values():
        for _ in range(200):
            try:
                with open(os.path.join(folder, "cgroup.procs"), encoding="ascii") as handle:
                    pids = [int(p) for p in handle.read().split()]
                for pid in pids:
                    _kill_quietly(pid, signal.SIGKILL)
                os.rmdir(folder)
                break
            except OSError:
                _reap()
                time.sleep(0.01)
    return oom


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
            ppid = int(stat[stat.rindex(b")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    found, stack = [], [root]
    while stack:
        for child in children.get(stack.pop(), ()):
            found.append(child)
            stack.append(child)
    return found


def _kill_quietly(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)


def _reap() -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        _reaped[pid] = status


def _kill_tree() -> int:
    """SIGKILL and reap every descendant until none is left; returns how many were killed."""
    killed = 0
    for _ in range(2000):
        pids = _descendants(os.getpid())
        if not pids:
            break
        for pid in pids:
            _kill_quietly(pid, signal.SIGKILL)
        killed += len(pids)
        _reap()
        time.sleep(0.002)
    _reap()
    return killed


# -- the loop --------------------------------------------------------------------------------------
def _note_signal(number: int, _frame: Any) -> None:
    _signals.append(number)


def _supervise(config: dict[str, Any]) -> dict[str, Any]:
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _note_signal)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)  # also covered by the lifeline, which no thread can outlive
    if os.getppid() != config["parent"]:
        return {"error": "the harness exited before the command started"}
    notes: list[str] = list(config.get("notes") or ())
    sealed = bool(config.get("bwrap"))
    namespaced = not sealed and config.get("namespaces") and _enter_namespaces(notes)
    if namespaced:
        _confine(config, notes)
    # As root, bwrap runs as a private uid (the folders it writes become its own): every cell, and every build
    # step but those that write what root owns and run no package code (uv's shared cache: docs/security.md).
    if sealed and os.geteuid() == 0 and config.get("private_uid", not config.get("build")):
        config["uid"] = config["uid_base"] + os.getpid()
        for path in config.get("chown", ()):
            _chown_tree(path, config["uid"])
        if not config.get("build"):  # a build's log names only what it could not do
            notes.append(f"runs as uid {config['uid']} (private to this cell)")
        _stage(config)
    cgroups = _make_cgroups(config, notes) if sealed else {}
    config["cgroups"], config["memory_cgroup"] = list(cgroups.values()), "memory" in cgroups
    started = time.monotonic()
    try:
        box: _Namespaced | _Subreaped = _Namespaced(config, notes) if namespaced else _Subreaped(config)
        result = _loop(config, box, wake_r)
    finally:
        oom = _remove_cgroups(cgroups) if cgroups else False
    result["duration_s"] = time.monotonic() - started
    # Nothing survives the command. In a namespace its init's end already saw to that: the kernel kills the
    # namespace's processes before the init can be reaped. Otherwise: every descendant, found via /proc.
    killed = 0 if namespaced else _kill_tree()
    containment = "bwrap" if sealed else "namespaces" if namespaced else "subreaper"
    return {**result, "containment": containment, "notes": notes, "swept": killed, "oom_killed": oom}


def _loop(config: dict[str, Any], box: _Namespaced | _Subreaped, wake_r: int) -> dict[str, Any]:
    poller = select.poll()
    poller.register(wake_r, select.POLLIN)
    poller.register(config["lifeline"], select.POLLIN)
    deadline = time.monotonic() + config["timeout"]
    kill_at: float | None = None
    timed_out = interrupted = harness_gone = killed = False
    while True:
        _reap()
        if box.pid in _reaped:
            status = _reaped[box.pid] if isinstance(box, _Subreaped) else box.command_status(killed)
            result: dict[str, Any] = {"status": status, "timed_out": timed_out, "interrupted": interrupted,
                      "harness_gone": harness_gone}
            if status is None:
                result["error"] = f"the namespace init ended before the command did: {'; '.join(box.notes)}"
            return result
        now = time.monotonic()
        if kill_at is None and now >= deadline:
            timed_out, kill_at = True, now + config["grace"]
            box.terminate()
        elif kill_at is not None and now >= kill_at and not killed:
            killed = True
            box.kill()
        limit = min(deadline if kill_at is None else kill_at, now + 3600)
        for fd, _ in poller.poll(max(0.0, limit - now) * 1000 if not killed else 50):
            if fd == config["lifeline"]:  # the harness is gone: nothing it started may stay
                harness_gone = killed = True
                poller.unregister(fd)
                box.kill()
            else:
                _drain(wake_r)
        pending = _signals[:]
        del _signals[:len(pending)]
        if any(s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT) for s in pending) and kill_at is None:
            interrupted, kill_at = True, time.monotonic() + config["grace"]
            box.terminate()


def _drain(fd: int) -> None:
    with contextlib.suppress(BlockingIOError):
        while os.read(fd, 4096):
            pass


def main() -> None:
    lifeline, status_fd = int(sys.argv[1]), int(sys.argv[2])
    config = json.loads(sys.stdin.buffer.read())
    config.update(lifeline=lifeline, status=status_fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    try:
        result = _supervise(config)
    except Exception as error:  # any failure is reported; the harness turns it into an infra-error
        _kill_tree()
        result = {"error": f"supervisor failed: {type(error).__name__}: {error}"}
    with contextlib.suppress(OSError):  # the harness may be gone
        os.write(status_fd, json.dumps(result).encode())
    os._exit(0)


if __name__ == "__main__":
    main()
