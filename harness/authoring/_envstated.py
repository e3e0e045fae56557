"""Releases a report states outside a listing: the install command its setup ran (``pip3 install torch==1.11.0+cu113
...``, ``conda install pytorch=1.7.1 ...``), the Python of a prose list of versions ("my setting: python 2.7, opencv
3, pytorch 0.4") and of the setup's ``conda create ... python=3.8``, and the release an installed egg's or dist-
info's folder in a frame path names (``site-packages/fairscale-0.4.0-py3.6.egg/fairscale/...``). Each is read only
when no listing states it (``_envlist`` decides); the install command and the Python only in the report's own text (a
reply's install command is a workaround to try, not what ran), an egg's folder wherever a frame shows it."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from packaging.utils import canonicalize_name

from harness.authoring._envtypes import Pin
from harness.authoring._prose import REPLY_HEADER

# The install command, alone on its line (a shell prompt before it) or in inline code ("I installed it with `conda
# install pytorch=1.10 -c pytorch`"): pip's "torch==X" or conda's "pytorch=X" / "pytorch==X" (quoted or not).
_INSTALL_TORCH = re.compile(r"(?:^\s*|`)\s*(?:\$\s*)?(?:sudo\s+)?(?:python3?\s+-m\s+)?(?:pip3?|conda|mamba)\s+install\s"
                            r"[^`]{0,300}?(?<![\w.-])['\"]?(?:py)?torch={1,2}v?(?P<ver>\d+\.\d+(?:\.\d+)?(?:\+\w+)?)"
                            r"(?![\w.*])")
# The words that make an install a workaround, a fix or advice rather than the setup that ran, on the command's line
# or the sentence before it ("downgrading to torch 1.8 fixed it", "try pip install torch==1.8").
_NOT_THE_SETUP = re.compile(r"\b(?:works?|worked|fix(?:ed|es)?|solved?|solution|updat\w*|upgrad\w*|downgrad\w*|instead"
                            r"|try|tried|trying|should|could|suggest\w*|recommend\w*|switch\w*|revert\w*)\b",
                            re.IGNORECASE)


def installed_torch(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """torch's release from the setup's install command, in the report's own text (before the first reply)."""
    own = list(itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines))
    for index, line in enumerate(own):
        if "install" not in line or not (match := _INSTALL_TORCH.search(line)):
            continue
        before = next((text for text in reversed(own[max(0, index - 3):index]) if text.strip()), "")
        if not _NOT_THE_SETUP.search(line) and not _NOT_THE_SETUP.search(before):
            yield "torch", Pin(match["ver"], "env listing", index + 1)


# "python 2.7" in a prose list that states torch's release too ("python 2.7, opencv 3, pytorch 0.4", "Python 3.8 +
# PyTorch 1.7"): the run's interpreter. A line that names no torch release is left alone ("works on python 3.8"), and
# so is a Python no torch release ran on ("Python3.0 PyTorch 2.0.1": a typo).
_PROSE_PYTHON = re.compile(r"(?<![\w./-])[Pp]ython\s*v?(?P<ver>(?:2\.7|3\.(?:[5-9]|1\d))(?:\.\d{1,2})?)(?![\w.])")
_TORCH_RELEASE = re.compile(r"(?<![\w./-])(?:[Pp]y[Tt]orch|torch)\s*(?:==|=)?\s*v?\d+\.\d+")


# The setup's environment: "conda create -n env python=3.8 pytorch=1.7" (python==3.8 too).
_CONDA_CREATE = re.compile(r"\bconda\s+create\s[^`]{0,200}?(?<![\w.-])['\"]?python={1,2}(?P<ver>(?:2\.7|3\.\d{1,2})"
                           r"(?:\.\d{1,2})?)(?![\w.*])")


def prose_pythons(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    own = itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines)
    for index, line in enumerate(own):
        if "ython" not in line or "File " in line or _NOT_THE_SETUP.search(line):
            continue
        if created := _CONDA_CREATE.search(line):
            yield "python", Pin(created["ver"], "env listing", index + 1)
        elif _TORCH_RELEASE.search(line) and (stated := _PROSE_PYTHON.search(line)):
            yield "python", Pin(stated["ver"], "env listing", index + 1)


# An installed release's folder on a frame's path: setuptools' egg ("seq2seq-0.1.4-py3.6.egg/", "pytorch_ignite-0.1.2
# -py3.6.egg/") or a wheel's metadata ("fairscale-0.4.0.dist-info/"). An egg built from a checkout whose version has a
# local part ("TTS-0.0.3+6d6dca0-py3.6.egg") states a commit instead (_envcommit), not a release.
_INSTALLED_FOLDER = re.compile(r"-packages[/\\]+(?P<name>[A-Za-z][\w.]{0,60}?)-(?P<ver>\d+(?:\.\d+){1,3}"
                               r"(?:(?:a|b|rc|\.post|\.dev)\d+)?)(?:-py\d[\d.]*\.egg|\.dist-info)[/\\]")


EGG_FOLDER = "an installed egg's folder"  # the source of a pin read there (_index checks the index's project anyway)


def installed_folders(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """The releases the frame paths' egg / dist-info folders name: what the run had installed."""
    for index, line in enumerate(lines):
        for match in _INSTALLED_FOLDER.finditer(line) if "-packages" in line else ():
            yield str(canonicalize_name(match["name"])), Pin(match["ver"], EGG_FOLDER, index + 1)


# A bare torch build at a listing line's start, no name before it: SD.Next's listing ends with "2.0.1+cu118 Autocast
# half" (torch's version, then the precision). Only torch's wheels carry a +cuNNN / +rocmX / +cpu local version.
_BARE_TORCH = re.compile(r"^\s*(?P<ver>\d+\.\d+\.\d+\+(?:cu\d{2,3}|rocm\d[\d.]*|cpu))"
                         r"(?:\s+[A-Za-z][\w-]{0,20}){0,3}\s*$")


def bare_torch(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """torch's release from a listing line that gives its build alone, in the report's own text."""
    own = itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines)
    yield from (("torch", Pin(match["ver"], "env listing", index + 1)) for index, line in enumerate(own)
                if "+" in line and (match := _BARE_TORCH.match(line)))


# A bug form's version field answered with the repository's source instead of a release: "### Version" then "git"
# (or "master", "main", "dev", "from source", "HEAD"), or one line "Version: git".
_VERSION_FIELD = re.compile(r"^\s*(?:#{2,4}\s+|[-*]\s+)?(?:[\w-]+\s+)?[Vv]ersion\s*:?\s*(?P<answer>\S.*)?$")
_SOURCE_ANSWER = re.compile(r"^\s*`?(?:git|master|main|dev|develop|HEAD|(?:built |installed )?from source)\b`?"
                            r"(?:\s*[(,].*)?\s*$", re.IGNORECASE)


def states_source(lines: list[str]) -> bool:
    """Whether the report's version field names the repository's source code rather than a release."""
    for index, line in enumerate(lines):
        field = _VERSION_FIELD.match(line) if "ersion" in line else None
        if field is None:
            continue
        answer = field["answer"] or next((text for text in lines[index + 1:index + 4] if text.strip()), "")
        if _SOURCE_ANSWER.match(answer):
            return True
    return False
