"""The case's torch pin from the torch release the report ran: that release where it can install here, else the
torch that runs here with a FILL-IN that names the report's release and says why it cannot be pinned."""

from __future__ import annotations

import re
import sys

from packaging.version import InvalidVersion, Version

from harness._vocabulary import TORCH_PIN, TORCH_VERSION
from harness.authoring._bugreport import Environment
from harness.cases._placeholders import MARK

# The first torch release with wheels for each CPython (cpXY wheels on PyPI): an older torch cannot install on it.
_FIRST_TORCH = {(3, 8): "1.4.0", (3, 9): "1.7.1", (3, 10): "1.11.0", (3, 11): "2.0.0", (3, 12): "2.2.0",
                (3, 13): "2.5.0"}
_RELEASE = re.compile(r"\d+\.\d+(?:\.\d+)?")


def torch_requirement(environment: Environment, notes: list[str]) -> tuple[str, str]:
    """(requirement, comment) for torch: the report's release when this Python has a wheel of it (the bug may need
    it), the torch that runs here when the report states none (or a series, a pre-release, a later one), else a
    FILL-IN naming the report's release and why it cannot be pinned here. A differing release is said in ``notes``."""
    torch = environment.pins.get("torch")
    if not (torch and torch.version) or torch.version.startswith(TORCH_VERSION):
        return TORCH_PIN, f"torch {TORCH_VERSION} is what runs here" + ("" if torch else " (the report lists no "
                                                                           "torch version)")
    stated, line = torch.version, torch.report_line
    release = _installable(stated)
    if release == "":
        notes.append(f"the report ran torch {stated}; the case pins {TORCH_PIN} (what runs here): if the bug needs "
                     "the older torch, say why in the case (or reproduce it with a patch, as cases/var-resume does)")
        return TORCH_PIN, f"the report ran torch {stated} (report line {line}); torch {TORCH_VERSION} is what runs here"
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if release is None:
        notes.append(f"the report ran torch {stated}, which has no wheel for Python {here}: the torch pin is left to "
                     "fill in")
        first = _FIRST_TORCH.get(sys.version_info[:2], "")
        named = match.group() if (match := _RELEASE.match(stated)) else stated
        return (f"{MARK}: the report ran torch {stated} (report line {line}); torch=={named} has no wheel for Python "
                f"{here}{f' (the first torch with one is {first})' if first else ''}, so it cannot be pinned here: "
                f"keep {TORCH_PIN} (what runs here) and, if the bug needs the older torch, reproduce its behaviour "
                "with a patch (as cases/var-resume does) and say why in the case"), ""
    notes.append(f"the report ran torch {stated}; the case pins torch=={release}, the report's release (it has a "
                 f"wheel for Python {here}): if the bug shows on {TORCH_PIN} too, pin that (it installs from the "
                 "local wheel)")
    return f"torch=={release}", f"the report ran torch {stated} (report line {line})"


def _installable(stated: str) -> str | None:
    """The stated torch's release (``2.0.1`` of ``2.0.1+cu118``) when this Python has a wheel of it; None when the
    release is older than the first with one; "" when it is no plain release (a series, a pre-release, an unknown
    later one) or this Python is not in the table."""
    match = _RELEASE.match(stated)
    first = _FIRST_TORCH.get(sys.version_info[:2])
    try:
        version = Version(stated.split("+")[0])
    except InvalidVersion:
        return ""
    if match is None or first is None or version.is_prerelease or version.is_devrelease:
        return ""
    if version < Version(first):
        return None
    return match.group() if version <= Version(TORCH_VERSION) else ""
