"""Decide what a new case says from a parsed bug report: requirements, signature, expectations, title, imports.

``draft_case`` is the step between ``_bugreport`` (what the report says) and ``_skeleton`` (the files' text).
Whatever a report cannot say becomes a ``FILL-IN`` placeholder; each guess is said in a note or a comment.
"""

from __future__ import annotations

import keyword
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness._vocabulary import TORCH_PIN, TORCH_VERSION
from harness.authoring._blame import _blamed
from harness.authoring._bugreport import BugReport, Environment, Frame
from harness.authoring._cut_message import completed
from harness.authoring._envlist import source_pin
from harness.authoring._expect import (
    _TWO_GPUS,
    DEVICE_BOUND_GUESSES,
    _expectations,
    cpu_flag,
    half_run,
    multi_gpu_launch,
)
from harness.authoring._gpu_host import PIN_MEMORY_FRAME
from harness.authoring._index import IndexVersions, ProjectUrls, Released, _index_pins, _reply_fix
from harness.authoring._owners import (
    DISTRIBUTIONS,
    _imports,
    _stdlib,
    asked_once,
    entered_modules,
    entry_frame,
    frame_owner,
    frame_packages,
    innermost_library_frame,
    own_code_names,
    simulator_frame,
    torch_era,
)
from harness.authoring._said import _title_code_name, frameless_api, message_api, prose_api, said_api
from harness.authoring._signature import MAX_SIGNATURE, MAX_SIGNATURE_SOURCE, device_check_signature, make_signature
from harness.authoring._skeleton import CaseText, case_yaml, repro_py, template_yaml
from harness.authoring._title import _import_name, _title, _title_message
from harness.authoring._torch_pin import torch_requirement
from harness.cases._placeholders import MARK

__all__ = ["DISTRIBUTIONS", "MAX_SIGNATURE", "MAX_SIGNATURE_SOURCE", "Draft", "IndexVersions", "ProjectUrls",
           "Released", "device_check_signature", "draft_case", "entry_frame", "frame_owner", "frame_packages",
           "innermost_library_frame", "make_signature", "message_api", "own_code_names", "prose_api",
           "simulator_frame"]



@dataclass
class Draft:
    """What ``new`` writes and says: the two files and the notes for the author."""

    case_yaml: str
    repro_py: str
    notes: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    culprit: str = ""  # the distribution the draft blames (torch when no other project's frame shows)




def _links(project_urls: ProjectUrls | None, distribution: str, url: str) -> bool:
    """Whether the index's project of that name links the report's repository (coqui-ai/TTS's issue and PyPI's TTS)."""
    urls = project_urls(distribution) if project_urls else None
    return any(url.lower().startswith(f"{u.lower().rstrip('/')}/") for u in urls or () if "github.com/" in u.lower())


