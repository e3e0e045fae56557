"""What a report's words say ran that the English-shaped prose readers miss, carried to ``_said`` inside
``BugReport.shown_calls`` as marked entries (``~kind:name``; ``_shown``'s readers of calls skip them):

- ``glued``: a script (``trainer.py``) or a dotted call (``model.fit()``) written with no space inside non-ASCII words
  ("好像在trainer.py文件里"): Python's ``\\w`` takes CJK letters for word characters, so a name glued to them is missed;
- ``run``: the run a CJK title or description says failed ("评估阶段出现RuntimeError": evaluation), its word nearest
  before the error;
- ``worked``: a script the reporter says ran fine ("i run a.py without any error, but when i run b.py ..."): never the
  failing run's name;
- ``reply``: a file a reply's workaround says to change ("comment the code ... in the dist_train.py");
- ``key``: a key of a printed argument or config listing (``log_dir ........ logs``, ``lr: 0.1`` lines): never an API;
- ``folder``: a name the prose says is a folder ("in the logs_slurm folder", "directory `outputs_run`"): never an API;
- ``where``: the failing place the prose quotes: a frame's tail (``torchio/data/image.py", line 471, in _parse_path``:
  ``image.py _parse_path``), or a link to a file's line (``github.com/o/r/blob/<ref>/test.py#L200``: ``o/r:test.py``);
- ``marked``: the call of a code line the reporter marks as the failing one with a short comment (``data =
  next(self.dl).cuda() #here``, ``loss = crit(x)  # <-- error``);
- ``ran``: a command the description (a console command: the thread) quotes where the command reader finds none:
  a quoted ``python x.py ...``'s script (``when I run "python main.py --model m"``: main.py), or a line that is a
  console command with its first option (``lm_eval --model hf --tasks swag``: ``lm_eval --model hf``; ``_said``
  keeps it when it is the project's);
- ``defined``: a function the description's code defines (``def preprocess(``) and its prose names
  ("我只把preprocess函数给换了", "I changed `preprocess`"): the reporter's own code that ran, over the calls in it.
"""

from __future__ import annotations

import builtins
import re

SAID = "~"

_GLUED = re.compile(r"(?<![A-Za-z0-9_./\\-])(?P<name>[A-Za-z_][A-Za-z0-9_-]*\.(?:py|sh)|"
                    r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\(\))(?![A-Za-z0-9_])", re.ASCII)
_NOT_PROSE = re.compile(r"^(?:Source: |\(issue |\(pull request )|://|^\s*File \"")


def said_marks(own: list[str], replies: list[str]) -> list[str]:
    """The marked entries of a report's lines: ``own`` (the issue's title and description), then its ``replies``."""
    prose = _prose_lines(own)
    marks = [*(f"glued:{name}" for name in _glued_names(prose)),
             *(f"called:{name}" for name in _prose_calls(prose)), *(f"run:{run}" for run in _cjk_runs(prose)[:1]),
             *(f"worked:{name}" for name in _worked_scripts(prose)),
             *(f"reply:{name}" for name in _reply_files(_prose_lines(replies, indented=True))[:1]),
             *(f"key:{key}" for key in _listing_keys([*own, *replies])),
             *(f"marked:{call}" for call in [*_marked_calls(own), *_error_at_calls(prose)][:1]),
             *(f"folder:{name}" for name in _folder_names(prose)),
             *(f"where:{place}" for place in _quoted_places(own)[:1]),
             *(f"ran:{command}" for command in _ran_commands(own, replies)[:1]),
             *(f"defined:{name}" for name in _named_functions(own, prose)[:1])]
    return [SAID + mark for mark in dict.fromkeys(marks)]


def said_marked(calls: tuple[str, ...], kind: str) -> list[str]:
    """The names of ``kind`` the marked entries of ``calls`` carry, in order."""
    return [call.partition(":")[2] for call in calls if call.startswith(f"{SAID}{kind}:")]


