"""Which project a traceback frame's file belongs to (site-packages, a source checkout, torch.hub's cache, a
vendored copy), the project a draft blames, and the modules its repro imports."""

from __future__ import annotations

import keyword
import re
import time
from collections.abc import Callable

from packaging.utils import canonicalize_name

from harness.authoring._bugreport import Environment, Frame
from harness.authoring._prose import CHECKOUT_FOLDERS
from harness.cases._distributions import DISTRIBUTIONS as DISTRIBUTIONS  # re-exported: _draft, _title read it here

# Import packages of ML projects often run from a source checkout whose folder is named otherwise
# (~/projects/open-mmlab/mmdetection/mmdet/...): a folder of that name is taken as that project's package.
_CHECKOUT_PACKAGES = frozenset({
    "mmdet", "mmcv", "mmengine", "mmrotate", "mmseg", "mmpose", "mmocr", "mmdet3d", "mmpretrain", "mmcls", "mmyolo",
    "mmagic", "mmaction", "detectron2", "ultralytics", "segment_anything", "timm", "open_clip", "transformers",
    "diffusers", "accelerate", "peft", "trl", "deepspeed", "lightning", "pytorch_lightning", "torchvision",
    "torchaudio", "fairseq", "xformers", "bitsandbytes", "einops", "vllm", "sentence_transformers", "k_diffusion",
    "torchtune", "axolotl", "unsloth", "lycoris", "torchmetrics", "apex"})
_NOT_PACKAGES = frozenset({"_distutils_hack", "__pycache__", "nvidia", "_virtualenv"})
_SITE = re.compile(r"(?:^|/)(?:site|dist)-packages/(?P<rest>.+)$", re.IGNORECASE)
_NOT_PINS = frozenset({"torch", "python", "cuda", "version"})
_HUB = re.compile(r"(?:^|/)torch/hub/(?P<folder>[^/]+)/.")
# Folders that hold a project's copy of another library (``<proj>/third_party/timm/...``, ``<proj>/_vendor/x``):
# the code below them is the project's, whatever library it was copied from.
_VENDORED = re.compile(r"^(?:_?vendor(?:ed|s)?|third[_-]?party|3rd[_-]?party|3rdparty|externals?|extern)$", re.I)
# Repeated folder names that are not a project's checkout: /home/user/user/..., data/data, src/src
_NOT_CHECKOUTS = re.compile(r"^(?:home|users?|root|src|lib|data|code|projects?|work|tmp|tests?|scripts?|tools)$", re.I)
# Functions that start or loop a run (accelerate/torchrun/deepspeed launchers, a console entry point, Lightning's
# trainer loop): never the API a maintainer names, whatever package holds them.
LAUNCHERS = frozenset({"launch", "launch_command", "deepspeed_launcher", "multi_gpu_launcher", "simple_launcher",
                       "elastic_launch", "launch_agent", "run", "_run", "_run_stage", "_call_and_handle_interrupt",
                       "_wrapping_function", "_launch", "entrypoint", "cli", "_run_module_as_main", "_run_code"})
# cuda-sim's own frames (a report made on a CPU host under `cuda-sim`/`pytest --cuda-sim` ends in one): the
# simulator re-raises the op's error there, so it is neither the bug's library nor the report's own code.
_SIMULATOR = re.compile(r"(?:^|/)(?:harness/sim|cuda_sim)/[^/]+\.py$")


def own_code_names(frames: tuple[Frame, ...]) -> set[str]:
    """Lower-cased names of the module files of the report's own code that its frames show (no installed project's,
    not the standard library's): a module the text imports by such a name (``from slip import ...`` with
    ``/src/slip.py`` in the frames) is a file of the repository's own tree, not a distribution (a distribution is a
    package folder: a checkout's ``mamba_ssm/`` stays the project's)."""
    return {frame.posix.rpartition("/")[2].rpartition(".")[0].lower() for frame in own_frames(frames)}


def own_frames(frames: tuple[Frame, ...]) -> list[Frame]:
    """The frames of the report's own code (no installed project's, not the standard library's nor cuda-sim's)."""
    return [frame for frame in frames
            if frame_owner(frame) is None and not _stdlib(frame) and not simulator_frame(frame)]


