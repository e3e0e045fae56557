"""Every command README.md shows runs as written, from a fresh copy of the repository.

Commands are the lines of README's shell code blocks (fences marked bash/sh/shell/console, or unmarked;
``yaml``/``text``/... blocks are not commands) and its inline code spans that start with a program
(``nox -s validate``, ``python3 benchmarks/...``); a ``# comment`` ends a command. Each one must have a row
in :data:`COMMANDS` saying how the test runs it: as written, or with arguments appended that keep it short
(one case, one lane, two releases). A README command without a row fails the test, and so does a row
whose command left the README: the two cannot drift apart.

The commands run in README order through ``bash -c`` from a copy of the tracked files (``<tmp>/repro-matrix``,
so ``pip install ./repro-matrix`` works as written), with a fresh venv first on ``PATH`` (the README's
``python3 -m pip install nox uv`` installs into it, as it would into a newcomer's Python) and without the
test session's own venv or any ``REPRO_DOCKER_*`` setting. Environments come from the shared cache
(``REPRO_MATRIX_ENVS``): they are keyed by content, so a fresh clone would build the same ones.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from harness import uv_index_environment
from harness.environments._venv_build import default_env_root, find_uv
from tests.checkout import copy_checkout

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
SHELL_FENCES = {"", "bash", "sh", "shell", "console"}
PROGRAMS = {"nox", "python", "python3", "pip", "pytest", "uv", "cuda-sim", "repro-matrix", "bash"}
FAST_CELL = ("--case", "var-resume", "--lane", "cpu", "--variant", "buggy")

pytestmark = pytest.mark.slow


# -- what the README says ------------------------------------------------------------------------------
def readme_commands(text: str) -> list[str]:
    """The README's commands, in order, each once."""
    commands: list[str] = []
    fence: str | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            fence = stripped[3:].strip().lower() if fence is None else None
            continue
        if fence is not None:
            command = re.split(r"(?:^|\s)#", stripped, maxsplit=1)[0].strip()
            if fence in SHELL_FENCES and command:
                commands.append(command)
            continue
        commands += [span.strip() for span in re.findall(r"`([^`\n]+)`", line) if _is_command(span)]
    return list(dict.fromkeys(commands))


def _is_command(span: str) -> bool:
    words = span.split()
    return len(words) > 1 and words[0] in PROGRAMS


def readme_blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, flags=re.M | re.S)


def test_the_extractor_reads_blocks_spans_and_comments():
    text = textwrap.dedent("""\
        Run `nox -s validate` first; `--case` is an option and `cuda-sim` a lane.
        ```bash
        nox -s cases -- --shard 1/4   # a comment
        # only a comment
        ```
        ```yaml
        key: value   # not a command
        ```
        ```
        pytest --cuda-sim
        ```
        And again `nox -s validate`.
        """)
    assert readme_commands(text) == ["nox -s validate", "nox -s cases -- --shard 1/4", "pytest --cuda-sim"]


# -- how each command is run ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Run:
    """How the test runs one README command: ``extra`` is appended; ``expect`` must appear in its output."""

    extra: str = ""
    expect: tuple[str, ...] = ()
    absent: tuple[str, ...] = ()  # must not appear (a command that exits 0 whatever happened)
    exit_code: int = 0
    substitute: tuple[tuple[str, str], ...] = ()  # placeholders in the README text -> real values
    before: Callable[[Workspace], None] | None = None
    after: Callable[[Workspace, str], None] | None = None
    docker: bool = False
    own_venv: bool = False  # in a venv of its own with only nox and uv (nothing an earlier command installed)
    needs: tuple[str, ...] = ()  # README commands that must have run first (run now if they have not)
    timeout: float = 900


