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
from harness.authoring._skeleton import CaseText, case_yaml, repro_py, template_yaml
from harness.cases._placeholders import MARK

# Module folder (site-packages/<folder>) -> the distributions that install it, usual one first; the report's
# own listing picks among them (opencv-python-headless over opencv-python when that is what it lists).
# Any other folder is taken as its own distribution name (huggingface_hub -> huggingface-hub).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "PIL": ("pillow", "pillow-simd"),
    "sklearn": ("scikit-learn",),
    "skimage": ("scikit-image",),
    "yaml": ("pyyaml",),
    "cv2": ("opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"),
    "bs4": ("beautifulsoup4",),
    "attr": ("attrs",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "git": ("gitpython",),
    "jwt": ("pyjwt",),
    "google": ("protobuf", "google-auth", "google-api-core"),  # a namespace: the listing decides
    "lycoris": ("lycoris-lora",),
    "open_clip": ("open-clip-torch",),
    "pytorch_lightning": ("pytorch-lightning", "lightning"),
    "lightning_fabric": ("lightning-fabric", "lightning"),
    "faiss": ("faiss-cpu", "faiss-gpu"),
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu"),
    "mmcv": ("mmcv", "mmcv-full"),
    "_pytest": ("pytest",),
    "pkg_resources": ("setuptools",),
    "torchgen": ("torch",),
    "mmseg": ("mmsegmentation",),
    "mmcls": ("mmcls",),
    "functorch": ("torch",),
    "ignite": ("pytorch-ignite",),  # PyPI's "ignite" is another project (Apache Ignite's client)
}
# Import packages of ML projects often run from a source checkout whose folder is named otherwise
# (~/projects/open-mmlab/mmdetection/mmdet/...): a folder of that name is taken as that project's package.
_CHECKOUT_PACKAGES = frozenset({
    "mmdet", "mmcv", "mmengine", "mmrotate", "mmseg", "mmpose", "mmocr", "mmdet3d", "mmpretrain", "mmcls", "mmyolo",
    "mmagic", "mmaction", "detectron2", "ultralytics", "segment_anything", "timm", "open_clip", "transformers",
    "diffusers", "accelerate", "peft", "trl", "deepspeed", "lightning", "pytorch_lightning", "torchvision",
    "torchaudio", "fairseq", "xformers", "bitsandbytes", "einops", "vllm", "sentence_transformers", "k_diffusion",
    "torchtune", "axolotl", "unsloth", "lycoris", "torchmetrics", "apex"})
# Modules a report's code names that are never the bug's project: the standard library and the usual suspects.
_NOT_PROJECTS = frozenset(sys.stdlib_module_names) | {"torch", "numpy", "np", "pytest", "setuptools", "pip"}
_NOT_PACKAGES = frozenset({"_distutils_hack", "__pycache__", "nvidia", "_virtualenv"})
_SITE = re.compile(r"(?:^|/)(?:site|dist)-packages/(?P<rest>.+)$", re.IGNORECASE)
_NOT_PINS = frozenset({"torch", "python", "cuda", "version"})
_HUB = re.compile(r"(?:^|/)torch/hub/(?P<folder>[^/]+)/.")
# Folders that hold a project's copy of another library (``<proj>/third_party/timm/...``, ``<proj>/_vendor/x``):
# the code below them is the project's, whatever library it was copied from.
_VENDORED = re.compile(r"^(?:_?vendor(?:ed|s)?|third[_-]?party|3rd[_-]?party|3rdparty|externals?|extern)$", re.I)
# Repeated folder names that are not a project's checkout: /home/user/user/..., data/data, src/src
_NOT_CHECKOUTS = re.compile(r"^(?:home|users?|root|src|lib|data|code|projects?|work|tmp|tests?|scripts?|tools)$", re.I)
# cuda-sim's own frames (a report made on a CPU host under `cuda-sim`/`pytest --cuda-sim` ends in one): the
# simulator re-raises the op's error there, so it is neither the bug's library nor the report's own code.
_SIMULATOR = re.compile(r"(?:^|/)(?:harness/sim|cuda_sim)/[^/]+\.py$")
_DEVICE_ERROR = re.compile(
    r"same device|different device|at least two devices|device type|Input type \(.*\) and weight type"
    r"|\bon (?:the )?(?:cpu|cuda|gpu|meta)\b.*\b(?:cpu|cuda|gpu|meta)\b|\bdevices?\b.*\b(?:cpu|cuda:?\d*|gpu)\b"
    r"|\b(?:cpu|cuda:?\d*|gpu)\b.*\bdevices?\b|Cannot access accelerator device"
    r"|expected (?:CPU|CUDA) \(got (?:CPU|CUDA)\)|backend (?:CPU|CUDA) but got backend", re.IGNORECASE)
