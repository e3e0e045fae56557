"""validate: a filled-in draft is run before it is called valid. Whether a draft can work is known only by running
it: a repro that calls a library the report did not run, reaches the wrong code path, or imports what its
environment lacks may resolve, build and import cleanly (graded49: text2brain's report filled in with nibabel's
releases passed every check before this one). So the drafts that pass the install checks run as
``cases --case ID`` runs them, on every lane this host has, and each (case, lane) verdict other than ``confirmed``
(or ``skipped``: a lane absent here, or unsupported) refuses the draft, with the verdict's reasons and the run's
folder. The environments are the ones the install checks built; the run reuses them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from harness._exceptions import CaseFileError
from harness._vocabulary import OK_VERDICTS, Verdict
from harness.run._estimate import read_results_file
from harness.run._plan import Selection
from harness.run._workflow import UI, RunOptions, run_cases


def unconfirmed(cases: Sequence[Any], roots: Sequence[Path], say: Callable[[str], None],
                jobs: int = 1) -> list[CaseFileError]:
    """Run ``cases`` (filled-in drafts) on every lane; a refusal for each (case, lane) that does not confirm."""
    if not cases:
        return []
    output = Path(tempfile.mkdtemp(prefix="repro-validate-"))
    say(f"running {len(cases)} filled-in draft(s) as `cases --case ID` would, on every lane this host has "
        f"-> {output}")
    quiet = UI(info=say, error=say)
    run_cases(RunOptions(case_roots=tuple(roots), output=output, jobs=jobs,
                         selection=Selection(cases=tuple(case.id for case in cases))), quiet)
    found = sorted(output.glob("*/results.json"))
    results = (read_results_file(found[-1]) if found else None) or {}
    errors = [_refusal(case, verdict, output) for case in cases for verdict in results.get("verdicts", [])
              if verdict.get("case") == case.id and verdict.get("verdict") not in OK_VERDICTS]
    ran = {v.get("case") for v in results.get("verdicts", []) if v.get("verdict") != Verdict.SKIPPED}
    for case in cases:
        if case.id not in ran and not any(error.path == case.source for error in errors):
            say(f"{case.id}: not run here (every lane it expects is absent on this host or unsupported): run it "
                "where one is")
    if not errors:
        shutil.rmtree(output, ignore_errors=True)
        say(f"every draft run confirmed or was skipped: {output} removed")
    return errors


def _refusal(case: Any, verdict: dict[str, Any], output: Path) -> CaseFileError:
    return CaseFileError(
        case.source, f"the filled-in draft does not confirm on lane {verdict.get('lane')}: {verdict.get('verdict')}: "
                     f"{str(verdict.get('reason') or '')[:600]}",
        fix=f"make the repro reach the report's code path with the pinned releases (the buggy variant raises the "
            f"signature, the fix does not) or correct the expectations; the cells' logs are in {output}")
