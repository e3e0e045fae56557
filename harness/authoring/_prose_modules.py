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


def _modules(lines: list[str]) -> tuple[str, ...]:
    """Dotted paths count in prose only: in code and frames they are mostly attribute chains (self.opt.step)."""
    found: list[str] = []
    for line in lines:
        patterns = (_IMPORT, _BLOB) if line[:1].isspace() or "File " in line else (_IMPORT, _BLOB, _DOTTED)
        found += [m["module"] for pattern in patterns for m in pattern.finditer(line)
                  if pattern is not _DOTTED or _dotted_module(m)]
    # "pytorch.utils.data" in a sentence is torch's: no module is named pytorch (PyPI's "pytorch" installs nothing)
    return tuple("torch" if m == "pytorch" else m for m in found if m not in _NOT_MODULES)


def _path_tops(lines: list[str]) -> tuple[str, ...]:
    """The first folder of each source path named in prose (``ffcv/pipeline/graph.py``): a package only when it is
    also the link's repository (a log's cut path "ta/coding/x.py" is none)."""
    return tuple(m["module"] for line in lines if ".py" in line and not line[:1].isspace() and "File " not in line
                 for m in _PATH.finditer(line))
