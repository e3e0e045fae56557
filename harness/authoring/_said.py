"""What a report says ran, for a title or a skeleton with no frame of the blamed project to name: a code name, a
class or a subject in the issue's title, an API its prose names, the run its words or its command name."""

from __future__ import annotations

import keyword
import re

from packaging.utils import canonicalize_name

from harness.authoring._bugreport import BugReport
from harness.authoring._owners import own_frames
from harness.authoring._said_prose import said_marked
from harness.authoring._shown import common_class_call, shown_api
from harness.authoring._title_words import (
    _FILE_SUFFIXES,
    _RUN_WORDS,
    _STRONG_NAME,
    _title_class,
    _title_code_name,
    _title_model,
    _title_subject,
    _title_tag,
    run_clause,
    title_context,
    title_first_error,
)

__all__ = ["_title_code_name", "frameless_api", "message_api", "prose_api", "said_api"]  # _draft's names


def said_api(report: BugReport, culprit: str, message: str) -> str:
    """With no frame of the blamed project: what the report says ran, first found of a code name in its title (after
    the script a frameless report's command runs), a name shaped like code there, an API its prose names, the run its
    words name, the script its command runs; a frameless report's description (a file, a code name, a run word); a
    file a reply's workaround changes over a mere run word. A script the reporter says works is none."""
    skip = {str(canonicalize_name(m)) for m in (*report.modules, culprit)}
    worked = set(said_marked(report.shown_calls, "worked"))
    subjects = [name for name in report.subjects if str(canonicalize_name(name)) not in skip
                and name.lower() not in message.lower() and name.removesuffix(".py") not in worked]
    frames = report.traceback.frames  # with frames, a script the title names is their <module>: no API
    in_title = [name for name in subjects if name in report.title and " " not in name
                and not (frames and name.endswith(".py")) and name.lower() not in _RUN_WORDS]
    glued = [name for name in said_marked(report.shown_calls, "glued")
             if not (frames and name.endswith(".py")) and name not in message]
    setup = _SETUP_CALLS | {message.split("(")[0]}
    named = _title_code_name(title_first_error(report.title, message), message)
    said = ((_quoted_place(report) if not frames else "")
            or _script_run(report, named) or (in_title[0] if in_title else "")
            or _title_class(report.title, report.traceback.exception, culprit, message)
            or title_context(report, message)[1]
            or _title_model(report.title, culprit)
            or (next(iter(said_marked(report.shown_calls, "marked")), "") if not frames else "")
            or prose_api(report, culprit, message) or (glued[0] if glued else "")
            or next(iter(said_marked(report.shown_calls, "defined")), "")
            or shown_api(tuple(said_marked(report.shown_calls, "called")), culprit, report.modules, setup)
            or _frameless_run(report, message, culprit)
            or shown_api(report.shown_calls, culprit, report.modules, setup)
            or (run_clause(report.title) or _title_subject(report.title) if not frames else "")
            or (_command_script(report) if not own_frames(frames) else "")
            or (subjects[0] if subjects and not frames else "") or (_title_tag(report.title) if not frames else "")
            or (next(iter(said_marked(report.shown_calls, "run")), "") if not frames else ""))
    replied = said_marked(report.shown_calls, "reply") if not frames else []
    return replied[0] if replied and (not said or said.lower() in _RUN_WORDS) else said


def _quoted_place(report: BugReport) -> str:
    """The failing place a frameless report's prose quotes: a frame's file and function, or the file of a line its
    link points to in the report's own repository (a link into another repository names no file of the project)."""
    place = next(iter(said_marked(report.shown_calls, "where")), "")
    repo, linked, file = place.rpartition(":")
    if not linked:
        return place
    return file if report.url.lower().rstrip("/").count(f"github.com/{repo.lower()}/") else ""


def _script_name(script: str) -> str:
    """A script as a title names it: an absolute path (``/home/u/app/src/train.py``) by its file's name."""
    return re.split(r"[/\\]", script)[-1] if re.match(r"(?:[/~\\]|[A-Za-z]:)", script) else script


_COMMAND_FILE = re.compile(r"(?<![\w./\\-])(?P<file>[\w./\\-]+\.py)\b")