def draft_case(case_id: str, report: BugReport | None, source: str = "", released: Released | None = None,
               project_urls: ProjectUrls | None = None, versions: IndexVersions | None = None) -> Draft:
    if report is None:
        return Draft(template_yaml(case_id), repro_py(case_id, source, [], [], ""))
    traceback = report.traceback
    notes = list(report.notes)
    released = asked_once(released) if released else None
    packages = frame_packages(traceback.frames, report.environment)
    framed = set(packages)  # what the frames show (a project taken from the link is not among them)
    culprit, culprit_frame = _blamed(report, packages, notes)
    if any(simulator_frame(frame) for frame in traceback.frames):
        notes.append("the traceback passes through cuda-sim (harness/sim: the report was made under the simulator): "
                     "its frames are left out of the packages, the title and the repro")
    shared, buggy, fix = _requirements(packages, culprit, report.environment, notes, framed)
    if shared[0][0] == TORCH_PIN and (older := _older_torch_wording(traceback.message)):
        shared[0] = (f"{MARK}: {older}: {TORCH_PIN} words this message otherwise, so the signature cannot match it; "
                     "pin the torch 1.x the report ran (its wording), or widen the signature and say so", "")
    notes += [era] if "torch" not in report.environment.pins and (era := torch_era(traceback.frames)) else []
    indexed = _index_pins(report, culprit, buggy, fix, notes, (released, project_urls, versions))
    fix = _reply_fix(report, culprit, indexed[0], indexed[1], notes)
    # the title, frames and import keep the name the report's code goes by (lavis); the draft blames what it pins
    pinned_as, buggy = indexed[2], indexed[0]
    final_frames = traceback.final_frames or traceback.frames
    # DeepSpeed trains on GPUs only: a run under it ran on one, whatever the text says
    ran_on = report.ran_on or ("gpu" if "deepspeed" in (culprit, *packages, *report.environment.pins) else "")
    eight_bit = report.eight_bit or "bitsandbytes" in (culprit, *packages, *report.environment.pins)
    read = partial(_expectations, traceback.exception_class, source=final_frames[-1].source if final_frames else "",
                   ran_on=ran_on, eight_bit=eight_bit,
                   launch=multi_gpu_launch(report.command, (report.title, *report.code_names)),
                   cpu_flag=cpu_flag(report.command, report.title),
                   pinned=any(PIN_MEMORY_FRAME.search(frame.posix) for frame in traceback.frames),
                   under=_DEEPSPEED if "deepspeed" in (culprit, *packages) else "",
                   half=half_run(report.command, report.title, *report.code_names, *report.shown_calls,
                                 *(f"{frame.posix} {frame.source}" for frame in traceback.frames)))
    expect, guess = _read_lanes(read, _lane_message(traceback.message, report.title), notes)
    notes.append(f"expectations per lane are a guess ({guess}): check them against the upstream discussion")
    if guess == _TWO_GPUS:
        notes.append("the message names two GPUs: neither a one-GPU host nor cuda-sim (one simulated device) can show "
                     "it, so the draft expects 'unsupported' there; if the bug also shows as a cuda:0/cpu mix, write "
                     "the repro that way and expect 'reproduces'")
    signature, signature_note = make_signature(traceback.first_message_line, traceback.colours)
    if not traceback.first_message_line.strip():
        signature = f"{MARK}: a regex for the exception's message (the report cut it off; run the repro to read it)"
        signature_note = "the report gives no message for the exception: the signature is left to fill in"
    if signature_note:
        notes.append(signature_note)
    if report.missing:
        notes.append(f"the report lacks {', '.join(report.missing)}: the draft says what it could read"
                     + ("" if traceback.frames else "; the repro shows no frame to follow"))
    tags = [p for p in packages[1:] if re.fullmatch(r"[a-z0-9][a-z0-9._+-]{0,39}", p)]
    tags += ["device-placement"] if guess in DEVICE_BOUND_GUESSES else []
    title = _title(report, culprit, culprit_frame, indexed=lambda: bool(
        released and released(culprit) is True and _links(project_urls, culprit, report.url)))
    text = CaseText(case_id, source, title, signature, shared, buggy, fix, expect, guess, tags, _upstream(report.url))
    frames = traceback.final_frames or traceback.frames
    where = _shown_frames(frames, culprit, culprit_frame, report.environment)
    final = f"{traceback.exception}: {traceback.first_message_line}".rstrip(": ")
    imports = _imports(traceback.frames) or _named_imports(report, culprit)
    distributions = {m: d for m, d in (frame_owner(f, report.environment) or ("", "") for f in traceback.frames)
                     if m in imports}
    distributions.update({m: pinned_as for m in imports if m not in distributions})  # the report's code imports it
    written = (m for m in (*report.modules, *report.paths) if str(canonicalize_name(m)) == culprit)
    # as the report spells it (TTS), else the table's name (pytorch-ignite: ignite); never one guessed from the
    # repository's name (OpenNMT-py's package is onmt): the call's author writes that import
    module = next(written, _import_name(culprit) if _import_name(culprit) != culprit else "")
    # the blamed project (named by the link), when it is a package the index has
    if pinned_as not in ("torch", *distributions.values()) and module.isidentifier() and module not in imports \
            and released and released(pinned_as) is True and not any("git+" in dist for dist, _ in buggy):
        imports, distributions[module] = [*imports, module], pinned_as
    owner = frame_owner(culprit_frame, report.environment) if culprit_frame else None
    owned = culprit_frame is not None and (owner is None or owner[1] == culprit)
    message = traceback.first_message_line
    api = "" if where and owned else (_title_code_name(report.title, message) or prose_api(report, culprit, message)
                                      or frameless_api(report, message, culprit) or message_api(message)
                                      or said_api(report, culprit, _title_message(traceback.exception, message)))
    return Draft(case_yaml(text, traceback), repro_py(case_id, source, imports, where, final, distributions, api,
                                                      pinned_as if culprit != "torch" else "", report.command,
                                                      report.shown_calls, entered_modules(traceback.frames, imports)),
                 notes, imports, pinned_as)


