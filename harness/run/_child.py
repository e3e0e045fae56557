"""Child runner: executes one repro script and records what it did as structured data.

Runs inside the variant's environment (a venv or a container), so it uses the standard library
only. Usage: ``python _child.py SPEC.json``. The spec names the script, its argv, the shims to run
first, whether to turn on the cuda-sim lane, and where to write the outcome. The verdict never
depends on scraping stderr: the exception type, message and traceback summary are written here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import runpy
import sys
import time
import traceback
from pathlib import Path
from typing import Any

_MAX_MESSAGE = 20_000
_MAX_FRAMES = 40


def _exception_record(error: BaseException) -> dict[str, Any]:
    # Drop this runner's own frames (runpy plumbing) so the summary starts at the repro.
    frames = [f for f in traceback.extract_tb(error.__traceback__)
              if not f.filename.endswith(("_child.py", "runpy.py", "<frozen runpy>"))]
    try:
        message = str(error)
    except Exception as str_error:  # a broken __str__ must not lose the outcome
        message = f"<unprintable {type(error).__name__}: {str_error!r}>"
    record = {
        "type": type(error).__name__,
        "module": type(error).__module__,
        "message": message[:_MAX_MESSAGE],
        "traceback": [
            {"file": f.filename, "line": f.lineno, "function": f.name, "code": (f.line or "")[:300]}
            for f in frames[-_MAX_FRAMES:]
        ],
    }
    crash = sys.modules.get("cuda_sim._crash")  # loaded on the cuda-sim lane only
    try:
        site = crash.internal_error(error) if crash is not None else None
    except Exception:  # classifying must never lose the outcome
        site = None
    if site:
        record["sim_internal"] = site  # the simulator's own frame: it crashed, not the repro
    return record


def _imported_versions(owners_file: str | None = None) -> dict[str, str]:
    """Versions of the distributions whose top-level modules the repro actually imported."""
    if owners_file:
        try:
            stored = _stored_versions(owners_file)
        except Exception:  # an unreadable or odd record: compute as if there were none
            stored = None
        if stored is not None:
            return stored
    return _computed_versions()


def _stored_versions(owners_file: str) -> dict[str, str] | None:
    with open(owners_file, encoding="utf-8") as handle:
        record = json.load(handle)
    if not _still_holds(record["paths"]):
        return None
    known: dict[str, str] = record["versions"]
    names = {m.partition(".")[0] for m in list(sys.modules)} | set(record["modules"])
    versions = {dist: known[dist] for name in names for dist in record["owners"].get(name, ()) if dist in known}
    return dict(sorted(versions.items(), key=lambda kv: kv[0].lower()))


def _computed_versions() -> dict[str, str]:
    from importlib import metadata

    try:
        owners = metadata.packages_distributions()
    except Exception:
        return {}
    versions: dict[str, str] = {}
    for name in {m.partition(".")[0] for m in list(sys.modules)}:
        for dist in owners.get(name, ()):
            try:
                versions[dist] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
    return dict(sorted(versions.items(), key=lambda kv: kv[0].lower()))


def owners_record() -> dict[str, Any]:
    """What :func:`_computed_versions` reads, computed once per environment (``--owners``).

    Reading every distribution's metadata cost a cell 25-95 ms. Stored with what it depends on (the
    metadata names on each sys.path entry), so a cell can tell whether it still holds.
    """
    before = {m.partition(".")[0] for m in list(sys.modules)}
    from importlib import metadata

    owners = {k: list(v) for k, v in metadata.packages_distributions().items()}
    modules = sorted({m.partition(".")[0] for m in list(sys.modules)} - before)
    versions: dict[str, str] = {}
    for dist in {d for dists in owners.values() for d in dists}:
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    # modules: what importing and running importlib.metadata loaded (the computed path sees those too).
    return {"paths": {p: _metadata_names(p) for p in dict.fromkeys(sys.path)}, "modules": modules,
            "owners": owners, "versions": versions}


def _still_holds(paths: dict[str, list[str] | None]) -> bool:
    """Would :func:`_computed_versions` read what the record was computed from?

    Asked after the repro ran: it must not have reordered, added or removed distributions on
    sys.path (a PYTHONPATH in the case's env counts too), nor installed a finder of its own.
    """
    current = list(dict.fromkeys(sys.path))
    if [p for p in current if p in paths] != list(paths) or _other_distribution_finders():
        return False
    for entry in current:
        names = _metadata_names(entry)
        if entry in paths:
            if names != paths[entry]:
                return False
        elif names or (names is None and os.path.exists(entry or ".")):  # new metadata, or a zip
            return False
    return True


def _metadata_names(entry: str) -> list[str] | None:
    """The names importlib.metadata finds distributions by in one sys.path folder (None: no folder)."""
    try:
        names = os.listdir(entry or ".")
    except OSError:
        return None
    return sorted(n for n in names if n.lower().endswith((".dist-info", ".egg-info")) or n.lower() == "egg-info")


def _other_distribution_finders() -> bool:
    from importlib.machinery import PathFinder

    return any(f is not PathFinder and hasattr(f, "find_distributions") for f in sys.meta_path)


def _enter_simulation(sim_root: str) -> None:
    # Only the cuda_sim package from there: sim_root may be a site-packages (an installed cuda-sim)
    # whose other packages (another torch) must not shadow the environment's own.
    init = Path(sim_root, "cuda_sim", "__init__.py")
    spec = importlib.util.spec_from_file_location("cuda_sim", init, submodule_search_locations=[str(init.parent)])
    package = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules["cuda_sim"] = package
    spec.loader.exec_module(package)  # type: ignore[union-attr]
    import cuda_sim
    import cuda_sim._crash  # read by _exception_record
    from cuda_sim._startup import propagate

    cuda_sim.install()
    # The Python processes the repro starts join too (the environment's harness-written .pth line).
    propagate(sim_root)


def _run(spec: dict[str, Any]) -> dict[str, Any]:
    outcome: dict[str, Any] = {"status": "passed", "exit_code": 0, "exception": None, "sim": spec["sim"]}
    script = spec["script"]
    try:
        if spec["sim"]:
            _enter_simulation(spec["sim_root"])
        for shim in spec["shims"]:
            runpy.run_path(shim, run_name="__repro_shim__")
        sys.argv = [script, *spec["argv"]]
        sys.path.insert(0, str(Path(script).parent))
        runpy.run_path(script, run_name="__main__")
    except SystemExit as stop:
        code = stop.code
        if code is None or code == 0:
            pass
        elif isinstance(code, int):
            outcome.update(status="exited", exit_code=code)
        else:
            print(code, file=sys.stderr)
            outcome.update(status="exited", exit_code=1, exception={"type": "SystemExit", "module": "builtins",
                                                                     "message": str(code), "traceback": []})
    except BaseException as error:  # everything the repro raises is data, including KeyboardInterrupt
        traceback.print_exc()
        outcome.update(status="raised", exit_code=1, exception=_exception_record(error))
    return outcome


def _write_atomic(path: str, data: dict[str, Any]) -> None:
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(tmp, path)


def main() -> None:
    # Running this file puts its folder first on sys.path, where the harness's modules would shadow
    # top-level packages of the same name that a repro imports.
    here = str(Path(__file__).resolve().parent)
    sys.path[:] = [p for p in sys.path if str(Path(p or ".").resolve()) != here]
    if sys.argv[1] == "--owners":  # run once per environment, at build (harness.environments._venv_build)
        print(json.dumps(owners_record()))
        return
    spec = json.loads(Path(sys.argv[1]).read_text(encoding="utf-8"))
    if spec.get("pids"):  # the cell's process bound (its own user namespace: this counts the cell only)
        import resource

        resource.setrlimit(resource.RLIMIT_NPROC, (spec["pids"], spec["pids"]))
    started = time.perf_counter()
    outcome = _run(spec)
    outcome["duration_s"] = round(time.perf_counter() - started, 4)
    outcome["imported"] = _imported_versions(spec.get("owners"))
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        _write_atomic(spec["outcome"], outcome)
    except OSError as error:  # the harness's machinery failed (a full disk): said, and judged by the harness
        print(f"repro-matrix child runner: could not write the outcome: {error}", file=sys.stderr)
        os._exit(3)
    # Exit without interpreter teardown: library threads (process groups, gloo, dataloaders) must not
    # be able to hang or change the result after it is recorded.
    os._exit(outcome["exit_code"] if isinstance(outcome["exit_code"], int) else 1)


if __name__ == "__main__":
    main()
