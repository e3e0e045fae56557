"""The modules a report's text names (a split of ``_prose``): imports, source links and paths, dotted paths in prose;
and the checkout folders that never name a distribution."""

from __future__ import annotations

import re

# How a report's text names a module: an import statement, a source link into a repository
# (github.com/o/r/blob/<ref>/timm/utils/x.py), or a dotted path of three or more names (timm.layers.patch_embed).
_IMPORT = re.compile(r"^\s*(?:>>>\s*)?(?:from|import)\s+(?P<module>[A-Za-z_]\w{0,60})\b")
_BLOB = re.compile(r"github\.com/[\w.-]{1,100}/[\w.-]{1,100}/blob/[\w.-]{1,100}/(?:(?:src|lib|python)/)?"
                   r"(?P<module>[A-Za-z_]\w{0,60})/")
# A source file named in prose by its path inside the package: "at line 333 of ffcv/pipeline/graph.py".
_PATH = re.compile(r"(?<![\w/.\\-])(?P<module>[A-Za-z_]\w{0,60})/(?:\w{1,60}/){0,8}\w{1,60}\.py\b")
_DOTTED = re.compile(r"(?<![\w./-])(?P<module>[a-z_][a-z0-9_]{1,60})(?:\.[A-Za-z_]\w{0,60}){2,}")


# A checkout's generic top-level folders (utils/scheduler.py, hydra's target 'training.trainer.Trainer'): the
# repository's own code, never a distribution of that name (PyPI's `utils` or `training` is another project).
CHECKOUT_FOLDERS = frozenset({
    "utils", "util", "models", "model", "training", "train", "trainer", "trainers", "modules", "networks", "network",
    "nets", "net", "lib", "libs", "src", "core", "common", "engine", "helpers", "layers", "losses", "loss", "dataset",
    "dataloader", "dataloaders", "inference", "eval", "evaluation", "options", "misc", "solver", "tasks", "data",
    "configs", "config", "scripts", "tools"})
# Folders of a repository that hold scripts, not an importable package (a link into recipes/ names no module).
_NOT_MODULES = CHECKOUT_FOLDERS | {"self", "cls", "super", "recipes", "examples", "example", "tests", "test", "docs",
                                   "benchmarks", "notebooks", "projects", "demo", "demos", "apps", "tutorials",
                                   "experiments", "assets"}


# Extensions of checkpoints, data and configs: "sceneflow_pretrained_model.pth.tar" is a file, never a module.
_FILE_EXTENSIONS = frozenset({"pth", "pt", "ckpt", "bin", "safetensors", "tar", "gz", "zip", "json", "yaml", "yml",
                              "pkl", "pickle", "npy", "npz", "h5", "hdf5", "onnx", "csv", "txt", "log", "png", "jpg"})


# A state_dict key ("layer1.0.conv1.weight", "encoder.bn.running_mean"): a parameter's or buffer's path in a model,
# never a module: a numbered part (a Sequential's index) or a tensor's own name ends it.
_TENSOR_KEY = re.compile(r"\.\d+(?:\.|$)|\.(?:\w*_)?(?:weight|bias)(?:_(?:orig|u|v|g))?$|\.running_(?:mean|var)$|"
                         r"\.num_batches_tracked$")


def _dotted_module(match: re.Match[str]) -> bool:
    """A dotted path in prose names a module unless it is a file (``model.pth.tar``) or a state_dict key (read to
    the key's end: the pattern stops before a numbered part)."""
    key = match.group() + re.split(r"[^\w.]", match.string[match.end():], maxsplit=1)[0]
    return not _FILE_EXTENSIONS & set(match.group().lower().split(".")[1:]) and not _TENSOR_KEY.search(key)


# A name the text assigns ("`idx = idx.data[0]`", "for batch in loader:"): a variable, so its dotted uses
# (idx.data.item()) are attribute chains, not a module.
_ASSIGNED = re.compile(r"(?<![\w.])(?P<name>[A-Za-z_]\w{0,60})\s*=(?!=)|\bfor\s+(?P<loop>[A-Za-z_]\w{0,60})\s+in\b")


def _modules(lines: list[str]) -> tuple[str, ...]:
    """Dotted paths count in prose only: in code and frames they are mostly attribute chains (self.opt.step)."""
    found: list[str] = []
    variables = {m["name"] or m["loop"] for line in lines if "=" in line or "for " in line
                 for m in _ASSIGNED.finditer(line)}
    for line in lines:
        patterns = (_IMPORT, _BLOB) if line[:1].isspace() or "File " in line else (_IMPORT, _BLOB, _DOTTED)
        found += [m["module"] for pattern in patterns for m in pattern.finditer(line)
                  if pattern is not _DOTTED or (_dotted_module(m) and m["module"] not in variables)]
    aliases = _aliases(lines, set(found))
    # "pytorch.utils.data" in a sentence is torch's: no module is named pytorch (PyPI's "pytorch" installs nothing)
    return tuple("torch" if m == "pytorch" else aliases.get(m, m) for m in found if m not in _NOT_MODULES)


