"""The calls a report's own code shows: what a frameless (or torch-only) report ran, when no frame names it.

A report often shows its run as code rather than as a traceback: a fenced or indented block (``model = Net()`` /
``train_and_eval(model, loader)``), or the bare source line Python printed above a frameless exception line
(``offset = self.offset(x) * 0.25 + self.init_pos``). :func:`shown_calls` lists the calls that code makes, the
statement's own call before an assigned one, the reporter's code before a reply's; a reply only adds the functions its
patch changes (a unified diff's ``def`` above its first changed line) and the methods its code shows the project's body
of (``def forward(self, x):``), never its calls (a reply's calls are its fix: ``x.to(device)``, ``get_device()``).
Another library's and Python's own calls are left out here or in ``_said``.
"""

from __future__ import annotations

import builtins
import itertools
import re

from harness.authoring._prose import REPLY_HEADER
from harness.authoring._said_prose import SAID, said_marks, unmarked
from harness.authoring._traceback import _strong_exception, _unmark

__all__ = ["FAILING", "common_class_call", "common_method_call", "shown_api", "shown_calls", "shown_starts"]

# Marks the call of the failing source line a report quotes above its error (``optimizer.load_state_dict(ckpt[...])``):
# the call that raised, kept even when it is every object's method.
FAILING = "!"

# A statement that is a call (``train_and_eval(model, ...)``, ``trainer.fit(model)``), and a call assigned to names
# (``model = Net()``, ``x, y = load(...)``): the call the statement makes, not one nested in its arguments.
_STATEMENT_CALL = re.compile(r"^(?:await\s+|return\s+)?(?P<call>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(")
_ASSIGNED_CALL = re.compile(r"^[A-Za-z_][\w.\[\]'\"]*(?:\s*,\s*[A-Za-z_][\w.\[\]'\"]*)*(?::\s*[\w.\[\],]+)?"
                            r"\s*[-+*/@]?=\s*(?:await\s+)?(?P<call>[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\(")
_IMPORT_FROM = re.compile(r"^from\s+(?P<module>[\w.]+)\s+import\s+(?P<names>[\w\s,()]+)$")
_IMPORT = re.compile(r"^import\s+(?P<module>[\w.]+)(?:\s+as\s+(?P<alias>\w+))?\s*$")
_DEFINED = re.compile(r"^(?:async\s+)?def\s+(?P<name>\w+)\s*\(|^class\s+(?P<cls>\w+)\b")
_METHOD = re.compile(r"^(?:async\s+)?def\s+(?P<name>[A-Za-z_]\w*)\s*\(\s*self\b")
_CLASS = re.compile(r"^class\s+(?P<cls>[A-Za-z_]\w*)\b")
_PROMPT = re.compile(r"^(?:>>>|\.\.\.)\s|^In \[\d*\]:\s*")
_FRAME_LINE = re.compile(r'^\s*File "')
# A unified diff's hunk header, with the context line git prints after it ("@@ -242,6 +242,7 @@ class Layer(...):").
_HUNK = re.compile(r"^\s*@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@\s?(?P<context>.*)$")
_DEF = re.compile(r"^(?:async\s+)?def\s+(?P<name>[A-Za-z_]\w*)\s*\(")


def shown_calls(lines: list[str]) -> tuple[str, ...]:
    """The calls the report's own code shows, once each, in order: the bare source line above a frameless exception
    line, then its code blocks' statement calls and assigned calls; then the functions a reply's patch changes and the
    project's methods a reply's code shows the body of (``forward``, ``Block.forward``).
    A call keeps its dotted form; one of a name the code imports from a
    module is written ``module:call`` (``transformers:AutoModel.from_pretrained``)."""
    own = list(itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines))
    replies = lines[len(own):]
    code = _code_lines(own)
    defined = {m["name"] or m["cls"] for line in code if (m := _DEFINED.match(line))}
    imported = _imports(code)
    box = _box_cell_calls(own)
    calls = [*_source_line_calls(own), *unmarked(tuple(box)), *_calls(code, _STATEMENT_CALL),
             *_calls(code, _ASSIGNED_CALL), *_command_classes(own)]
    kept = [_resolved(call, imported) for call in calls if call.removeprefix(FAILING).partition(".")[0] not in defined]
    shown = dict.fromkeys([*kept, *_patched_methods(replies), *_shown_methods(_code_lines(replies))])
    # what the words say (``_said_prose``) and a box cell's failing line, marked, after the calls
    return (*shown, *(call for call in box if call.startswith(SAID)), *said_marks(own, replies))