_GPU_ONLY = re.compile(
    r"out of memory|CUDA error|CUDNN_STATUS|cuDNN error|CUBLAS_STATUS|NCCL|device-side assert"
    r"|illegal memory access|CUDA driver|no kernel image"
    r"|\blib(?:cuda|cudart|cublas\w*|cufft|cudnn\w*|nccl|cusparse|curand|cusolver|nvrtc|nvJitLink)\b", re.IGNORECASE)
# A check of the GPU's generation ("FlashAttention only supports Ampere GPUs or newer", "compute capability 7.0"):
# the result depends on which GPU runs it, and no lane here has an old one.
_GPU_MODEL = re.compile(r"only supports? \w+ GPUs? or newer|compute capability|\bsm_?\d{2,3}\b", re.IGNORECASE)
# A CUDA kernel failed: the message names the CUDA backend, or the innermost frame calls an extension's kernel
# (flash_attn_cuda.fwd(...), flash_attn_gpu.varlen_fwd(...)): the cpu lane never reaches that call.
# flash-attn's messages ("FlashAttention only support fp16 and bf16 data type") come from its CUDA-only kernels.
_CUDA_BACKEND = re.compile(r"from the 'CUDA' backend|\bCUDA kernel\b|^FlashAttention\b")
_KERNEL_CALL = re.compile(r"\b\w*_(?:cuda|gpu)\w*\.\w+\(")
# A device given as a str where a torch.device is read ('str' object has no attribute 'type'): every lane shows it
# (the repro passes "cpu" as a str just as "cuda"), and it is a device-handling bug.
_STR_DEVICE = re.compile(r"'str' object has no attribute '(?:type|index)'")
_SIM_GAP = ("unsupported: a guess — device memory, CUDA kernels and NCCL are not simulated "
            "(cuda-sim computes on the CPU; see README.md)")


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


