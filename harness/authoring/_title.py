"""A draft's title (library, API and symptom) and the API a frame-less report names."""

from __future__ import annotations

import re
from collections.abc import Callable

from packaging.utils import canonicalize_name

from harness.authoring._bugreport import BugReport, Frame
from harness.authoring._owners import DISTRIBUTIONS, LAUNCHERS, _checkout_name, frame_owner, own_frames
from harness.authoring._said import said_api
from harness.authoring._said_last import activity_said
from harness.authoring._shown import _INSTANCE_WORDS, common_method_call
from harness.authoring._signature import _FOLDERS, without_dangling
from harness.authoring._title_words import _STRONG_NAME, _leading_run, title_context, title_device


def _title(report: BugReport, culprit: str, frame: Frame | None, indexed: Callable[[], bool] | None = None) -> str:
    """``<library> <API>: <symptom>``. The library is the blamed project as it is imported (owner/repo for a
    repository named by a generic word). The API, first found of: the blamed project's frames (an installed library's
    innermost public function; a checkout's function that its script entered; a forward whose own line failed, over a
    middle frame), else what the report says ran (``_said``: its command's script, a code name, class or subject in
    its title, an API its prose names, the run its words name), else the report's own function calling the frame's
    library; a bare method gets the class the report names with it, or its file. The symptom is the message's first
    sentence (with the cause when that sentence only says where it failed; the exception's name with no message),
    never longer than the title allows. ``indexed``: whether the blamed name is a release of the report's own
    repository (its name names it, even when generic: "tts" for coqui-ai/TTS, not mozilla/TTS); asked only for a
    generic name."""
    traceback = report.traceback
    message = _title_message(traceback.exception, _first_statement(traceback.message))
    if not traceback.first_message_line and (named := _title_from(report.title, traceback.exception_class)):
        message = named
    message, context = title_context(report, _closed(message))
    owner = frame_owner(frame, report.environment) if frame else None
    own = frame is not None and (owner is None or owner[1] == culprit)
    frames = traceback.final_frames or traceback.frames
    function = (_project_api(frames, frame, owner, report) if own and frame else _own_api(frames) if frame is None
                else "") or (context or said_api(report, culprit, message) if not own else "")
    if not function and frame and not own:  # the report's own function that called the frame's library, else its API
        # (torch's function is never the project's API: "pyannote-audio instance_norm" names no code of pyannote's)
        function = _own_api(frames) or (_api(frames, frame, owner, report) if not owner or owner[1] != "torch"
                                        else _leading_run(report.title))
    top = frame if own else None if frame else next(reversed(own_frames(frames)), None)
    if not function and top is not None and _script(top):
        function = _script_file(top)  # only a script's top level failed, and nothing names an API: the script does
    elif not function and top is not None and top.function in _MODULE_CALLS and _script_file(top).endswith(".py"):
        function = f"{_script_file(top)} {top.function}"  # the report's own module's forward: its file says which
    if frame is not None and own:
        function = _qualified(function, frame, report)
    elif frame is None and (shown := next((f for f in reversed(frames) if _leading_name(f.function) == function),
                                          None)):
        function = _qualified(function, shown, report, prose_only=True)  # the report's own frame: as its prose says
    if not function and not frames:
        function = title_device(report.title, message)
    if not function:  # nothing above named one: the project's file the text names, else the activity that failed
        # (unless the symptom names the call itself: "Trainer.__init__() got an unexpected keyword argument"); a
        # file named as the project (pixray.py of pixray) says no more than the project's name, nor does a script
        # whose top level the frames show failing (its <module>: the script ran, no API of it failed)
        named_file = report.said_file if canonicalize_name(report.said_file.rpartition(".")[0]) != culprit \
            and not any(f.function == "<module>" and _script_file(f) == report.said_file for f in frames) else ""
        function = named_file or ("" if _NAMED_CALL.search(message) or _said_by(message, report) else
                                  report.said_activity)
    library = owner[0] if owner and owner[1] == culprit else _import_name(culprit)  # what a maintainer writes
    library = _repository_identity(library, report.url, indexed)
    return _fitted(f"{library} {function}: " if function else f"{library}: ", message)


