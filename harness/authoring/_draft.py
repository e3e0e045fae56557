"""Decide what a new case says from a parsed bug report: requirements, signature, expectations, title, imports.

``draft_case`` is the step between ``_bugreport`` (what the report says) and ``_skeleton`` (the files' text).
Whatever a report cannot say becomes a ``FILL-IN`` placeholder; each guess is said in a note or a comment.
"""

from __future__ import annotations

import keyword
import re
import sys
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness._vocabulary import TORCH_PIN, TORCH_VERSION
from harness.authoring._bugreport import BugReport, Environment, Frame
from harness.authoring._envlist import source_pin
from harness.authoring._expect import (
    _CUDA_INIT,
    _DEVICE_ERROR,
    _DEVICE_GUESS,
    _STR_DEVICE_GUESS,
    _TWO_GPUS,
    _expectations,
)
from harness.authoring._index import IndexVersions, ProjectUrls, Released, _index_pins, _reply_fix
from harness.authoring._owners import (
    DISTRIBUTIONS,
    _checkout_frame,
    _culprit,
    _frame_module,
    _importing_torch,
    _imports,
    _stdlib,
    asked_once,
    entry_frame,
    frame_owner,
    frame_packages,
    innermost_library_frame,
    own_code_names,
    own_run,
    raised_in_own_code,
    simulator_frame,
    torch_era,
)
from harness.authoring._signature import MAX_SIGNATURE, MAX_SIGNATURE_SOURCE, device_check_signature, make_signature
from harness.authoring._skeleton import CaseText, case_yaml, repro_py, template_yaml
from harness.authoring._title import (
    _import_name,
    _title,
    _title_code_name,
    _title_message,
    frameless_api,
    message_api,
    prose_api,
    said_api,
)
from harness.cases._placeholders import MARK

__all__ = ["DISTRIBUTIONS", "MAX_SIGNATURE", "MAX_SIGNATURE_SOURCE", "Draft", "IndexVersions", "ProjectUrls",
           "Released", "device_check_signature", "draft_case", "entry_frame", "frame_owner", "frame_packages",
           "innermost_library_frame", "make_signature", "message_api", "own_code_names", "prose_api",
           "simulator_frame"]

# Modules a report's code names that are never the bug's project: the standard library and the usual suspects.
_NOT_PROJECTS = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "np", "pytest", "setuptools", "pip"}


@dataclass
class Draft:
    """What ``new`` writes and says: the two files and the notes for the author."""

    case_yaml: str
    repro_py: str
    notes: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    culprit: str = ""  # the distribution the draft blames (torch when no other project's frame shows)




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
    notes += [era] if "torch" not in report.environment.pins and (era := torch_era(traceback.frames)) else []
    buggy, fix = _index_pins(report, culprit, buggy, fix, notes, (released, project_urls, versions))
    fix = _reply_fix(report, culprit, buggy, fix, notes)
    final_frames = traceback.final_frames or traceback.frames
    expect, guess = _expectations(traceback.exception_class, traceback.message,
                                  final_frames[-1].source if final_frames else "", report.ran_on,
                                  report.eight_bit or "bitsandbytes" in (culprit, *packages, *report.environment.pins))
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
    tags += ["device-placement"] if guess in (_DEVICE_GUESS, _TWO_GPUS, _STR_DEVICE_GUESS) else []
    title = _title(report, culprit, culprit_frame)
    text = CaseText(case_id, source, title, signature, shared, buggy, fix, expect, guess, tags, _upstream(report.url))
    frames = traceback.final_frames or traceback.frames
    where = _shown_frames(frames, culprit, culprit_frame, report.environment)
    final = f"{traceback.exception}: {traceback.first_message_line}".rstrip(": ")
    imports = _imports(traceback.frames) or _named_imports(report, culprit)
    distributions = {m: d for m, d in (frame_owner(f, report.environment) or ("", "") for f in traceback.frames)
                     if m in imports}
    distributions.update({m: culprit for m in imports if m not in distributions})  # the report's code imports it
    written = (m for m in (*report.modules, *report.paths) if str(canonicalize_name(m)) == culprit)
    module = next(written, _import_name(culprit).replace("-", "_"))  # as the report spells it (TTS), else a guess
    # the blamed project (named by the link), when it is a package the index has
    if culprit not in ("torch", *distributions.values()) and module.isidentifier() and module not in imports \
            and released and released(culprit) is True and not any("git+" in dist for dist, _ in buggy):
        imports, distributions[module] = [*imports, module], culprit
    owner = frame_owner(culprit_frame, report.environment) if culprit_frame else None
    owned = culprit_frame is not None and (owner is None or owner[1] == culprit)
    message = traceback.first_message_line
    api = "" if where and owned else (_title_code_name(report.title, message) or prose_api(report, culprit, message)
                                      or frameless_api(report, message, culprit) or message_api(message)
                                      or said_api(report, culprit, _title_message(traceback.exception, message)))
    return Draft(case_yaml(text, traceback), repro_py(case_id, source, imports, where, final, distributions, api,
                                                      culprit if culprit != "torch" else "", report.command),
                 notes, imports, culprit)