def raised_in_own_code(frames: tuple[Frame, ...]) -> bool:
    """Whether the innermost frame is the report's own code and not an import there (``File "metrics.py"``,
    ``self.weight += weight.sum()``): the error is its code's, whatever library its text names; an import that
    fails is the imported library's."""
    return bool(frames) and frames[-1] in own_frames(frames) and not _IMPORT_LINE.match(frames[-1].source)


_IMPORT_LINE = re.compile(r"\s*(?:from\s+\S+\s+)?import\s")


def _checkout_frame(frames: tuple[Frame, ...], project: str) -> Frame | None:
    """The innermost frame run from a checkout of the link's repository (``~/ws/code/crat-pred/model/x.py``): the
    project's own code, though no folder of it is an importable package."""
    for frame in reversed(frames):
        if any(names_checkout(_checkout_name(folder), project) for folder in frame.posix.split("/")[:-1] if folder):
            return frame
    return None


def _checkout_name(folder: str) -> str:
    """The repository a checkout's folder is named after: a GitHub archive unpacks to ``<repo>-main``/``-master``."""
    return str(canonicalize_name(re.sub(r"-(?:main|master)$", "", folder, flags=re.I)))


def own_run(frames: tuple[Frame, ...], project: str, library: Frame | None,
            title: str = "") -> tuple[Frame | None, str] | None:
    """Where the link's project, not the blamed library, ran the bug's code (its frame, and why): a launcher's frames
    only (accelerate, torchrun: the worker's exception, not the launcher's code); a checkout of its repository whose
    own environment installed the library, from any of its scripts when the library's frame is a launcher or trainer
    loop running them (Lightning's ``_run``), else from a script at the checkout's root (an application calling what
    it bundles); a script the issue's title places the error in (``... in lightning_train_net.py``) is the link's
    project's own wherever it was copied."""
    if library is None:
        return None
    looping = library.function.rpartition(".")[2] in LAUNCHERS
    if looping and all(f.function.rpartition(".")[2] in LAUNCHERS | {"main", "<module>"} for f in frames[-2:]):
        return None, f"the frames are {library.function}'s, a launcher's, which ran {project}'s code that failed"
    if (caller := _framework_caller(frames, project, library, title)) is not None:
        return caller, f"{caller.path} is {project}'s own code (a checkout of it), calling the framework that raised"
    script = _checkout_script(frames, project, library, looping)
    return (script, f"{script.path} is {project}'s own code, run with what its checkout installed") if script else None


# Installed training frameworks: the code that calls them is a project's, which the framework runs as told.
_FRAMEWORKS = re.compile(r"-packages/(?:accelerate|lightning|pytorch_lightning|lightning_fabric)/")


def _framework_caller(frames: tuple[Frame, ...], project: str, library: Frame, title: str) -> Frame | None:
    """The frame that calls into an installed framework (accelerate, Lightning) when it lies in a checkout of the
    link's repository (``/mnt/d/x/Cogvideo/finetune/trainer.py`` for zai-org/CogVideo), else none."""
    index = next((i for i, frame in enumerate(frames) if frame is library), None)
    if index is None or not _FRAMEWORKS.search(library.posix):
        return None
    while index > 0 and _FRAMEWORKS.search(frames[index - 1].posix):
        index -= 1
    caller = frames[index - 1] if index else None
    if caller is None or "-packages/" in caller.posix:
        return None
    script = caller.posix.rpartition("/")[2]
    titled = bool(title) and re.search(rf"(?<![\w./-]){re.escape(script)}\b", title) is not None
    return caller if titled or project in map(_checkout_name, caller.posix.split("/")[:-1]) else None


def _checkout_script(frames: tuple[Frame, ...], project: str, library: Frame, anywhere: bool) -> Frame | None:
    """The innermost frame of a script of a checkout of the link's repository (at its root, ``~/ai/alltalk_tts/
    finetune.py``, or ``anywhere``: ``piper-master/src/python/piper_train/__main__.py``) whose own environment, inside
    that checkout, installed the blamed library (``~/ai/alltalk_tts/env/lib/python3.11/site-packages/whisper/``)."""
    for frame in reversed(frames):
        folders = frame.posix.split("/")[:-1]
        roots = ["/".join(folders[: index + 1]) for index, folder in enumerate(folders)
                 if (_checkout_name(folder) if anywhere else str(canonicalize_name(folder))) == project
                 and (anywhere or index == len(folders) - 1)]
        if roots and "-packages/" not in frame.posix and "-packages/" in library.posix \
                and library.posix.startswith(roots[-1] + "/"):
            return frame
    return None


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
        module = top if _package_name(top) and not _NOT_CHECKOUTS.search(top) and not _VENDORED.match(top) \
            and top.lower() not in CHECKOUT_FOLDERS else None  # utils/scheduler.py: a checkout's folder
    else:
        module = _checkout_module(posix, environment)
    if module is None:
        return None
    candidates = DISTRIBUTIONS.get(module, (str(canonicalize_name(_EXAMPLES.sub("", module))),))
    pins = environment.pins if environment else {}
    return module, next((c for c in candidates if c in pins), candidates[0])