# `import deepchem as dc`, `import torch.nn.functional as F`: the alias stands for the module before "as".
_IMPORT_AS = re.compile(r"^\s*(?:>>>\s*)?import\s+(?P<module>[A-Za-z_]\w{0,60})(?:\.\w{1,60}){0,6}\s+as\s+"
                        r"(?P<alias>[A-Za-z_]\w{0,60})\s*(?:#.*)?$")
# Where a module is written out in full: an import of its submodule, or a message quoting it (AttributeError's
# "module 'deepchem.models' has no attribute 'TorchModel'").
_QUALIFIED = re.compile(r"^\s*(?:>>>\s*)?(?:from|import)\s+(?P<module>[A-Za-z_]\w{0,60})\.(?P<sub>[A-Za-z_]\w{0,60})"
                        r"|\bmodule '(?P<quoted>[A-Za-z_]\w{0,60})\.(?P<quoted_sub>[A-Za-z_]\w{0,60})")


def _aliases(lines: list[str], found: set[str]) -> dict[str, str]:
    """The module each alias the text uses stands for: what `import X as y` says, else, for a name the text never
    imports, the module written out in full with the same submodule (``dc.models.TorchModel`` beside "module
    'deepchem.models'") whose name it abbreviates (its letters in order, from the same first letter)."""
    aliases: dict[str, str] = {}
    qualified: set[tuple[str, str]] = set()
    imported: set[str] = set()
    for line in lines:
        if "import" in line and (named := _IMPORT.match(line)):
            imported.add(named["module"])
        if "import" in line and " as " in line and (alias := _IMPORT_AS.match(line)) \
                and alias["alias"] != alias["module"]:
            aliases[alias["alias"]] = alias["module"]
        qualified |= {(m["module"] or m["quoted"], m["sub"] or m["quoted_sub"]) for m in _QUALIFIED.finditer(line)}
    text = "\n".join(lines)
    for name in sorted(found - imported - set(aliases)):
        full = {module for module, sub in qualified if module != name and _abbreviates(name, module)
                and re.search(rf"(?<![\w.]){re.escape(name)}\.{re.escape(sub)}\b", text)}
        if len(full) == 1:
            aliases[name] = full.pop()
    return aliases


def _abbreviates(alias: str, module: str) -> bool:
    """Whether ``alias`` is a shorter spelling of ``module``: dc of deepchem, np of numpy, pl of pytorch_lightning."""
    rest = iter(module[1:].lower())
    return len(alias) < len(module) and alias[:1].lower() == module[:1].lower() \
        and all(letter in rest for letter in alias[1:].lower())


def _path_tops(lines: list[str]) -> tuple[str, ...]:
    """The first folder of each source path named in prose (``ffcv/pipeline/graph.py``): a package only when it is
    also the link's repository (a log's cut path "ta/coding/x.py" is none)."""
    return tuple(m["module"] for line in lines if ".py" in line and not line[:1].isspace() and "File " not in line
                 for m in _PATH.finditer(line))


# An import statement of the report's code: `import a.b as c, d` or `from a.b import (c, d as e)`.
_IMPORT_LINE = re.compile(r"^\s*(?:>>>\s*)?(?:import\s+(?P<modules>[\w.]{1,200}(?:\s+as\s+\w{1,60})?"
                          r"(?:\s*,\s*[\w.]{1,200}(?:\s+as\s+\w{1,60})?){0,20})|from\s+(?P<module>[\w.]{1,200})\s+"
                          r"import\s+(?P<names>[\w\s,()*]{1,400}?))\s*(?:#.*)?$")


def unused_imports(lines: list[str]) -> tuple[str, ...]:
    """Top-level modules the report's code imports but never uses: no line besides the imports names the module, its
    alias or a name imported from it (text2brain-6 imports nibabel as nib and never calls it: not the bug's
    project). ``from m import *`` counts as used."""
    users: dict[str, set[str]] = {}
    imports: set[int] = set()
    for number, line in enumerate(lines):
        if "import" not in line or (found := _IMPORT_LINE.match(line)) is None:
            continue
        imports.add(number)
        if found["modules"]:
            for part in found["modules"].split(","):
                name, _, alias = part.strip().partition(" as ")
                users.setdefault(name.split(".")[0], set()).add(alias.strip() or name.split(".")[0])
            continue
        if found["names"].count("(") > found["names"].count(")"):
            continue  # its names go on over the next lines: not all of them are read, so never called unused
        names = [item.strip().partition(" as ") for item in found["names"].strip("() ").split(",")]
        top = users.setdefault(found["module"].split(".")[0], set())
        top |= {alias.strip() or name.strip() for name, _, alias in names if name.strip()}
    rest = "\n".join(line for number, line in enumerate(lines) if number not in imports)
    return tuple(module for module, names in users.items() if names and "*" not in names
                 and not any(re.search(rf"(?<![\w.]){re.escape(name)}\b", rest) for name in names | {module}))