@dataclass
class Workspace:
    root: Path
    checkout: Path
    venv: Path
    project: Path
    env: dict[str, str] = field(default_factory=dict)
    done: set[str] = field(default_factory=set)

    def run(self, command: str, cwd: Path, env: dict[str, str], timeout: float) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, check=False)

    def harness(self, *args: str) -> subprocess.CompletedProcess[str]:
        """The checkout's harness with this test session's Python (setup steps, not README commands)."""
        return subprocess.run([sys.executable, "-m", "harness", *args], cwd=self.checkout, env=self.env,
                              capture_output=True, text=True, timeout=3600, check=False)

    def newest_results(self) -> dict:
        runs = sorted(p for p in (self.checkout / "reports").iterdir() if (p / "results.json").is_file())
        return json.loads((runs[-1] / "results.json").read_text())


def _write_a_report(space: Workspace) -> None:
    """A user's bug report: a real one of the fixtures (a traceback and its environment)."""
    shutil.copyfile(space.checkout / "tests" / "fixtures" / "reports" / "ai-toolkit-212.txt",
                    space.checkout / "report.txt")


def _drafted(space: Workspace, output: str) -> None:
    draft = space.checkout / "cases" / "my-bug"
    assert "signature:" in (draft / "case.yaml").read_text() and (draft / "repro.py").is_file()
    shutil.rmtree(draft)  # the README's example case.yaml takes the id next


def _add_the_example_case(space: Workspace) -> None:
    """README's "Adding a case" example, as a real case folder of the checkout."""
    (example,) = readme_blocks(README.read_text(), "yaml")
    folder = space.checkout / "cases" / "my-bug"
    folder.mkdir()
    (folder / "case.yaml").write_text(example)
    (folder / "repro.py").write_text("print('example')\n")


def _drop_the_example_case(space: Workspace, output: str) -> None:
    shutil.rmtree(space.checkout / "cases" / "my-bug")


def _expect_valid_count(space: Workspace, output: str) -> None:
    count = sum(1 for p in (space.checkout / "cases").iterdir() if (p / "case.yaml").is_file())
    assert f"{count} case file(s) valid, 0 invalid" in output
    _drop_the_example_case(space, output)


def _build_docker_images(space: Workspace) -> None:
    built = space.harness("images", "--case", "var-resume")
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]


def _ran_in_images(space: Workspace, output: str) -> None:
    results = space.newest_results()
    assert results["run"]["selection"]["backend"] == "docker"
    assert all(c["image"]["tag"].startswith("repro-matrix/torch-cpu:") for c in results["cells"])


def _sharded(space: Workspace, output: str) -> None:
    selection = space.newest_results()["run"]["selection"]
    assert (selection["shard"], selection["jobs"]) == ("1/4", 2)


def _site_written(space: Workspace, output: str) -> None:
    site = space.checkout / "reports" / "site" / "index.html"
    assert site.is_file()
    assert output.count("site/index.html") == 1, output  # the path once


def _bisect_written(space: Workspace, output: str) -> None:
    (report,) = (space.checkout / "reports").glob("*/bisect.json")
    rows = json.loads(report.read_text())["rows"]
    assert [row["version"] for row in rows] == ["0.14.2", "0.14.3"], rows


def _install_torch_and_pytest(space: Workspace, output: str) -> None:
    """"(plus your torch)": the README leaves torch to the user; pytest and xdist for the pytest lines."""
    python = str(space.venv / "bin" / "python")
    added = subprocess.run([find_uv(), "pip", "install", "--python", python, "torch==2.13.0", "pytest",
                            "pytest-xdist"], env=space.env, capture_output=True, text=True, timeout=900, check=False)
    assert added.returncode == 0, added.stderr[-3000:]
    where = subprocess.run([python, "-c", "import cuda_sim; print(cuda_sim.__file__)"], cwd=space.project,
                           env=space.env, capture_output=True, text=True, check=True)
    assert where.stdout.startswith(str(space.venv)), where.stdout  # the installed package


