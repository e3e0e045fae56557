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

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness._vocabulary import TORCH_PIN, TORCH_VERSION
from harness.authoring._bugreport import BugReport, Environment, Frame
from harness.authoring._envlist import source_pin
from harness.authoring._expect import _DEVICE_GUESS, _STR_DEVICE_GUESS, _TWO_GPUS, _expectations
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
    renamed_index_pins,
    simulator_frame,
)
from harness.authoring._signature import MAX_SIGNATURE, MAX_SIGNATURE_SOURCE, device_check_signature, make_signature
from harness.authoring._skeleton import CaseText, case_yaml, repro_py, template_yaml
from harness.authoring._title import _import_name, _title, _title_code_name, frameless_api, message_api, prose_api
from harness.cases._placeholders import MARK

__all__ = ["DISTRIBUTIONS", "MAX_SIGNATURE", "MAX_SIGNATURE_SOURCE", "Draft", "ProjectUrls", "Released",
           "device_check_signature", "draft_case", "entry_frame", "frame_owner", "frame_packages",
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


# Whether a distribution has any release on the package index: True, False (the index says no such project) or
# None (not asked, or no answer). `new` asks the configured index; tests give a table.
Released = Callable[[str], "bool | None"]
# The URLs the package index's metadata gives for a project (home page, project URLs); None: not known (offline).
ProjectUrls = Callable[[str], "tuple[str, ...] | None"]
# The releases the package index has of a project; None: not known (not asked, offline, no answer in time).
IndexVersions = Callable[[str], "tuple[str, ...] | None"]


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
    buggy, fix = _index_pins(report, culprit, buggy, fix, notes, (released, project_urls, versions))
    fix = _reply_fix(report, culprit, buggy, fix, notes)
    final_frames = traceback.final_frames or traceback.frames
    expect, guess = _expectations(traceback.exception_class, traceback.message,
                                  final_frames[-1].source if final_frames else "", report.ran_on)
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
    inner = innermost_library_frame(frames)
    where = [(label, frame) for label, frame in (
        ("The report's own call into the libraries", entry_frame(frames)),
        (f"The innermost {culprit} frame, the call that failed", culprit_frame if culprit_frame != inner else None),
        ("The innermost library frame, where it failed", inner),
        ("The report's own code, where it failed (no library frame)", frames[-1] if frames and inner is None
         and frames[-1] != culprit_frame else None)) if frame is not None]
    final = f"{traceback.exception}: {traceback.first_message_line}".rstrip(": ")
    imports = _imports(traceback.frames) or _named_imports(report, culprit)
    distributions = {m: d for m, d in (frame_owner(f, report.environment) or ("", "") for f in traceback.frames)
                     if m in imports}
    distributions.update({m: culprit for m in imports if m not in distributions})  # the report's code imports it
    written = (m for m in (*report.modules, *report.paths) if str(canonicalize_name(m)) == culprit)
    module = next(written, _import_name(culprit).replace("-", "_"))  # as the report spells it (TTS), else a guess
    # the blamed project (named by the link), when it is a package the index has
    if culprit not in ("torch", *distributions.values()) and module.isidentifier() and module not in imports \
            and released and released(culprit) is True:
        imports, distributions[module] = [*imports, module], culprit
    owner = frame_owner(culprit_frame, report.environment) if culprit_frame else None
    owned = culprit_frame is not None and (owner is None or owner[1] == culprit)
    api = "" if where and owned else (_title_code_name(report.title, traceback.first_message_line)
                            or prose_api(report, culprit, traceback.first_message_line)
                            or frameless_api(report, traceback.first_message_line, culprit)
                            or message_api(traceback.first_message_line))
    return Draft(case_yaml(text, traceback), repro_py(case_id, source, imports, where, final, distributions, api),
                 notes, imports, culprit)


def _url_project(report: BugReport, notes: list[str]) -> str | None:
    """The distribution of the report's github.com link (not torch's own tracker). A repository is often named
    otherwise than its package (pytorch-image-models ships timm): when the repo name is none of the modules the
    report's own text imports or links (nor the first folder of a source path it names), the module it names most
    is taken, and the note says so."""
    match = re.match(r"https?://github\.com/[\w.-]+/(?P<repo>[\w.-]+)/", report.url)
    if not match or match["repo"].lower() in ("pytorch", "vision", "audio"):
        return None
    repo = DISTRIBUTIONS.get(match["repo"], (str(canonicalize_name(match["repo"])),))[0]  # pytorch/ignite: ignite
    own = own_code_names(report.traceback.frames)
    named = [m for m in report.modules if m not in _NOT_PROJECTS and not m.startswith("_") and m.lower() not in own]
    if not named or repo in {str(canonicalize_name(m)) for m in (*named, *report.paths)}:
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
            and (project := _url_project(report, [])) and project != culprit and _checkout_frame(frames[-1:], project):
        notes.append(f"the frame that raised is the report's repository's own code ({frames[-1].path}), called by "
                     f"{culprit}: drafted as {project}'s bug, {culprit} stays pinned as what calls it")
        culprit, culprit_frame = project, frames[-1]
    elif culprit != "torch" and (project := _url_project(report, [])) not in (None, culprit) \
            and (own := own_run(frames, str(project), culprit_frame)):
        notes.append(f"{own[1]}: drafted as {project}'s bug, {culprit} stays pinned as what ran it")
        culprit, culprit_frame = str(project), own[0]
    if culprit != "torch" and "/pull/" in report.url and (fixer := _url_project(report, [])) and fixer != culprit:
        notes.append(f"the report is a pull request of {fixer}, the fix: its code is the bug's, the frames' {culprit} "
                     "stays pinned as what it calls")
        culprit, culprit_frame = fixer, None
    packages.append(culprit) if culprit not in packages else None
    return culprit, culprit_frame


def _named_imports(report: BugReport, culprit: str) -> list[str]:
    """With no frame to import from: the culprit's module when the report's own code imports it."""
    return sorted({m for m in report.modules if str(canonicalize_name(m)) == culprit and m.isidentifier()
                   and not keyword.iskeyword(m)})


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


def _own_repository(url: str, culprit: str) -> str:
    """The issue's repository ("NVIDIA/apex") when it is the blamed project's own, else ""."""
    repo = re.match(r"https?://github\.com/(?P<repo>[\w.-]+/(?P<name>[\w.-]+))", url)
    return repo["repo"] if repo and str(canonicalize_name(repo["name"])) == culprit else ""


def _other_owner(culprit: str, repo: str, urls: tuple[str, ...] | None, notes: list[str]) -> str:
    """The index's project page when the index's project of that name is not the repository's (PyPI's ``apex`` is
    not NVIDIA's): its URLs name a code host but not the repository, or do not name the repository's owner."""
    if urls is None:
        notes.append(f"not checked that the package index's {culprit} is {repo}'s project (its metadata did not "
                     "answer): if it is another project's, pin commits of the repository instead")
        return ""
    squeezed = [re.sub(r"[^a-z0-9]", "", url.lower()) for url in urls]
    owner = re.sub(r"[^a-z0-9]", "", repo.partition("/")[0].lower())
    if not urls or any(f"/{repo.lower()}" in url.lower().removesuffix(".git") for url in urls):
        return ""
    hosted = any(re.search(r"\b(?:github\.com|gitlab\.com|bitbucket\.org)/", url) for url in urls)
    return urls[0] if hosted or not any(owner in url for url in squeezed) else ""


def _unreleased(culprit: str, url: str, buggy: list[tuple[str, str]], notes: list[str],
                other: str = "") -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A project the index does not have, or whose name there is another project's (``other``: that project's
    page): the report ran its repository's code, so both variants pin commits."""
    source = _commit_source(url)
    absent = (f"the package index's {culprit} is another project ({other})" if other else
              f"the package index has no project named {culprit}")
    notes.append(f"{absent}: the report ran its repository's code, so the "
                 f"variants pin commits ({culprit} @ {source}@COMMIT), or copy the code the repro needs")
    missing = (f"{culprit}'s project is not on the package index" if other else
               f"{culprit} has no release on the package index")
    pin = [(f'{MARK}: {missing}: pin the commit the report ran, e.g. '
            f'"{culprit} @ {source}@<commit>"', "") if dist.startswith(MARK) and culprit in dist else (dist, why)
           for dist, why in buggy]
    fix = [(f'{MARK}: the commit that fixed it, e.g. "{culprit} @ {source}@<commit>"', "")]
    return pin, fix