# Repository names that are a generic term many repositories share (an architecture, "code", "pytorch"): such a name
# alone names no project; its owner/repo does ("SamLynnEvans/Transformer").
_GENERIC_REPOSITORIES = frozenset({
    "transformer", "transformers-pytorch", "model", "models", "code", "src", "source", "project", "projects", "pytorch",
    "torch", "main", "demo", "demos", "examples", "experiments", "research", "baseline", "baselines", "repo",
    "implementation", "paper", "gan", "vae", "unet", "bert", "gpt", "rnn", "lstm", "cnn", "resnet", "vit", "diffusion",
    "nerf", "seq2seq", "attention", "classifier", "classification", "segmentation", "detection", "tracker", "tracking",
    "training", "train", "inference", "app", "tools", "utils", "notebooks", "tutorial", "tutorials", "homework", "tts",
    "asr", "stt", "ocr", "nlp", "llm", "chatbot", "vocoder"})
_REPOSITORY = re.compile(r"https?://github\.com/(?P<owner>[\w.-]+)/(?P<repo>[\w.-]+)")


def _repository_identity(library: str, url: str, indexed: Callable[[], bool] | None = None) -> str:
    """``owner/repo`` for a library drafted from its repository's generic name, unless the index releases that name
    from this repository (``indexed``), else ``library``."""
    match = _REPOSITORY.match(url)
    if match is None or match["repo"].lower() not in _GENERIC_REPOSITORIES \
            or canonicalize_name(match["repo"]) != canonicalize_name(library) or (indexed and indexed()):
        return library
    return f"{match['owner']}/{match['repo']}"


# Method names that do not say which code failed without their class or file ("update", "fit"): a maintainer writes
# "NLL.update" or "metrics.py update".
_GENERIC_METHODS = frozenset({"update", "fit", "step", "run", "train", "encodes", "decodes", "finetune", "backward",
                              "compute", "process", "transform", "evaluate", "predict", "test", "call", "execute"})


def _qualified(function: str, frame: Frame, report: BugReport, prose_only: bool = False) -> str:
    """The blamed frame's bare method with its class where the report names both (`NLL()` and `update()`, or
    ``NLL.update``), else a generic method of code in no package with its file (``metrics.py update``);
    ``prose_only``: only the class the prose names with the method."""
    if function != _leading_name(frame.function) or not function.isidentifier():
        return function
    named = [name.removesuffix("()") for name in (*(() if prose_only else report.class_calls), *report.code_names)]
    dotted = [name for name in named if name.endswith(f".{function}") and name[:1].isupper()]
    classes = [name for name in named if re.fullmatch(r"[A-Z]\w*", name) and not _STRONG_NAME.search(name)]
    if dotted:
        return f"{dotted[0].rpartition('.')[0].rpartition('.')[2]}.{function}"
    if function in named and len(classes) == 1:
        return f"{classes[0]}.{function}"
    file = _script_file(frame)
    if not file.endswith(".py") or ("-packages/" in frame.posix and ".egg/" not in frame.posix):
        return function  # an installed package's method is found by its name (an egg is a checkout's build)
    if function in _PLUMBING:
        return f"{file} {function}"  # every module of a checkout has a forward: its file says which one
    checkout = prose_only or frame_owner(frame, report.environment) is None  # a package's method: found by name
    return f"{file} {function}" if function in _GENERIC_METHODS and checkout else function


def _script(frame: Frame) -> bool:
    """Whether a frame is a script's top level (``train.py``, ``<module>``), not a package module's import."""
    return frame.function == "<module>" and _script_file(frame).endswith(".py") and not _package_folder(frame) \
        and "-packages/" not in frame.posix and _script_file(frame) != "__init__.py"


def _script_file(frame: Frame) -> str:
    return re.split(r"[/\\]", frame.posix)[-1]