def _shown_frames(frames: tuple[Frame, ...], culprit: str, culprit_frame: Frame | None,
                  environment: Environment) -> list[tuple[str, Frame]]:
    """The frames the skeleton shows, outermost first: the report's own call into the libraries (the repro's starting
    point), the blamed project's first frame (the call it entered, when it is not the blamed frame), the blamed frame,
    the innermost library frame; with no library frame, the report's own frame that raised."""
    inner = innermost_library_frame(frames)
    entry = entry_frame(frames)
    entered = _entered(frames, culprit_frame, environment)
    caller = _own_caller(frames, entry) if entry is not None and entry == culprit_frame else None
    return [(label, frame) for label, frame in (
        ("The report's own call that reaches the blamed code", caller),
        ("The report's own call into the libraries", entry),
        (f"The first {culprit} frame, the call entered", entered if entered not in (entry, culprit_frame) else None),
        (f"The innermost {culprit} frame, the call that failed",
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


def _url_project(report: BugReport, notes: list[str]) -> str | None:
    """The distribution of the report's github.com link (not torch's own tracker). A repository is often named
    otherwise than its package (pytorch-image-models ships timm): when the repo name is none of the modules the
    report's own text imports or links (nor the first folder of a source path it names), the module it names most
    is taken, and the note says so; never when the frames show the repository's own package (a checkout's
    ``verl/verl/...`` calling ray: ray is named, verl is the project)."""
    match = re.match(r"https?://github\.com/[\w.-]+/(?P<repo>[\w.-]+)/", report.url)
    if not match or match["repo"].lower() in ("pytorch", "vision", "audio"):
        return None
    repo = DISTRIBUTIONS.get(match["repo"], (str(canonicalize_name(match["repo"])),))[0]  # pytorch/ignite: ignite
    own = own_code_names(report.traceback.frames)
    named = [m for m in report.modules if m not in _NOT_PROJECTS and not m.startswith("_") and m.lower() not in own]
    framed = {owner[1] for frame in report.traceback.frames if (owner := frame_owner(frame, report.environment))}
    if not named or repo in {str(canonicalize_name(m)) for m in (*named, *report.paths)} or repo in framed \
            or raised_in_own_code(report.traceback.frames):
        return repo
    module = max(dict.fromkeys(named), key=named.count)
    project = DISTRIBUTIONS.get(module, (str(canonicalize_name(module)),))[0]
    notes.append(f"the link's repository is {match['repo']}, but the report's text imports or links the module "
                 f"{module!r}: drafted as the distribution {project} (check the name on the index)")
    return project


# A dispatcher operator named in a message, "Could not run 'torchvision::roi_align' with arguments from the 'CUDA'
# backend": the namespace is the library that registers it (aten, prim and c10 are torch's own).
_OPERATOR = re.compile(r"'(?P<namespace>[A-Za-z_]\w{0,40})::\w{1,80}'")
_TORCH_NAMESPACES = frozenset({"aten", "prim", "prims", "c10", "c10d", "torch", "quantized", "_quantized", "cuda"})


def _operator_library(message: str) -> str | None:
    """The distribution whose operator the message names, when it is not torch's."""
    match = _OPERATOR.search(message)
    if match is None or match["namespace"] in _TORCH_NAMESPACES:
        return None
    return DISTRIBUTIONS.get(match["namespace"], (str(canonicalize_name(match["namespace"])),))[0]


def _blamed(report: BugReport, packages: list[str], notes: list[str]) -> tuple[str, Frame | None]:
    """The distribution the draft blames and its innermost frame: the frames' project (torch when none shows), else
    one the text cites, else the link's; a pull request is the fix of its own repository's code. A project not
    among the frames is added to ``packages``."""
    traceback = report.traceback
    frames = traceback.final_frames or traceback.frames
    culprit, culprit_frame = _culprit(frames, report.environment)
    importing = culprit_frame is not None and _importing_torch(culprit_frame)
    if culprit == "torch" and not traceback.frames and report.cited:
        culprit = str(canonicalize_name(report.cited[0]))
        notes.append(f"the report shows no frame, and it links an issue of {report.cited[0]} and names it: drafted "
                     f"as {culprit}'s bug (the report's own link is {report.url or 'none'}; check which project "
                     "fixed it)")
    elif culprit == "torch" and not traceback.frames and (project := _operator_library(traceback.message)):
        culprit = project
        notes.append(f"the report shows no frame, and its message names an operator of {project} ('{project}::...'): "
                     f"drafted as {project}'s bug (the report's own link is {report.url or 'none'})")
    elif culprit == "torch" and not importing and (project := _url_project(report, notes)):
        culprit = project
        notes.append(f"no frame of a library besides torch: the library is taken from the report's link {report.url}")
        culprit_frame = _checkout_frame(frames, project) or culprit_frame
    elif frames and culprit != "torch" and _frame_module(frames[-1]) is None and not _stdlib(frames[-1]) \
            and (project := _url_project(report, [])) and project != culprit \
            and (_checkout_frame(frames[-1:], project) or _relative(frames[-1])):
        notes.append(f"the frame that raised is the report's repository's own code ({frames[-1].path}), called by "
                     f"{culprit}: drafted as {project}'s bug, {culprit} stays pinned as what calls it")
        culprit, culprit_frame = project, frames[-1]
    elif culprit != "torch" and (caller := _installed_caller(report, frames, culprit, culprit_frame)) is not None:
        project = frame_owner(caller, report.environment)[1]  # type: ignore[index]
        how = ("hands {} tensors on mixed devices" if _DEVICE_ERROR.search(report.traceback.message) else
               "initialised CUDA before {} started its processes").format(culprit)
        notes.append(f"{project} (the report's own project, installed) {how} ({caller.path}, in {caller.function}): "
                     f"drafted as {project}'s bug, {culprit} stays pinned")
        culprit, culprit_frame = project, caller
    elif culprit != "torch" and (project := _url_project(report, [])) not in (None, culprit) \
            and (own := own_run(frames, str(project), culprit_frame, report.title)):
        notes.append(f"{own[1]}: drafted as {project}'s bug, {culprit} stays pinned as what ran it")
        culprit, culprit_frame = str(project), own[0]
    elif culprit != "torch" and (cut := _cut_short_project(report, culprit)) is not None:
        why = (f"its frame {cut[1].path} is a copy in a checkout of the link's repository" if cut[1] else
               "the report pins it (its link's project, in no frame shown)")
        notes.append(f"the traceback is cut before the frame that raised, and {why}: drafted as {cut[0]}'s bug, "
                     f"{culprit} stays pinned as what it calls")
        culprit, culprit_frame = cut
    if culprit != "torch" and "/pull/" in report.url and (fixer := _url_project(report, [])) and fixer != culprit:
        notes.append(f"the report is a pull request of {fixer}, the fix: its code is the bug's, the frames' {culprit} "
                     "stays pinned as what it calls")
        culprit, culprit_frame = fixer, None
    packages.append(culprit) if culprit not in packages else None
    return culprit, culprit_frame


def _cut_short_project(report: BugReport, culprit: str) -> tuple[str, Frame | None] | None:
    """The link's project (and its frame, if one shows) when the stored traceback stops before its raising frame (the
    exception comes from the title or prose) and either the report's own listing pins that project, which no frame
    shows (the outer framework frame shown last, transformers' Trainer.train, only called it), or a frame outside
    site-packages lies in a checkout of its repository (``ProLLaMA-main/peft/peft_model.py``: the project's copy of
    peft calling into transformers): the installed library shown innermost is not known to have raised."""
    frames = report.traceback.frames
    project = _url_project(report, [])
    if "the exception line as Python printed it" not in report.missing or not frames or project in (None, culprit):
        return None
    framed = {owner[1] for frame in frames if (owner := frame_owner(frame, report.environment))}
    pinned = report.environment.pins.get(str(project))
    if project not in framed and pinned and pinned.version:
        return str(project), None
    copied = _checkout_frame(tuple(f for f in frames if "-packages/" not in f.posix and f.posix.startswith("/")),
                             str(project))
    return (str(project), copied) if copied is not None else None


def _relative(frame: Frame) -> bool:
    """A frame of a script run by a relative path (``tools/train.py``): the checkout's own code, run from its root."""
    return not re.match(r"(?:[/~<\\]|[A-Za-z]:)", frame.path)


def _installed_caller(report: BugReport, frames: tuple[Frame, ...], culprit: str, library: Frame | None,
                      ) -> Frame | None:
    """The innermost frame of the report's own project (its link's) when that project is installed and calls the
    inner library that raised a device-placement or CUDA-state error: the caller chose the devices (whisperlivekit's
    diarize feeding a CPU chunk to nemo's featurizer on cuda) or initialised CUDA before the inner library started
    its processes (xturing's finetune and Lightning); an error of the library's own stays the library's."""
    project = _url_project(report, [])
    message = report.traceback.message
    if library is None or project in (None, culprit) \
            or not (_DEVICE_ERROR.search(message) or _CUDA_INIT.search(message)):
        return None
    for frame in reversed(frames[: frames.index(library)] if library in frames else ()):
        owner = frame_owner(frame, report.environment)
        if owner is not None and owner[1] == project and "-packages/" in frame.posix:
            return frame
    return None


def _named_imports(report: BugReport, culprit: str) -> list[str]:
    """With no frame to import from: the culprit's module when the report's own code imports it."""
    return sorted({m for m in report.modules if str(canonicalize_name(DISTRIBUTIONS.get(m, (m,))[0])) == culprit
                   and m.isidentifier() and not keyword.iskeyword(m)})


def _upstream(url: str) -> dict[str, str]:
    if not url:
        return {}
    return {"pr" if "/pull/" in url else "issue": url}


def _requirements(packages: list[str], culprit: str, environment: Environment, notes: list[str],
                  framed: set[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(requirement, comment) lists: shared by every variant, the buggy variant's, the fix variant's."""
    torch = environment.pins.get("torch")
    if torch and torch.version and not torch.version.startswith(TORCH_VERSION):
        torch_comment = (f"the report ran torch {torch.version} (report line {torch.report_line}); "
                         f"torch {TORCH_VERSION} is what runs here")
        notes.append(f"the report ran torch {torch.version}; the case pins {TORCH_PIN} (what runs here): if the "
                     "bug needs the older torch, say why in the case (or reproduce it with a patch, as "
                     "cases/var-resume does)")
    else:
        torch_comment = (f"torch {TORCH_VERSION} is what runs here"
                         + ("" if torch else " (the report lists no torch version)"))
    shared = [(TORCH_PIN, torch_comment)]
    buggy: list[tuple[str, str]] = []
    for dist in packages[1:]:
        pinned = _pin(dist, environment, notes, dist in framed, dist == culprit)
        (buggy if dist == culprit else shared).append(pinned)
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
        return f"{MARK}: {dist} {pin.version} is a development build: pin the nearest release, add a patch", where
    if version.local:
        notes.append(f"{dist} {pin.version}: the local label +{version.local} is dropped (PyPI has {version.public})")
        return f"{dist}=={version.public}", f"{where}: {pin.version}"
    return f"{dist}=={pin.version}", where
