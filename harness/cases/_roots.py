"""Where the cases are: ``--cases-dir``, defined once for every command that reads cases."""

from __future__ import annotations

import argparse
from pathlib import Path

from harness._exceptions import UsageError


def add_cases_dir(parser: argparse.ArgumentParser, *, repeatable: bool = True) -> None:
    """``--cases-dir DIR``: a folder of case folders (default: the checkout's cases/); repeatable unless a
    command writes into one folder (``new``)."""
    if repeatable:
        parser.add_argument("--cases-dir", action="append", type=Path, default=[], metavar="DIR",
                            help="folder of case folders (default: cases/; repeatable)")
    else:
        parser.add_argument("--cases-dir", type=Path, metavar="DIR", help="folder of case folders (default: cases/)")


def case_roots(args: argparse.Namespace) -> tuple[Path, ...]:
    """The ``--cases-dir`` folders (absolute), or the checkout's cases/; a usage error for a missing one."""
    from harness.run._backend import project_root  # the backend imports the case loader: no cycle at import

    roots = tuple(dict.fromkeys(p.resolve() for p in args.cases_dir)) or (project_root() / "cases",)
    missing = [str(p) for p in roots if not p.is_dir()]
    if missing:
        raise UsageError(f"cases folder not found: {', '.join(missing)}")
    return roots