def _project_api(frames: tuple[Frame, ...], frame: Frame, owner: tuple[str, str] | None, report: BugReport) -> str:
    """The API of the blamed project's own frames: its innermost public function (plumbing and wrappers skipped
    outward), except that a module's forward in one of its package's folders (``srgan_pytorch/loss.py``) that only
    the report's scripts call is named with its file: the project's code a maintainer fixes, not the script's."""
    outer = frames[: frames.index(frame)] if frame in frames else ()
    called_in_package = any(_package_folder(f) and f.function.isidentifier() and f.function not in _PLUMBING
                            and frame_owner(f, report.environment) == owner for f in outer)
    named_file = f"{frame.posix.rpartition('/')[2]} {frame.function}"
    if frame.function in _PLUMBING and _package_folder(frame) and not called_in_package:
        return named_file
    api = _api(frames, frame, owner, report)
    if frame.function in _PLUMBING and _package_folder(frame) and _own_line_failed(frames, frame) \
            and _middle(outer, api, owner, report):
        # the forward that failed, not a middle frame between it and the project's entry call; with the call on its
        # line that handed torch the tensor (``np.isfinite``)
        handed = _DOTTED_CALL.search(frame.source)
        return f"{named_file} ({handed['name']})" if handed else named_file
    return _repository_caller(outer, report.url) or api if api in _PLUMBING else api


# A message naming the call that failed: ``Trainer.__init__()``, ``ModelCheckpoint(save_last=True, monitor=None)``.
_NAMED_CALL = re.compile(r"\b[A-Za-z_][\w.]*\((?:\)|[\w.]+=)")


def _said_by(message: str, report: BugReport) -> bool:
    """Whether the activity would repeat the symptom ("while trying to train YoloV8") or name none of it (an import
    failed before anything ran)."""
    import_error = report.traceback.exception_class in ("ImportError", "ModuleNotFoundError")
    return import_error or activity_said(report.said_activity, message)


_DOTTED_CALL = re.compile(r"(?<![\w.])(?!self\.)(?P<name>[A-Za-z_]\w*\.[A-Za-z_]\w*)\(")  # a module's call


def _own_line_failed(frames: tuple[Frame, ...], frame: Frame) -> bool:
    """Whether ``frame``'s own line failed in torch's tensor code (``np.isfinite(losses.data.sum())`` into
    ``Tensor.__array__``), not in a submodule it called (module call plumbing, or frames the report cut)."""
    inner = frames[frames.index(frame) + 1:] if frame in frames else ()
    return bool(inner) and (frame_owner(inner[0]) or ("", ""))[1] == "torch" and inner[0].function not in (
        *_WRAPPERS, "__call__") and "/nn/modules/module.py" not in inner[0].posix


def _middle(outer: tuple[Frame, ...], api: str, owner: tuple[str, str] | None, report: BugReport) -> bool:
    """Whether the project's function named ``api`` is a middle frame: another of the project's named functions
    (its entry call, ``train`` in training_run.py) called it."""
    mine = [f for f in outer if frame_owner(f, report.environment) == owner and f.function.isidentifier()]
    names = [f.function for f in mine]
    return api in names and names.index(api) > 0


def _repository_caller(outer: tuple[Frame, ...], url: str) -> str:
    """The function that called a library's wrapper forward (torch's call plumbing skipped) when it lies in a checkout
    of the report's own repository (``ColossalAI/applications/ColossalChat/coati/trainer/sft.py``, in ``_train``):
    the code the repository's maintainers own, not the library's plumbing."""
    repo = re.match(r"https?://github\.com/[\w.-]+/(?P<repo>[\w.-]+)", url)
    caller = next((f for f in reversed(outer) if (frame_owner(f) or ("", ""))[1] != "torch"), None)
    if repo is None or caller is None or "-packages/" in caller.posix or not caller.function.isidentifier():
        return ""
    folders = {_checkout_name(folder) for folder in caller.posix.split("/")}
    return caller.function if str(canonicalize_name(repo["repo"])) in folders else ""


def _package_folder(frame: Frame) -> bool:
    """Whether a frame's file is in a folder named as a Python package (``layers/``, not a checkout's root such as
    ``PIXOR-master``, where a model's file sits next to the script that runs it), outside an installed tree."""
    folders = frame.posix.split("/")
    return len(folders) >= 2 and folders[-2].isidentifier() and "-packages/" not in frame.posix


