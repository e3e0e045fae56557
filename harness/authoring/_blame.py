"""Which project a draft blames: the frames' project, else the one the report's text or link names (``_blamed``)."""

from __future__ import annotations

import re
import sys

from packaging.utils import canonicalize_name

from harness.authoring._bugreport import BugReport, Frame
from harness.authoring._expect import _CUDA_INIT, _DEVICE_ERROR, _DTYPE
from harness.authoring._owners import (
    DISTRIBUTIONS,
    LAUNCHERS,
    _checkout_frame,
    _checkout_name,
    _culprit,
    _frame_module,
    _importing_torch,
    _stdlib,
    frame_owner,
    names_checkout,
    own_code_names,
    own_run,
    raised_in_own_code,
)

# Modules a report's code names that are never the bug's project: the standard library and the usual suspects.
_NOT_PROJECTS = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "np", "pytest", "setuptools", "pip"}


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
    named = [m for m in report.modules if m not in _NOT_PROJECTS and not m.startswith("_") and m.lower() not in own
             and m not in report.unused_imports]
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
    elif culprit != "torch" and (filed := _copied(report, culprit, culprit_frame, notes, packages)
                                 or _filed_project(report, frames, culprit, culprit_frame, notes)) is not None:
        culprit, culprit_frame = filed
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


def _copied(report: BugReport, culprit: str, frame: Frame | None, notes: list[str],
            packages: list[str]) -> tuple[str, Frame] | None:
    """:func:`_vendored_copy`, said in a note; the library leaves ``packages`` (no release of it ran)."""
    if frame is None or (copy := _vendored_copy(report, culprit, frame)) is None:
        return None
    notes.append(f"the frame that raised ({frame.path}) is {culprit}'s code copied into a checkout of the link's "
                 f"repository (its own fork, not the installed library): drafted as {copy[0]}'s bug; {culprit} is not "
                 "pinned (the fork ships with the project's commit)")
    packages.remove(culprit) if culprit in packages else None
    return copy


def _vendored_copy(report: BugReport, culprit: str, frame: Frame | None) -> tuple[str, Frame] | None:
    """The link's project and the blamed library's frame when that frame is no install of the library but a copy inside
    a checkout of the link's repository (``~/VisionChat/transformers/models/llama/modeling_llama.py``,
    ``LLaVA-main/llava/transformers/...``): a project's own fork of the library, edited, so the library's release is
    not the code that ran. Not the repository's own package (``~/OpenNMT-py/onmt``), nor an install under
    site-packages."""
    project = _url_project(report, [])
    if frame is None or project in (None, culprit) or "-packages/" in frame.posix \
            or _same_project(str(project), culprit):
        return None
    module = frame_owner(frame, report.environment)
    folders = frame.posix.split("/")[:-1]
    if module is None or module[0] not in folders or _same_project(str(project), module[0]):
        return None
    inside = folders[:folders.index(module[0])]  # the checkout holds the library's folder, not the reverse
    if not any(names_checkout(_checkout_name(folder), str(project)) for folder in inside if folder):
        return None
    # the project's own frame that called into its copy names its API (the copy's frames read as the library's)
    frames = report.traceback.final_frames or report.traceback.frames
    callers = [f for f in frames[:frames.index(frame)] if frame_owner(f, report.environment) is None
               and not _stdlib(f) and _checkout_frame((f,), str(project))] if frame in frames else []
    return str(project), callers[-1] if callers else frame


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


def _filed_project(report: BugReport, frames: tuple[Frame, ...], culprit: str, library: Frame | None,
                   notes: list[str]) -> tuple[str, Frame | None] | None:
    """The project the report is filed on, and its frame, when the library's frames only show where it handed over
    to that project's code (a placement error): its trainer loop called by the project, or a traceback stopping at
    torch's Module call with no frame of the project's installed code."""
    if (caller := _loop_caller(report, frames, culprit, library)) is not None:
        project = str(_url_project(report, []))
        loop = library.function if library else "its loop"
        notes.append(f"{culprit}'s frames are its training loop only ({loop}), called by {project}'s own code "
                     f"({caller.path}, in {caller.function}), whose model and data the loop ran: drafted as "
                     f"{project}'s bug (the report is filed on its repository), {culprit} stays pinned")
        return project, caller
    if (cut := _cut_at_module(report, frames, culprit)) is not None:
        notes.append(f"the traceback stops at torch's Module call ({frames[-1].function}): the module that raised is "
                     f"not shown, no frame is {cut}'s installed code and the report is filed on {cut}: drafted as "
                     f"{cut}'s bug (its model or setup placed the tensors), {culprit} stays pinned")
        own = _checkout_frame(tuple(frame for frame in frames if "-packages/" not in frame.posix), cut)
        return cut, own or library
    if (filed := _fragment_project(report, culprit)) is not None:
        notes.append(f"the only frames shown are {culprit}'s installed code, a fragment cut before any caller (no "
                     f"script or project frame), and the report is filed on {filed}, not on {culprit}: drafted as "
                     f"{filed}'s bug (its code called {culprit}: check which side is at fault), {culprit} stays "
                     "pinned")
        return filed, library
    return None


