"""How an environment build resolves its requirements, and learns which packages must be built from source.

The resolution runs with the build's own uv cache (uv may run an sdist's build backend for its metadata), as
requirements first: for a ``pylock.toml`` uv unpacks each local wheel it resolves to hash it (a find-links torch:
700 MB and ~9 s a build). A ``--no-build`` check of those exact pins, with the shared cache (no build backend
runs), then says whether every package has a wheel. Where it fails, or a requirement names a URL (only a
``pylock.toml`` tells its kind), the ``pylock.toml`` says which packages to build.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from harness._exceptions import EnvBuildError
from harness._io import write_atomic
from harness.containment._process import Confinement
from harness.containment._sandbox import BuildSandbox
from harness.environments._split import Locked, by_name, pins, read_lock, read_pins


@dataclass(frozen=True)
class Resolution:
    compile: list[str]  # ``uv pip compile`` with its interpreter, index and override options
    run_uv: Callable[[list[str], dict[str, str], Confinement], str]  # one logged, confined uv step
    note: Callable[[str], None]  # a line of the harness's own in the build log


def resolve(how: Resolution, requires: Sequence[str], env: dict[str, str], own: dict[str, str],
            sandbox: BuildSandbox, writes: tuple[Path, ...], listed: Path, constraints: Path) -> list[Locked]:
    """Resolve ``listed`` (``requires``) into ``constraints``: ``env`` has the shared cache, ``own`` the
    build's; ``writes`` are what the harness's own steps may write."""
    plain, lock = sandbox.sources / "resolved-plain.txt", sandbox.sources / "pylock.toml"
    confined = sandbox.seal(sandbox.own_cache, sandbox.sources)
    if by_name(requires):
        how.run_uv([*how.compile, "--output-file", str(plain), str(listed)], own, confined)
        locked = read_pins(plain)
        if locked is not None:
            write_atomic(constraints, pins(locked))
            checked = sandbox.scratch / "checked"  # the harness's: the sources are the resolving uid's
            checked.mkdir(exist_ok=True)
            try:
                how.run_uv([*how.compile, "--no-build", "-c", str(constraints), "--output-file",
                            str(checked / "resolved.txt"), str(listed)], env,
                           sandbox.seal(*writes, sandbox.sources, checked, harness_uid=True))
                return locked
            except EnvBuildError:
                how.note("not every package of the resolution has a wheel: it is read again as a pylock.toml")
    how.run_uv([*how.compile, "--format", "pylock.toml", "--output-file", str(lock), str(listed)], own, confined)
    locked = read_lock(lock)
    write_atomic(constraints, pins(locked))
    return locked
