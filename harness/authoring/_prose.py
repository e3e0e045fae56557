"""What a report's prose names: the modules it imports or links, source paths, inline code, called names, the
issue it links and other repositories' issues it cites."""

from __future__ import annotations

import itertools
import re

from harness.authoring._lines import TURN_MARKER
from harness.authoring._prose_modules import CHECKOUT_FOLDERS as CHECKOUT_FOLDERS
from harness.authoring._prose_modules import _modules as _modules
from harness.authoring._prose_modules import _path_tops as _path_tops

# Inline code in prose naming an API: `Linear8bitLt`, `flash_attn_func(q, k, v)`, `model.norm1` (no paths, no
# shell commands: a space or slash before the closing backtick is none).
_INLINE_CODE = re.compile(r"`(?P<name>[A-Za-z_][\w.]{2,80})(?:\([^`]{0,200}\))?`")


# A library's warning or log record printed by the run (``.../configuration_validator.py:74: You defined a
# `validation_step` ...``, ``WARNING: ...``, ``[rank: 0] ...``, ``[2024-05-01 ...] ...``): the library talking,
# never the report's API (a "[Bug] ..." label is no record).
_LOG_LINE = re.compile(r"^\s*(?:\S*\.py:\d+: |\[(?i:rank|\d)[^\]]{0,40}\]\s|(?:WARNING|INFO|ERROR|DEBUG|CRITICAL)\b|"
                       r"\w+Warning: )")


def _own_lines(lines: list[str]) -> list[str]:
    """The report's own text: its title and description up to the first reply turn (a reply's fix helper is not the
    failing API), without the run's warning and log records."""
    own = list(itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines))
    return [line for line in own if not _LOG_LINE.match(line)]


def _unfenced(lines: list[str]) -> list[str]:
    """Lines outside ``` fences: a fenced block is code or the run's output (``cast to `float16` ``), not prose."""
    fenced = False
    kept: list[str] = []
    for line in lines:
        fence = line.lstrip().startswith("```")
        if not fenced and not fence:
            kept.append(line)
        fenced = fenced != fence
    return kept


def _code_names(lines: list[str]) -> tuple[str, ...]:
    """Names the report's own prose writes as inline code, once each, in order (code blocks, frames, log records and
    replies are not its prose)."""
    prose = [line for line in _unfenced(_own_lines(lines))
             if "`" in line and not line[:1].isspace() and "File " not in line]
    found = [m["name"] + ("()" if m.group().endswith(")`") else "") for line in prose
             for m in _INLINE_CODE.finditer(line)]
    return tuple(dict.fromkeys(found))


# A name called in the text (``UNet2DModel(``), and a name written as a word in a sentence (not a call, a path, a
# dotted attribute or inline code). Shaped like code: a class (capitalised), a snake_case or a camelCase name.
_CALLED = re.compile(r"(?<![\w])(?<!class )(?<!def )(?P<name>[A-Za-z_]\w{2,80})\(")  # a definition is no call
_WORD = re.compile(r"(?<![\w./\\-])(?P<name>[A-Za-z_]\w{2,80})(?![\w/\\(-]|\.\w)")
_NOT_PROSE = re.compile(r"`[^`]*`|\S*(?:/|\\|://)\S*")


def _called_names(lines: list[str]) -> tuple[str, ...]:
    """Names a sentence writes as a plain word that the report's code also calls, once each, in order (frames and
    indented code are not prose; a capitalised sentence word is never called, so it is not taken). Replies and log
    records are not the report's own text."""
    lines = _own_lines(lines)
    called = {m["name"] for line in lines if "(" in line and "File " not in line for m in _CALLED.finditer(line)}
    if not called:
        return ()
    prose = [_NOT_PROSE.sub(" ", line) for line in lines if not line[:1].isspace() and "File " not in line]
    found = [m["name"] for line in prose for m in _WORD.finditer(line) if m["name"] in called
             and (m["name"][:1].isupper() or "_" in m["name"].strip("_") or re.search(r"[a-z][A-Z0-9]", m["name"]))]
    return tuple(dict.fromkeys(found))