def draft_case(case_id: str, report: BugReport | None, source: str = "", released: Released | None = None,
               project_urls: ProjectUrls | None = None) -> Draft:
    if report is None:
        return Draft(template_yaml(case_id), repro_py(case_id, source, [], [], ""))
    traceback = report.traceback
    notes = list(report.notes)
    packages = frame_packages(traceback.frames, report.environment)
    framed = set(packages)  # what the frames show (a project taken from the link is not among them)
    culprit, culprit_frame = _blamed(report, packages, notes)
    if any(simulator_frame(frame) for frame in traceback.frames):
        notes.append("the traceback passes through cuda-sim (harness/sim: the report was made under the simulator): "
                     "its frames are left out of the packages, the title and the repro")
    shared, buggy, fix = _requirements(packages, culprit, report.environment, notes, framed)
    if culprit != "torch" and culprit not in report.environment.pins and released and released(culprit) is False:
        buggy, fix = _unreleased(culprit, report.url, buggy, notes)
    elif culprit != "torch" and culprit not in report.environment.pins and project_urls and \
            (repo := _own_repository(report.url, culprit)):
        owner = _other_owner(culprit, repo, project_urls(culprit), notes)
        if owner:
            buggy, fix = _unreleased(culprit, report.url, buggy, notes, owner)
    final_frames = traceback.final_frames or traceback.frames
    expect, guess = _expectations(traceback.exception_class, traceback.message,
                                  final_frames[-1].source if final_frames else "")
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
    api = "" if where else (_title_code_name(report.title, traceback.first_message_line)
                            or prose_api(report, culprit, traceback.first_message_line)
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
    elif culprit == "torch" and not importing and (project := _url_project(report, notes)):
        culprit = project
        notes.append(f"no frame of a library besides torch: the library is taken from the report's link {report.url}")
        culprit_frame = _checkout_frame(frames, project) or culprit_frame
    elif frames and culprit != "torch" and _frame_module(frames[-1]) is None and not _stdlib(frames[-1]) \
            and (project := _url_project(report, [])) and project != culprit and _checkout_frame(frames[-1:], project):
        notes.append(f"the frame that raised is the report's repository's own code ({frames[-1].path}), called by "
                     f"{culprit}: drafted as {project}'s bug, {culprit} stays pinned as what calls it")
        culprit, culprit_frame = project, frames[-1]
    if culprit != "torch" and "/pull/" in report.url and (fixer := _url_project(report, [])) and fixer != culprit:
        notes.append(f"the report is a pull request of {fixer}, the fix: its code is the bug's, the frames' {culprit} "
                     "stays pinned as what it calls")
        culprit, culprit_frame = fixer, None
    packages.append(culprit) if culprit not in packages else None
    return culprit, culprit_frame


def own_code_names(frames: tuple[Frame, ...]) -> set[str]:
    """Lower-cased names of the module files of the report's own code that its frames show (no installed project's,
    not the standard library's): a module the text imports by such a name (``from slip import ...`` with
    ``/src/slip.py`` in the frames) is a file of the repository's own tree, not a distribution (a distribution is a
    package folder: a checkout's ``mamba_ssm/`` stays the project's)."""
    return {frame.posix.rpartition("/")[2].rpartition(".")[0].lower() for frame in frames
            if frame_owner(frame) is None and not _stdlib(frame) and not simulator_frame(frame)}


def _checkout_frame(frames: tuple[Frame, ...], project: str) -> Frame | None:
    """The innermost frame run from a checkout of the link's repository (``~/ws/code/crat-pred/model/x.py``): the
    project's own code, though no folder of it is an importable package."""
    for frame in reversed(frames):
        if any(str(canonicalize_name(folder)) == project for folder in frame.posix.split("/")[:-1] if folder):
            return frame
    return None


def _named_imports(report: BugReport, culprit: str) -> list[str]:
    """With no frame to import from: the culprit's module when the report's own code imports it."""
    return sorted({m for m in report.modules if str(canonicalize_name(m)) == culprit and m.isidentifier()
                   and not keyword.iskeyword(m)})


def _upstream(url: str) -> dict[str, str]:
    if not url:
        return {}
    return {"pr" if "/pull/" in url else "issue": url}


def frame_packages(frames: tuple[Frame, ...], environment: Environment) -> list[str]:
    """Distributions whose files appear in the frames (any install kind), outermost first, torch first."""
    found: list[str] = ["torch"]
    for frame in frames:
        owner = frame_owner(frame, environment)
        if owner is not None and owner[1] not in found:
            found.append(owner[1])
    return found


def simulator_frame(frame: Frame) -> bool:
    return bool(_SIMULATOR.search(frame.posix))


def _frame_module(frame: Frame) -> str | None:
    """The import package a frame's file belongs to (site-/dist-packages or a source checkout), if any."""
    owner = frame_owner(frame)
    return owner[0] if owner else None


def frame_owner(frame: Frame, environment: Environment | None = None) -> tuple[str, str] | None:
    """(import package, distribution) of the project a frame's file belongs to, whatever the install kind:
    site-/dist-packages (pip, conda, a venv), an editable or source checkout (``~/mmrotate/mmrotate/...``,
    ``~/dev/segment-anything/segment_anything/...``), or torch.hub's cache (``hub/<owner>_<repo>_<ref>/...``,
    where the package is the repository: its folders are not importable by name). None: the report's own
    code, the standard library, cuda-sim's frames."""
    posix = frame.posix
    if simulator_frame(frame) or _stdlib(frame):
        return None
    if match := _SITE.search(posix):
        module = _site_module(match["rest"])
    elif match := _HUB.search(posix):
        repo = match["folder"].partition("_")[2].rpartition("_")[0] or match["folder"]
        return (repo, str(canonicalize_name(repo))) if re.fullmatch(r"[\w.-]{1,80}", repo) else None
    elif frame.cut and not posix.startswith("/") and "/" in posix:
        top = posix.split("/")[0]  # what the paste kept of site-packages/<package>/...
        module = top if _package_name(top) and not _NOT_CHECKOUTS.search(top) and not _VENDORED.match(top) else None
    else:
        module = _checkout_module(posix, environment)
    if module is None:
        return None
    candidates = DISTRIBUTIONS.get(module, (str(canonicalize_name(module)),))
    pins = environment.pins if environment else {}
    return module, next((c for c in candidates if c in pins), candidates[0])


def _site_module(rest: str) -> str | None:
    parts = [p for p in rest.split("/") if p]
    while parts and (parts[0].endswith((".egg", ".egg-link")) or parts[0].startswith("__editable__")):
        parts.pop(0)
    if not parts:
        return None
    top = parts[0] if len(parts) > 1 else parts[0].partition(".")[0]
    return top if _package_name(top) else None


def _package_name(name: str) -> bool:
    return name.isascii() and name.isidentifier() and name not in _NOT_PACKAGES and len(name) <= 60


def _checkout_module(posix: str, environment: Environment | None) -> str | None:
    """A source checkout's package: the folder that repeats its checkout's name (``mmrotate/mmrotate``,
    ``segment-anything/segment_anything``, ``vllm/src/vllm``), or a folder named like a package the report
    lists or a known ML project's package (``open-mmlab/mmdetection/mmdet``)."""
    folders = [p for p in posix.split("/")[:-1] if p and p not in (".", "..")]
    vendored = next((index for index, folder in enumerate(folders) if _VENDORED.match(folder)), None)
    if vendored is not None:
        return _vendoring_project(folders[:vendored], environment)
    known = set(environment.pins) if environment else set()
    for index in range(len(folders) - 1, 0, -1):
        name = folders[index]
        if not _package_name(name):
            continue
        above = [folders[index - 1]] + ([folders[index - 2]] if folders[index - 1] == "src" and index > 1 else [])
        if canonicalize_name(above[-1]) == canonicalize_name(name) and not _NOT_CHECKOUTS.search(name):
            return name
    for name in folders[1:]:
        if name in _CHECKOUT_PACKAGES or (_package_name(name) and str(canonicalize_name(name)) in known - _NOT_PINS):
            return name
    return None


def _vendoring_project(folders: list[str], environment: Environment | None) -> str | None:
    """The project whose tree holds a vendored copy (``folders``: those above the vendoring folder): its package, as a
    checkout's would be found, else the folder that holds the vendoring one; None: the report's own code."""
    holder = folders[-1] if folders else ""
    return _checkout_module("/".join([*folders, "x.py"]), environment) or (
        holder if _package_name(holder) and not _NOT_CHECKOUTS.search(holder) else None)


def _culprit(frames: tuple[Frame, ...], environment: Environment) -> tuple[str, Frame | None]:
    """The project of the innermost frame that is neither torch's nor the standard library's (torch when there is
    none), and that frame."""
    if frames and _importing_torch(frames[-1]):
        return "torch", frames[-1]  # the library only imported torch: torch's install failed
    for frame in reversed(frames):
        owner = frame_owner(frame, environment)
        if owner is not None and owner[1] != "torch":
            return owner[1], frame
    return "torch", innermost_library_frame(frames)


def _importing_torch(frame: Frame) -> bool:
    """The failure is torch's own import (its native libraries did not load), whoever imported it."""
    return bool(re.search(r"(?:^|/)torch/__init__\.py$", frame.posix)) and frame.function in ("<module>",
                                                                                             "_load_global_deps")


def innermost_library_frame(frames: tuple[Frame, ...]) -> Frame | None:
    return next((f for f in reversed(frames) if _frame_module(f) is not None), None)


def entry_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The report's own code calling into the libraries: the last frame outside site-packages before them."""
    inner = innermost_library_frame(frames)
    if inner is None:
        return None
    outside = [f for f in frames[: frames.index(inner)]
               if _frame_module(f) is None and not _stdlib(f) and not simulator_frame(f)]
    return outside[-1] if outside else None


def _stdlib(frame: Frame) -> bool:
    return bool(re.search(r"/lib/python\d[\d.]*/[^/]+\.py$|<frozen |^<string>$", frame.posix))


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
        pinned = _pin(dist, environment, notes, dist in framed)
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
    repo = re.match(r"https?://github\.com/[\w.-]+/[\w.-]+", url)
    source = f"git+{repo.group()}" if repo else "git+https://github.com/OWNER/REPO"
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


def _pin(dist: str, environment: Environment, notes: list[str], framed: bool = True) -> tuple[str, str]:
    pin = environment.pins.get(dist)
    if pin is None:
        notes.append(f"the report lists no version of {dist}" + (" (its files are in the traceback)" if framed else ""))
        return f"{MARK}: pin the {dist} release the report ran, e.g. {dist}==X.Y.Z (the report lists none)", ""
    where = f"report line {pin.report_line}, {pin.source}"
    if not pin.version:
        notes.append(f"{dist} came from a source install ({pin.origin}): pin the nearest release and add the "
                     "upstream change as a patch (see cases/ai-toolkit-flux-ids)")
        return f"{MARK}: {dist} was installed from {pin.origin}: pin the nearest release, add a patch", where
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


_TWO_GPUS = "a device error between two GPUs"
_DEVICE_GUESS = "a device-placement error"
_CUDA_INDEX = re.compile(r"\bcuda:(\d{1,3})\b")


_GPU_MODEL_GUESS = "a check of the GPU's generation"
_KERNEL_GUESS = "a CUDA kernel's error"
_STR_DEVICE_GUESS = "a device given as a str"


def _expectations(exception: str, message: str, source: str = "") -> tuple[dict[str, str], str]:
    """Per-lane expectations from the message (and the innermost frame's source line): a guess, said so."""
    message = message[:MAX_SIGNATURE_SOURCE * 4]  # the message's head decides; its patterns scan it more than once
    if len(set(_CUDA_INDEX.findall(message))) >= 2:
        gap = "unsupported: needs two GPUs (the message names {}); {}"
        named = " and ".join(sorted({f"cuda:{i}" for i in _CUDA_INDEX.findall(message)})[:2])
        return {"cpu": "passes", "cuda": gap.format(named, "the cuda lane has one"),
                "cuda-sim": gap.format(named, "cuda-sim simulates one device")}, _TWO_GPUS
    if _GPU_MODEL.search(message):
        gap = "unsupported: the message is about the GPU's generation; {}"
        return {"cpu": gap.format("the cpu lane has no GPU kernel to run"),
                "cuda": gap.format("the cuda lane's GPU may be newer than the report's (say which GPU shows it)"),
                "cuda-sim": gap.format("cuda-sim runs no GPU kernel")}, _GPU_MODEL_GUESS
    if _GPU_ONLY.search(message) or exception in ("OutOfMemoryError", "CudaError"):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": _SIM_GAP}, "a GPU runtime error"
    if _CUDA_BACKEND.search(message) or _KERNEL_CALL.search(source):
        return {"cpu": "unsupported: the failing call is a CUDA kernel; the cpu lane does not reach it",
                "cuda": "reproduces", "cuda-sim": _SIM_GAP}, _KERNEL_GUESS
    if _STR_DEVICE.search(message):
        return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, _STR_DEVICE_GUESS
    if _DEVICE_ERROR.search(message):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}, _DEVICE_GUESS
    return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, "not a device error"