def _code_lines(lines: list[str]) -> list[str]:
    """The lines of fenced blocks and of indented blocks outside them (a traceback's lines are the frames' own),
    stripped of their indent and interpreter prompts."""
    fenced, code = False, []
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        # a frame's source line, and a cut traceback's first one (above its next frame): the frames' own calls
        framed = any(_FRAME_LINE.match(lines[j]) for j in (i - 1, i, i + 1) if 0 <= j < len(lines))
        if (fenced or line[:1] in (" ", "\t")) and not framed:
            code.append(_PROMPT.sub("", line.strip()))
    return code


def _source_line_calls(lines: list[str]) -> list[str]:
    """The call of the bare source line Python printed right above a frameless exception line (no ``File`` line
    above it: the report kept only the failing line and the error)."""
    found = []
    for i in range(1, len(lines)):
        above = lines[i - 1].strip().strip("`").strip()  # a failing line quoted with its error in one code span
        if not _strong_exception(_unmark(lines[i].strip())) or not above or above.startswith(("#", "File ", "```")):
            continue
        if i > 1 and _FRAME_LINE.match(lines[i - 2]):
            continue  # a frame's source line: the frame names the call
        match = _ASSIGNED_CALL.match(above) or _STATEMENT_CALL.match(above)
        if match:
            found.append(FAILING + match["call"])
    return found


# A rich-formatted box traceback's frame of a notebook cell ("│ in get_prediction:8 │": no file path, the reporter's
# own code; older rich writes "in <module>" alone) and its marked failing line ("│ ❱  8 │   outputs = new_model(x) │").
_BOX_CELL = re.compile(r"^[^/\\]*?[│|]\s*in\s+(?P<func>[\w<>]+)(?::\d+)?\s*[│|]?\s*$")
_BOX_FAILING = re.compile(r"[│|]\s*❱\s*\d+\s+(?:[│|]\s*)*(?P<code>.+?)\s*[│|]?\s*$")


def _box_cell_calls(lines: list[str]) -> list[str]:
    """The calls of a box traceback's failing lines in notebook cells' frames, innermost last (a file's frame, a
    library's, is the frame parser's)."""
    found, cell, source = [], False, ""
    for line in lines:
        if "│" not in line:
            continue
        if header := _BOX_CELL.match(line):
            cell = True
        elif re.search(r"[│|]\s*\S+\.py:\d+ in \w", line):
            cell = False  # a file's frame
        elif cell and header is None and (failing := _BOX_FAILING.search(line)):
            code = failing["code"]
            if match := _ASSIGNED_CALL.match(code) or _STATEMENT_CALL.match(code):
                found.append(FAILING + match["call"])
                source = code
    return [*found, f"{SAID}line:{source}"] if found else found  # the innermost cell's failing line, for the skeleton


# A command's option naming the class it runs ("python -m pkg -t train -a LSTMRecDQN", "--model TimeMixer"): a
# CamelCase class name (upper and lower case letters), never a path, a preset's lowercase name or a number; a
# sentence's full stop may follow it, glued to the next sentence ("-a LSTMRecDQN.And ...").
_COMMAND = re.compile(r"(?:^|\s|`)(?:python[\d.]*|accelerate launch|torchrun|deepspeed)\s+(?:-m\s+)?[\w./\\-]+")
_CLASS_OPTION = re.compile(r"\s(?:-a|-m|--agent|--algo|--algorithm|--model|--model[-_]name|--arch|--method|--network|"
                           r"--net)[\s=]+(?P<name>[A-Za-z_]\w*)(?=[\s`'\",;)]|\.(?:\s|$|[A-Z])|$)", re.ASCII)


def _command_classes(lines: list[str]) -> list[str]:
    """The classes a command line the report quotes runs by an option (its agent, model or architecture)."""
    found = []
    for line in lines:
        if command := _COMMAND.search(line):
            found += [m["name"] for m in _CLASS_OPTION.finditer(line, command.end())
                      if re.search(r"[A-Z]", m["name"]) and re.search(r"[a-z]", m["name"])]
    return found


def _calls(code: list[str], shape: re.Pattern[str]) -> list[str]:
    return [m["call"] for line in code if not line.startswith(("import ", "from ", "def ", "class ", "#", "@"))
            and not line.endswith((";", "{")) and (m := shape.match(line))]  # a C or JavaScript line is no run


