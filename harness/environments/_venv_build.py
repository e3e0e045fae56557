"""Building the ``venv`` backend's environments: one uv-made virtual environment per distinct requirement set.

Environments live under the cache folder (``.repro-envs/`` by default, ``REPRO_MATRIX_ENVS`` to move
it), named by :meth:`EnvSpec.key`. An environment is built under a temporary name, gets its ``.complete``
marker, and only then is renamed into place; a folder without the marker (left by older versions) is
removed and rebuilt, never used. A file lock makes concurrent runs build each environment once, and
every build step runs under the process supervisor, so it dies with the harness, sealed like a cell
where namespaces allow (harness/containment/_sandbox.py: only the build folder, uv's cache and a private /tmp
writable, the run's output hidden). No code a case chose runs while uv's shared cache is writable
(:meth:`EnvBuilder._install`). The backend that composes this, and runs cells, is harness/environments/_venv.py.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cuda_sim._startup import ENV_PTH_LINE, ENV_PTH_NAME
from filelock import FileLock

from harness._exceptions import EnvBuildError
from harness._io import write_atomic
from harness.containment._process import Confinement, HelperProcess
from harness.containment._sandbox import BuildSandbox, build_place, uv_cache_dir
from harness.environments._bytecode import SharedBytecode
from harness.environments._compat import RUNTIME as COMPAT_RUNTIME
from harness.environments._hosttorch import HostTorch, host_paths, link_host_torch
from harness.environments._index import offline_hint, uv_index_environment
from harness.environments._resolve import Resolution, resolve
from harness.environments._spec import EnvSpec
from harness.environments._split import move_added, requirement_lines, snapshot
from harness.environments._torchvision_compat import MODULE as COMPAT_MODULE
from harness.environments._torchvision_compat import NAME as COMPAT_NAME
from harness.environments._torchvision_compat import PTH_LINE as COMPAT_PTH_LINE
from harness.environments._torchvision_compat import PTH_NAME as COMPAT_PTH
from harness.environments._torchvision_compat import reason_to_apply
from harness.environments._wheelhouse import link_folders
from harness.run._backend import CHILD_RUNNER, PreparedEnv, Progress, project_root

_MARKER = ".complete"
_BUILDING = ".building-"  # prefix of environments under construction (renamed into place when complete)
_OWNERS = ".module-owners.json"  # top-level module -> distributions, for the child's `imported` capture
_CELL_CACHES = ".cell-caches"  # per-case caches that cells wrote before issue 19; only `clean` removes them
_OVERRIDES = ".host-torch-overrides.txt"
_BYTECODE = ".bytecode"  # the environment's bytecode was compiled by the harness (cells write none)
_INSTALL_TIMEOUT_S = 3600
_FREEZE = ("import json, importlib.metadata as m; "
           "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))")
_COMPILE = ("import compileall, sys; "  # best effort: a file that does not compile is imported from source
            "compileall.compile_dir(sys.argv[1], quiet=2, workers=0)")


def default_env_root() -> Path:
    configured = os.environ.get("REPRO_MATRIX_ENVS")
    return Path(configured) if configured else project_root() / ".repro-envs"


def own_venv_environment(env: Mapping[str, str]) -> dict[str, str]:
    """The environment of ``uv venv`` for a source build's venv of its own: no uv cache (uv makes a throwaway
    one in the step's private /tmp), so the step is given no cache folder to write (or, as root, to chown)."""
    return {**env, "UV_NO_CACHE": "1"}


def find_uv() -> str:
    beside = Path(sys.executable).with_name("uv")
    found = str(beside) if beside.exists() else shutil.which("uv")
    if not found:
        raise EnvBuildError("uv is not installed: run the suite through 'nox -s cases', "
                            "or 'python -m pip install uv'")
    return found