# An absolute path's folders ("/home/u/.local/lib/x.so" -> "/home/u/.local/lib/"): the reporter's machine's.
_FOLDERS = r"(?<![\w.:/])(?:/|~/|[A-Za-z]:\\)[^\s:'\"]*[/\\]"
# Parts of a message that differ between the report's run and a tiny repro: (pattern, regex written for it).
_VARIES = re.compile(
    r"(?P<device>\b(?:cuda|xpu|npu|hpu|mps|meta|privateuseone):\d+)"
    r"|(?P<gpu>\bGPU \d+)"
    r"|(?P<address>\b0x[0-9a-fA-F]{4,})"
    r"|(?P<size>torch\.Size\(\[[\d, ]*\]\))"
    r"|(?P<ints>\[\d+(?:, ?\d+)+\]|\(\d+(?:, ?\d+)+,?\))"
    r"|(?P<matmul>\b\d+x\d+\b)"
    r"|(?P<memory>\b\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)\b)"
    r"|(?P<paren>\(\d+\))")
_GENERAL = {"gpu": r"GPU \d+", "address": r"0x[0-9a-fA-F]+", "size": r"torch\.Size\(\[[\d, ]*\]\)",
            "matmul": r"\d+x\d+", "memory": r"\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)", "paren": r"\(\d+\)"}
