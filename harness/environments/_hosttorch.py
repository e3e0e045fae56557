"""Host torch (``cases --python PATH``): environments that use an existing interpreter's torch family.

GPU nodes carry a tuned CUDA torch that cannot be rebuilt there (no network, multi-GB wheels). With a
host interpreter, each environment is a fresh venv of that interpreter in which only the torch family
(torch, torchvision, torchaudio, triton, nvidia-*) is made visible from the host: the family's own
top-level folders and dist-info are linked into ``host-torch/`` inside the environment and a ``.pth``
appends that folder to ``sys.path``. Nothing else of the host's site-packages is visible (host copies of
numpy or transformers changed verdicts when the whole site-packages leaked in), and whatever the case
pins is installed into the environment's own site-packages, which comes first on ``sys.path``.

uv never sees the host's torch: the family is removed from its resolution with overrides whose marker
is never true, and torch's own dependencies (sympy, filelock, ...) are installed as torch declares them.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement

from harness._exceptions import UsageError
from harness.containment._process import run_helper

# CUDA builds of torch 2.11+ also depend on NVIDIA's CUDA Python packages (cuda-toolkit[...]==13.0.3, cuda-bindings):
# built for that torch, installed beside it, and never on an offline wheelhouse, so they are the host's too.
FAMILY = re.compile(r"(torch|torchvision|torchaudio|triton|pytorch-triton(-rocm)?|nvidia-[a-z0-9-]+"
                    r"|cuda-(?:toolkit|bindings|pathfinder|core|python))")
LINKS = "host-torch"  # the environment's folder of links to the host's torch family
PTH_NAME = "zz-repro-matrix-host-torch.pth"  # sorted last: after every .pth the case's packages bring
_NEVER = 'python_version < "0"'  # an override with this marker removes a package from uv's resolution

# Runs in the host interpreter (stdlib only): the family's distributions, their top-level entries, and
# torch's own dependencies outside the family.
_PROBE = r"""
import importlib.metadata as m, json, re, sys
family = re.compile(sys.argv[1])
out = {"python": "%d.%d" % sys.version_info[:2], "executable": sys.executable, "dists": {}, "entries": [],
       "requires": []}
for dist in m.distributions():
    name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
    if not family.fullmatch(name) or name in out["dists"]:
        continue
    out["dists"][name] = dist.version
    tops = {str(f).split("/")[0] for f in dist.files or () if not str(f).startswith("..")}
    out["entries"] += [str(dist.locate_file(t)) for t in sorted(tops) if t != "__pycache__"]
    if name == "torch":
        out["requires"] = [r for r in dist.requires or () if "extra ==" not in r]