def _fragment_project(report: BugReport, culprit: str) -> str | None:
    """The link's project when the report pastes only a fragment of an installed library's frames (DeepSpeed's ZeRO
    linear ``forward`` and its error line, filed on the model's repository): no frame outside site-packages, none of
    the project's, no script's top level (the stack is cut before its callers), the error line right below them, and
    the message is about what the library was handed (a loop or launcher innermost only called the code that raised:
    ``_loop_caller``'s and ``own_run``'s to judge).
    The report is filed on the project, whose code called the library; the library is blamed when the report is
    filed on it."""
    frames = report.traceback.frames
    project = _url_project(report, [])
    if not frames or project in (None, culprit, "torch") or "/pull/" in report.url \
            or "the exception line as Python printed it" in report.missing or _looping(frames[-1]) \
            or not _handed_over(report, frames[-1]) \
            or _same_project(str(project), culprit) \
            or any("-packages/" not in frame.posix or frame.function == "<module>" for frame in frames):
        return None
    owners = {owner[1] for frame in frames if (owner := frame_owner(frame, report.environment))}
    return None if project in owners else str(project)


def _looping(frame: Frame) -> bool:
    """A trainer's loop or a launcher (``Trainer.train``, ``fit``, Lightning's ``_run``): it ran code not shown."""
    name = frame.function.rpartition(".")[2]
    return bool(_TRAINER_LOOP.search(frame.posix)) or name in LAUNCHERS or name in _LOOPS


_LOOPS = frozenset({"train", "fit", "inner_training_loop", "_inner_training_loop", "train_loop", "training_loop"})


def _handed_over(report: BugReport, innermost: Frame) -> bool:
    """Whether the message is about the tensors the library was handed: a dtype mismatch its op met (not its own
    ``raise``/``assert``), or a placement error raised in torch's layers below the library's module (it passed the
    caller's input on); a placement error on the library's own line (its buffers) stays the library's."""
    message = report.traceback.message
    if _DTYPE.search(message):
        return not _RAISES.match(innermost.source)
    owner = frame_owner(innermost, report.environment)
    return bool(_DEVICE_ERROR.search(message)) and owner is not None and owner[1] == "torch"


# The library's own check (``raise ValueError(...)``, ``assert ...``): its message, not the tensors it was handed.
_RAISES = re.compile(r"\s*(?:raise|assert)\b")


def _same_project(repository: str, distribution: str) -> bool:
    """Whether a repository ships the distribution under another name (pytorch/rl torchrl, dreamquark-ai/tabnet
    pytorch-tabnet, schedule_free schedulefree): one name, squeezed, holds the other."""
    repo, dist = (re.sub(r"[-_.]", "", name.lower()) for name in (repository, distribution))
    return repo in dist or dist in repo


# An installed framework's training loop (transformers' Trainer.train, its inner loop and step): it runs the model, the
# data and the trainer subclass its caller built, so a placement error below it is the caller's to fix.
# accelerate's find_executable_batch_size wraps that loop (Trainer.train calls the loop through it).
_TRAINER_LOOP = re.compile(r"-packages/(?:transformers/trainer(?:_seq2seq)?|accelerate/utils/memory)\.py$")
# A notebook's cell (IPython's "Cell In[23]", "<ipython-input-5-...>"): the code the report ran, in no package.
_CELL = re.compile(r"^(?:In\s*\[\d*\]|<ipython-input-[\w-]+>)$")


def _loop_caller(report: BugReport, frames: tuple[Frame, ...], culprit: str, library: Frame | None) -> Frame | None:
    """The link's project's own frame (a checkout of its repository, or the notebook cell the report ran from its
    notebooks) that called an installed trainer's loop, when the
    loop's frames are all the library shows (its innermost frame is the loop's, the traceback ends or is cut below it)
    and the message is a device-placement or CUDA-state error: LLaMA-Factory's ``run_dpo`` calling transformers'
    ``Trainer.train``, filed on LLaMA-Factory. A library frame past its loop (the modeling code) keeps the library."""
    project = _url_project(report, [])
    message = report.traceback.message
    if library is None or library not in frames or project in (None, culprit) \
            or not (_DEVICE_ERROR.search(message) or _CUDA_INIT.search(message)):
        return None
    start = frames.index(library) + 1
    while start > 0 and _TRAINER_LOOP.search(frames[start - 1].posix):
        start -= 1
    if start in (0, frames.index(library) + 1):
        return None
    caller, loop = frames[start - 1], frames[start: frames.index(library) + 1]
    own = _checkout_frame((caller,), str(project)) is not None or _CELL.match(caller.path) is not None
    looped = {owner[1] for frame in loop if (owner := frame_owner(frame, report.environment))}
    return caller if "-packages/" not in caller.posix and own and project not in looped else None


_MODULE_CALL = re.compile(r"torch/nn/modules/module\.py$")


def _cut_at_module(report: BugReport, frames: tuple[Frame, ...], culprit: str) -> str | None:
    """The link's project when the traceback stops at torch's ``Module.__call__`` (the module whose forward raised is
    cut off: CGCCP_2023's BIVI model under scvi-tools' TrainingPlan), the message is a placement error, and no frame
    is that project's installed code: the project's model, or its setup of the library's, placed the tensors."""
    project = _url_project(report, [])
    if not frames or project in (None, culprit, "torch") or not _MODULE_CALL.search(frames[-1].posix) \
            or not _DEVICE_ERROR.search(report.traceback.message):
        return None
    owners = {owner[1] for frame in frames if (owner := frame_owner(frame, report.environment))}
    return None if project in owners else str(project)
