"""What an issue title names: a code name, a call, a class, a model, a component tag, a subject that failed, the run
or device it failed on, and the context it adds after the message it quotes (moved out of ``_said``)."""

from __future__ import annotations

import re

from packaging.utils import canonicalize_name

from harness.authoring._bugreport import BugReport
from harness.authoring._owners import DISTRIBUTIONS

# A class named in an issue title's words, before the exception it quotes ("... 0.7.8 DPOTrainer get RuntimeError:
# ..."): CamelCase with two humps at least, never an exception's name.
_TITLE_CLASS = re.compile(r"(?<![\w.`'\"/-])(?P<name>[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*[a-z][A-Za-z0-9]*|"
                          r"[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*)(?![\w`'\"/-])")


# Names of products and platforms a title writes in CamelCase, never a library's API.
_PRODUCTS = frozenset({"pytorch", "tensorflow", "github", "huggingface", "deepspeed", "macos", "pypi", "jupyterlab",
                       "openai", "chatgpt", "youtube", "colab", "kaggle", "onnxruntime", "tensorrt", "rocm", "wsl",
                       "vscode", "pycharm", "ubuntu", "centos", "windows", "iphone", "ipython", "lightningai",
                       "geforce", "macbook", "jetson", "pytorchlightning", "cuda", "nvidia", "docker"})


def _product(name: str) -> bool:
    folded = str(canonicalize_name(name))
    return folded in _PRODUCTS or name in DISTRIBUTIONS or any(folded == dists[0] for dists in DISTRIBUTIONS.values())


# A model a title names as what ran ("GPU error with NHITS model", "fails for the Informer models").
_TITLE_MODEL = re.compile(r"\b(?:with|using|for)\s+(?:the\s+|a\s+|an\s+)?(?P<name>[A-Z][\w-]{1,40})\s+models?\b")
_MODEL_WORDS = frozenset({"custom", "pretrained", "pre-trained", "trained", "own", "new", "large", "small", "base",
                          "same", "whole", "entire", "quantized", "saved", "loaded", "different", "another", "this",
                          "that", "my", "any", "every", "each", "other", "multiple", "single", "full", "final", "best"})


def _title_model(title: str, culprit: str) -> str:
    match = _TITLE_MODEL.search(title)
    name = match["name"] if match else ""
    common = name.lower() in (*_MODEL_WORDS, *_COMMON_LABELS, *_RUN_WORDS)
    return "" if not name or common or _product(name) or canonicalize_name(name) == culprit else name


def _title_class(title: str, exception: str, culprit: str, message: str = "") -> str:
    """A class a frameless report's title names before the exception it quotes, unless it is a product's name or a
    word of the message ("... but found BFloat16": the symptom, no API)."""
    words = title.split(exception.rpartition(".")[2], 1)[0] if exception else title
    words = words.replace(message, " ") if len(message) > 10 else words
    names = [m["name"] for m in _TITLE_CLASS.finditer(words) if not _STRONG_NAME.search(m["name"])
             and canonicalize_name(m["name"]) != culprit and not _product(m["name"])
             and m["name"].lower() not in _COMMON_LABELS]  # "NaN issue": a symptom's word, no class
    return names[0] if names else ""


# A component label opening an issue title ("[Tune] ...", "[RLlib] ..."): the part of the library that ran; a
# label of the kind ("[Bug]", "[Feature Request]") names none.
_TITLE_TAG = re.compile(r"^\s*\[(?P<tag>[A-Z][A-Za-z0-9]{1,30})\]")
_KIND_TAGS = frozenset({"bug", "bugs", "feature", "question", "help", "docs", "doc", "documentation", "wip", "fix",
                        "rfc", "discussion", "enhancement", "request", "issue", "error", "support", "urgent", "p0",
                        "p1", "p2", "draft", "misc", "other", "general", "bugfix", "feat", "new", "solved", "closed"})


def _title_tag(title: str) -> str:
    match = _TITLE_TAG.match(title)
    return match["tag"] if match and match["tag"].lower() not in _KIND_TAGS else ""


# An issue title's clause naming the run that failed: "... when training csmsc/tts1", "error when using the fast use
# code" (a verb of running, then up to four words).
_RUN_CLAUSE = re.compile(r"\b(?:when|while)\s+(?:I\s+(?:am\s+|was\s+|'m\s+)?)?(?P<verb>training|running|using|"
                         r"evaluating|testing|fine-?tuning)\s+(?:the\s+|a\s+|my\s+)?"
                         r"(?P<what>[\w./-]+(?: [\w./-]+){0,3})\s*$", re.I)


_PLACE = re.compile(r"(?:on|in|with|under|inside|from|at|via|through|without|across)\b", re.I)