print(json.dumps(out))
"""


@dataclass(frozen=True)
class HostTorch:
    """What one host interpreter offers: its Python, its torch family and where those files are."""

    executable: str
    python: str  # "3.12"
    dists: tuple[tuple[str, str], ...]  # (normalised name, version) of the family
    entries: tuple[str, ...]  # absolute paths of the family's top-level files and folders
    requires: tuple[str, ...]  # torch's dependencies outside the family, as torch declares them

    @property
    def torch(self) -> str:
        return dict(self.dists)["torch"]

    def ident(self) -> str:
        """Part of an environment's key: another interpreter or another torch is another environment."""
        payload = json.dumps([self.executable, self.python, self.dists], sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:12]

    def describe(self, pinned: str | None = None) -> dict[str, Any]:
        return {"source": "host", "python": self.executable, "version": self.torch, "pinned": pinned,
                "family": dict(self.dists)}

    def requirements(self, requires: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(what to install, uv overrides): the case's pins without the family, plus torch's own
        dependencies; overrides keep every family member out of the resolution."""
        kept = tuple(r for r in requires if not is_family(r))
        names = {requirement_name(r) for r in kept}
        extra = tuple(r for r in self.requires if requirement_name(r) not in names)
        overrides = tuple(f"{name} ; {_NEVER}" for name, _ in self.dists)
        return (*kept, *extra), overrides

    def skip_reason(self, requires: Sequence[str], patches: Sequence[Path]) -> str | None:
        """Why a variant cannot run on the host's torch, or None."""
        tops = {Path(entry).name for entry in self.entries}
        for patch in patches:
            touched = _patched_tops(patch) & tops
            if touched:
                return (f"patches the torch family itself ({patch.name}: {', '.join(sorted(touched))}); "
                        "the host's torch is never changed")
        have = dict(self.dists)
        missing = [r for r in requires if is_family(r) and requirement_name(r) not in have]
        if missing:
            return f"pins {', '.join(missing)}, which the host interpreter {self.executable} does not have"
        return None


def requirement_name(requirement: str) -> str:
    try:
        return re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()
    except InvalidRequirement:
        return requirement.strip().lower()


def is_family(requirement: str) -> bool:
    return bool(FAMILY.fullmatch(requirement_name(requirement)))


def pinned_torch(requires: Sequence[str]) -> str | None:
    """The torch version a variant pins (``torch==X``), if it pins one."""
    for requirement in requires:
        try:
            parsed = Requirement(requirement)
        except InvalidRequirement:
            continue
        if requirement_name(requirement) == "torch":
            exact = [s.version for s in parsed.specifier if s.operator in ("==", "===")]
            return exact[0] if exact else str(parsed.specifier) or None
    return None


def probe_host_torch(python: Path) -> HostTorch:
    """Ask ``python`` for its torch family; a clear usage error when it has no torch or does not run."""
    if not python.exists():
        raise UsageError(f"--python {python}: no such interpreter")
    proc = run_helper([str(python), "-I", "-c", _PROBE, FAMILY.pattern], env=dict(os.environ), timeout=120)
    if proc.error or proc.timed_out:
        raise UsageError(f"--python {python}: could not be run ({proc.error or 'no answer within 120s'})")
    if proc.returncode != 0:
        raise UsageError(f"--python {python}: exited {proc.returncode}: {proc.stderr.strip()[-300:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    if "torch" not in found["dists"]:
        raise UsageError(f"--python {python}: this interpreter has no torch installed; name one that has "
                         "(e.g. the GPU node's python3), or leave --python out to install the pinned torch")
    # The interpreter as given (a venv's python, not the base it resolves to): its site-packages is the host's.
    return HostTorch(executable=str(python.absolute()), python=found["python"],
                     dists=tuple(sorted(found["dists"].items())), entries=tuple(found["entries"]),
                     requires=tuple(found["requires"]))


def link_host_torch(environment: Path, host: HostTorch) -> None:
    """Make the host's torch family, and nothing else of the host, importable in ``environment``."""
    links = environment / LINKS
    links.mkdir(exist_ok=True)
    for entry in host.entries:
        target = links / Path(entry).name
        if not target.exists() and Path(entry).exists():
            os.symlink(entry, target)
    for site in (environment / "lib").glob("python3*/site-packages"):
        # Relative to site-packages (lib/pythonX.Y/site-packages): the environment is renamed into place.
        (site / PTH_NAME).write_text(f"../../../{LINKS}\n")


def host_paths(host: HostTorch) -> tuple[Path, ...]:
    """What a build step or a cell must be able to read: the interpreter's prefix and the family's files."""
    prefix = Path(host.executable).parent.parent
    return tuple(dict.fromkeys([prefix, *(Path(e).resolve().parent for e in host.entries)]))


def _patched_tops(patch: Path) -> set[str]:
    """Top-level names a unified diff (applied with -p1 to site-packages) changes."""
    tops = set()
    for line in patch.read_text(errors="replace").splitlines():
        if line.startswith(("+++ ", "--- ")):
            path = line[4:].split("\t")[0].strip()
            parts = path.split("/")
            if path != "/dev/null" and len(parts) > 1:
                tops.add(parts[1])
    return tops