def _imports(code: list[str]) -> dict[str, str]:
    """The names the code imports, with the top-level module each comes from."""
    names: dict[str, str] = {}
    for line in code:
        if match := _IMPORT_FROM.match(line):
            top = match["module"].split(".")[0]
            names |= {name.split(" as ")[-1].strip(): top for name in match["names"].strip().strip("()").split(",")
                      if name.strip()}
        elif match := _IMPORT.match(line):
            names[match["alias"] or match["module"].split(".")[0]] = match["module"].split(".")[0]
    return names


def _resolved(call: str, imported: dict[str, str]) -> str:
    root = call.removeprefix(FAILING).partition(".")[0]
    return f"{imported[root]}:{call}" if root in imported else call


def _patched_methods(lines: list[str]) -> list[str]:
    """The functions a reply's patch changes: in each diff hunk, the ``def`` (with its class) above its first added
    or removed line, from the hunk's own lines or the context line git prints in its header."""
    found, owner, function, in_hunk = [], "", "", False
    for line in lines:
        if match := _HUNK.match(line):
            in_hunk, function = True, ""
            owner = m["cls"] if (m := _CLASS.match(match["context"].strip())) else owner
            function = m["name"] if (m := _DEF.match(match["context"].strip())) else ""
            continue
        if not in_hunk or line.startswith(("+++", "---", "diff ")) or line.lstrip().startswith("```"):
            in_hunk = in_hunk and not line.startswith("diff ") and not line.lstrip().startswith("```")
            continue
        text = line[1:].strip()
        owner = m["cls"] if (m := _CLASS.match(text)) else owner
        function = m["name"] if (m := _DEF.match(text)) else function
        if line[:1] in "+-" and function:
            found.append(f"{owner}.{function}" if owner and function != "__init__" else owner or function)
            in_hunk = False  # one function a hunk: its first change
    return found


def _shown_methods(code: list[str]) -> list[str]:
    """The methods a reply's code shows the body of, with the class the code names above them (``__init__``: the
    class alone)."""
    found, owner = [], ""
    for line in code:
        if match := _CLASS.match(line):
            owner = match["cls"]
        elif match := _METHOD.match(line):
            name = match["name"]
            found.append(owner if name == "__init__" and owner else f"{owner}.{name}" if owner else name)
    return [name for name in found if name and name != "__init__"]


# Calls no project's API is: Python's builtins, the standard library's and the array/tensor libraries' roots, and the
# methods every tensor, module or container has (``model.to(device)``, ``loss.backward()``, ``d.items()``).
_FOREIGN_ROOTS = frozenset({"torch", "nn", "F", "np", "numpy", "os", "sys", "math", "random", "json", "time", "re",
                            "pd", "pandas", "plt", "tf", "jax", "jnp", "cv2", "PIL", "Image", "logging", "warnings",
                            "shutil", "pathlib", "Path", "subprocess", "datetime", "pickle", "copy", "itertools",
                            "functools", "collections", "argparse", "tqdm", "super", "print", "cuda", "dist", "mp",
                            "optim", "transforms", "torchvision", "yaml", "glob", "wandb", "st", "gc"})
# Python's builtins (``exit``/``quit`` are the site module's, ``display`` IPython's: a notebook's calls)
_BUILTINS = frozenset({name for name in dir(builtins) if not name.startswith("_")} | {"exit", "quit", "display"})
_COMMON_METHODS = frozenset({
    "to", "cuda", "cpu", "eval", "train", "backward", "step", "zero_grad", "item", "numpy", "detach", "size", "view",
    "reshape", "append", "extend", "format", "items", "keys", "values", "get", "update", "load_state_dict",
    "state_dict", "parameters", "named_parameters", "float", "half", "long", "int", "double", "bfloat16", "unsqueeze",
    "squeeze", "permute", "transpose", "contiguous", "sum", "mean", "max", "min", "join", "split", "strip", "replace",
    "read", "write", "close", "save", "load", "no_grad", "tolist", "clone", "copy", "apply", "register_buffer",
    "requires_grad_", "type", "astype", "flatten", "cat", "stack", "zeros", "ones", "tensor", "from_numpy", "add",
    "pop", "remove", "insert", "sort", "index", "count", "lower", "upper", "encode", "decode", "exists", "makedirs",
    "mkdir", "cwd", "show", "plot", "head", "info", "describe", "warning", "error", "debug", "set_device",
    "manual_seed", "is_available", "device_count", "synchronize", "empty_cache", "init_process_group", "barrier",
    "destroy", "child"})