def _index_pins(report: BugReport, culprit: str, buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
                notes: list[str], index: tuple[Released | None, ProjectUrls | None, IndexVersions | None],
                ) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The culprit's pins after what the package index says: no such project, another project of that name, or no
    such release (each: commit pins of the report's repository)."""
    released, project_urls, versions = index
    if culprit == "torch":
        return buggy, fix
    if culprit not in report.environment.pins and released and released(culprit) is False:
        return _unreleased(culprit, report.url, buggy, notes)
    if culprit not in report.environment.pins and project_urls and (repo := _own_repository(report.url, culprit)) \
            and (owner := _other_owner(culprit, repo, project_urls(culprit), notes)):
        if renamed := renamed_index_pins(culprit, repo, project_urls, (buggy, fix), notes):
            return renamed  # the repository's package is on the index under another name
        return _unreleased(culprit, report.url, buggy, notes, owner)
    if (stated := _stated_version(culprit, buggy)) and versions is not None:
        return _release_on_index(culprit, stated, versions(culprit), report.url, buggy, fix, notes)
    return buggy, fix


def _reply_fix(report: BugReport, culprit: str, buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
               notes: list[str]) -> list[tuple[str, str]]:
    """The fix a reply names: a commit of the culprit's own repository, else a release a reply installed and said
    solved it (another library's: the culprit's buggy pins stay, the fix adds that release)."""
    commit = next((fix[7:] for fix in report.fixes if fix.startswith("commit:")), "")
    if commit and culprit != "torch" and _own_repository(report.url, culprit):
        notes.append(f"the fix pin is the commit a reply names ({commit}): check it is the fix, not a later one")
        return [(f"{culprit} @ {_commit_source(report.url)}@{commit}", "the commit a reply names as the fix")]
    pin = next((fix for fix in report.fixes if "==" in fix), "")
    if not pin:
        return fix
    notes.append(f"the fix pin {pin} is what a reply installed and said solved it: check it is the fix")
    if str(canonicalize_name(pin.partition("==")[0])) == culprit:
        return [(pin, "the release a reply installed and said solved it")]
    return [*buggy, (pin, "a reply installed this release and said it solved the bug")]


def _stated_version(culprit: str, buggy: list[tuple[str, str]]) -> str:
    return next((dist.partition("==")[2] for dist, _ in buggy if dist.startswith(f"{culprit}==")), "")


def _release_on_index(culprit: str, stated: str, known: tuple[str, ...] | None, url: str,
                      buggy: list[tuple[str, str]], fix: list[tuple[str, str]],
                      notes: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A release the report states that the index does not have (a GitHub-only tag, fish-speech's v1.1.0 where PyPI
    has 0.1.0): the report ran the repository's code, so both variants pin commits; unknown: said, kept."""
    if known is None:
        notes.append(f"{culprit} {stated} was not checked against the package index (no answer): check it is there")
        return buggy, fix
    if not _beyond(stated, known):
        return buggy, fix
    source = _commit_source(url)
    latest = f" (its releases there end at {known[-1]})"
    notes.append(f"the package index has no {culprit} {stated}{latest}: the report ran a release of the repository "
                 f"that is not on the index, so the variants pin commits ({culprit} @ {source}@COMMIT)")
    tag = (f'{MARK}: the index has no {culprit} {stated}: pin the commit of its tag, '
           f'e.g. "{culprit} @ {source}@<commit>"')
    pin = [(tag, why) if dist == f"{culprit}=={stated}" else (dist, why) for dist, why in buggy]
    return pin, [(f'{MARK}: the commit that fixed it, e.g. "{culprit} @ {source}@<commit>"', "")]


def _commit_source(url: str) -> str:
    """The git URL of the report's repository, for a commit pin."""
    repo = re.match(r"https?://github\.com/[\w.-]+/[\w.-]+", url)
    return f"git+{repo.group()}" if repo else "git+https://github.com/OWNER/REPO"


def _beyond(stated: str, known: tuple[str, ...]) -> bool:
    """Whether a stated release is newer than every release the index lists (the index lists only releases that
    install on this Python, so an older release it omits may still exist: only a newer one is taken as missing)."""
    try:
        return bool(known) and Version(stated) > max(Version(version) for version in known)
    except InvalidVersion:
        return False


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