MAX_SIGNATURE_SOURCE = 200
MAX_SIGNATURE = 1000


# torch words a failed wrapper device check two ways: "... found at least two devices, cuda:0 and cpu! (when checking
# argument for argument ARG in method M)" (torch 2.7 and older) and "... got ARG is on cpu, different from other
# tensors on cuda:0 (when checking argument in method M)" (newer, e.g. 2.13). A case pins torch 2.13 whatever the
# report ran, so its signature must match the wording of either. torch 1.x spelt "arugment" and named the method
# without its dispatch key ("wrapper_addmm" where 2.x says "wrapper_CUDA_addmm").
_DEVICE_CHECK = (
    re.compile(r"Expected all tensors to be on the same device, but found at least two devices, \S+ and \S+! "
               r"\(when checking ar(?:gu|ug)ment for argument (?P<arg>\w+) in method (?P<method>\w+)\)"),
    re.compile(r"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on \S+, different from other "
               r"tensors on \S+ \(when checking argument in method (?P<method>\w+)\)"))


def device_check_signature(message: str) -> str | None:
    """For torch's wrapper device-check message: a regex matching it in either torch's wording."""
    match = next((m for pattern in _DEVICE_CHECK if (m := pattern.search(message))), None)
    if match is None:
        return None
    arg, method = match["arg"], match["method"]
    if method.startswith("wrapper_") and not method.startswith("wrapper_CUDA_"):
        method = "wrapper_(?:CUDA_)?" + method.removeprefix("wrapper_")
    return (r"Expected all tensors to be on the same device, but (?:found at least two devices, \S+ and \S+!"
            rf"|got {arg} is on \S+, different from other tensors on \S+) \(when checking ar(?:gu|ug)ment "
            rf"(?:for argument {arg} )?in method {method}\)")