# A class's own method called in the report's code (``TFTModel.load_from_checkpoint(``): a library's API by its
# shape (a class called on, not an instance); standard-library and imaging classes are no case's API.
_CLASS_CALL = re.compile(r"(?<![\w.])(?P<call>[A-Z][A-Za-z0-9]{2,60}\.[a-z][a-z0-9_]{2,60})\(")
_COMMON_CLASSES = frozenset({"Path", "Image", "DataFrame", "Series", "Counter", "OrderedDict", "Thread", "Process",
                             "Queue", "Pool", "Enum", "datetime", "ArgumentParser"})


def _class_calls(lines: list[str]) -> tuple[str, ...]:
    """Class-level calls the report's code makes (not in frames), once each, in order."""
    found = [m["call"] for line in lines if "(" in line and "File " not in line for m in _CLASS_CALL.finditer(line)
             if m["call"].partition(".")[0] not in _COMMON_CLASSES]
    return tuple(dict.fromkeys(found))


_URL = re.compile(r"https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/(?P<kind>issues|pull)/(?P<number>\d{1,9})\b")


def _issue_url(lines: list[str]) -> str:
    for line in lines:
        if "github.com/" in line and (match := _URL.search(line)):
            return match.group()
    return ""


def _cited(lines: list[str], url: str) -> tuple[str, ...]:
    """Repositories (other than the report's own) whose issue or pull request the text links and whose name it
    also writes as a word outside the link."""
    own = _URL.match(url)
    own_repo = own["repo"].rpartition("/")[2].lower() if own else ""
    linked = [m["repo"].rpartition("/")[2] for line in lines if "github.com/" in line for m in _URL.finditer(line)]
    linked = [repo for repo in dict.fromkeys(linked) if repo.lower() != own_repo]
    if not linked:
        return ()
    words = re.sub(r"\S*github\.com/\S*", " ", "\n".join(lines))
    return tuple(repo for repo in linked
                 if re.search(rf"(?<![\w/.-]){re.escape(repo)}(?![\w/-])", words, re.IGNORECASE))


# A fix a reply names: a commit of the report's own repository on a line saying it is fixed ("fixed. https://github.com
# /o/r/commit/c077bf1"), or a `pip install name==version` within three lines of a sentence saying it solved the bug.
_COMMIT_URL = re.compile(r"https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/commit/(?P<sha>[0-9a-f]{7,40})\b")
_SAYS_FIXED = re.compile(r"\b(?:fixed|fixes|solved|solves|resolved|resolves|works now|it works|worked)\b",
                         re.IGNORECASE)
_PIP_PIN = re.compile(r"\b(?:pip3? install\s+(?:-U\s+)?|(?:can|could|should|please) (?:just )?(?:use|upgrade to|update "
                      r"to|install)\s+)['\"`]?(?P<pin>[A-Za-z][\w.-]{0,60}==[\w.+!-]{1,40})['\"`]?")


# A reply linking the repository's code at a commit that works ("Here's a new notebook that should work: https://
# githubtocolab.com/o/r/blob/68a3f926.../x.ipynb"): the fix is that commit (GitHub's and Colab's views of it).
_REPLY_SHA_LINK = re.compile(r"https?://(?:github\.com|githubtocolab\.com|colab\.research\.google\.com/github)/"
                             r"(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/(?:blob|tree|commit)/(?P<sha>[0-9a-f]{7,40})\b")
_SHOULD_WORK = re.compile(r"\bshould (?:now )?work\b|\bworks now\b|\bnow works\b", re.IGNORECASE)
# A reply saying its writer put new code in the repository ("For now, I've temporarily added a device parameter",
# "we pushed a patch"): the commit its link names holds that change, the fix (not a line the reporter changed
# locally: "I modified this code ... then it can resume", "I added a print here" link the code as it was).
PUSHED = re.compile(r"\b(?:I|we)(?:['\u2019]ve| have)?\s+(?:\w+\s+)?(?:pushed|committed|merged|added\s+(?:\w+\s+){0,3}?"
                    r"(?:parameter|argument|check|fix|patch|option|flag|guard|workaround)s?\b)", re.IGNORECASE)


