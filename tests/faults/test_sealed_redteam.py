"""A fresh red-team pass on the sealed cell (issue 19 section 1), as root and as a user: attacks not in
test_sealed_cells.py, one variant each, all in one harness run. A variant ``passes`` when the attack is
refused (``REFUSED`` in its log, with how) and fails when it got through (``ESCAPED``)."""

from __future__ import annotations

import json
import os

import pytest

from harness.containment._seal import bwrap
from tests.faults.conftest import cell, results_of, run_harness, write_case

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(bwrap()[0] is None, reason=f"no bubblewrap sandbox here: {bwrap()[1]}")]

PASSES = {"cpu": "passes", "cuda": "passes", "cuda-sim": "passes"}
SECRET = "seal-redteam-secret-value"

ATTACKS = """
    import argparse, ctypes, errno, json, os, pathlib, resource, signal, subprocess, sys, sysconfig
    p = argparse.ArgumentParser(); p.add_argument("--variant"); p.add_argument("--device"); a = p.parse_args()
    targets = json.loads((pathlib.Path(__file__).parent / "targets.json").read_text())
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long

    def refused(what, why):
        print(f"REFUSED {a.variant} {what}: {why}")

    def escaped(what):
        raise AssertionError(f"ESCAPED {a.variant}: {what}")

    def try_open(path, flags):
        try:
            fd = os.open(path, flags)
        except OSError as error:
            refused(path, repr(error))
        else:
            os.close(fd)
            escaped(f"opened {path} (flags {flags})")

    def syscall(name, number, *args):
        result = libc.syscall(ctypes.c_long(number), *args)
        error = ctypes.get_errno()
        if result >= 0 or error not in (errno.EPERM, errno.EACCES, errno.ENOSYS):
            escaped(f"{name} reached the kernel: result {result}, {errno.errorcode.get(error, error)}")
        refused(name, errno.errorcode[error])

    NUMBERS = {"x86_64": {"keyctl": 250, "userfaultfd": 323, "perf_event_open": 298, "bpf": 321,
                          "io_uring_setup": 425, "unshare": 272},
               "aarch64": {"keyctl": 219, "userfaultfd": 282, "perf_event_open": 241, "bpf": 280,
                           "io_uring_setup": 425, "unshare": 97}}[os.uname().machine]

    if a.variant == "proc-environ":  # the environment and command line of every process it can see
        for pid in [p for p in os.listdir("/proc") if p.isdigit()]:
            for part in ("environ", "cmdline"):
                try:
                    text = pathlib.Path(f"/proc/{pid}/{part}").read_bytes().decode(errors="replace")
                except OSError as error:
                    print(f"unreadable /proc/{pid}/{part}: {error!r}")
                    continue
                if targets["secret"] in text or "-m\\0harness" in text or "_supervise.py" in text:
                    escaped(f"/proc/{pid}/{part} shows the harness: {text[:200]!r}")
        refused("/proc/*/environ and cmdline", f"only the cell's own processes: {os.listdir('/proc')[:0]}")
    elif a.variant == "signal-harness":  # the harness's pid, as the host numbers it
        for pid in (targets["harness"], os.getppid(), 1):
            try:
                os.kill(pid, signal.SIGCONT if pid == targets["harness"] else 0)
            except OSError as error:
                refused(f"signal {pid}", repr(error))
            else:
                if pid == targets["harness"] and pathlib.Path(f"/proc/{pid}/cmdline").exists() and b"harness" in \\
                        pathlib.Path(f"/proc/{pid}/cmdline").read_bytes():
                    escaped(f"signalled the harness (pid {pid})")
                print(f"signal 0 to pid {pid} inside the cell's own pid namespace: allowed")
        refused("signals to the harness", "its pid is not in the cell's pid namespace")
    elif a.variant == "inherited-fds":  # descriptors the harness left open
        fds = {int(n): os.readlink(f"/proc/self/fd/{n}") for n in os.listdir("/proc/self/fd") if os.path.exists(
            f"/proc/self/fd/{n}")}
        print("FDS", fds)
        extra = {fd: target for fd, target in fds.items() if fd > 2 and not target.startswith("/proc/")}
        if extra:
            escaped(f"inherited descriptors beyond stdio: {extra}")
        refused("inherited descriptors", "none beyond stdin, stdout, stderr")
    elif a.variant == "sys-write":
        for path in ("/sys/kernel/mm/transparent_hugepage/enabled", "/sys/fs/cgroup/cgroup.procs",
                     "/sys/devices/system/cpu/cpu1/online", "/sys/power/state"):
            try_open(path, os.O_WRONLY)
    elif a.variant == "proc-kernel":
        try_open("/proc/sysrq-trigger", os.O_WRONLY)  # opened only, never written
        for path in ("/proc/kmsg", "/proc/kcore"):
            try_open(path, os.O_RDONLY)
        # The namespace's init (bwrap's) runs as the cell's uid: its memory is open to the cell. Taking it over
        # must gain nothing: it runs under the same seccomp filter and no-new-privs as the cell.
        status = dict(line.split(":\t", 1) for line in pathlib.Path("/proc/1/status").read_text().splitlines()
                      if ":\t" in line)
        if status.get("Seccomp") != "2" or status.get("NoNewPrivs") != "1" or status.get("CapEff") != "0" * 16:
            escaped(f"pid 1 (writable through /proc/1/mem) is freer than the cell: {status.get('Seccomp')}, "
                    f"{status.get('NoNewPrivs')}, {status.get('CapEff')}")
        refused("/proc/1/mem", "pid 1 is under the cell's seccomp filter, no-new-privs, no capabilities")
    elif a.variant == "mount":
        os.makedirs("/tmp/m", exist_ok=True)
        if libc.mount(b"tmpfs", b"/tmp/m", b"tmpfs", 0, None) == 0:
            escaped("mounted a tmpfs")
        refused("mount", errno.errorcode[ctypes.get_errno()])
        syscall("unshare(CLONE_NEWUSER)", NUMBERS["unshare"], ctypes.c_long(0x10000000))
    elif a.variant == "keyctl":  # KEYCTL_GET_KEYRING_ID of the user keyring
        syscall("keyctl", NUMBERS["keyctl"], ctypes.c_long(0), ctypes.c_long(-4), ctypes.c_long(0))
    elif a.variant == "userfaultfd":
        syscall("userfaultfd", NUMBERS["userfaultfd"], ctypes.c_long(0))
    elif a.variant == "perf":  # a software clock event of this process
        attr = (ctypes.c_uint32 * 32)()
        attr[0], attr[1], attr[2] = 1, 128, 0  # PERF_TYPE_SOFTWARE, size, PERF_COUNT_SW_CPU_CLOCK
        syscall("perf_event_open", NUMBERS["perf_event_open"], attr, ctypes.c_long(0), ctypes.c_long(-1),
                ctypes.c_long(-1), ctypes.c_long(0))
    elif a.variant == "bpf":  # BPF_MAP_CREATE of an array map
        attr = (ctypes.c_uint32 * 32)()
        attr[0], attr[1], attr[2], attr[3] = 2, 4, 4, 1
        syscall("bpf", NUMBERS["bpf"], ctypes.c_long(0), attr, ctypes.c_long(128))
    elif a.variant == "io-uring":
        params = (ctypes.c_uint32 * 30)()
        syscall("io_uring_setup", NUMBERS["io_uring_setup"], ctypes.c_long(4), params)
    elif a.variant == "setuid":  # the host's setuid programs: no-new-privs makes them plain
        found = [str(p) for p in pathlib.Path("/usr/bin").iterdir() if p.is_file() and p.stat().st_mode & 0o4000]
        for program in found[:20]:
            proc = subprocess.run([program, "--help"], capture_output=True, stdin=subprocess.DEVNULL, timeout=20)
        status = pathlib.Path("/proc/self/status").read_text()
        nnp = [line for line in status.splitlines() if line.startswith("NoNewPrivs")]
        if nnp != ["NoNewPrivs:\\t1"]:
            escaped(f"setuid programs {found} would gain privileges: {nnp}")
        refused(f"setuid programs {found[:5]}", "no-new-privs")
    elif a.variant == "site-packages":  # poison the environment for a later run
        site = pathlib.Path(sysconfig.get_paths()["purelib"])
        for path in (site / "poison.pth", pathlib.Path(sys.prefix) / "bin" / "poison"):
            try:
                path.write_text("import os")
            except OSError as error:
                refused(path, repr(error))
            else:
                escaped(f"wrote {path}")
    elif a.variant == "outcome-symlink":  # the runner's outcome file pointed at a host file
        for name in os.listdir("."):
            print("CWD", name)
        pathlib.Path("outcome.json").unlink(missing_ok=True)
        os.symlink("/etc/shadow", "outcome.json")
        refused("outcome symlink", "planted; the harness reads it with O_NOFOLLOW")
    elif a.variant == "core-dump":  # core_pattern is the host's: a pipe there runs a host program
        try:
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        except (ValueError, OSError) as error:
            refused("RLIMIT_CORE", repr(error))
        else:
            escaped(f"core dumps allowed: {resource.getrlimit(resource.RLIMIT_CORE)}")
    elif a.variant == "root-fs":  # bwrap's root folder
        for path in ("/planted", "/root/.planted", "/home/planted"):
            try:
                pathlib.Path(path).write_text("x")
            except OSError as error:
                refused(path, repr(error))
            else:
                escaped(f"wrote {path}")
"""