def _command_script(report: BugReport) -> str:
    """The script the report ran: a command's first ``.py`` file (``python tools/train.py configs/x.py``: the config
    file after it is the script's argument), else the script the prose reader found."""
    files = [m["file"].removeprefix("./") for m in _COMMAND_FILE.finditer(report.command)]
    return (files[0] if report.script in files[1:] else report.script) or _quoted_run(report)


def _quoted_run(report: BugReport) -> str:
    """With no command read: the quoted run's script, or its console command when that is a module the report
    names or the repository's name (``lm_eval --model hf``); another program's (``pip install x``) is none."""
    if report.command:
        return ""
    ran = next(iter(said_marked(report.shown_calls, "ran")), "")
    repository = re.search(r"github\.com/[\w.-]+/(?P<repo>[\w.-]+)", report.url)
    names = (*report.modules, repository["repo"] if repository else "")
    modules = {str(canonicalize_name(name)) for name in names if name}
    return ran if ran.endswith(".py") or str(canonicalize_name(ran.partition(" ")[0])) in modules else ""


def _script_run(report: BugReport, named: str | None) -> str:
    """A frameless report's run: the script its command or launcher summary names, before the API ``named`` when one
    is given ("" when it is empty); ``named`` alone for a report with frames or no script."""
    script = _script_name(_command_script(report)) if not report.traceback.frames else ""
    if named is None:
        return script
    return " ".join(part for part in (script, named) if part) if named else ""


def _frameless_run(report: BugReport, message: str, culprit: str) -> str:
    """The run a frameless report's text names; its script wins over a vaguer word ("training" for train.py), a word
    that is the script's own name is kept, unless the script's folder says which ("tools/train.py")."""
    api, script = frameless_api(report, message, culprit), _script_run(report, None)
    api = "" if api in _SETUP_CALLS and script else api  # "main" for main.py: the script says more
    folder, _, file = script.rpartition("/")
    return api if api and (not script or (api == file.removesuffix(".py") and not folder)) else script or api


def prose_api(report: BugReport, culprit: str, message: str = "") -> str:
    """For a report without frames: the first API its prose writes as inline code (the last part of a dotted
    name), else as a plain word the report's code calls; neither a module, a listed package nor the library's own
    name, an exception, a version nor a word of the message."""
    skip = {str(canonicalize_name(m)) for m in (*report.modules, *report.paths, culprit)}
    skip |= set(report.environment.pins)  # a package its listing names (`typing_extensions`) is no API
    # a printed argument listing's key (`log_dir`) is no API either
    skip |= {str(canonicalize_name(key)) for key in said_marked(report.shown_calls, "key")}
    skip |= {str(canonicalize_name(name)) for name in said_marked(report.shown_calls, "folder")}  # a folder's name
    for code in (*report.code_names, *(f"{name}()" for name in report.called_names)):
        root, _, rest = code.removesuffix("()").partition(".")
        others = (m for m in report.modules if str(canonicalize_name(m)) != culprit)
        if rest and root in ("torch", "np", "numpy", *others):
            continue  # another library's API (`torch.device`)
        name = code.removesuffix("()").rpartition(".")[2]
        if ("." in code and name.lower() in _FILE_SUFFIXES) or common_class_call(code.removesuffix("()")):
            continue  # a file name (`requirements.txt`) or torch's class (DataLoader), not the project's API
        if _listing_key(name) or name in _SETUP_CALLS or _MACHINE_TYPE.fullmatch(code):
            continue  # a field of an environment dump (sysinfo JSON's `pip_packages`), a script's setup, a machine
        if len(name) >= 3 and name.isidentifier() and str(canonicalize_name(name)) not in skip \
                and not _STRONG_NAME.search(name) and not keyword.iskeyword(name) and name not in message \
                and not _message_word(name, code, report.traceback.message) \
                and (code.endswith(")") or "_" in name or "." in code or re.search(r"[a-z][A-Z0-9]", name)):
            return _class_method(code.removesuffix("()")) or name
    return ""