CASES_RAN = ("results:", "report:")
PIP_INSTALL = "pip install ./cuda-sim"  # run in the checkout
COMMANDS: dict[str, Run] = {
    "python3 -m pip install nox uv && python3 -m nox -s cases": Run(
        extra="-- --case lycoris-extract-diff --lane cpu", expect=("confirmed", *CASES_RAN)),
    "python3 -m pip install nox uv && python3 -m nox -s tests": Run(
        extra="-- tests/core/test_verdicts.py -q -p no:cacheprovider", expect=("case file(s) valid", " passed")),
    "nox -s cases -- --case var-resume": Run(extra="--lane cpu --variant buggy", expect=("confirmed", *CASES_RAN)),
    "nox -s cases -- --lane cpu --lane cuda-sim": Run(
        extra="--case var-resume --variant torch-2.1+", expect=("cuda-sim", "confirmed", *CASES_RAN)),
    "nox -s cases -- --variant buggy": Run(extra="--case var-resume --lane cuda-sim", expect=("confirmed",)),
    "nox -s cases -- --list": Run(expect=("var-resume", "deepspeed-zero3-offload-clip", "https://github.com/")),
    "nox -s cases -- --jobs 2 --shard 1/4": Run(extra="--case var-resume --lane cpu", after=_sharded),
    "nox -s cases -- --backend docker": Run(
        extra="--case var-resume --lane cpu --variant torch-2.1+", expect=("confirmed",), docker=True,
        before=_build_docker_images, after=_ran_in_images),
    # "1 run (1 new)" or "N runs (N new)": how many run folders exist depends on which commands ran first
    "nox -s report -- --input reports": Run(expect=(" new), ",), after=_site_written,
                                            needs=("nox -s cases -- --case var-resume",)),
    "nox -s clean -- --dry-run": Run(expect=("would remove",)),
    "nox -R -s cases -- --case var-resume": Run(
        extra="--lane cpu --variant buggy", expect=("Reusing existing virtual environment", "confirmed"),
        needs=("nox -s cases -- --case var-resume",)),
    "nox -s new -- my-bug --from report.txt": Run(
        before=_write_a_report, expect=("wrote cases/my-bug/case.yaml", "left to fill in"), after=_drafted),
    "nox -s validate": Run(before=_add_the_example_case, after=_expect_valid_count),
    "nox -s cases -- --case my-bug": Run(  # the README's example id: run a real case in its place
        substitute=(("my-bug", "var-resume"),), extra="--lane cpu --variant buggy", expect=("confirmed",)),
    PIP_INSTALL: Run(expect=("Successfully installed cuda-sim",), after=_install_torch_and_pytest),
    "cuda-sim train.py --lr 1e-4": Run(expect=("argv ['--lr', '1e-4']", "device cuda:0"), needs=(PIP_INSTALL,)),
    "pytest --cuda-sim": Run(expect=("4 passed",), needs=(PIP_INSTALL,)),
    "pytest --cuda-sim --cuda-sim-strict -n 4": Run(expect=("4 passed", "4 workers"), needs=(PIP_INSTALL,)),
    "nox -s images": Run(extra="-- --case var-resume", expect=("present",), docker=True),
    "nox -s bisect -- --case deepspeed-zero3-offload-clip --package deepspeed --from 0.14.0 --to 0.14.5": Run(
        extra="--from 0.14.2 --to 0.14.3",  # the last --from/--to wins: the release listing still runs
        expect=("over 2 release(s) of deepspeed", "deepspeed 0.14.2 -> 0.14.3:", "bisect report:"),
        after=_bisect_written),
    "nox -s faults": Run(extra="-- --no-system -k test_selecting_only_a_broken_case_stops_with_its_error",
                         expect=("faults handled: 1/",)),
    "python3 -m pip install ./cuda-sim . && python3 benchmarks/harness_overhead.py": Run(
        extra="--quick --parts scale --scale 2", expect=("scale: environment ready",), absent=("part failed",),
        own_venv=True),
}


# -- the workspace: a fresh copy, a fresh venv, a user's environment -----------------------------------
TRAIN = """
    import sys
    import torch

    print("argv", sys.argv[1:])
    print("device", next(torch.nn.Linear(4, 2).to("cuda").parameters()).device)
"""
TESTS = """
    import pytest
    import torch


    @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
    @pytest.mark.parametrize("size", [1, 2, 3, 4])
    def test_on_cuda(size):
        assert (torch.ones(size, device="cuda") * 2).device.type == "cuda"
"""