def make_signature(message: str, colours: tuple[tuple[int, int], ...] = ()) -> tuple[str, str]:
    """A regex for the message's first line: literal text escaped, varying parts generalised. ``colours``: spans
    where the report had terminal colour codes; the real message holds them, so the regex keeps clear of them."""
    colour_note = ""
    if colours:
        message, colour_note = _colour_free(message, colours)
    signature, note = _plain_signature(message)
    return signature, "; ".join(n for n in (colour_note, note) if n)


def _colour_free(message: str, colours: tuple[tuple[int, int], ...]) -> tuple[str, str]:
    """The text before the first colour code, or the longest colour-free piece when that one is short."""
    bounds = [0, *(edge for span in colours for edge in span), len(message)]
    pieces = [message[start:stop].strip() for start, stop in zip(bounds[::2], bounds[1::2], strict=True)]
    first = pieces[0]
    chosen = first if len(first) >= 24 else max(pieces, key=len)
    if not chosen:
        return message, ""
    where = "before the first one" if chosen is first else "of the longest piece without them"
    return chosen, (f"the report's exception message has terminal colour codes ({len(colours)}; the raised message "
                    f"holds them, the report's text not): the signature matches the text {where}")


def _plain_signature(message: str) -> tuple[str, str]:
    device_check = device_check_signature(message[:MAX_SIGNATURE_SOURCE * 2])
    if device_check:
        return device_check, ("the signature matches torch's device-check message as older (2.7) and newer (2.13) "
                              "torch word it")
    signature, note = _signature(message)
    while len(signature) > MAX_SIGNATURE:  # the schema's bound; only a message dense with numbers gets here
        message = message[: len(message) * 2 // 3]
        signature, _ = _signature(message)
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    return signature, note


def _signature(message: str) -> tuple[str, str]:
    note = ""
    message = re.sub(_FOLDERS, "\x00", message)  # the reporter's folders: any folders match (\S*) in their place
    if len(message) > MAX_SIGNATURE_SOURCE:
        cut = max(message.rfind(mark, 0, MAX_SIGNATURE_SOURCE) for mark in (". ", "! ", "; ", ", ", " "))
        message = message[: cut if cut > 40 else MAX_SIGNATURE_SOURCE]
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    if not message:
        return r"^$", "the report's exception has no message: the signature matches an empty one"
    pieces, last = [], 0
    for match in _VARIES.finditer(message):
        pieces.append(_escape(message[last:match.start()]))
        kind = match.lastgroup or ""
        if kind == "device":
            pieces.append(re.escape(match.group().partition(":")[0]) + r":\d+")
        elif kind == "ints":
            pieces.append(r"\[[\d, ]*\]" if match.group().startswith("[") else r"\([\d, ]*\)")
        else:
            pieces.append(_GENERAL[kind])
        last = match.end()
    pieces.append(_escape(message[last:]))
    return "".join(pieces).replace("\x00", r"\S*"), note


def _escape(text: str) -> str:
    """Escape regex metacharacters only (re.escape also escapes spaces, which reads badly in YAML)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)


def _title(report: BugReport, culprit: str, frame: Frame | None) -> str:
    """Library, API and symptom: the API is the culprit's innermost function (the call a maintainer knows; dunders
    and forward/apply plumbing are skipped outward), else a code name in the issue's title; the
    symptom is the message's first sentence (or, with no message, the issue title from the exception's name on)."""
    traceback = report.traceback
    message = _title_message(traceback.exception, traceback.first_message_line)
    if not traceback.first_message_line and (named := _title_from(report.title, traceback.exception_class)):
        message = named
    owner = frame_owner(frame, report.environment) if frame else None
    function = _api(traceback.final_frames or traceback.frames, frame, owner, report) if frame else ""
    function = function or ("" if frame else _title_code_name(report.title, message)
                            or prose_api(report, culprit, message))
    library = owner[0] if owner and owner[1] == culprit else _import_name(culprit)  # what a maintainer writes
    where = f"{library} {function}: " if function else f"{library}: "
    title = where + message
    return title if len(title) <= 200 else title[:196].rstrip() + " ..."


def _import_name(distribution: str) -> str:
    """The module a distribution is imported as, where the table says it differs (pytorch-ignite: ignite)."""
    modules = [m for m, dists in DISTRIBUTIONS.items() if dists[0] == distribution and distribution != "torch"]
    return modules[0] if len(modules) == 1 else distribution


# Function names that say nothing of the API: autograd and nn.Module plumbing, and decorators' wrappers (a function
# defined in another, ``_defaults_from_env_vars.<locals>.insert_env_defaults``, is one too).
_PLUMBING = frozenset({"forward", "backward", "apply"})
_WRAPPERS = frozenset({"wrapper", "wrapped", "inner", "decorate_context", "new_fun"})
# The callable a source line calls first (``trainer = pl.Trainer(**params)`` -> Trainer).
_SOURCE_CALL = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)\(")


def _wrapper(function: str) -> bool:
    return "<locals>" in function or function in _WRAPPERS


def _api(frames: tuple[Frame, ...], frame: Frame, owner: tuple[str, str] | None, report: BugReport) -> str:
    """The innermost function of the culprit's frames that is neither a dunder (``__init__``), plumbing nor a
    decorator's wrapper, walking outward (else the innermost named one: a model's own forward). A private helper names
    the failing call. When the culprit's frames are only wrappers, the API is what its caller's line calls (the
    decorated callable: ``pl.Trainer(...)`` -> Trainer)."""
    chain = [frame] + [f for f in reversed(frames[: frames.index(frame)])
                       if frame_owner(f, report.environment) == owner] if frame in frames else [frame]
    named = [f.function for f in chain if f.function and not f.function.startswith(("__", "<"))]
    unwrapped = [name for name in named if not _wrapper(name)]
    found = next((name for name in unwrapped if name not in _PLUMBING), unwrapped[0] if unwrapped else "")
    if found or not named or chain[-1] not in frames:
        return found
    outermost = frames.index(chain[-1])
    call = _SOURCE_CALL.search(frames[outermost - 1].source) if outermost else None
    return call["name"] if call and not call["name"].startswith("__") else ""


# A code name in an issue title: `backticked`, or a snake_case name, dotted or not (env.set_info_dict_reader); a
# keyword argument ("elementwise_affine=False") is what the API was given, not the API.
_CODE_NAME = re.compile(r"`(?P<tick>[\w.:]{3,80})`|(?<![\w.:])(?P<snake>(?:[A-Za-z]\w*\.)*[A-Za-z]\w*_\w+(?:\.\w+)*)"
                        r"\b(?!\s*=(?!=))")


def _title_code_name(title: str, message: str) -> str:
    """For a report without frames: the API the issue's title names (the last part of a dotted name)."""
    for match in _CODE_NAME.finditer(title):
        name = (match["tick"] or match["snake"]).replace("::", ".").rpartition(".")[2]
        if name and name not in message and not name.endswith(("Error", "Exception")):
            return name
    return ""