def _message_word(name: str, code: str, message: str) -> bool:
    """A name the error message quotes (`input_ids` in "Perhaps your features (`input_ids` in this case) ..."): a word
    of the symptom, never the API that failed, unless the report writes it as a call."""
    return not code.endswith(")") and re.search(rf"(?<![\w.]){re.escape(name)}(?![\w(])", message) is not None


def _class_method(dotted: str) -> str:
    """A class's method as a title writes it, with its class (``WidgetTrainer.train``); "" for any other name."""
    parts = dotted.split(".")
    owner = parts[-2] if len(parts) > 1 else ""
    return f"{owner}.{parts[-1]}" if owner[:1].isupper() and parts[-1][:1].islower() else ""


# Words an environment listing's fields are made of (sysinfo JSON's "pip_packages", "torch_env_info", "cuda_home"):
# a name made only of them is a field of the listing, never the API that failed.
_LISTING_WORDS = frozenset({"pip", "packages", "package", "version", "versions", "python", "torch", "cuda", "cudnn",
                            "platform", "commit", "env", "environ", "environment", "info", "home", "os", "gpu", "gpus",
                            "cpu", "ram", "memory", "sys", "system", "driver", "nvidia", "extensions", "exceptions",
                            "timestamp", "hash", "config", "flags", "installed", "requirements", "conda", "build"})


# A script's setup calls (seeding, logging, a warning a log prints, argument parsing, the environment): what any
# script calls first, never the API that failed ("from pytorch_lightning import seed_everything" ...
# "seed_everything(42)").
_SETUP_CALLS = frozenset({"seed_everything", "set_seed", "manual_seed", "manual_seed_all", "seed", "basicConfig",
                          "getLogger", "get_logger", "setup_logging", "set_verbosity", "set_verbosity_error",
                          "parse_args", "ArgumentParser", "add_argument", "load_dotenv", "set_start_method",
                          "filterwarnings", "set_float32_matmul_precision", "set_printoptions", "login", "main",
                          "warn", "warning"})


# A cloud machine's type ("p2.xlarge", "g5.12xlarge", "ml.p3.2xlarge", "Standard_NC6s_v3"): where it ran, never an API.
_MACHINE_TYPE = re.compile(r"(?:ml\.)?[a-z]+\d+[a-z-]*\.\d*x?(?:large|medium|small|micro|nano|metal)|Standard_\w+_v\d+")
def _listing_key(name: str) -> bool:
    words = name.lower().split("_")
    return len(words) > 1 and all(word in _LISTING_WORDS for word in words if word)


# A dispatcher operator the message names: "Could not run 'torchvision::roi_align' ..." -> roi_align.
_OPERATOR_NAME = re.compile(r"'[A-Za-z_]\w{0,40}::(?P<name>[A-Za-z_]\w{0,80})'")


def frameless_api(report: BugReport, message: str, culprit: str = "") -> str:
    """For a report without frames whose title and prose name no API: a class-level call its code makes
    (``TFTModel.load_from_checkpoint``), else an operator its message names (``'torchvision::roi_align'``)."""
    skip = {str(canonicalize_name(m)) for m in (*report.modules, *report.paths, culprit)}
    # a script the reporter says ran fine, a folder the prose names
    worked = [*said_marked(report.shown_calls, "worked"), *said_marked(report.shown_calls, "folder")]
    named = [call for call in report.named_calls if str(canonicalize_name(call)) not in skip and call not in worked]
    said = [call for call in named if "." in call or "_" in call]  # a function or a method, before a script's name
    named = named if not report.traceback.frames else said  # a script the frames show is no API (its <module>)
    classes = [call for call in report.class_calls if not common_class_call(call)]
    if said or classes:
        return (said or classes)[0]
    match = _OPERATOR_NAME.search(message)
    return match["name"] if match else (named[0] if named else "")


# A call the message names: "GRPOConfig.__init__() got an unexpected keyword argument 'top_p'" -> GRPOConfig.
_MESSAGE_CALL = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(\)")


def message_api(message: str) -> str:
    """For a report without frames whose prose names no API: the callable its message names (its class, for a
    dunder method), else nothing."""
    match = _MESSAGE_CALL.search(message)
    parts = [part for part in match["name"].split(".") if not part.startswith("__")] if match else []
    return parts[-1] if parts else ""