def _named_fixes(lines: list[str], url: str) -> tuple[str, ...]:
    """Fixes the text names, in order: ``commit:<sha>`` for a commit of the report's repository, else the
    ``name==version`` a reply installed (or tells the reporter to use) and said solved it; ``said:<how>`` for a
    sentence saying how it was fixed ("Fixed with replacing labels_cuda")."""
    own = _URL.match(url)
    own_repo = own["repo"].lower() if own else ""
    found: list[str] = []
    replied = False
    for index, line in enumerate(lines):
        context = " ".join(lines[max(0, index - 3): index + 1])
        replied = replied or bool(REPLY_HEADER.match(line.strip()))
        for match in _COMMIT_URL.finditer(line) if own_repo and "/commit/" in line else ():
            if match["repo"].lower() == own_repo and _SAYS_FIXED.search(line.replace(match.group(), " ")):
                found.append(f"commit:{match['sha']}")
        found += [f"commit:{match['sha']}" for match in _REPLY_SHA_LINK.finditer(line) if replied and own_repo
                  and match["repo"].lower() == own_repo and (_SAYS_FIXED.search(context.replace(match.group(), " "))
                                                              or _SHOULD_WORK.search(context)
                                                              or PUSHED.search(context))]
        for match in _PIP_PIN.finditer(line) if "==" in line else ():  # "pip install x==1", "you can use x==1"
            if _SAYS_FIXED.search(context):
                found.append(match["pin"])
        if said := _FIXED_BY.match(line):
            found.append(f"said:{said['how'].strip()}")
        found += [f"release:{match['ver']}" for match in _FIXED_IN_RELEASE.finditer(line)]
        found += [f"pr:{match['num']}" for match in _FIXED_IN_PR.finditer(line)]
        found += [f"pr:{match['num']}" for match in _PULL_URL.finditer(line) if own_repo and "/pull/" in line
                  and match["repo"].lower() == own_repo and _SAYS_FIXED.search(line.replace(match.group(), " "))]
    return tuple(dict.fromkeys(found))


# A reply naming the project's own release that fixed it: "It should be resolved in the latest release 0.1.32".
_FIXED_IN_RELEASE = re.compile(r"\b(?:fixed|solved|resolved|addressed)\s+(?:in|by|with)\s+(?:the\s+)?"
                               r"(?:(?:latest|new|newest)\s+)?(?:release|version)\s+v?(?P<ver>\d+\.\d+(?:\.\d+)?)\b",
                               re.IGNORECASE)


# A maintainer's pull request that fixes it: "fixed in #43", "can you check now on pr #43", "resolved by PR #7".
_FIXED_IN_PR = re.compile(r"\b(?:fixed|solved|resolved|addressed|check(?:ed)?(?:\s+it)?\s+now)\s+(?:in|by|on|with|via)"
                          r"\s+(?:the\s+)?(?:(?:PR|pull request)\s*)?#(?P<num>\d{1,6})\b", re.IGNORECASE)
_PULL_URL = re.compile(r"https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/pull/(?P<num>\d{1,6})\b")


# A sentence saying how the bug was fixed, in the fixer's words: "Fixed with replacing labels_cuda."
_FIXED_BY = re.compile(r"^\s*(?:I\s+)?(?:fixed|solved|resolved)\s+(?:it\s+|this\s+)?(?:with|by)\s+"
                       r"(?P<how>[a-z]+ing\b[^.!?\n]{3,120})", re.IGNORECASE)


# Calls a frameless report's code and prose name, best first: a function a sentence about the error places it in
# ("The error is within create_discrete_q_function when ..."), the last method the code calls on an object it built
# from a class (``trainer = SetFitTrainer(...)`` ... ``trainer.train(`` -> SetFitTrainer.train), then the script it
# ran (``python train.py``, "when I run train.sh", "run the training code" -> train / training).
_ERROR_WORDS = re.compile(r"\b(?:error|errors|fails?|failed|failing|crash\w*|raised?|occurs?|exception)\b",
                          re.IGNORECASE)
_SAID_IN = re.compile(r"\b(?:with)?in(?:side)?\s+(?:the\s+)?(?:function\s+|method\s+)?`?(?P<name>[a-z_][a-z0-9]*_"
                      r"[a-z0-9_]+|[A-Z]\w+\.[a-z_]\w+)`?(?![\w./])")
