"""requirements/lock.txt pins everything the nox sessions install (docs/dependencies.md)."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

from harness._vocabulary import TORCH_VERSION

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
NOXFILE = (REPO / "noxfile.py").read_text()


def _pins() -> dict[str, list[Version]]:
    """Name -> pinned versions (a universal lock may pin one name twice, for different Pythons)."""
    pins: dict[str, list[Version]] = {}
    for line in (REPO / "requirements" / "lock.txt").read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            requirement = Requirement(line)
            (pinned,) = requirement.specifier
            assert pinned.operator == "==", line
            pins.setdefault(canonicalize_name(requirement.name), []).append(Version(pinned.version))
    return pins


def _declared() -> list[Requirement]:
    project = PYPROJECT["project"]
    names = [*project["dependencies"], *project["optional-dependencies"]["docker"],
             *PYPROJECT["dependency-groups"]["test"]]
    # cuda-sim is this repository's own distribution (its cuda-sim/ folder, on no index): nothing to lock
    return [Requirement(name) for name in names if Requirement(name).name != "cuda-sim"]


def test_every_declared_dependency_is_pinned_within_its_range():
    pins = _pins()
    for requirement in _declared():
        versions = pins.get(canonicalize_name(requirement.name))
        assert versions, f"{requirement.name} is not in requirements/lock.txt: run `python3 -m nox -s lock`"
        assert all(requirement.specifier.contains(v, prereleases=True) for v in versions), (requirement, versions)


def test_the_tools_the_sessions_add_are_pinned_and_torch_is_the_noxfile_pin():
    pins = _pins()
    tools = re.search(r"^LOCKED_TOOLS = \[TORCH, (.*?)\]", NOXFILE, re.MULTILINE)
    assert tools, "noxfile.py: LOCKED_TOOLS not found"
    for name in re.findall(r'"([^"]+)"', tools.group(1)):
        assert canonicalize_name(name) in pins, f"{name} is not in requirements/lock.txt: run `python3 -m nox -s lock`"
    # The noxfile takes the pin from harness/_vocabulary.py, the one place it is written.
    torch = re.search(r"^TORCH = TORCH_PIN$", NOXFILE, re.MULTILINE)
    # the CPU build from a local wheel (+cpu) where it is one, the release elsewhere: the same torch
    assert torch and {version.public for version in pins["torch"]} == {TORCH_VERSION}


def test_every_session_installs_with_the_lock_as_constraints():
    # session.install is called in one place, the helper that adds the lock; the lock session only installs uv;
    # sim_torch installs another torch than the lock's, by design, with every package of that install pinned exactly.
    assert re.findall(r"session\.install\((.*)\)", NOXFILE) == [
        '"--constraint", str(LOCK), *packages', '"--no-deps", f"torch=={torch}", *SIM_TORCH[torch]', '"uv"']
    block = re.search(r"^SIM_TORCH = \{(.*?)^\}", NOXFILE, re.MULTILINE | re.DOTALL)
    assert block, "noxfile.py: SIM_TORCH not found"
    strings = re.findall(r'"([^"]+)"', block.group(1))  # each torch version, then the exact pins installed with it
    assert strings and all(re.fullmatch(r"[0-9.]+|[a-z0-9-]+==[0-9.]+", text) for text in strings), strings