# A project's examples shipped as a top-level package beside its own (brevitas_examples in brevitas): the same
# distribution, which has no project of the examples' name.
_EXAMPLES = re.compile(r"(?<=[a-z0-9])_examples?$", re.IGNORECASE)


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
    user = _user_name(folders)
    for index in range(len(folders) - 1, 0, -1):
        name = folders[index]
        if not _package_name(name) or name == user:
            continue
        above = [folders[index - 1]] + ([folders[index - 2]] if folders[index - 1] == "src" and index > 1 else [])
        if names_checkout(above[-1], name) and not _NOT_CHECKOUTS.search(name) and not _cased_clone(above[-1], name):
            return name
    for name in folders[1:]:
        if name in _CHECKOUT_PACKAGES or (_package_name(name) and str(canonicalize_name(name)) in known - _NOT_PINS):
            return name
    return None


def names_checkout(checkout: str, package: str) -> bool:
    """Whether a package folder is the checkout's own: the same name (``segment-anything/segment_anything``), or that
    name with a major version (``nnUNet/nnunetv2``: the repository's second generation, packaged under that name)."""
    repo, module = canonicalize_name(checkout), canonicalize_name(package)
    return module == repo or (module.startswith(repo) and re.fullmatch(r"-?v?\d{1,2}", module[len(repo):]) is not None)


def _cased_clone(outer: str, inner: str) -> bool:
    """``yolou/YOLOU/models/x.py``: a workspace folder holding the clone of a repository whose name has capitals. An
    import package is lower-case (PEP 8: ``mmrotate/mmrotate``, ``nnUNet/nnunetv2``), so an inner folder that differs
    from the outer one only by its capitals is the checkout's root, not a package of it."""
    return inner != outer and inner.lower() == outer.lower() and inner != inner.lower()


def _user_name(folders: list[str]) -> str | None:
    """The user folder of a home path (``/home/NAME/``, ``/Users/NAME/``, ``C:/Users/NAME/``): a person, never a
    project, however often the folder repeats (``/home/ljf/ljf/...``)."""
    for index, folder in enumerate(folders[:2]):
        if folder.lower() in ("home", "users") and index + 1 < len(folders):
            return folders[index + 1]
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


def _imports(frames: tuple[Frame, ...]) -> list[str]:
    modules: list[str] = []
    for frame in frames:
        module = None if _HUB.search(frame.posix) else _frame_module(frame)  # torch.hub.load imports those
        if module and module not in modules and DISTRIBUTIONS.get(module) != ("torch",) and module != "torch" \
                and not keyword.iskeyword(module) and len(module) <= 40:
            modules.append(module)
    return sorted(modules, key=str.lower)


def entered_modules(frames: tuple[Frame, ...], imports: list[str]) -> dict[str, str]:
    """Import package -> the module of its first installed frame (``castle`` ->
    ``castle.algorithms.gradient.rl.torch.rl``): the skeleton imports that, so an install of another project with the
    same package name (the index's `castle` is not gcastle) fails at the import, and validate's build sees it."""
    entered: dict[str, str] = {}
    for frame in frames:
        match = _SITE.search(frame.posix)
        parts = match["rest"].removesuffix(".py").split("/") if match and match["rest"].endswith(".py") else []
        parts = parts[:-1] if parts[-1:] == ["__init__"] else parts
        if parts and parts[0] in imports and parts[0] not in entered:  # the package's first frame decides
            importable = all(p.isidentifier() and p.isascii() and not keyword.iskeyword(p) for p in parts)
            entered[parts[0]] = ".".join(parts) if importable else parts[0]
    return entered


def asked_once(released: Callable[[str], bool | None]) -> Callable[[str], bool | None]:
    """The package index asked once per name (a draft's pins and its skeleton's import both need the answer)."""
    answers: dict[str, bool | None] = {}
    return lambda name: answers[name] if name in answers else answers.setdefault(name, released(name))


