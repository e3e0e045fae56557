"""``python -m harness.conformance``: load -> select -> fetch -> run (cpu, sim) -> compare -> report.

Exit codes: 0 every selected library ran and every difference is triaged; 1 a test failed under the
simulation without a triage entry (or a library could not run at all); 2 bad input (suites/triage file,
selection); 130 interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from harness._exceptions import HarnessError
from harness.conformance._compare import UNEXPLAINED, Comparison, compare
from harness.conformance._errors import SourceError
from harness.conformance._report import details, markdown, summary, table, write_json
from harness.conformance._runs import load_pass, run_pass
from harness.conformance._sources import build_env, fetch_sdist
from harness.conformance._suites import LIBRARIES_DIR, Library, Triage, load_libraries
from harness.run._backend import project_root


def _log(text: str) -> None:
    print(f"[conformance] {text}", flush=True)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m harness.conformance", description=(
        "Run real libraries' own CUDA-aware test suites (from their pinned PyPI sdists) once plainly on the CPU "
        "and once under pytest --cuda-sim, compare per test, and check every difference against the library "
        "file's triage."))
    parser.add_argument("--library", action="append", default=[], metavar="NAME",
                        help=f"run only this library (repeatable; default: every file of {LIBRARIES_DIR})")
    parser.add_argument("--library-file", action="append", default=[], type=Path, metavar="PATH",
                        help="a library file of your own, anywhere (repeatable); runs only these unless --library "
                             "names others too")
    parser.add_argument("--subset", action="store_true",
                        help="run each library's small 'subset:' instead of its full selection")
    parser.add_argument("--ci", action="store_true",
                        help="the tests session's CI subset: the subsets of the libraries marked 'ci: true'")
    parser.add_argument("--test", action="append", default=[], metavar="NODEID",
                        help="run these test paths / node ids instead (needs exactly one --library)")
    parser.add_argument("--recompare", action="store_true",
                        help="run nothing: compare the passes stored under --output again (after editing a triage)")
    parser.add_argument("--list", action="store_true", help="list the libraries and their selections, run nothing")
    root = project_root()  # the checkout, or the current directory for an installed harness
    default_cache = Path(os.environ.get("REPRO_MATRIX_ENVS", root / ".repro-envs")) / "conformance"
    parser.add_argument("--cache", type=Path, default=default_cache,
                        help=f"sdists and environments (default: {default_cache})")
    parser.add_argument("--output", type=Path, default=root / "reports" / "conformance",
                        help="summary.json and each pass's log, JUnit XML and records (default: reports/conformance)")
    return parser


def _own(libraries: dict[str, Library], files: Sequence[Path]) -> list[str]:
    """The libraries of the --library-file files; never every library when the files asked for were refused."""
    given = {path.resolve() for path in files}
    own = [lib.name for lib in libraries.values() if lib.path is not None and lib.path.resolve() in given]
    if given and not own:
        raise HarnessError("no --library-file could be used (each problem is printed above with its fix)")
    return own


def _select(libraries: dict[str, Library], own: list[str], args: argparse.Namespace) -> list[Library]:
    unknown = [name for name in args.library if name not in libraries]
    if unknown:
        raise HarnessError(f"unknown library {unknown[0]!r}: choose from {', '.join(libraries)} "
                           f"(or its file has a problem, printed above)")
    names = [*args.library, *own]
    if args.test and len(names) != 1:
        raise HarnessError("--test needs exactly one --library (node ids belong to one sdist)")
    chosen = [libraries[name] for name in dict.fromkeys(names)] or list(libraries.values())
    if args.ci:
        chosen = [lib for lib in chosen if lib.ci]
    if args.subset or args.ci:
        missing = [lib.name for lib in chosen if not lib.subset]
        if missing:
            raise HarnessError(f"--subset: {', '.join(missing)} has no 'subset:' in its library file")
    return chosen


def _selection(library: Library, args: argparse.Namespace) -> tuple[str, ...]:
    return tuple(args.test) or (library.subset if args.subset or args.ci else library.tests)


def _run_library(library: Library, selection: tuple[str, ...], args: argparse.Namespace,
                 triage: Triage) -> Comparison:
    if args.recompare:
        out = args.output / library.name
        return compare(library, selection, load_pass("cpu", out / "cpu"), load_pass("sim", out / "sim"), triage)
    source = fetch_sdist(library, args.cache, _log)
    venv = build_env(library, args.cache, _log)
    out = args.output / library.name
    passes = {}
    for mode in ("cpu", "sim"):
        _log(f"{library.name} [{mode}]: {len(selection)} selection item(s) from {library.sdist}=={library.version}")
        passes[mode] = run_pass(library, mode, venv, source, selection, out / mode, _log)
        p = passes[mode]
        _log(f"{library.name} [{mode}]: {len(p.results)} tests in {p.cpu_seconds:.1f} s CPU "
             f"({p.wall_seconds:.0f} s wall)")
        if not p.results:  # a collection error interrupts pytest before any test: a hollow pass, not a result
            raise SourceError(f"{library.name} [{mode}]: no test ran (a collection error?): see "
                              f"{out / mode / 'pytest.log'}")
    return compare(library, selection, passes["cpu"], passes["sim"], triage)


def _list(libraries: Sequence[Library]) -> None:
    for lib in libraries:
        print(f"{lib.name}: {lib.sdist}=={lib.version}{'  [ci]' if lib.ci else ''}  {lib.about}")
        print(f"  cuda: {lib.cuda.describe()}  file: {lib.path}")
        print(f"  full: {' '.join(lib.tests)}")
        print(f"  subset: {' '.join(lib.subset) or '-'}")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        loaded = load_libraries(extra=args.library_file)
        for problem in loaded.problems:  # a bad file skips its library, not the run
            _log(f"skipped: {problem}")
        libraries, triage = loaded.libraries, Triage.of(loaded.libraries.values())
        own = _own(libraries, args.library_file)
        chosen = _select(libraries, own, args)
        if args.list:
            _list(chosen)
            return 0
        comparisons: list[Comparison] = []
        failed: dict[str, str] = {}
        for library in chosen:
            try:
                comparisons.append(_run_library(library, _selection(library, args), args, triage))
            except SourceError as error:  # the other libraries still run
                _log(f"{library.name}: {error}")
                failed[library.name] = str(error)
        for problem in loaded.problems:
            failed[problem.path.stem] = str(problem)
        data = summary(comparisons, failed, args.subset or args.ci)
        write_json(args.output / "summary.json", data)
        (args.output / "summary.md").write_text(markdown(comparisons, failed), encoding="utf-8")
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except HarnessError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    for line in table(comparisons, failed):
        print(line)
    details(comparisons, print)
    print(f"summary: {args.output / 'summary.json'}")
    new = sum(c.count(UNEXPLAINED) for c in comparisons)
    if new:
        print(f"{new} test(s) fail under cuda-sim without a triage entry (the 'triage:' of the library's file)")
    return 1 if new or failed else 0
