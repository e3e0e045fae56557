"""A library's tests and environment: its pinned sdist from the package index (checked against its
sha256, unpacked once), and a venv with torch, the library and its pinned test dependencies.

Everything goes through the ordinary package clients (``pip download`` for the sdist, uv for the venv) with
the harness's index settings, so a host that only reaches a PyPI mirror gets the same files.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

from cuda_sim._startup import PTH_LINE

from harness import uv_index_environment
from harness.conformance._errors import SourceError
from harness.conformance._suites import Library

TORCH = "torch==2.13.0"  # the CPU wheel; an unpinned torch would pull a multi-GB CUDA build
REPO = Path(__file__).resolve().parents[2]
Log = Callable[[str], None]


def _run(cmd: list[str], log_path: Path, what: str, env: dict[str, str] | None = None, timeout: int = 1800,
         check: bool = True) -> None:
    with log_path.open("a", encoding="utf-8") as log:
        log.write(f"$ {' '.join(cmd)}\n")
        log.flush()
        try:
            proc = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as error:
            raise SourceError(f"{what}: {error} (log: {log_path})") from None
    if check and proc.returncode != 0:
        raise SourceError(f"{what} failed with exit code {proc.returncode} (log: {log_path})")


def _pip_download() -> list[str]:
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    uv = shutil.which("uv")
    if uv is None:
        raise SourceError("neither pip nor uv is installed here: cannot download the sdists (pip install pip)")
    return [uv, "tool", "run", "--from", "pip", "pip"]  # pip still reads its own configuration (mirrors)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unpack(archive: Path, into: Path) -> Path:
    if archive.name.endswith(".zip"):
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(into)
    else:
        with tarfile.open(archive) as tar:
            tar.extractall(into, filter="data")
    roots = [p for p in into.iterdir() if p.is_dir()]
    if len(roots) != 1:
        raise SourceError(f"{archive.name}: expected one top-level folder, found {len(roots)}")
    return roots[0]


def fetch_sdist(library: Library, cache: Path, log: Log) -> Path:
    """The unpacked sdist of ``library`` (downloaded and checked on first use)."""
    target = cache / "sdists" / f"{library.sdist}-{library.version}"
    if (target / ".complete").exists():
        return target / "src"
    target.parent.mkdir(parents=True, exist_ok=True)
    log(f"{library.name}: downloading the sdist {library.sdist}=={library.version}")
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        work = Path(tmp)
        cmd = [*_pip_download(), "download", "--no-deps", "--no-binary", ":all:", "--disable-pip-version-check",
               "-d", str(work / "dl"), f"{library.sdist}=={library.version}"]
        _run(cmd, cache / f"{library.name}-download.log", f"{library.name}: pip download")
        files = list((work / "dl").iterdir())
        if len(files) != 1:
            raise SourceError(f"{library.name}: pip download left {len(files)} files, expected the one sdist")
        digest = _sha256(files[0])
        if digest != library.sha256:
            raise SourceError(f"{library.name}: {files[0].name} has sha256 {digest}, its library file pins "
                              f"{library.sha256}; refusing a different archive under the same version")
        root = _unpack(files[0], work / "unpacked")
        staged = work / "staged"
        staged.mkdir()
        root.rename(staged / "src")
        (staged / ".complete").write_text(json.dumps({"file": files[0].name, "sha256": digest}))
        if target.exists():
            shutil.rmtree(target)
        staged.rename(target)
    return target / "src"


def _env_key(library: Library) -> str:
    spec = {"python": sys.version.split()[0], "torch": TORCH, "requires": sorted(library.requires), "layout": 1}
    return hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()[:12]


def _link_harness(venv: Path) -> None:
    """Make this checkout's ``harness`` and ``cuda_sim`` importable in the venv (the simulation and the two
    plugins) without putting the repository root on sys.path, where its ``tests`` folder would shadow a
    library's ``tests``.
    Re-checked each time a cached venv is used: a cache built by another checkout (``--cache`` shared or
    copied) would otherwise run that checkout's simulator."""
    shim = venv / "repro-matrix-path"
    shim.mkdir(exist_ok=True)
    for link, target in ((shim / "harness", REPO / "harness"), (shim / "cuda_sim", REPO / "cuda-sim" / "cuda_sim")):
        if link.is_symlink() and os.readlink(link) != str(target):
            link.unlink()
        if not link.is_symlink():
            link.symlink_to(target, target_is_directory=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_repro_matrix.pth").write_text(f"{shim}\n")
    # as the wheel's cuda_sim.pth: children of the simulated pass (accelerate launch) join it; after zz_ (path)
    (site / "zzz_cuda_sim.pth").write_text(PTH_LINE)


def build_env(library: Library, cache: Path, log: Log) -> Path:
    """The venv for ``library`` (built on first use, reused while its pins are unchanged)."""
    folder = cache / "envs" / f"{library.name}-{_env_key(library)}"
    if (folder / ".complete").exists():
        _link_harness(folder)  # environments built before a change of the links get it too
        return folder
    uv = shutil.which("uv")
    if uv is None:
        raise SourceError("uv is not installed (pip install uv): it builds the libraries' environments")
    log(f"{library.name}: building its environment ({len(library.requires)} pins + {TORCH})")
    if folder.exists():
        shutil.rmtree(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, **uv_index_environment()}
    env.pop("VIRTUAL_ENV", None)
    log_path = cache / f"{library.name}-env.log"
    _run([uv, "venv", "-q", "--python", sys.executable, str(folder)], log_path, f"{library.name}: uv venv", env)
    _run([uv, "pip", "install", "-q", "--python", str(folder / "bin" / "python"), TORCH, *library.requires],
         log_path, f"{library.name}: installing its pins", env)
    _link_harness(folder)
    # Bytecode once, now: else the first of the two runs pays for compiling site-packages and the second not.
    _run([str(folder / "bin" / "python"), "-m", "compileall", "-q", "-j", "0", str(next((folder / "lib").glob(
        "python3*/site-packages")))], log_path, f"{library.name}: compileall", check=False)  # a py2 file is no error
    (folder / ".complete").write_text(TORCH + "\n" + "\n".join(library.requires) + "\n")
    return folder