# An object built by a class's constructor (one a class method loads, ``TFTModel.load_from_checkpoint``, is that call)
_BUILT = re.compile(r"^\s*(?P<var>[a-z_]\w{0,40})\s*=\s*(?:[a-z_]\w*\.)*(?P<cls>[A-Z][A-Za-z0-9]{2,60})\(")
_METHOD_CALL = re.compile(r"(?<![\w.])(?P<var>[a-z_]\w{0,40})\.(?P<method>[a-z]\w{1,60})\(")
_SCRIPT = re.compile(r"\b(?:python3?\s+(?:-m\s+)?|(?:run|running|ran|bash|sh)\s+)(?:the\s+|my\s+)?(?:\S*/)?"
                     r"(?P<name>[A-Za-z_]\w{1,40})(?:\.py|\.sh|\s+(?:code|script)\b)")


def _named_calls(lines: list[str]) -> tuple[str, ...]:
    # a frame quoted inside a sentence ('happens in "../x/best_epoch.py", line 51, in on_validation_batch_end'):
    # its function, named with its file (a hook's bare name says nothing of whose code it is)
    quoted = [f"{_PATH_PARTS.split(m['path'])[-1]} {m['func']}" for line in lines
              if not line.lstrip().startswith("File ") for m in _PROSE_FRAME.finditer(line)]
    said = [*quoted, *(m["name"] for line in lines if not line[:1].isspace() and _ERROR_WORDS.search(line)
                       for m in _SAID_IN.finditer(_NOT_PROSE_CODE.sub(" ", line)))]
    built: dict[str, str] = {}
    made: list[str] = []
    for line in lines:
        if "File " in line:
            continue
        if (assigned := _BUILT.match(line)) and assigned["cls"] not in _COMMON_CLASSES:
            built[assigned["var"]] = assigned["cls"]
        made += [f"{built[m['var']]}.{m['method']}" for m in _METHOD_CALL.finditer(line) if m["var"] in built]
    scripts = [m["name"] for line in lines if "File " not in line for m in _SCRIPT.finditer(line)
               if m["name"].lower() not in _NOT_SCRIPTS]
    return tuple(dict.fromkeys([*said, *made[-1:], *scripts]))


_PATH_PARTS = re.compile(r"[/\\]")
_PROSE_FRAME = re.compile(r'"(?P<path>[^"\n]{1,300}\.py)", line \d+, in (?P<func>[A-Za-z_]\w{0,80})')
_NOT_PROSE_CODE = re.compile(r"\S*(?:/|\\|://)\S*")
_NOT_SCRIPTS = frozenset({"the", "this", "that", "above", "below", "following", "same", "my", "your", "it", "example",
                          "sample", "demo", "code", "script", "setup", "test", "tests", "pip"})


# Where the report's run happened, as its text says: "cpu" (the code sets accelerator/device "cpu", or the prose says
# the machine has no GPU), "gpu" (the code moves to CUDA, or the prose names an NVIDIA card), else "".
_NO_GPU = re.compile(r"\b(?:(?:do(?:es)?n'?t|do(?:es)? not|don't) have (?:a |any )?GPU|no GPU|without (?:a )?GPU"
                     r"|CPU[- ]only)\b", re.IGNORECASE)
_CPU_SET = re.compile(r"""\b(?:accelerator|device)\s*=\s*(?P<quote>["'])(?P<device>cpu|gpu|cuda(?::\d+)?|auto)"""
                      r"(?P=quote)")
_GPU_SAID = re.compile(r"\.cuda\(\)|\bNVIDIA\b|\b(?:RTX|GTX)\s?\d{3,4}\b|\b[AHV]100\b|\bTesla\b", re.IGNORECASE)


# An 8-bit run through bitsandbytes' CUDA library: its setup banner loading the binary, or an 8-bit load or layer.
_EIGHT_BIT = re.compile(r"libbitsandbytes_cuda\d*|\bload_in_8bit\s*=\s*True|\bLinear8bitLt\b|\bbitsandbytes==")