def unmarked(calls: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(call for call in calls if not call.startswith(SAID))


def _prose_lines(lines: list[str], indented: bool = False) -> list[str]:
    """The lines of prose: no fenced or (unless ``indented``) indented code, no frame, link or stored header."""
    fenced, prose = False, []
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and (indented or not line[:1].isspace()) and not _NOT_PROSE.search(line):
            prose.append(line)
    return prose


def _glued(text: str, start: int, end: int) -> bool:
    """Whether a name runs into a non-ASCII letter on either side (a space or punctuation separates an English one)."""
    around = (text[start - 1] if start else " ", text[end] if end < len(text) else " ")
    return any(char.isalnum() and not char.isascii() for char in around)


def _glued_names(prose: list[str]) -> list[str]:
    """Scripts by their file's name, calls as a title writes them (``Class.method``, else the last name)."""
    return [_written(m["name"]) for line in prose if not line.isascii() for m in _GLUED.finditer(line)
            if _glued(line, m.start(), m.end()) and m["name"].partition(".")[0] not in _FOREIGN_ROOTS]


# Another library's calls ("用torch.cuda.synchronize()时"): that library's API, never the project's.
_FOREIGN_ROOTS = frozenset({"torch", "np", "numpy", "nn", "F", "tf", "jax", "os", "sys", "pd", "cv2", "math"})


def _written(name: str) -> str:
    if name.endswith((".py", ".sh")):
        return name
    parts = name.removesuffix("()").split(".")
    return f"{parts[-2]}.{parts[-1]}" if parts[-2][:1].isupper() and parts[-1][:1].islower() else parts[-1]


# A call a non-English sentence writes outside inline code ("在调用 widget.fit() 时报错", "调用 fit_widget(x) 时"):
# dotted, snake_case or camelCase (a word with a plural "(s)" is none); inline code and paths are other readers'. An
# English sentence's plain-text call is none here: read there, it named worse APIs than the other readers on the
# fixtures (a config's json.load(), a class's constructor over its method).
_PROSE_CALL = re.compile(r"(?<![\w.])(?P<call>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\([^()]{0,60}\)", re.ASCII)
_NON_ASCII_LETTER = re.compile(r"[^\W\d_A-Za-z]")
_NOT_PROSE_CALL = re.compile(r"`[^`]*`|\S*(?:/|\\|://)\S*")


def _prose_calls(prose: list[str]) -> list[str]:
    calls = [m["call"] for line in prose if "(" in line and not line.isascii() and _NON_ASCII_LETTER.search(line)
             for m in _PROSE_CALL.finditer(_NOT_PROSE_CALL.sub(" ", line))]
    return [call for call in calls if "." in call or "_" in call.strip("_") or re.search(r"[a-z][A-Z0-9]", call)]


# The run a CJK (Chinese or Japanese) sentence names, nearest before its error: "评估阶段出现RuntimeError".
_CJK_RUNS = {"恢复训练": "resuming training", "继续训练": "resuming training", "训练": "training", "訓練": "training",
             "学習": "training", "评估": "evaluation", "評估": "evaluation", "評価": "evaluation", "验证": "validation",
             "推理": "inference", "推論": "inference", "微调": "fine-tuning", "测试": "testing", "预测": "prediction",
             "生成": "generation"}
_CJK_RUN = re.compile("|".join(_CJK_RUNS))  # longer words first: "恢复训练" (resume training) before "训练"
_CJK_ERROR = re.compile(r"[A-Z]\w*(?:Error|Exception)\b|错误|報錯|报错|出错|エラー|異常|异常", re.ASCII)


def _cjk_runs(prose: list[str]) -> list[str]:
    found = []
    for line in prose:
        if not line.isascii() and (error := _CJK_ERROR.search(line)):
            runs = _CJK_RUN.findall(line, 0, error.start())
            found += [_CJK_RUNS[runs[-1]]] if runs else []
    return found


# A script the reporter says ran without failing: the name, then within its clause (no "but", "when", negation) a
# phrase of success ("without any error", "works fine", "ran successfully").
_WORKED = re.compile(r"(?<![\w./-])(?P<name>[A-Za-z_][\w-]*)\.py\b(?P<gap>[^.,;!?]{0,40}?)\b(?:without (?:any )?"
                     r"(?:errors?|problems?|issues?)|works? (?:fine|well|perfectly|ok(?:ay)?)|(?:runs?|ran|running) "
                     r"(?:fine|well|ok(?:ay)?|smoothly|perfectly|successfully)|successfully|is (?:fine|ok(?:ay)?|"
                     r"working))\b", re.I)
_NEGATED = re.compile(r"\b(?:not|never|cannot|unable)\b|n't\b", re.I)
# A failure said after the success phrase, before any other script is named: the same run failed later.
_FAILED_AFTER = re.compile(r"\b(?:crash\w*|fails?|failed|failing|errors?|exception|breaks?|hangs?)\b", re.I)
_NOT_WORKED = re.compile(r"\b(?:but|when|while|not|never|however|cannot|fails?|failed)\b|n't\b", re.I)


def _worked_scripts(prose: list[str]) -> list[str]:
    """Scripts said to work, when the prose names another script too ("a.py runs fine but fails on two GPUs": the
    only script named is the failing run's)."""
    prose = [line for line in prose if ".py" in line]
    worked = [m["name"] for line in prose for m in _WORKED.finditer(line) if not _NOT_WORKED.search(m["gap"])
              and not _NEGATED.search(re.split(r"[.,;!?]", line[:m.start()])[-1])  # "I can't run a.py without ..."
              and not _FAILED_AFTER.search(_SCRIPT.split(line[m.end():], 1)[0])]  # "... loads, then crashes"
    named = {m["name"].removesuffix(".py") for line in prose for m in _SCRIPT.finditer(line)} if worked else set()
    return worked if named - set(worked) else []


_SCRIPT = re.compile(r"(?<![\w./-])(?P<name>[A-Za-z_][\w-]*\.py)\b")


# A file a reply names as where to change the code ("... in the dist_train.py", "in `utils/misc.py`").
_REPLY_FILE = re.compile(r"\bin (?:the )?(?:file )?`?(?:[\w.-]+/)*(?P<name>[A-Za-z_][\w-]*\.py)\b")


def _reply_files(prose: list[str]) -> list[str]:
    return [m["name"] for line in prose for m in _REPLY_FILE.finditer(line) if m["name"] not in _NOT_RUN_FILES]


_NOT_RUN_FILES = frozenset({"setup.py", "__init__.py", "conftest.py"})  # packaging and package files: no run


# A printed argument or config listing's line: "  log_dir ........ logs" (two or more dots as a leader) or
# "  lr: 0.0006" / "lr = 0.0006"; three such lines in a row make a listing (a cut key may end it alone: "output_").
_LEADER = re.compile(r"^\s*(?P<key>[A-Za-z_]\w*)\s*\.{2,}\s*\S")
_KEY_VALUE = re.compile(r"^\s*(?P<key>[a-z_][a-z0-9_]*)\s*[:=]\s*(?:'[^']*'|\"[^\"]*\"|\[[^()]*\]|\{[^()]*\}|"
                        r"[\w./+-]+)\s*,?\s*$")  # a value, never a call (``model = Net()`` is code)
_CUT_KEY = re.compile(r"^\s*(?P<key>[A-Za-z_]\w*)\s*$")


def _listing_keys(lines: list[str]) -> list[str]:
    keys: list[str] = []
    run: list[str] = []
    for line in [*lines, ""]:
        match = (_LEADER.match(line) or _KEY_VALUE.match(line)) if line.strip() else None
        if match:
            run.append(match["key"])
            continue
        if len(run) >= 3:
            keys += [*run, *(m["key"] for m in [_CUT_KEY.match(line)] if m)]
        run = []
    return keys


# A code line's comment that marks it as the failing one: an arrow, or only words of "error here" ("#here", "# <--",
# "# error occurs here", "# this line fails"); a comment with other words is the code's own ("# here we load data").
_MARK_COMMENT = re.compile(r"\s#\s*(?P<text>[^#]{0,40}?)\s*$")
_MARK_ARROW = re.compile(r"^(?:<-+|<=+|\u2190)")
_MARK_WORDS = frozenset({"here", "error", "errors", "exception", "occurs", "occurred", "happens", "fails", "failed",
                         "crash", "crashes", "crashed", "raises", "raised", "is", "this", "line", "the", "bug",
                         "problem", "issue", "breaks", "!", "!!", "!!!"})
_OTHER_ROOTS = frozenset({"torch", "np", "numpy", "F", "nn", "os", "sys", "pd", "tf", "jax", "math", "json", "time"})
_MARKED_CODE = re.compile(r"^(?:[\w.,\[\] ]+?\s*=(?!=)\s*)?(?P<call>[A-Za-z_][\w.]*\(.*\)[\w.()]*)$")


def _marked_calls(lines: list[str]) -> list[str]:
    """The calls (as written, an assignment's right side) of code lines a short comment marks as failing."""
    found, fenced = [], False
    for line in lines:
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        comment = _MARK_COMMENT.search(line) if fenced or line[:1].isspace() else None
        if comment is None:
            continue
        text = comment["text"].lower()
        words = _MARK_ARROW.sub("", text).split()
        if not (_MARK_ARROW.match(text) or (words and len(words) <= 4 and set(words) <= _MARK_WORDS)):
            continue
        found.extend(_line_call(line[: comment.start()]) if comment.start() < 200 else [])
    return found


def _line_call(line: str) -> list[str]:
    """A code line's call as a title names it: a single call's callable, a short chain as written."""
    code = _MARKED_CODE.match(line.strip())
    single = re.fullmatch(r"(?:[A-Za-z_]\w*\.)*(?P<name>[A-Za-z_]\w*)\([^()]*\)", code["call"]) if code else None
    if single and (single.group().partition(".")[0] in _OTHER_ROOTS or single["name"] in dir(builtins)):
        return []  # another library's or Python's call names no API of the project
    if single:  # one call: its callable, as the prose readers write it (``einops.reduce(x, ...)``: reduce)
        return [single["name"]]
    return [code["call"]] if code and len(code["call"]) <= 40 else []  # a chain (``next(self.dl).cuda()``)


# A prose sentence that puts the error at a code line it quotes: "This error happened in : pred = self.net(x)",
# "the error occurs at `loss = crit(out, y)`".
_ERROR_AT = re.compile(r"\b(?:error|exception)\b[^.!?:`]{0,30}\b(?:happen\w*|occur\w*|is|was|raised|thrown)\s+"
                       r"(?:in|at|on)\s*(?:the\s+line\s*)?:?\s*`?(?P<code>[^`]{3,160}?)`?\s*$", re.I)


def _error_at_calls(prose: list[str]) -> list[str]:
    # the statement ends the line: its last 300 characters hold the sentence (linear time on a hostile long line)
    return [call for line in prose if (m := _ERROR_AT.search(line[-300:])) for call in _line_call(m["code"])]


# A name the prose calls a folder: "the X folder/directory/dir", "folder/directory X".
_FOLDER = re.compile(r"(?<![\w.-])`?(?P<before>[\w.-]{2,60})`?\s+(?:folder|directory|dir)\b|"
                     r"\b(?:folder|directory|dir)\s+`?(?P<after>[\w.-]{2,60})`?", re.I)


def _folder_names(prose: list[str]) -> list[str]:
    names = (m["before"] or m["after"] for line in prose for m in _FOLDER.finditer(line))
    return [name for name in names if "_" in name or "." in name or "-" in name]  # a name, not "the"/"output"


# A frame's tail quoted in prose (no ``File "`` before it: the frame parser reads whole frame lines), and a link to a
# line of a repository's file.
_FRAME_TAIL = re.compile(r"(?<!File \")(?<![\w-])(?P<file>[\w-]+\.py)\"?,\s*line\s+\d+,\s*in\s+(?P<func>[A-Za-z_]\w*)")
_LINE_LINK = re.compile(r"github\.com/(?P<repo>[\w.-]+/[\w.-]+)/blob/[^/\s]+/(?:[^\s#)]*/)?(?P<file>[\w-]+\.py)#L\d+")

# The words before a link that say the error is at that line ("I get an error in this line https://..."); a link
# alone is often where the reporter reads the code or proposes the fix.
_FAILS_AT_LINE = re.compile(r"\b(?:errors?|fails?|failed|failing|crash\w*|raises?|exception)\b[^.!?]{0,40}\b"
                            r"(?:at|in|on) (?:this|that|the|the following) line\s*:?\s*(?:\(|<|\[)?"
                            r"(?:https?://)?(?:www\.)?$", re.I)


def _quoted_places(own: list[str]) -> list[str]:
    """Where the description says it fails: a quoted frame's ``file function``, else a linked line's ``repo:file``."""
    text = [line for line in own if not line.lstrip().startswith(("File \"", "Source: "))]
    frames = [f"{m['file']} {m['func']}" for line in text for m in _FRAME_TAIL.finditer(line)]
    links = [f"{m['repo']}:{m['file']}" for line in text for m in _LINE_LINK.finditer(line)
             if _FAILS_AT_LINE.search(line[: m.start()])]
    return [*frames, *links]


# A quoted Python run's script (``"python main.py --model m"``, ``$ python3 -u tools/x.py``) and a line that is a
# console command with its first option (``lm_eval --model hf``; ``name --flag=value``).
_RAN_PYTHON = re.compile(r"(?:^|[\s\"'`$>])python(?:3(?:\.\d{1,2})?)?\s+(?:-\w+\s+)*(?P<script>[\w./\\-]{1,200}\.py)\b")
_RAN_CONSOLE = re.compile(r"^\s*(?P<command>[a-z][\w-]{1,30})\s+(?P<option>--[a-z][\w-]{0,40})"
                          r"[ =](?P<value>[\w.-]{1,60})(?:\s|$)")
# Programs that are never a project's own console command (a patch's ``diff --git``, ``pip install --upgrade x``).
_TOOLS = frozenset({"diff", "git", "pip", "pip3", "conda", "mamba", "docker", "sudo", "apt", "apt-get", "make", "cd",
                    "export", "bash", "sh", "nvidia-smi", "uv", "curl", "wget", "python", "python3"})


def _ran_commands(own: list[str], replies: list[str]) -> list[str]:
    """The commands the description quotes: a Python run's script, a console command with its first option (the
    thread's too: ``_said`` keeps only the project's own console command)."""
    found = []
    for line in [*own, *replies]:
        if (python := _RAN_PYTHON.search(line)) is not None and line in own:
            found.append(python["script"].removeprefix("./"))
        elif (console := _RAN_CONSOLE.match(line)) is not None and console["command"] not in _TOOLS:
            found.append(f"{console['command']} {console['option']} {console['value']}")
    return found


_TOP_DEF = re.compile(r"^(?:async\s+)?def\s+(?P<name>[A-Za-z]\w{3,60})\s*\((?!\s*self\b)")


def _named_functions(own: list[str], prose: list[str]) -> list[str]:
    """Top-level functions the description's code defines that its prose names as a word (ASCII-bounded: CJK words
    may touch it)."""
    names = list(dict.fromkeys(m["name"] for line in own if (m := _TOP_DEF.match(line))))[:20]  # linear time
    return [name for name in names if not name.startswith("_") and name not in {"main", "forward", "test"}
            and any(re.search(rf"(?<![A-Za-z0-9_.]){name}(?![A-Za-z0-9_(])", line) for line in prose)]