def _shown_frames(frames: tuple[Frame, ...], culprit: str, culprit_frame: Frame | None,
                  environment: Environment) -> list[tuple[str, Frame]]:
    """The frames the skeleton shows, outermost first: the report's own call into the libraries (the repro's starting
    point), the blamed project's first frame (the call it entered, when it is not the blamed frame), the blamed frame,
    the innermost library frame; with no library frame, the report's own frame that raised."""
    inner = innermost_library_frame(frames)
    entry = entry_frame(frames)
    entered = _entered(frames, culprit_frame, environment)
    caller = _own_caller(frames, entry) if entry is not None and entry == culprit_frame else None
    owner = frame_owner(culprit_frame, environment) if culprit_frame and "-packages/" in culprit_frame.posix else None
    shown = owner[1] if owner else culprit  # an installed library's frame the blamed code called keeps its own name
    return [(label, frame) for label, frame in (
        ("The report's own call that reaches the blamed code", caller),
        ("The report's own call into the libraries", entry),
        (f"The first {culprit} frame, the call entered", entered if entered not in (entry, culprit_frame) else None),
        (f"The innermost {shown} frame, the call that failed",
         culprit_frame if culprit_frame not in (inner, entry) else None),
        ("The innermost library frame, where it failed", inner),
        ("The report's own code, where it failed (no library frame)", frames[-1] if frames and inner is None
         and frames[-1] != culprit_frame else None)) if frame is not None]


def _own_caller(frames: tuple[Frame, ...], frame: Frame) -> Frame | None:
    """The report's own frame that called ``frame`` (``train_epoch(...)`` in tools/train.py's main), where ``frame`` is
    both the report's call into the libraries and the blamed frame: the repro starts one call further out."""
    outer = [f for f in frames[: frames.index(frame)] if frame_owner(f) is None and not _stdlib(f)
             and f.function != "<module>"]
    return outer[-1] if outer else None


def _entered(frames: tuple[Frame, ...], frame: Frame | None, environment: Environment) -> Frame | None:
    """The outermost frame of an installed project's run of frames ending at its blamed ``frame`` (torch's and the
    standard library's frames between are passed): the project's code the caller entered, where the path to the bug
    starts (checkpoint.py's ``optimizer.load_state_dict('optimizer_state')`` before multioptim.py's ``D.items()``)."""
    owner = frame_owner(frame, environment) if frame is not None and frame in frames else None
    if frame is None or owner is None or owner[1] == "torch":
        return None
    first = frame
    for outer in reversed(frames[: frames.index(frame)]):
        outer_owner = frame_owner(outer, environment)
        if outer_owner == owner and outer.function != "<module>":  # a script's top level is the caller's, no API
            first = outer
        elif not (_stdlib(outer) or (outer_owner is not None and outer_owner[1] == "torch")):
            break
    return first


# DeepSpeed's engine (ZeRO's partitioned parameters and optimizer) runs under a distributed process group on GPUs.
_DEEPSPEED = "DeepSpeed (its ZeRO engine needs a distributed setup on GPUs; one CPU process may not build it)"


def _lane_message(message: str, title: str) -> str:
    """The message the lanes are read from: the title's whole one when the stored error line is cut inside it (the
    line "expected device cuda:1", the title "RuntimeError: expected device cuda:1 but got device cuda:0")."""
    whole = re.sub(r"^(?:\w+\.)*\w*(?:Error|Exception)\w*:\s*", "", title.strip())
    cut = message.strip()
    return whole if cut and len(whole) > len(cut) and whole.startswith(cut) else message


def _read_lanes(read: Callable[[str], tuple[dict[str, str], str]], message: str,
                notes: list[str]) -> tuple[dict[str, str], str]:
    """The lanes ``read`` gives the message, or those of the torch message a cut one starts ("Expected all tensors
    to be on the same": a device check's start) where they differ, said in a note."""
    lanes = read(message)
    if not (whole := completed(message)) or (other := read(whole)) == lanes:
        return lanes
    notes.append(f"the message is cut (\"{message.strip()}\"): its lanes are read as those of the torch message it "
                 f"starts (one wording: \"{whole}\"); the signature keeps the report's words")
    return other


def _named_imports(report: BugReport, culprit: str) -> list[str]:
    """With no frame to import from: the culprit's module when the report's own code imports it."""
    return sorted({m for m in report.modules if str(canonicalize_name(DISTRIBUTIONS.get(m, (m,))[0])) == culprit
                   and m.isidentifier() and not keyword.iskeyword(m)})


def _upstream(url: str) -> dict[str, str]:
    if not url:
        return {}
    return {"pr" if "/pull/" in url else "issue": url}


# Command-line dispatchers: their frames sit between a console script and the project's command (`svc` -> click ->
# the command's function); the repro calls that function, so their release does not decide the bug.
_CLI_DISPATCHERS = frozenset({"click", "typer", "fire", "absl-py"})