VARIANTS = ("proc-environ", "signal-harness", "inherited-fds", "sys-write", "proc-kernel", "mount", "keyctl",
            "userfaultfd", "perf", "bpf", "io-uring", "setuid", "site-packages", "outcome-symlink", "core-dump",
            "root-fs")


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    root = tmp_path_factory.mktemp("redteam")
    variants = {v: {"role": "fix", "expect": PASSES} for v in VARIANTS}
    variants["zz-buggy"] = {"role": "buggy", "expect": {"cpu": "reproduces", "cuda": "reproduces",
                                                        "cuda-sim": "reproduces"}}
    script = ATTACKS + """
    if a.variant == "zz-buggy":
        raise RuntimeError("Expected all tensors to be on the same device")
"""
    folder = write_case(root / "cases", "redteam", script, variants=variants)
    (folder / "targets.json").write_text(json.dumps({"harness": os.getpid(), "secret": SECRET}))
    proc = run_harness("cases", "--cases-dir", str(root / "cases"), "--lane", "cpu", "--output", str(root / "out"),
                       env={"GITHUB_TOKEN": SECRET})
    results = results_of(root / "out")[0]
    return {"proc": proc, "results": results, "run": root / "out" / results["run"]["id"]}


@pytest.mark.fault("a fresh adversary's attacks on a sealed cell")
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_attack_is_refused(attacked, variant):
    record = cell(attacked["results"], "redteam", variant)
    log = (attacked["run"] / record["log"]).read_text()
    assert record["judgement"] == "confirmed", (record["reason"], log[-3000:])
    assert f"REFUSED {variant}" in log and "ESCAPED" not in log, log[-3000:]
    assert "containment bwrap" in log
    if variant == "outcome-symlink":
        assert "root:" not in json.dumps(attacked["results"]), "the harness read the file the outcome named"