# Names a repository's package commonly takes on the index when its own name there is another project's or absent
# (clovaai/donut publishes donut-python, ourownstory/neural_prophet neuralprophet, mosaicml/composer mosaicml).
_SEARCH_BUDGET_S = 20.0
_INDEX_SPELLINGS = ("{squeezed}", "{name}-python", "python-{name}", "py{name}", "{name}-pytorch", "pytorch-{name}",
                    "{owner}", "{owner}-{name}")


def renamed_release(name: str, repo: str, project_urls: Callable[[str], tuple[str, ...] | None]) -> str:
    """The index's project, under one of a few common spellings, whose URLs name the repository ("" when none; the
    first unanswered question stops the search, so an offline host asks once)."""
    owner = str(canonicalize_name(repo.partition("/")[0]))
    tried = {name}
    started = time.monotonic()
    for spelling in _INDEX_SPELLINGS:
        candidate = spelling.format(name=name, squeezed=re.sub(r"[^a-z0-9]", "", name), owner=owner)
        if candidate in tried:
            continue
        if time.monotonic() - started > _SEARCH_BUDGET_S:  # a slow index: the draft keeps its commit pins
            return ""
        tried.add(candidate)
        urls = project_urls(candidate)
        if urls is None:
            return ""
        if any(f"/{repo.lower()}" in url.lower().removesuffix(".git").rstrip("/") + "/" for url in urls):
            return candidate
    return ""


Pins = list[tuple[str, str]]


def owner_prefixed(name: str, repo: str, released: Callable[[str], bool | None] | None,
                   project_urls: Callable[[str], tuple[str, ...] | None], absent: bool) -> str:
    """The index's ``<owner>-<name>`` (salesforce/LAVIS publishes salesforce-lavis) when it has releases and links
    the repository, or links nothing while the index has no project of the repository's own name (``absent``): the
    owner's name in the project's is then the tie a missing link leaves out ("" when none, or no answer)."""
    candidate = f"{canonicalize_name(repo.partition('/')[0])}-{canonicalize_name(name)}"
    if released is None or candidate == name or released(candidate) is not True:
        return ""
    urls = project_urls(candidate)
    if urls is None:
        return ""
    linked = any(f"/{repo.lower()}/" in url.lower().removesuffix(".git").rstrip("/") + "/" for url in urls)
    return candidate if linked or (absent and not urls) else ""


def renamed_index_pins(name: str, repo: str, project_urls: Callable[[str], tuple[str, ...] | None],
                       pins: tuple[Pins, Pins], notes: list[str], absent: bool = False,
                       released: Callable[[str], bool | None] | None = None) -> tuple[Pins, Pins, str] | None:
    """The buggy and fix pins naming the index's project of the repository under its other name, and that name, or
    None (``absent``: the index has no project of the name, else another project's)."""
    said = (f"the package index has no project named {name}" if absent else
            f"the package index's {name} is another project")
    if renamed := owner_prefixed(name, repo, released, project_urls, absent):
        notes.append(f"{said}; its {renamed}, named after {repo}'s owner, is taken as {repo}'s package (check its "
                     "packaging names it so): pinned so")
    elif renamed := renamed_release(name, repo, project_urls):
        notes.append(f"{said}; {repo}'s package there is {renamed}: pinned so")
    else:
        return None
    pattern = re.compile(rf"(?<![\w-]){re.escape(name)}(?=(?:==|\s|$|[,.]))")
    buggy, fix = ([(pattern.sub(renamed, pin), why) for pin, why in group] for group in pins)
    return buggy, fix, renamed


# torch files whose place says a traceback ran an old torch, when the report lists none (the case pins a new one):
# torch/tensor.py became torch/_tensor.py in 1.9.
_TORCH_ERAS = (("/torch/tensor.py", "older than 1.9 (torch/tensor.py became torch/_tensor.py in 1.9)"),)


def torch_era(frames: tuple[Frame, ...]) -> str:
    """A note dating the report's torch from its frames' files ("" when none dates it)."""
    era = next((when for path, when in _TORCH_ERAS for frame in frames if frame.posix.endswith(path)), "")
    return (f"the report lists no torch version, but its frames show a torch {era}: if the bug needs that torch, "
            "say why in the case") if era else ""