def _requirements(packages: list[str], culprit: str, environment: Environment, notes: list[str],
                  framed: set[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(requirement, comment) lists: shared by every variant, the buggy variant's, the fix variant's."""
    shared = [torch_requirement(environment, notes)]
    buggy: list[tuple[str, str]] = []
    for dist in packages[1:]:
        if dist in _CLI_DISPATCHERS and dist != culprit and dist not in environment.pins:
            notes.append(f"{dist}'s frames only dispatch the command line to the project's command: not pinned (the "
                         "repro calls the command's function)")
            continue
        pinned = _pin(dist, environment, notes, dist in framed, dist == culprit)
        (buggy if dist == culprit else shared).append(pinned)
    shared += [_pin(dist, environment, notes, False) for dist in _side_pins(environment, packages)]
    if culprit == "torch":
        fix = [(f"{MARK}: the fix as requirements: a release of a library, or remove this list and describe a "
                f"workaround with args or a patch (torch stays {TORCH_VERSION}; see cases/var-resume)", "")]
    else:
        fix = [(f"{MARK}: pin the first fixed release, e.g. {culprit}==X.Y.Z (or the documented workaround's pins)",
                "the innermost library frame is in " + culprit)]
    for conflict in environment.conflicts:
        notes.append(f"the report lists two versions of {conflict}")
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    if environment.python and environment.python.rpartition(".")[0] != here and environment.python != here:
        notes.append(f"the report ran Python {environment.python}; cells here run Python {here}: a pin too old for "
                     f"{here} has no wheel here (pin the oldest release that installs, and say so in the case)")
    return shared, buggy, fix


# The array and table libraries a report's listing states beside its package (a bug form's "PyArrow version: 8.0.0",
# a conda list's numpy and pillow): their release changes what the code receives (dtypes, formats, image modes), so a
# maintainer reproduces with them; other listed packages (the system's conda libraries) are left out, and so is a
# whole freeze (more than _SHORT_LISTING pins: an environment dump, not what the reporter picked as relevant).
_SIDE_LIBRARIES = ("numpy", "pandas", "pyarrow", "pillow", "scipy", "scikit-learn")
_SHORT_LISTING = 12


def _side_pins(environment: Environment, packages: list[str]) -> list[str]:
    if len(environment.pins) > _SHORT_LISTING:
        return []
    return [dist for dist in _SIDE_LIBRARIES if dist not in packages and (pin := environment.pins.get(dist))
            and pin.version]


# torch's message for a device string it cannot parse lists the device types it knows ("Expected one of cpu, cuda,
# mkldnn, ..., msnpu device type at start of device string: 0"): a type the current torch no longer knows dates the
# wording to an older torch.
_DEVICE_TYPES = re.compile(r"Expected one of (?P<types>[\w, ]+?) device type at start of device string")
_CURRENT_DEVICE_TYPES = frozenset({"cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                                   "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                                   "privateuseone"})


def _older_torch_wording(message: str) -> str:
    """Why the message's wording is an older torch's than the one pinned here, else ""."""
    match = _DEVICE_TYPES.search(message)
    gone = sorted({t.strip() for t in match["types"].split(",")} - _CURRENT_DEVICE_TYPES - {""}) if match else []
    return f"the message lists the device type{'s' * (len(gone) > 1)} {', '.join(gone)}, which only an older torch " \
           "knows" if gone else ""


def _pin(dist: str, environment: Environment, notes: list[str], framed: bool = True,
         reported: bool = False) -> tuple[str, str]:
    """`reported`: the project the report is about, which a version stated without a package name belongs to."""
    pin = environment.pins.get(dist)
    if pin is None and reported and environment.unnamed is not None:
        pin = environment.unnamed
        notes.append(f"{dist} {pin.version} is read from report line {pin.report_line}, which names no package: "
                     f"check it is {dist}'s")
    if pin is None:
        notes.append(f"the report lists no version of {dist}" + (" (its files are in the traceback)" if framed else ""))
        return f"{MARK}: pin the {dist} release the report ran, e.g. {dist}==X.Y.Z (the report lists none)", ""
    where = f"report line {pin.report_line}, {pin.source}"
    if not pin.version:
        return source_pin(dist, pin, notes), where
    try:
        version = Version(pin.version)
    except InvalidVersion:
        return f"{MARK}: pin {dist} (the report lists the unreadable version {pin.version!r})", where
    if version.is_devrelease:
        notes.append(f"{dist} {pin.version} is a development build (not on PyPI as such): pin the nearest release and "
                     "add the upstream change as a patch (see cases/ai-toolkit-flux-ids)")
        return (f"{MARK}: {dist} {pin.version} is a development build: pin the nearest release, e.g. {dist}==X.Y.Z, "
                "add a patch"), where
    if version.local:
        notes.append(f"{dist} {pin.version}: the local label +{version.local} is dropped (PyPI has {version.public})")
        return f"{dist}=={version.public}", f"{where}: {pin.version}"
    return f"{dist}=={pin.version}", where