# A device check's parenthesis names the operator that met the mixed devices; when the title is too long, its
# wording goes first and the operator stays: "(when checking argument for argument weight in method X)" -> "(... X)".
_DEVICE_CHECK = re.compile(r"\(when checking argument[^)]*? in method (?P<method>\w+)\)")
_MAX_TITLE = 200  # case.schema.json's maxLength


def _fitted(where: str, message: str) -> str:
    title = where + message
    if len(title) > _MAX_TITLE:
        title = where + _DEVICE_CHECK.sub(lambda m: f"(... {m['method']})", message)
    return title if len(title) <= _MAX_TITLE else _cut(title, _MAX_TITLE - 4) + " ..."


def _cut(text: str, width: int) -> str:
    """``text`` cut to at most ``width`` characters at a word boundary (never mid-word, which reads as a typo)."""
    head = text[:width + 1]
    return (head.rsplit(" ", 1)[0] if " " in head else text[:width]).rstrip(" ,;:(")


# A console script's frame (``/usr/local/bin/ns-train``, ``C:\\...\\Scripts\\ns-train``): the command the user ran.
_CONSOLE = re.compile(r"/(?:bin|Scripts)/(?P<name>[A-Za-z][\w.-]{1,40}?)(?:-script\.py|\.exe)?$")
_GENERIC_COMMANDS = re.compile(r"^(?:python[\d.]*|accelerate|torchrun|deepspeed|lightning|ipython|jupyter|pytest)$")


def _console_command(frames: tuple[Frame, ...]) -> str:
    """The console command whose script is the outermost frame, unless it is a generic launcher's (torchrun)."""
    match = _CONSOLE.search(frames[0].posix) if frames else None
    return match["name"] if match and not _GENERIC_COMMANDS.match(match["name"]) else ""


def _own_api(frames: tuple[Frame, ...]) -> str:
    """The innermost function of the report's own frames (a frame-only checkout of the linked project) that is not
    plumbing, a dunder, a wrapper, a launcher or a script's top level."""
    for frame in reversed(own_frames(frames)):
        name = _leading_name(frame.function)
        if name and not name.startswith(("__", "<")) and not _wrapper(name) and name not in _PLUMBING \
                and name.rpartition(".")[2] not in LAUNCHERS:
            return _line_call(frame.source) or name if name == "main" else name  # an entry function: its line's call
    # only a comprehension or a lambda at a script's top level ("attack_one.py", in <listcomp>): the script names it
    inline = next((f for f in reversed(own_frames(frames)) if f.function in _INLINE), None)
    return _script_file(inline) if inline else ""


def _leading_name(function: str) -> str:
    """A frame's function as Python names it: a pasted frame whose source line was glued onto its function
    ("train    for data in training_loader:") keeps the function only."""
    return function.split()[0] if " " in function.strip() and function.split()[0].isidentifier() else function


_INLINE = frozenset({"<listcomp>", "<genexpr>", "<dictcomp>", "<setcomp>", "<lambda>"})


def _import_name(distribution: str) -> str:
    """The module a distribution is imported as, where the table says it differs (pytorch-ignite: ignite)."""
    modules = [m for m, dists in DISTRIBUTIONS.items() if dists[0] == distribution and distribution != "torch"]
    return modules[0] if len(modules) == 1 else distribution


# Function names that say nothing of the API: autograd and nn.Module plumbing, and decorators' wrappers (a function
# defined in another, ``_defaults_from_env_vars.<locals>.insert_env_defaults``, is one too).
_PLUMBING = frozenset({"forward", "backward", "apply"})
# A model's own call when it is the only own frame left (a module's forward, a Chainer-style model's __call__).
_MODULE_CALLS = _PLUMBING | {"__call__"}
_WRAPPERS = frozenset({"wrapper", "wrapped", "inner", "decorate_context", "new_fun", "_call_impl",
                       "_wrapped_call_impl"})