class EnvBuilder:
    """Builds and reuses the environments under ``root``; ``track`` wraps each build step, so the backend's
    ``cancel`` stops it."""

    def __init__(self, root: Path, backend: str, find_links: Path | None, offline: bool,
                 track: Callable[[HelperProcess], contextlib.AbstractContextManager[None]]) -> None:
        self.root = root
        self.backend = backend
        self.find_links = find_links
        self.offline = offline
        self._tracked = track

    def index_environment(self) -> dict[str, str]:
        """uv's package sources: pip's (harness/environments/_index.py), a ``--find-links`` folder first, and with
        ``--offline`` that folder alone: no index, no network."""
        env = uv_index_environment()
        if self.find_links is not None:  # the folder and its part-NN folders (harness/environments/_wheelhouse.py)
            links = ",".join(str(p.resolve()) for p in link_folders(self.find_links))
            env["UV_FIND_LINKS"] = links if self.offline else ",".join(filter(None, [links, env.get("UV_FIND_LINKS")]))
        if self.offline:  # (uv takes --no-index on its command line only)
            env["UV_OFFLINE"] = "1"
            for name in ("UV_INDEX_URL", "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX"):
                env.pop(name, None)
        return env


    def is_ready(self, spec: EnvSpec) -> bool:
        return (self.root / f"venv-{spec.key()}" / _MARKER).is_file()

    def build_log(self, spec: EnvSpec) -> Path | None:
        return self.root / f"venv-{spec.key()}.build.log"

    def prepare(self, spec: EnvSpec, progress: Progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        env_id = f"venv-{spec.key()}"
        folder = self.root / env_id
        self.root.mkdir(parents=True, exist_ok=True)
        with FileLock(str(self.root / f"{env_id}.lock")):
            if (folder / _MARKER).is_file():
                meta = json.loads((folder / _MARKER).read_text())
                if not (folder / _OWNERS).is_file():  # built before the map was stored
                    self._store_owners(folder, folder.with_suffix(".build.log"), dict(os.environ), private,
                                       spec.host)
                _link_simulation(folder)  # environments built before the line existed get it too
                self._compile_bytecode(folder, folder.with_suffix(".build.log"), private)
                return self._prepared(env_id, spec, folder, meta, reused=True)
            self._remove_unfinished(env_id, folder, progress)
            progress(f"{env_id}: creating ({spec.summary()})")
            started = time.perf_counter()
            # Built under a temporary name and renamed when complete: a build killed half-way (even with
            # the harness, SIGKILL) never leaves a folder under the final name, and a later build never
            # shares a folder with what is left of an earlier one.
            building = self.root / f"{_BUILDING}{env_id}-{os.getpid()}-{secrets.token_hex(3)}"
            try:
                meta = self._build(spec, building, folder.with_suffix(".build.log"), private)
                meta["build_s"] = round(time.perf_counter() - started, 2)
                _link_simulation(building)
                (building / _MARKER).write_text(json.dumps(meta, indent=1))
                os.rename(building, folder)
            finally:
                shutil.rmtree(building, ignore_errors=True)
            self._store_owners(folder, folder.with_suffix(".build.log"), {**os.environ, **self.index_environment()},
                               private, spec.host)
            self._compile_bytecode(folder, folder.with_suffix(".build.log"), private)
            # The whole build: the module map and the bytecode (a third of it or more) count too (issue 21).
            meta["build_s"] = round(time.perf_counter() - started, 2)
            write_atomic(folder / _MARKER, json.dumps(meta, indent=1))
            progress(f"{env_id}: ready in {meta['build_s']:.1f}s")
            return self._prepared(env_id, spec, folder, meta, reused=False)

    def _remove_unfinished(self, env_id: str, folder: Path, progress: Progress) -> None:
        """Under the lock: what earlier builds of this environment left (they died, or we would not hold it)."""
        if folder.exists():  # a folder without its marker: built in place by an older harness, interrupted
            progress(f"{env_id}: removing a half-built environment")
            shutil.rmtree(folder)
        for stale in self.root.glob(f"{_BUILDING}{env_id}-*"):
            shutil.rmtree(stale, ignore_errors=True)

    def _prepared(self, env_id: str, spec: EnvSpec, folder: Path, meta: dict[str, Any],
                  *, reused: bool) -> PreparedEnv:
        return PreparedEnv(id=env_id, spec=spec, backend=self.backend, python_path=str(folder / "bin" / "python"),
                           installed=meta["installed"], reused=reused,
                           build_s=0.0 if reused else meta["build_s"], compat=tuple(meta.get("compat", ())))

    def _build(self, spec: EnvSpec, folder: Path, log: Path, private: Sequence[Path] = ()) -> dict[str, Any]:
        log.write_text("")
        uv = find_uv()
        env = {k: v for k, v in os.environ.items() if not (self.offline and k.startswith(("UV_INDEX", "PIP_")))}
        env.update(self.index_environment())
        cache = uv_cache_dir(uv, env)
        if cache is not None:  # explicit: a sealed step's HOME and XDG_CACHE_HOME are not the harness's
            env["UV_CACHE_DIR"] = str(cache)
        place = build_place(cache, folder)
        uses = [Path(uv).resolve().parent, COMPAT_RUNTIME.parent, *(p.path.parent for p in spec.patches),
                *_host_uses(spec.host)]
        writes = (cache,) if cache is not None and place != folder else (place, *([cache] if cache else []))
        try:
            with BuildSandbox(env_root=self.root, private=private, env=env, uses=uses,
                              requires=spec.requires) as sandbox:
                place.mkdir()  # made here, so the sealed steps can be given it (and nothing else of the root)
                meta = self._build_steps(spec, uv, place, log, env, sandbox, writes)
            if place != folder:
                os.rename(place, folder)
        finally:
            if place != folder:  # what a failed build left in uv's cache (``folder`` is the caller's to remove)
                shutil.rmtree(place, ignore_errors=True)
        return meta

    def _build_steps(self, spec: EnvSpec, uv: str, folder: Path, log: Path, env: dict[str, str],
                     sandbox: BuildSandbox, writes: tuple[Path, ...]) -> dict[str, Any]:
        """uv venv, uv pip install, patches, freeze: each sealed, writing ``writes`` at most."""
        python = self._new_venv(spec, uv, folder, log, env, sandbox, writes)
        wanted, overrides = self._host_requirements(spec, folder)
        requires = sandbox.local_copies(wanted)  # in-tree builds write into copies, not case folders
        if requires:
            self._install(spec, uv, folder, log, env, sandbox, writes, requires, overrides)
        for patch in spec.patches:
            site = self._site_packages(python, log, env, sandbox)
            self._step(log, ["patch", "--forward", "--batch", "-p1", "-d", site, "-i", str(patch.path)], env,
                       sandbox.seal(folder, harness_uid=True))
        compat = self._apply_compat(python, log, env, sandbox, folder)
        # -I: without the harness's cwd on sys.path (a stray *.dist-info there would count as installed)
        installed = json.loads(self._step(log, [python, "-I", "-B", "-c", _FREEZE], env, sandbox.seal()))
        return {"installed": dict(sorted(installed.items(), key=lambda kv: kv[0].lower())), **spec.describe(),
                "compat": compat}

    def _apply_compat(self, python: str, log: Path, env: dict[str, str], sandbox: BuildSandbox,
                      folder: Path) -> list[str]:
        """The host-compatibility fix (environments/_compat.py): probed and checked in sealed steps that write
        nothing (the environment's .pth files run there, and its files are hardlinks of uv's shared cache),
        written by the harness; the record's ``compat`` lines (empty: nothing applied)."""
        probe = self._step(log, [python, "-I", "-B", str(COMPAT_RUNTIME), "--probe"], env, sandbox.seal())
        try:
            reason = reason_to_apply(json.loads(probe.strip().splitlines()[-1]))
        except (ValueError, IndexError, AttributeError) as error:
            raise EnvBuildError(f"the host-compatibility step ({COMPAT_RUNTIME}) failed: {error}", log) from None
        if reason is None:
            return []
        site = Path(self._site_packages(python, log, env, sandbox))
        write_atomic(site / f"{COMPAT_MODULE}.py", COMPAT_RUNTIME.read_text())
        write_atomic(site / COMPAT_PTH, COMPAT_PTH_LINE)
        _note(log, f"compat {COMPAT_NAME}: {reason}; wrote {COMPAT_MODULE}.py, {COMPAT_PTH} into {site}")
        try:
            self._step(log, [python, "-I", "-B", "-c", "import torchvision"], env, sandbox.seal())
        except EnvBuildError as error:
            raise EnvBuildError(f"the host-compatibility step ({COMPAT_RUNTIME}) failed: torchvision does not "
                                f"import even with {COMPAT_PTH}: {error.message}", log) from None
        return [f"{COMPAT_NAME}: {reason}"]

    def _new_venv(self, spec: EnvSpec, uv: str, folder: Path, log: Path, env: dict[str, str],
                  sandbox: BuildSandbox, writes: tuple[Path, ...], *, harness_uid: bool = True) -> str:
        """``harness_uid``: the environment's own venv, in uv's shared cache (as root, owned by root); a
        source build's venv of its own is its private uid's."""
        # --relocatable: entry points and activation scripts keep working after the rename into place.
        base = spec.host.executable if spec.host else sys.executable
        self._step(log, [uv, "venv", "--quiet", "--relocatable", "--python", base, str(folder)], env,
                   sandbox.seal(*writes, harness_uid=harness_uid))
        return str(folder / "bin" / "python")

    def _install(self, spec: EnvSpec, uv: str, folder: Path, log: Path, env: dict[str, str],
                 sandbox: BuildSandbox, writes: tuple[Path, ...], requires: list[str], overrides: list[str]) -> None:
        """Install ``requires`` so that no code a case chose runs while uv's shared cache is writable.

        1. Resolve with the build's own cache (uv may run an sdist's build backend for its metadata).
        2. What has a wheel: from the shared cache with ``--no-build``, constrained to that resolution (uv's
           ``--no-build`` alone quietly picks an older release that has a wheel). No build backend runs.
        3. What must be built from source: with the build's own cache, in a venv of its own, then moved into
           the environment by the harness. The build sees the shared cache read-only, and never a writable
           file of the environment (those are hardlinks of the shared cache's: a write would change both).
        As root, steps 1 and 3 run as a private unprivileged uid (a build backend reads no root-only file and
        owns nothing but its own folders); the harness writes their inputs afresh and adopts what step 3
        installed. The build's own cache is removed with it."""
        python = str(folder / "bin" / "python")
        offline = ["--no-index", "--offline"] if self.offline else []
        # A local wheel can change without its path changing: uv must read it afresh from the shared cache (its
        # key is the path and a few timestamps; the environment key hashes the content). What is built uses
        # the build's own cache, fresh. (uv refuses --refresh-package together with --offline.)
        refresh = [] if self.offline else [a for n in spec.local_requirements() for a in ("--refresh-package", n)]
        own = {**env, "UV_CACHE_DIR": str(sandbox.own_cache), "UV_LINK_MODE": "copy"}
        listed, constraints = sandbox.sources / "requirements.in", sandbox.sources / "resolved.txt"
        write_atomic(listed, "".join(f"{line}\n" for line in requires))
        locked = resolve(Resolution([uv, "pip", "compile", "--quiet", "--python", python, *offline, *overrides],
                                    functools.partial(self._run_uv, log), functools.partial(_note, log)),
                         requires, env, own, sandbox, writes, listed, constraints)
        install = [uv, "pip", "install", *offline, "-c", str(constraints)]
        wheels, built = [p for p in locked if p.wheel], [p for p in locked if not p.wheel]
        if wheels:
            write_atomic(listed, requirement_lines(requires, wheels))
            no_deps = ["--no-deps"] if built else []  # a wheel's dependency may be one of those built
            self._run_uv(log, [*install, "--python", python, *overrides, *refresh, "--no-build", *no_deps, "-r",
                               str(listed)],
                         env, sandbox.seal(*writes, sandbox.sources, harness_uid=True))
        if not built:
            return
        _note(log, "built from source with the build's own uv cache, in a venv of its own: "
                   f"{', '.join(p.name for p in built)}")
        aside = sandbox.scratch / "built"
        aside.mkdir()
        # Not given the own cache: as root each private-uid step re-chowns what it may write, and after the
        # resolution that cache can hold the build requirements unpacked (torch: ~15,000 files, 0.2 s a walk,
        # benchmarks/chown_walk.py). ``uv venv`` installs nothing.
        self._new_venv(spec, uv, aside, log, own_venv_environment(own), sandbox, (aside,), harness_uid=False)
        before = snapshot(aside)
        write_atomic(listed, requirement_lines(requires, built))
        self._run_uv(log, [*install, "--python", str(aside / "bin" / "python"), "--no-deps", "-r", str(listed)],
                     own, sandbox.seal(aside, sandbox.own_cache, sandbox.sources))
        move_added(aside, folder, before)

    def _host_requirements(self, spec: EnvSpec, folder: Path) -> tuple[tuple[str, ...], list[str]]:
        """What ``uv pip install`` gets: the pins, or with a host torch the pins without the torch family
        (linked from the host instead) and the overrides that keep uv from installing one."""
        if spec.host is None:
            return spec.requires, []
        link_host_torch(folder, spec.host)
        requires, overrides = spec.host.requirements(spec.requires)
        listed = folder / _OVERRIDES
        listed.write_text("".join(f"{line}\n" for line in overrides))
        return requires, ["--override", str(listed)]

    def _run_uv(self, log: Path, argv: list[str], env: dict[str, str], confinement: Confinement) -> str:
        """A uv step; offline, a failure names the wheel the folder lacks."""
        try:
            return self._step(log, argv, env, confinement)
        except EnvBuildError as error:
            if not self.offline:
                raise
            raise EnvBuildError(offline_hint(error.message, self.find_links), log) from None

    def _store_owners(self, folder: Path, log: Path, env: dict[str, str], private: Sequence[Path] = (),
                      host: HostTorch | None = None) -> None:
        """Store the child runner's module -> distribution map; without it each cell computes its own."""
        # -I: the sys.path a cell starts with (no cwd, no PYTHONPATH); the child checks what differs.
        # -B: no bytecode in site-packages (cells keep theirs under .pycache).
        argv = [str(folder / "bin" / "python"), "-I", "-B", str(CHILD_RUNNER), "--owners"]
        with contextlib.suppress(EnvBuildError, OSError, ValueError, IndexError), \
                BuildSandbox(env_root=self.root, private=private, env=env, uses=_host_uses(host)) as sandbox:
            record = json.loads(self._step(log, argv, env, sandbox.seal()).strip().splitlines()[-1])
            write_atomic(folder / _OWNERS, json.dumps(record))

    def _compile_bytecode(self, folder: Path, log: Path, private: Sequence[Path]) -> None:
        """Compile the environment's bytecode once, as the harness (sealed like a build step, writing the
        environment only). Cells then read it and write none: no cell can plant bytecode another runs."""
        if (folder / _BYTECODE).is_file():
            return
        python = str(folder / "bin" / "python")
        env = dict(os.environ)
        env.pop("PYTHONPYCACHEPREFIX", None)
        # -S: no site, so no .pth file of an installed package runs here, where the environment is writable
        # (its files are hardlinks of uv's shared cache: a write into one would change the cache's copy).
        shared = SharedBytecode(self.root, folder)
        shared.lend()  # what another environment already compiled from the same files: hardlinked, not compiled
        with BuildSandbox(env_root=self.root, private=private, env=env) as sandbox:
            self._step(log, [python, "-I", "-S", "-c", _COMPILE, str(folder / "lib")], env,
                       sandbox.seal(folder, harness_uid=True))
        kept = shared.keep()
        _note(log, f"bytecode: {shared.lent} files from {shared.store.parent}, {kept} compiled here and kept there")
        (folder / _BYTECODE).write_text("")

    def _site_packages(self, python: str, log: Path, env: dict[str, str], sandbox: BuildSandbox) -> str:
        return self._step(log, [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          env, sandbox.seal()).strip()

    def _step(self, log: Path, argv: list[str], env: dict[str, str], confinement: Confinement) -> str:
        with log.open("a") as handle:
            handle.write(f"$ {' '.join(argv)}\n")
        helper = HelperProcess(argv, env=env, timeout=_INSTALL_TIMEOUT_S, confinement=confinement)
        with self._tracked(helper):
            proc = helper.result()
        with log.open("a") as handle:
            handle.write(proc.stdout + proc.stderr + (f"{proc.error}\n" if proc.error else ""))
            if proc.notes:  # what the sealing could not do here (e.g. no namespaces): said as for cells
                handle.write(f"[repro-matrix: containment {proc.containment}: {'; '.join(proc.notes)}]\n")
        if proc.timed_out:
            raise EnvBuildError(f"'{argv[0]} {argv[1]}' did not finish in {_INSTALL_TIMEOUT_S}s", log)
        if proc.returncode != 0:
            tail = "\n".join((proc.error or proc.stderr or proc.stdout).strip().splitlines()[-15:])
            raise EnvBuildError(f"'{Path(argv[0]).name} {' '.join(argv[1:3])}' failed "
                                f"(exit {proc.returncode}):\n{tail}", log)
        return proc.stdout


def _host_uses(host: HostTorch | None) -> tuple[Path, ...]:
    return host_paths(host) if host is not None else ()


def _link_simulation(folder: Path) -> None:
    """Children of a cuda-sim cell join its simulation: the line is inert unless the cell exports
    ``CUDA_SIM_SUBPROCESS=1`` and the simulator's folder (cuda_sim/_startup.py), and names no path
    itself (environments are keyed by content). Written here, by the harness: cells see it read-only."""
    for site in (folder / "lib").glob("python3*/site-packages"):
        pth = site / ENV_PTH_NAME
        if not pth.is_file() or pth.read_text() != ENV_PTH_LINE:
            write_atomic(pth, ENV_PTH_LINE)


def _note(log: Path, text: str) -> None:  # a line of the harness's own in a build log
    with log.open("a") as handle:
        handle.write(f"[repro-matrix: {text}]\n")