def _eight_bit(lines: list[str]) -> bool:
    return any(_EIGHT_BIT.search(line) for line in lines)


def _ran_on(lines: list[str]) -> str:
    """"cpu-arg" is "cpu" asked for by the run's own device argument (``device="cpu"`` passed to the library, not a
    ``.to(device="cpu")`` a fix adds): a message naming CUDA then says the library ignored it."""
    text = "\n".join(lines)
    if _NO_GPU.search(text):
        return "cpu"
    devices = [(m["device"], line[:m.start()], line) for line in lines for m in _CPU_SET.finditer(line)]
    if devices:
        device, before, line = devices[-1]
        if device == "cpu":
            return "cpu" if before.endswith(".to(") or _FIX_WORDS.search(line) else "cpu-arg"
        return "gpu" if device != "auto" else ""
    return "gpu" if _GPU_SAID.search(text) else ""


_FIX_WORDS = re.compile(r"\b(?:solution|solve[sd]?|fix(?:ed|es)?|workaround|instead|add(?:ed|ing)?)\b", re.IGNORECASE)


# The script a report ran: a launcher's summary naming it ("tools/train_occ.py FAILED"), else a command line running it
# (``python lerobot/scripts/train.py ...``, ``python -m torch.distributed.run --nproc_per_node=4 train.py``).
_FAILED_SCRIPT = re.compile(r"^\s*(?P<script>[\w./-]{1,120}\.py) FAILED\s*$")
_RUN_SCRIPT = re.compile(r"(?:^|[\s`$>])(?:python[\d.]*|torchrun|deepspeed|accelerate launch)\s(?:[^`|;&]*?\s)?"
                         r"(?P<script>[\w./-]{1,120}\.py)(?![\w.])")


def _ran_command(lines: list[str]) -> str:
    """The command line that ran the report's script, with its arguments (the run's settings: ``--plugin ddp``,
    ``--mixed_precision bf16``): a code span holding it, else the line from its environment variables and launcher
    up to the first plain word after the script that is no flag's value (the prose going on); "" when none."""
    joined = "\n".join(lines).replace("\\\n", " ").splitlines()
    for line in (line for line in joined if "File " not in line):
        if not (match := _RUN_SCRIPT.search(line)):
            continue
        span = next((code for code in re.findall(r"`([^`]+)`", line) if _RUN_SCRIPT.search(f" {code}")), "")
        before = [] if span else line[: match.start() + 1].split()
        env = list(itertools.takewhile(_ENV_SETTING.fullmatch, reversed(before)))[::-1]
        kept: list[str] = []
        for token in [*env, *(span or line[match.start():]).strip("`$> ").split()]:
            if any(t.endswith(".py") for t in kept) and _PLAIN_WORD.fullmatch(token) \
                    and not (kept and re.match(r"--?\w", kept[-1])):
                break
            kept.append(token)
        return " ".join(kept)[:_MAX_COMMAND]
    return ""


_ENV_SETTING = re.compile(r"[A-Z_][A-Z0-9_]*=\S*")
_PLAIN_WORD = re.compile(r"[A-Za-z]+[,.:;!?]?")
_MAX_COMMAND = 240


def _ran_script(lines: list[str]) -> str:
    """The script the report's run named (its path as written, without a leading ./), else ""."""
    joined = "\n".join(lines).replace("\\\n", " ").splitlines()  # a shell command continued over lines
    found = next((m for line in joined if (m := _FAILED_SCRIPT.match(line))), None) \
        or next((m for line in joined if (m := _RUN_SCRIPT.search(line))), None)
    return found["script"].removeprefix("./") if found else ""


# "I find the error on the line:" and the source line quoted on the next line (``x = torch.where(...)``).
_ON_THE_LINE = re.compile(r"\b(?:error|fails?|failed|raises?|crash\w*)\b.{0,40}\b(?:on|at|in) (?:the|this) "
                          r"(?:following )?line\s*:?\s*$", re.IGNORECASE)
_QUOTED_CODE = re.compile(r"^\s*(?:(?P<target>[A-Za-z_]\w{0,60})\s*=\s*)?(?P<call>[A-Za-z_][\w.]{0,80})\(")