def _user_environment(venv: Path) -> dict[str, str]:
    ours = str(Path(sys.executable).parent)
    path = [str(venv / "bin"), *(p for p in os.environ["PATH"].split(os.pathsep) if p and p != ours)]
    dropped = ("PYTHONPATH", "VIRTUAL_ENV", "REPRO_DOCKER_BASE", "REPRO_DOCKER_CUDA_BASE", "REPRO_MATRIX_ENVS")
    env = {k: v for k, v in os.environ.items()
           if k not in dropped and not k.startswith(("PYTEST_", "NOX_", "COV_"))}
    return {**env, **uv_index_environment(), "PATH": os.pathsep.join(path), "COLUMNS": "200",
            "REPRO_MATRIX_ENVS": str(default_env_root())}


def _fresh_venv(venv: Path) -> dict[str, str]:
    """A new venv first on PATH, holding what the README's first command installs (nox and uv); its env."""
    env = _user_environment(venv)
    made = subprocess.run(["python3", "-m", "venv", str(venv)], env=env, capture_output=True, text=True, check=False)
    assert made.returncode == 0, made.stderr
    tools = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "nox", "uv"], env=env,
                           capture_output=True, text=True, check=False)
    assert tools.returncode == 0, tools.stderr[-3000:]
    return env


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Workspace]:
    """A copy of the repository and a venv playing the newcomer's Python (nox and uv already in, so one
    command can run alone; the README's own ``pip install nox uv`` then finds them)."""
    root = tmp_path_factory.mktemp("readme")
    checkout = copy_checkout(root / "repro-matrix")
    venv = root / "venv"
    env = _fresh_venv(venv)
    project = root / "project"
    project.mkdir()
    (project / "train.py").write_text(textwrap.dedent(TRAIN))
    (project / "test_on_cuda.py").write_text(textwrap.dedent(TESTS))
    yield Workspace(root, checkout, venv, project, env)


@pytest.mark.parametrize("command", readme_commands(README.read_text()))
def test_readme_command_runs_as_written(command: str, workspace: Workspace, request: pytest.FixtureRequest):
    if command not in COMMANDS:
        pytest.fail(f"README.md shows a command this test does not know: {command!r}. Add a row to COMMANDS in "
                    f"{Path(__file__).relative_to(REPO)} saying how to run it (as written, or with a short selection)")
    if any(COMMANDS[c].docker for c in (command, *COMMANDS[command].needs)):
        request.getfixturevalue("docker_client")  # skipped without a daemon (a failure under REPRO_REQUIRE_DOCKER=1)
    run_readme_command(command, workspace)


def run_readme_command(command: str, workspace: Workspace) -> None:
    run = COMMANDS[command]
    for needed in run.needs:
        if needed not in workspace.done:
            run_readme_command(needed, workspace)
    if run.before:
        run.before(workspace)
    text = command
    for placeholder, real in run.substitute:
        text = text.replace(placeholder, real)
    cwd = workspace.project if _in_project(command) else workspace.checkout
    env = _fresh_venv(workspace.root / f"venv-{len(workspace.done)}") if run.own_venv else workspace.env
    proc = workspace.run(f"{text} {run.extra}".strip(), cwd, env, run.timeout)
    output = proc.stdout + proc.stderr
    assert proc.returncode == run.exit_code, f"{text} {run.extra}\nexit {proc.returncode}\n{output[-6000:]}"
    for expected in run.expect:
        assert expected in output, f"{expected!r} not in the output of {command!r}:\n{output[-6000:]}"
    for refused in run.absent:
        assert refused not in output, f"{refused!r} in the output of {command!r}:\n{output[-6000:]}"
    if run.after:
        run.after(workspace, output)
    workspace.done.add(command)


def _in_project(command: str) -> bool:
    """The cuda-sim lines are a user's own project's commands."""
    return command.split()[0] in ("cuda-sim", "pytest")


def test_every_row_is_still_in_the_readme():
    stale = sorted(set(COMMANDS) - set(readme_commands(README.read_text())))
    assert not stale, f"COMMANDS rows whose command README.md no longer shows (remove them): {stale}"