# The callable a source line calls first (``trainer = pl.Trainer(**params)`` -> Trainer).
_SOURCE_CALL = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)\(")


# A launcher handed the function that runs (``accelerator.launch(train)``, ``mp.spawn(worker, ...)``): its first
# argument is the run's API, not the launcher.
_LAUNCH_ARGUMENT = re.compile(r"\(\s*(?P<name>[A-Za-z_]\w*)\s*[,)]")
_SPAWNERS = frozenset({"launch", "notebook_launcher", "debug_launcher", "spawn", "start_processes", "elastic_launch",
                       "Fire", "submit"})


def _line_call(source: str) -> str:
    """The callable a source line calls first; for a launcher's call, the function it is handed. Another library's
    helper (``torch.device('cpu')`` in a continued argument list) and a model instance called (``model(**batch)``)
    name no API of the project: nothing then."""
    call = _SOURCE_CALL.search(source)
    if call is None or _foreign_call(call.group()):
        return ""
    handed = _LAUNCH_ARGUMENT.match(source, call.end() - 1) if call["name"] in _SPAWNERS else None
    # every object's method keeps its object (``self.optimizer.load_state_dict(``): the bare method is torch's
    return handed["name"] if handed else common_method_call(call.group()[:-1]) or call["name"]


# Roots of calls that are other libraries' helpers (``torch.device(``, ``np.array(``, ``os.path.join(``); with
# ``_INSTANCE_WORDS`` (the words a script names its model or network by: calling such an instance runs its forward),
# they name no API.
_FOREIGN_ROOTS = frozenset({"torch", "np", "numpy", "os", "sys", "math", "json", "random", "time", "re", "F", "nn",
                            "pd", "print", "len", "str", "int", "float", "dict", "list", "tuple", "range", "open",
                            "isinstance", "getattr", "super", "type", "zip", "enumerate", "format"})


def _foreign_call(call: str) -> bool:
    root = call.rstrip("(").partition(".")[0]
    return root in _FOREIGN_ROOTS or ("." not in call and root in _INSTANCE_WORDS)


def _wrapper(function: str) -> bool:
    return "<locals>" in function or function.rpartition(".")[2] in _WRAPPERS


def _api(frames: tuple[Frame, ...], frame: Frame, owner: tuple[str, str] | None, report: BugReport) -> str:
    """The innermost function of the culprit's frames that is neither a dunder (``__init__``), plumbing nor a
    decorator's wrapper, walking outward (else the innermost named one: a model's own forward). A private helper names
    the failing call. When the culprit's frames are only wrappers, the API is what its caller's line calls (the
    decorated callable: ``pl.Trainer(...)`` -> Trainer)."""
    chain = [frame] + [f for f in reversed(frames[: frames.index(frame)])
                       if frame_owner(f, report.environment) == owner] if frame in frames else [frame]
    named = [_leading_name(f.function) for f in chain if f.function and not f.function.startswith(("__", "<"))]
    unwrapped = [name for name in named if not _wrapper(name) and name.rpartition(".")[2] not in LAUNCHERS]
    found = next((name for name in unwrapped if name not in _PLUMBING), unwrapped[0] if unwrapped else "")
    if named and named[0].rpartition(".")[2] in LAUNCHERS:
        # the culprit's innermost frames only run a loop or launch: the console command's own entry function that
        # called them (``dptb`` -> main -> ``train`` -> trainer ``run``), else the command the user typed
        command = _console_command(frames)
        return found if command and found and found != "main" and not found.startswith("_") else command
    if found == "main" and (entry := _line_call(chain[0].source)):
        return entry  # a script's entry function names nothing: the call its failing line makes does
    if not named and (call := _SOURCE_CALL.search(chain[0].source)) and call["name"][:1].isupper() \
            and call["name"] not in report.traceback.message:
        return call["name"]  # only constructors (``__init__``): the class the innermost one's line builds failed
    if not named and chain[0].function == "__init__" and _script_file(chain[0]).endswith(".py"):
        return f"{_script_file(chain[0])} __init__"  # a constructor whose line calls no class: its file says whose
    if found or not named or chain[-1] not in frames:
        return found
    outermost = frames.index(chain[-1])
    call = _SOURCE_CALL.search(frames[outermost - 1].source) if outermost else None
    return call["name"] if call and not call["name"].startswith("__") else ""


def _first_statement(message: str) -> str:
    """The message's first line, with the line after it when the first only introduces it ("Error(s) in loading
    state_dict for unet3D:" then "Missing key(s) in state_dict: ..."): the symptom is what follows the colon."""
    lines = [line.strip() for line in message.splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":") and lines[1][:1].isalnum() \
            and not lines[1].startswith(("File ", "Traceback")):
        cause, colon, listed = lines[1].partition(": ")
        return f"{lines[0]} {cause} ..." if colon and len(listed) > 40 else f"{lines[0]} {lines[1]}"  # not every key
    return lines[0] if lines else ""


def _closed(message: str) -> str:
    """A message the report cut inside a quotation or a parenthesis (``... FAILED at "../aten/src``, ``cpu! (when
    checking argument for argument``), or inside the device a device check names last (``cuda:0 and c``): up to the
    word before it, said to go on ("... FAILED ...")."""
    if message.count('"') % 2:
        cut = message.rfind('"')
    elif message.count("(") > message.count(")"):
        cut = message.rfind("(")
    elif (device := _CUT_DEVICE.search(message)) is not None:
        cut = device.start("last")
    else:
        return message
    head = re.sub(r"\s+(?:at|in|from|for|of|on|to|and)$", "", message[:cut].rstrip(" ,;:("))
    return f"{head} ..." if len(head) >= 20 else message


# The device a device check names last, cut by the paste ("... at least two devices, cuda:0 and c").
_CUT_DEVICE = re.compile(r"two devices, \S+ and (?P<last>(?!(?:cpu|cuda:\d+|mps|xpu:\d+|meta|npu:\d+)!?$)\S*)$")


def _title_from(title: str, exception: str) -> str:
    """The issue title from the exception's name on ("NotImplementedError while trying to train YoloV8")."""
    at = title.find(exception)
    return " ".join(title[at:].split()).strip(" .") if at >= 0 else ""


# What a title does not keep from a message: addresses and object ids that differ per run, and the markdown
# (bold, code) that wrapped an exception named in prose.
_TITLE_JUNK = re.compile(rf"{_FOLDERS}(?=\S)|\s*\bat 0x[0-9a-fA-F]+\b|\b0x[0-9a-fA-F]{6,}\b|[*`]{1,3}$")
_LONG_TITLE = 120


def _title_message(exception: str, message: str) -> str:
    """The message's first line, cleaned, its first sentence when long; a bare key or name (KeyError:
    'best_loss') says its exception too."""
    text = without_dangling(_TITLE_JUNK.sub("", " ".join(message.split())).strip(" .*`"))
    text = _unmarked(text)
    if not text:
        return exception.rpartition(".")[2]
    if len(text) <= 40 and re.fullmatch(r"['\"]?[\w.\-/]+['\"]?", text):
        return f"{exception.rpartition('.')[2]} {text}"
    if len(text) > _LONG_TITLE and (end := re.search(r"[.!?](?=\s+[A-Z'\"])", text)) and end.start() >= 20:
        first = text[: end.start() + 1]
        cause = _SENTENCE_END.split(text.rstrip(" .!?"))[-1]  # a context sentence's cause is the message's last one
        return f"{first[:-1]} ... {cause}" if _CONTEXT.match(first) and cause not in first else first
    return text


def _unmarked(text: str) -> str:
    """A message without the underscores of markdown emphasis (``__bold__``, ``word_``), keeping a name's own trailing
    underscore (torch's ``_th_set_``: a last word with an inner underscore)."""
    if text.startswith("__") and text.endswith("__"):
        return text.strip("_")
    last = text.rsplit(None, 1)[-1].strip("'\"") if text.strip() else ""
    return text if re.fullmatch(r"_*[A-Za-z]\w*_\w*[A-Za-z0-9]_+", last) else text.rstrip("_")


# A message's first sentence that only says where it failed ("Error while processing rearrange-reduction pattern
# ..."): the symptom is its last sentence ("Shape mismatch, can't divide axis of length 2 in chunks of 16").
_CONTEXT = re.compile(r"^(?:An? )?(?:error|exception|failure|failed|problem)\s+(?:while|when|in|during|on)\b", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z'\"])")
