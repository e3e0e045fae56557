"""A copy of this checkout as a fresh clone would hold it, for tests that install or run it from elsewhere."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def copy_checkout(target: Path) -> Path:
    """The files git tracks (plus new, not-ignored ones), copied to ``target``: nothing built or cached."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=REPO,
                            capture_output=True, check=True).stdout.decode().split("\0")
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


# PYTHONPATH for a child Python that imports this checkout's harness and cuda_sim (cuda-sim/ holds only cuda_sim).
SOURCE_PATH = f"{REPO}{os.pathsep}{REPO / 'cuda-sim'}"


def in_private_tmp(path: str | Path) -> bool:
    """A sealed step's /tmp is its own folder (bwrap and the namespace layer bind one at /tmp): a checkout or HOME
    under the host's /tmp (a clone in /tmp, as CI's is; a test user's HOME there) is seen there only as the empty
    parents of its bound folders, and a write "succeeds" into that throwaway folder, never reaching the host's
    path. Such a write is judged by its host effect (the file must not exist outside)."""
    return Path(path).is_relative_to("/tmp")