# What a report's own words say ran when it failed, where no frame of the project shows: a file (``finetune.py``,
# "Update utils.py"), a name shaped like code (``MultiBandDiffusion``, ``Face_Verification``), else a run word and the
# name before it ("Tensor preprocessing", "click train"). Read from the title and the description, never a reply,
# an exception line, a log record, code or a link.
_SUBJECT_FILE = re.compile(r"(?<![\w/.-])(?P<name>[A-Za-z_][\w-]{1,60}\.py)\b")
_SUBJECT_CODE = re.compile(r"(?<![\w./-])(?P<name>[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[A-Z][A-Za-z0-9]*_[A-Za-z0-9_]+)"
                           r"(?<=[a-z0-9])(?![\w./-])(?!\s*[:=]{0,2}\s*v?\d)")  # no acronym, no listing's "Name: 1.2"
_SUBJECT_RUN = re.compile(r"(?:\b(?P<noun>[A-Z][a-z]{2,30}) (?=(?i:preprocessing|training|fine-?tuning|inference|"
                          r"evaluation)\b)|\b(?i:click(?:ed)?|press(?:ed)?|run(?:ning)?|start(?:ed)?|when i|while|"
                          r"during)\s+(?:the\s+)?)\b(?P<run>(?i:preprocessing|training|train|fine-?tuning|finetune|inference|"
                          r"evaluation|resuming|resume))\b")
_RUN_WORDS = {"train": "training", "finetune": "fine-tuning"}  # "When i click train": the run is its training
# Names of tools and vendors a report mentions in passing, never the run that failed.
_NOT_SUBJECTS = frozenset({"PyTorch", "TensorFlow", "GitHub", "HuggingFace", "JupyterLab", "PyPI", "OpenAI",
                           "WandB", "TensorBoard", "MacBook", "PyCharm", "VSCode", "DeepSpeed", "GeForce", "MacOS",
                           "RedHat", "CentOS", "OpenMMLab", "ModelScope"})
_NOT_SUBJECT = re.compile(r"^(?:Source: |\(issue |\(pull request )|Error\b|Exception\b|Traceback|\w+Error: |"
                          r"(?:ERROR|WARNING|INFO|CRITICAL|DEBUG):")
# A reply's header as an issue thread is stored or copied ("someone · comment · 2025-02-11"): what follows is a
# reply or a review note, not the report's own text.
REPLY_HEADER = re.compile(r"^\S.{0,80} · (?:comment|review) · \d{4}-\d{2}-\d{2}\s*$")


def first_reply(lines: list[str]) -> int | None:
    """The index of the thread's first reply header (a comment or review), None when the text has no reply."""
    return next((i for i, line in enumerate(lines) if REPLY_HEADER.match(line.strip())), None)


def _subjects(lines: list[str]) -> tuple[str, ...]:
    """The names the report's own prose gives its failing run, title first, then the description, in order: files and
    code names of each line before its run words."""
    found: list[str] = []
    fenced = False
    for index, line in enumerate(lines):
        if REPLY_HEADER.match(line.strip()):
            break
        if _ON_THE_LINE.search(line) and index + 1 < len(lines) and (code := _QUOTED_CODE.match(lines[index + 1])):
            found.insert(0, code["target"] or code["call"])  # the failing line itself: what it computes
        fenced = fenced != line.lstrip().startswith("```")
        if fenced or line.lstrip().startswith("```") or line[:1].isspace() or _NOT_SUBJECT.match(line.lstrip("# ")) \
                or TURN_MARKER.match(line):
            continue
        text = _NOT_PROSE_CODE.sub(" ", re.sub(r"\b[A-Z]\w*(?:Error|Exception|Warning)\b.*", " ", line))
        found += [m["name"] for pattern in (_SUBJECT_FILE, _SUBJECT_CODE) for m in pattern.finditer(text)
                  if m["name"] not in _NOT_SUBJECTS]
        found += [f"{m['noun']} {m['run'].lower()}" if m["noun"] else _RUN_WORDS.get(m["run"].lower(), m["run"].lower())
                  for m in _SUBJECT_RUN.finditer(text)]
    return tuple(dict.fromkeys(found))