def prose_api(report: BugReport, culprit: str, message: str = "") -> str:
    """For a report without frames: the first API its prose writes as inline code (the last part of a dotted
    name), else as a plain word the report's code calls; neither a module nor the library's own name, an exception,
    a version nor a word of the message."""
    skip = {str(canonicalize_name(m)) for m in (*report.modules, *report.paths, culprit)}
    for code in (*report.code_names, *(f"{name}()" for name in report.called_names)):
        root, _, rest = code.removesuffix("()").partition(".")
        others = (m for m in report.modules if str(canonicalize_name(m)) != culprit)
        if rest and root in ("torch", "np", "numpy", *others):
            continue  # another library's API (`torch.device`)
        name = code.removesuffix("()").rpartition(".")[2]
        if "." in code and name.lower() in _FILE_SUFFIXES:
            continue  # a file name (`requirements.txt`), not an API
        if len(name) >= 3 and name.isidentifier() and str(canonicalize_name(name)) not in skip \
                and not _STRONG_NAME.search(name) and not keyword.iskeyword(name) and name not in message \
                and (code.endswith(")") or "_" in name or "." in code or re.search(r"[a-z][A-Z0-9]", name)):
            return name
    return ""


# A call the message names: "GRPOConfig.__init__() got an unexpected keyword argument 'top_p'" -> GRPOConfig.
_MESSAGE_CALL = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")