# A title opening with the run that failed: "Training fails : ...", "Inference crashed with ...".
_LEADING_RUN = re.compile(r"^\s*(?P<run>training|fine-?tuning|inference|evaluation|validation|resuming)\s+(?:fails?|"
                          r"failed|crash(?:es|ed)?|breaks?|errors?|raises?)\b", re.I)


# A title opening with what failed, then a verb of failing: "FID clip crashes when evaluated on `cpu` device".
_TITLE_SUBJECT = re.compile(r"^\s*(?:the\s+|my\s+|a\s+)?(?P<subject>[A-Za-z][\w.-]*(?: [A-Za-z][\w.-]*){0,3}?)\s+"
                            r"(?:crash(?:es|ed)?|fails?|failed|breaks?|broke|errors? out|raises|throws|hangs?|"
                            r"(?:does|do)(?: not|n't) work|(?:is |are )?not working|should (?:also )?(?:work|run))\b",
                            re.I)  # "X should work when ...": X does not, there
_VAGUE_SUBJECTS = frozenset({"it", "this", "that", "code", "script", "program", "model", "run", "everything", "i",
                             "something", "app", "job", "process", "error", "bug", "import", "install", "installation",
                             "build", "setup", "test", "tests", "ci", "example", "demo", "pip install"})


# A title opening with a name labelled as the bug ("Autoformer bug, Expected all tensors ...", "DDIMSampler error:").
_TITLE_LABEL = re.compile(r"^\s*(?P<subject>[A-Z][\w.-]{2,40})\s+(?:bug|error|issue|problem)\s*[,:;-]")
_COMMON_LABELS = frozenset({"memory", "runtime", "type", "value", "key", "index", "attribute", "shape", "dtype",
                            "device", "import", "install", "installation", "build", "compile", "compilation", "loading",
                            "saving", "gpu", "cpu", "cuda", "tensor", "size", "data", "dataset", "dataloader", "config",
                            "syntax", "assertion", "assert", "version", "dependency", "critical", "major", "minor",
                            "strange", "weird", "same", "another", "new", "potential", "possible", "serious", "nan",
                            "inf", "loss", "grad", "gradient", "gradients", "accuracy", "performance", "precision",
                            "speed", "deadlock", "hang", "segfault", "timeout", "warning", "output", "result",
                            "results", "dimension", "dimensions", "mismatch", "distributed", "parallel", "checkpoint",
                            "save", "load", "model", "code", "script", "example", "docs", "documentation", "readme",
                            "dependencies", "environment", "permission", "network", "connection", "download", "upload",
                            "file", "path", "windows", "mac", "linux", "docker", "multi-gpu", "ddp", "fsdp", "amp",
                            "fp16", "bf16", "half", "float", "mps", "tpu", "xpu", "oom", "logging", "logger"})


def _title_subject(title: str) -> str:
    """What a frameless report's title says failed, when it opens with it and a verb of failing ("FID clip"), or
    with a name labelled as the bug ("Autoformer bug, ...")."""
    match = _TITLE_SUBJECT.match(title)
    label = _TITLE_LABEL.match(title)
    subject = match["subject"] if match else label["subject"] if label and not _STRONG_NAME.search(
        label["subject"]) and label["subject"].lower() not in (*_COMMON_LABELS, *_RUN_WORDS) else ""
    vague = subject.lower() in _VAGUE_SUBJECTS or any(_product(word) for word in subject.split())
    return "" if vague or _leading_run(title) else subject


# A title saying only where the run failed ("Doesn't work with CUDA mode", "fails on GPU"): with no API anywhere in the
# report, the device is the most a title can name ("on CUDA"), and no API for the skeleton to look for.
_TITLE_DEVICE = re.compile(r"\b(?:on|with|under|in)\s+(?:the\s+)?(?P<device>CUDA|GPUs?|MPS)(?:\s+(?:mode|devices?))?"
                           r"\s*[.!?]*$", re.I)


_VAGUE_FAILURE = frozenset({"doesn't", "does", "do", "don't", "not", "work", "works", "working", "fail", "fails",
                            "failed", "failing", "error", "errors", "crash", "crashes", "crashed", "can't", "cannot",
                            "run", "runs", "running", "it", "with", "when", "while", "bug", "issue", "problem",
                            "broken", "runtimeerror", "the", "is", "isn't", "on", "in", "model", "code"})


