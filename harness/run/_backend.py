"""What a backend is: it realises environments and runs one cell in one of them.

Two implementations: ``venv`` (``harness.environments._venv``, the default) and ``docker`` (``harness.docker``).
Both run the same stdlib-only child runner (``harness/run/_child.py``) and return the same
:class:`ChildOutcome`, so results have one schema whatever ran them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cuda_sim

from harness._vocabulary import CellStatus
from harness.environments._spec import EnvSpec

Progress = Callable[[str], None]
REPO_ROOT = Path(__file__).resolve().parents[2]  # the folder holding harness/: a checkout, or site-packages
CHILD_RUNNER = Path(__file__).with_name("_child.py")
SIM_PACKAGE = Path(cuda_sim.__file__).resolve().parent  # the simulator a cuda-sim cell loads (the cell reads it)
SIM_ROOT = SIM_PACKAGE.parent  # the folder holding it: a checkout's cuda-sim/, or site-packages


def project_root() -> Path:
    """Where ``cases/``, ``reports/``, ``images/`` and ``.repro-envs/`` are by default: the checkout
    when the harness runs from one, else the current directory (an installed harness's REPO_ROOT
    is site-packages)."""
    return REPO_ROOT if (REPO_ROOT / "pyproject.toml").is_file() else Path.cwd()


@dataclass(frozen=True)
class PreparedEnv:
    """A realised environment: where its interpreter is and what got installed."""

    id: str
    spec: EnvSpec
    backend: str
    python_path: str
    installed: Mapping[str, str]
    reused: bool
    build_s: float
    image: Mapping[str, str] | None = None
    cuda: Mapping[str, Any] | None = None
    compat: tuple[str, ...] = ()  # host-compatibility fixes the harness applied (environments/_compat.py)


@dataclass(frozen=True)
class CellRequest:
    """Everything needed to run one cell, independent of the backend."""

    case_dir: Path
    script: Path
    shims: tuple[Path, ...]
    argv: tuple[str, ...]
    sim: bool
    gpu: bool
    env: Mapping[str, str]
    timeout: float
    cell_dir: Path  # the cell's private scratch folder (its cwd), outside the run's output folder
    log_path: Path
    label: str = ""
    private: tuple[Path, ...] = ()  # what the cell must neither see nor be told about (the output folder)
    log_fd: int | None = None  # the log, opened by the harness (write through it, not the path, when given)

    def child_spec(self, *, sim_root: Path = SIM_ROOT, case_dir: Path | None = None,
                   cell_dir: Path | None = None) -> dict[str, Any]:
        """The JSON the child runner reads; paths can be re-rooted (e.g. inside a container)."""
        case = case_dir or self.case_dir
        cell = cell_dir or self.cell_dir
        return {
            "script": str(case / self.script.relative_to(self.case_dir)),
            "shims": [str(case / s.relative_to(self.case_dir)) for s in self.shims],
            "argv": list(self.argv),
            "sim": self.sim,
            "sim_root": str(sim_root),
            "outcome": str(cell / "outcome.json"),
        }


@dataclass
class ChildOutcome:
    status: CellStatus
    duration_s: float = 0.0
    exit_code: int | None = None
    signal: str | None = None
    exception: dict[str, Any] | None = None
    imported: dict[str, str] = field(default_factory=dict)
    reason: str = ""
    image: Mapping[str, str] | None = None


class Backend(Protocol):
    name: str

    def prepare(self, spec: EnvSpec, progress: Progress, *, private: Sequence[Path] = ()) -> PreparedEnv:
        """Realise (or reuse) the environment; raise EnvBuildError when it cannot be done. Nothing the
        build runs may see ``private`` (as for cells: the output folder)."""
        ...

    def is_ready(self, spec: EnvSpec) -> bool:
        """Is the environment there already (``prepare`` reuses it), or would ``prepare`` build it?"""
        ...

    def build_log(self, spec: EnvSpec) -> Path | None:
        """Where ``prepare`` writes the build's output while it builds (followed for progress), if anywhere."""
        ...

    def cuda_status(self, env: PreparedEnv, *, private: Sequence[Path] = ()) -> tuple[bool, str]:
        """Does this environment see a real CUDA device? ``(False, reason)`` skips its cuda cells."""
        ...

    def run_cell(self, env: PreparedEnv, request: CellRequest) -> ChildOutcome:
        """Run one cell to completion (or timeout); never raise for what the repro did."""
        ...

    def cancel(self) -> None:
        """Stop every running cell now (Ctrl-C); safe to call from another thread."""
        ...