def message_api(message: str) -> str:
    """For a report without frames whose prose names no API: the callable its message names (its class, for a
    dunder method), else nothing."""
    match = _MESSAGE_CALL.search(message)
    parts = [part for part in match["name"].split(".") if not part.startswith("__")] if match else []
    return parts[-1] if parts else ""


_FILE_SUFFIXES = frozenset({"txt", "py", "json", "yaml", "yml", "md", "cfg", "toml", "ini", "sh", "ipynb", "pt",
                            "pth", "bin", "ckpt", "csv", "log", "safetensors", "onnx", "zip", "whl"})
_STRONG_NAME = re.compile(r"(Error|Exception|Warning)$|^(self|cls|torch|cuda|cpu|True|False|None|pip|conda)$")


def _title_from(title: str, exception: str) -> str:
    """The issue title from the exception's name on ("NotImplementedError while trying to train YoloV8")."""
    at = title.find(exception)
    return " ".join(title[at:].split()).strip(" .") if at >= 0 else ""


# What a title does not keep from a message: addresses and object ids that differ per run, and the markdown
# (bold, code) that wrapped an exception named in prose.
_TITLE_JUNK = re.compile(rf"{_FOLDERS}(?=\S)|\s*\bat 0x[0-9a-fA-F]+\b|\b0x[0-9a-fA-F]{6,}\b|[*_`]{1,3}$")
_LONG_TITLE = 120


def _title_message(exception: str, message: str) -> str:
    """The message's first line, cleaned, its first sentence when long; a bare key or name (KeyError:
    'best_loss') says its exception too."""
    text = _TITLE_JUNK.sub("", " ".join(message.split())).strip(" .*`")
    text = text.strip("_") if text.startswith("__") and text.endswith("__") else text.rstrip("_")  # bold, not dunder
    if not text:
        return exception.rpartition(".")[2]
    if len(text) <= 40 and re.fullmatch(r"['\"]?[\w.\-/]+['\"]?", text):
        return f"{exception.rpartition('.')[2]} {text}"
    if len(text) > _LONG_TITLE and (end := re.search(r"[.!?](?=\s+[A-Z'\"])", text)) and end.start() >= 20:
        return text[: end.start() + 1]
    return text


def _imports(frames: tuple[Frame, ...]) -> list[str]:
    modules: list[str] = []
    for frame in frames:
        module = None if _HUB.search(frame.posix) else _frame_module(frame)  # torch.hub.load imports those
        if module and module not in modules and DISTRIBUTIONS.get(module) != ("torch",) and module != "torch" \
                and not keyword.iskeyword(module) and len(module) <= 40:
            modules.append(module)
    return sorted(modules, key=str.lower)