def title_device(title: str, message: str) -> str:
    """For a report that shows and names no API: torch's wrapper its message names by its argument ("(device_ids[0])":
    DataParallel), else the device its title ends by saying the run failed on, written "on CUDA"; else ""."""
    if "(device_ids[0])" in message:
        return "DataParallel"
    text = title.replace(message, " ").strip() if message else title.strip()
    match = _TITLE_DEVICE.search(text)
    said = re.findall(r"[a-z']+", text[: match.start()].lower()) if match else []
    vague = all(word in _VAGUE_FAILURE or word in _RUN_WORDS for word in said)  # what failed is only "it"
    device = match["device"] if match and vague else ""  # a device the message itself ends with is the symptom's
    on = f"on {device.upper() if device.lower() != 'gpus' else 'GPUs'}" if device else ""
    return " ".join(part for part in (_leading_run(title), on) if part) if on else ""  # "training on GPU"


def _leading_run(title: str) -> str:
    match = _LEADING_RUN.match(title)
    return match["run"].lower() if match else ""


def run_clause(title: str) -> str:
    """For a report without frames whose prose names no API: the run its title says failed ("csmsc/tts1 training");
    a report with frames shows its run (a script the title names is their ``<module>``, no API)."""
    match = _RUN_CLAUSE.search(title.strip(" .?!"))
    if match is None:
        return ""
    verb = match["verb"].lower()
    if verb in ("running", "using") and _PLACE.match(match["what"]):
        return ""  # where it ran ("when running on CPU"), not what ran
    return match["what"] if verb in ("running", "using") else f"{match['what']} {verb}"


# A code name in an issue title: `backticked`, or a snake_case name, dotted or not (env.set_info_dict_reader); a
# keyword argument ("elementwise_affine=False") is what the API was given, not the API.
_CODE_NAME = re.compile(r"`(?P<tick>[\w.:]{3,80})`|(?<![\w.:])(?P<snake>(?:[A-Za-z]\w*\.)*[A-Za-z]\w*_\w+(?:\.\w+)*)"
                        r"\b(?!\s*=(?!=))", re.ASCII)  # ASCII: CJK text glued to a name is no part of it


# A command an issue title quotes as code ("... ignored by dataloaders for `ketos test`"): a console script and its
# subcommand, or a launcher and the script it runs (``python train.py``: the script).
_TITLE_COMMAND = re.compile(r"`(?P<command>[a-z][\w.-]{1,30}) (?P<sub>[A-Za-z_][\w./-]{1,60})(?: [^`]*)?`")
_LAUNCH_COMMANDS = frozenset({"python", "python3", "accelerate", "torchrun", "deepspeed", "bash", "sh", "sudo",
                              "srun", "mpirun", "uv", "poetry", "conda", "pip", "pip3", "git", "docker", "cd", "make",
                              "jupyter", "ipython", "pytest", "lightning", "export", "nohup", "CUDA_VISIBLE_DEVICES"})


def _title_command(title: str, message: str) -> str:
    """The command an issue title quotes: its console script and subcommand, a launcher's script; never an install,
    nor words of the message quoted as code."""
    for match in _TITLE_COMMAND.finditer(title):
        command, sub = match["command"], match["sub"]
        if f"{command} {sub}".lower() in message.lower():
            continue
        if command in ("pip", "pip3", "conda", "git", "docker", "cd", "make", "uv", "poetry"):
            continue  # an install or a checkout, not the run
        if command in _LAUNCH_COMMANDS or re.fullmatch(r"python[\d.]*", command):
            script = next((word for word in match.group()[1:-1].split() if word.endswith((".py", ".sh"))), "")
            if script:  # `accelerate launch train.py` and `python tools/x.py`: the script
                return re.split(r"[/\\]", script)[-1]
            continue
        if not sub.startswith("-"):
            return f"{command} {sub}"
    return ""


def _title_code_name(title: str, message: str) -> str:
    """For a report without frames: the API the issue's title names (the last part of a dotted name; a file's name
    with its suffix: "Update rpo_continuous_action.py" names the script, never "py"), else the command it quotes."""
    for match in _CODE_NAME.finditer(title):
        dotted = (match["tick"] or match["snake"]).replace("::", ".")
        stem, _, name = dotted.rpartition(".")
        owner = stem.rpartition(".")[2]
        file = name.lower() in _FILE_SUFFIXES
        method = owner[:1].isupper() and name[:1].islower() and name not in message  # a class's method: Class.method
        name = f"{owner}.{name}" if stem and (file or method) else name
        if name and name not in message and not name.endswith(("Error", "Exception")):
            return name
    return _title_call(title, message) or _title_command(title, message)