# torch's and Python's classes a script builds without naming their module (``DataLoader(ds)``, ``AdamW(params)``), and
# the reprs a run prints (``Namespace(config=...)``, ``array([...])``, ``device(type='cuda')``).
_COMMON_CLASSES = frozenset({"DataLoader", "Dataset", "TensorDataset", "Subset", "DistributedSampler", "Adam", "AdamW",
                             "SGD", "Linear", "Conv2d", "Conv1d", "Sequential", "ModuleList", "ModuleDict", "Parameter",
                             "Tensor", "GradScaler", "autocast", "DistributedDataParallel", "DataParallel", "DDP",
                             "Path", "ArgumentParser", "defaultdict", "OrderedDict", "Counter", "partial", "namedtuple",
                             "Compose", "ToTensor", "Normalize", "Resize", "Generator", "Dropout", "ReLU", "LayerNorm",
                             "BatchNorm2d", "Embedding", "CrossEntropyLoss", "MSELoss", "Module",
                             "Namespace", "array", "device", "dtype", "Size", "namespace"})
# A model or layer instance called (``y = net(x)``): the run's object, no API.
_INSTANCE_WORDS = frozenset({"model", "net", "network", "module", "encoder", "decoder", "pipe", "pipeline", "m",
                             "classifier", "generator", "discriminator", "layer", "block", "fn", "func", "f"})


def shown_api(calls: tuple[str, ...], culprit: str, modules: tuple[str, ...], setup: frozenset[str]) -> str:
    """The first call the report's code shows that can be the blamed project's API, as a title writes it (a class's
    method ``Class.method``, else the last name: ``model.fit`` -> ``fit``). Builtins, the standard and tensor
    libraries, every object's methods and a script's ``setup`` calls are none; a call of another library the code
    imports (``modules`` that are not ``culprit``) only when the project's own is not shown."""
    others = {module for module in modules if _norm(module) != _norm(culprit)}
    names = [(module, _written(call.removeprefix(FAILING)) or _failing(call))
             for module, _, call in (c.rpartition(":") for c in unmarked(calls))]
    names = [(module, name) for module, name in names if name and name.rpartition(".")[2] not in setup]
    own = [name for module, name in names if not module or _norm(module) == _norm(culprit)]
    own = [name for name in own if name.partition(".")[0] not in others]
    return own[0] if own else next((name for module, name in names if module not in ("torch", "numpy")), "")


def common_class_call(call: str) -> bool:
    """A call on a torch or Python class (``Tensor.cpu``, ``DataLoader.__iter__``): that library's API, never the
    project's (a message's advice "Use Tensor.cpu() to copy ..." names one)."""
    return call.partition(".")[0] in _COMMON_CLASSES


def shown_starts(calls: tuple[str, ...], limit: int = 3) -> list[str]:
    """The report's own calls a skeleton shows as the repro's starting point, as the code writes them
    (``HookedTransformer.from_pretrained``): never torch's or numpy's, a builtin, or every object's method."""
    kept = [call.removeprefix(FAILING) if _written(call.removeprefix(FAILING)) else _failing(call)
            for module, _, call in (c.rpartition(":") for c in unmarked(calls)) if module not in ("torch", "numpy")]
    kept = [call for call in kept if call]
    return list(dict.fromkeys(kept))[:limit]


def _failing(call: str) -> str:
    """The failing line's call of an object's common method, with its object (``optimizer.load_state_dict``): the
    call that raised; a bare name or one on a library's root (``torch.load``) is none."""
    return common_method_call(call.removeprefix(FAILING)) if call.startswith(FAILING) else ""


def common_method_call(call: str) -> str:
    """A call of every object's method written with its object (``self.optimizer.load_state_dict`` ->
    ``optimizer.load_state_dict``); "" for any other call, a bare method, or one on a library or ``self`` alone."""
    parts = call.split(".")
    parts = parts[1:] if parts[0] in ("self", "cls") else parts
    if len(parts) < 2 or parts[0] in _FOREIGN_ROOTS or parts[-1] not in _COMMON_METHODS:
        return ""
    return ".".join(parts[-2:]) if len(parts[-1]) >= 3 else ""


def _written(call: str) -> str:
    parts = call.split(".")
    alone = len(parts) == 1 and parts[0] in _BUILTINS | _INSTANCE_WORDS | _COMMON_CLASSES
    if alone or parts[0] in _FOREIGN_ROOTS or parts[-1] in _COMMON_METHODS or parts[-1].isupper():
        return ""
    if len(parts[-1]) < 3 or parts[-1].startswith("_"):
        return ""
    owner = parts[-2] if len(parts) > 1 else ""
    return f"{owner}.{parts[-1]}" if owner[:1].isupper() and parts[-1][:1].islower() else parts[-1]


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