# A call or a dotted name in an issue title's words ("model.fit() raises ...", "Bug in lib.models.Informer forward",
# "WidgetModel.predict returns ..."): a class's method keeps its class, else the last part names it. Other libraries'
# names (torch.cuda), files (config.yaml), versions and hosts (huggingface.co) are none.
_TITLE_CALL = re.compile(r"(?<![\w.:/@-])(?P<name>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)(?P<call>\([\w ,=.'\"]{0,40}\))?"
                         r"(?![\w/@-]|\.\w)",
                         re.ASCII)
_FOREIGN_ROOTS = frozenset({"torch", "np", "numpy", "nn", "F", "tf", "jax", "os", "sys", "pd", "cuda", "github",
                            "huggingface", "www", "e", "i", "self", "cls", "args", "cfg", "config", "opt", "opts",
                            "kwargs", "params", "hparams"})


def _title_call(title: str, message: str) -> str:
    for match in _TITLE_CALL.finditer(title):
        parts = match["name"].split(".")
        owner = parts[-2] if len(parts) > 1 else ""
        shaped = match["call"] or owner[:1].isupper() or len(parts) > 2  # not an attribute read (device.type)
        if not shaped or parts[0] in _FOREIGN_ROOTS or len(parts[-1]) < 3 or parts[-1].lower() in _FILE_SUFFIXES \
                or _STRONG_NAME.search(parts[-1]) or parts[-1] in message:
            continue
        return f"{owner}.{parts[-1]}" if owner[:1].isupper() and parts[-1][:1].islower() else parts[-1]
    return ""


# Words naming a kind of run ("inference", "training"): a title's word for what ran, no API when the report's code
# names one (``EncoderDecoderASR.from_hparams``).
_RUN_WORDS = frozenset({"inference", "training", "train", "finetuning", "fine-tuning", "evaluation", "validation",
                        "testing", "prediction", "resuming", "resume", "generation", "sampling", "export", "loading"})


_FILE_SUFFIXES = frozenset({"txt", "py", "json", "yaml", "yml", "md", "cfg", "toml", "ini", "sh", "ipynb", "pt",
                            "pth", "bin", "ckpt", "csv", "log", "safetensors", "onnx", "zip", "whl"})
_STRONG_NAME = re.compile(r"(Error|Exception|Warning)$|^(self|cls|torch|cuda|cpu|True|False|None|pip|conda)$")


# What an issue title adds after the message it quotes: where it ran (" in configs/CREMI.yaml") or which models
# or classes it ran with (" with Random, ADMMSLIM, and SLIMElastic"): the reporter's context, not the message.
_NAMES = r"[A-Z][\w.-]{1,40}(?:(?:,|,? and| or)\s+[A-Z][\w.-]{1,40}){0,6}"
# (Never "for X" nor "on X": "not implemented for Half" is the message, "on A100" where it ran.)
_TITLE_CONTEXT = re.compile(rf"\s+(?:in\s+(?:the\s+)?(?P<path>[\w./-]+\.(?:yaml|yml|json|py|cfg|toml|ini|ipynb|sh))|"
                            rf"(?:with|using|when using)\s+(?:the\s+)?(?P<names>{_NAMES})"
                            rf"(?:\s+models?|\s+class(?:es)?)?)\s*[.!]?$")


def title_context(report: BugReport, message: str) -> tuple[str, str]:
    """A frameless report whose message is its issue title's tail: the message without the context the title adds
    after it, and the first name that context gives (the API a report with none names), else ``(message, "")``."""
    at = report.title.find(message) if message else -1
    if report.traceback.frames or at < 0:
        return message, ""
    said = report.title[at:]  # the message and what the title adds after it (a message read whole, or cut before it)
    match = _TITLE_CONTEXT.search(said)
    if match is None or not 20 <= match.start() <= len(message) or _quoted(said, match.start()):
        return message, ""
    names = re.split(r",?\s+(?:and|or)\s+|,\s*", match["names"]) if match["names"] else []
    return said[: match.start()].rstrip(" ,;:"), next((name for name in names if not _product(name)), "")


def _quoted(text: str, at: int) -> bool:
    """Whether ``at`` lies inside a quotation the message opened (a quoted name is part of the message)."""
    return text[:at].count("'") % 2 == 1 or text[:at].count('"') % 2 == 1


# What joins a second error to a title's first ("AttributeError: ... && batch = next(self.data_iterator)").
_SECOND_ERROR = re.compile(r"\s(?:&&|\|\||\|)\s")


def title_first_error(title: str, message: str) -> str:
    """The title up to the end of the error it quotes (its message's head found in it): a second error joined after it
    by ``&&`` or ``|`` is another failure, whose code names no API of this one."""
    head = message[:24]
    at = title.find(head) if len(head) >= 12 else -1
    cut = _SECOND_ERROR.search(title, at + len(head)) if at >= 0 else None
    return title[: cut.start()] if cut else title
