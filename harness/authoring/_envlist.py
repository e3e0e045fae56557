"""Environment listings in a pasted report: which release of each package it ran, and which Python.

Read as users paste them: ``pip freeze``, ``pip list`` and ``conda list`` (columns, or collapsed to single
spaces outside a code fence), ``python -m torch.utils.collect_env``, ``transformers-cli env`` /
``diffusers-cli env`` / ``accelerate env`` bullet lists, Lightning's ``collect_env_details`` (``- torchvision:
0.15.2``), OpenMMLab's ``collect_env`` (``PyTorch: 2.0.0+cu118``, ``MMCV: 1.7.1``), ``ds_report`` and a Markdown
``| Key | Value |`` table (``_envtable``). Every pattern is anchored and bounded: a pasted line costs linear time
whatever it holds.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from packaging.utils import canonicalize_name

from harness.authoring._envcommit import WORKING as _WORKING
from harness.authoring._envcommit import installed_from
from harness.authoring._envcommit import stated_commit as _stated_commit
from harness.authoring._envstated import bare_torch, installed_folders, installed_torch, prose_pythons, states_source
from harness.authoring._envtable import shown_pins, table_pins
from harness.authoring._envtypes import _RELEASE
from harness.authoring._envtypes import Environment as Environment
from harness.authoring._envtypes import Pin as Pin
from harness.authoring._envunnamed import SCHEDULE, _unnamed_pin
from harness.cases._distributions import DISTRIBUTIONS
from harness.cases._placeholders import MARK

_VERSION = r"\d[\w.+!-]*+"
_FREEZE = re.compile(rf"(?<![\w.\-/=])(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*+)\s*+==\s*+(?P<ver>{_VERSION})")
_SOURCE = re.compile(  # "-e git+https://...#egg=name", "name @ git+https://..." or "name @ file:///..."
    r"^\s*(?:-e\s+)?(?P<url>git\+[^\s#]++)#egg=(?P<egg>[\w.-]+)|^\s*(?P<name>[A-Za-z0-9][\w.-]*+)\s+@\s+(?P<at>\S+)")
_COLUMNS = re.compile(rf"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*+)\s{{2,}}(?P<ver>{_VERSION})(?:\s++\S++){{0,2}}\s*$")
# "pytorch 2.0.1 py3.10_cuda11.8_cudnn8.7.0_0 pytorch": conda list with its columns collapsed to single spaces
_CONDA = re.compile(rf"^\s*(?P<name>[A-Za-z0-9][\w.-]*+) (?P<ver>{_VERSION}) (?:(?=[\w.]*_)[\w.]++|h[0-9a-f]{{6,}}\w*+)"
                    r"(?: [\w./:-]++)?\s*$")
# The value may repeat the name, glued or not: "Python version: python3.8", "Python: Python 3.7.4".
_NAMED_AGAIN = r"(?:(?i:(?P=name))\s*)?"
# "- `transformers` version: 4.33.1", "- 🤗 Diffusers version: 0.21.0", "- PyTorch version (GPU?): 2.0.1 (True)"
_LISTED = re.compile(
    r"^\s*(?:[-*]\s*)?(?:[^\x00-\x7f]\S{0,8}\s+)?(?:(?:my|our|the)\s+)?"  # "my torch version: 2.1"
    r"`?(?P<name>[A-Za-z][\w.-]{0,40}(?: [\w.-]{1,40}){0,3})`?\s+version"
    rf"(?:\s*\([^)]{{0,40}}\))?\s*:\s*`?{_NAMED_AGAIN}v?(?P<ver>{_VERSION})", re.I)
# "- torchvision:       0.15.2" (Lightning), "PyTorch: 2.0.0+cu118", "MMCV: 1.7.1", "Python: 3.8.16 (default, ...)"
_COLON = re.compile(r"^\s*(?:[-*]\s+)?(?P<name>[A-Za-z][\w.-]{0,40}(?: [A-Za-z][\w.-]{0,40}){0,2}) ?:\s*+"
                    rf"{_NAMED_AGAIN}v?"
                    rf"(?P<ver>{_RELEASE})(?:\s+[(|].*)?$")
# pip list with its spaces collapsed ("numpy 1.24.3"), "peft v0.4.0", an old pip list's "numpy (1.17.4)"
_PAIR = re.compile(rf"^\s*(?P<name>[A-Za-z][\w-]{{0,60}}) (?:v|\((?=[\d.]+\)))?(?P<ver>{_RELEASE})\)?\s*$")
# GitHub's bug-template bullets: " - PyTorch 2.0.1 CUDA", "- timm v0.9.12" (a name, a release, a word or two)
_BULLET = re.compile(rf"^\s*[-*]\s+(?P<name>[A-Za-z][\w-]{{0,60}})\s+v?(?P<ver>{_RELEASE})"
                     r"(?:\s+[A-Za-z][\w.]{0,20}){0,2}\s*$")
# `yolo checks`: "torch               ✅ 2.5.1+cu124>=1.8.0" (name, a check mark, the version, the requirement)
_CHECKED = re.compile(rf"^\s*(?P<name>[A-Za-z][\w.-]{{0,60}})\s+[✅❌]\s*(?P<ver>{_RELEASE})(?:[<>=!~,;].*)?$")
# A line of Python code comparing values (`if trainer.global_rank == 0:`), not a freeze line.
_CODE_TEST = re.compile(r"^\s*(?:if|elif|while|assert|return)\s")
# A one-liner's command before the print: python -c "import torch; print(torch.__version__)"
_PYTHON_C = r"""(?:python[\d.]* -c ['"][^'"]{0,200}?;\s*)?"""
# "torch.__version__ == '2.0.1+cu117'", ">>> torch.__version__: 2.1.0" on one line, and the one-liner then ": 2.6.0"
_DUNDER = re.compile(rf"^\s*(?:>>>\s*)?{_PYTHON_C}(?:print\()?(?P<name>[A-Za-z_]\w{{0,60}})\.__version__\)?['\"]?\s*"
                     r"(?:==|=|:|->)?\s*"
                     rf"['\"]?(?P<ver>{_RELEASE})['\"]?\s*$")
_DS_REPORT = re.compile(rf"^\s*(?P<name>\w[\w-]*+) (?:version|info) \.{{2,}}\s*(?P<ver>{_VERSION})")
_COLLECT_ENV = re.compile(r"^\s*\[(?:pip3?|conda)\]\s+")
# An environment pasted as one inline-code span over several lines: the backtick opens the first line and closes the
# last, and the lines between end in commas ("cuda:12.4, "); a code fence glued to a listing ("```Catalyst version:
# 20.05" ... "CUDA runtime version: 10.2```") is no part of its first or last row.
_INLINE_CODE = re.compile(r"^\s*`{1,3}(?!`)|(?<!`)`{1,3}\s*$|[,;]\s*$")
_DIGIT = re.compile(r"\d")
_ADVISED = re.compile(r"\b(?:can|could|should|please) (?:just )?(?:use|upgrade to|update to)\s+['\"`]?[\w.-]+==",
                      re.IGNORECASE)
_INSTALL = re.compile(r"\binstall\b")
# detectron2's collect_env table: "Python    3.10.12 (main, Jun 11 2023, 05:26:28) [GCC 11.4.0]" (sys.version's words),
# or the interpreter's banner pasted in a bullet: "- Python 3.7.11 (default, Jul 27 2021, 14:32:16)".
_PYTHON_ROW = re.compile(r"^\s*(?:[-*]\s+)?(?P<name>Python)\s+(?P<ver>3\.\d{1,2}(?:\.\d{1,2})?)\s+"
                         r"\((?:main|default|tags/)")
# A web UI's system-info JSON (A1111/Forge: "Python": "3.10.6", "Torch env info": {"torch_version": "2.1.2+cu121"}).
_JSON_VERSION = re.compile(rf'^\s*"(?P<name>Python|python_version|torch_version)"\s*:\s*"v?(?P<ver>{_RELEASE})')
_LISTINGS = ((_JSON_VERSION, "env listing"), (_PYTHON_ROW, "env listing"), (_DUNDER, "env listing"),
             (_LISTED, "env listing"),
             (_DS_REPORT, "env listing"), (_CHECKED, "env listing"),
             (_COLUMNS, "pip list / conda list"), (_CONDA, "pip list / conda list"), (_COLON, "env listing"),
             (_PAIR, "env listing"), (_BULLET, "env listing"))
# Names the listings give that are not the distribution's: OpenMMLab's collect_env says "MMDetection: 3.0.0".
_ALIASES = {"pytorch": "torch", "pytorch-cpu": "torch", "pytorch-gpu": "torch", "mmdetection": "mmdet",
            "mmdetection3d": "mmdet3d", "mmclassification": "mmcls", "opencv": "opencv-python",
            "python-version": "python", "torch-version": "torch"}
_PRIORITY = {"pip install": 3, "pip freeze": 3, "pip list / conda list": 2, "env listing": 1}


def parse_environment(lines: list[str]) -> Environment:
    pins: dict[str, Pin] = {}
    conflicts: list[str] = []
    python: str | None = None
    for name, pin in _listed_pins(lines):
        if name == "python":
            python = python or pin.version
            continue
        known = pins.get(name)
        if known is None or _PRIORITY[pin.source] > _PRIORITY[known.source]:
            pins[name] = pin
        elif known.version != pin.version and _PRIORITY[pin.source] == _PRIORITY[known.source]:
            conflicts.append(f"{name}: {known.version or known.origin} (report line {known.report_line}) and "
                             f"{pin.version or pin.origin} (line {pin.report_line}); took the first")
    # the setup's install command's, else a sentence's, when no listing has one
    if "torch" not in pins and (stated := next(installed_torch(lines), None) or next(_prose_torch(lines), None)
                                or next(bare_torch(lines), None)):
        pins["torch"] = stated[1]
    for name, pin in installed_folders(lines):  # a frame path's egg folder: the installed release, unless listed
        pins.setdefault(name, pin)
    return Environment(pins, python, tuple(conflicts), _unnamed_pin(lines), _stated_commit(lines),
                       installed_from(lines), states_source(lines))




# Two-line shapes: an interpreter's ">>> flash_attn.__version__" (cleaning may take ">>>" for a quote's marks)
# then "'2.5.7'", and a bug template's heading ("### Python Version") then its answer ("3.10") on the next line
# that has text.
_ASKED = re.compile(rf"^\s*(?:>>>\s*)?(?:\$\s*)?{_PYTHON_C}(?:print\()?(?P<name>[A-Za-z_]\w{{0,60}})\.__version__\)?"
                    r"['\"]?\s*$")
_HEADING = re.compile(r"^\s*#{2,4}\s+(?P<name>[A-Za-z][\w.-]{0,40}(?: [\w.-]{1,40}){0,2})\s+[Vv]ersion\s*$")
_ANSWER = re.compile(rf"^\s*['\"]?v?(?P<ver>{_RELEASE})['\"]?\s*$")


def _two_line_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines[:-1]):
        if "__version__" not in line and "ersion" not in line:
            continue
        asked = _ASKED.match(line) or _HEADING.match(line)
        if asked is None:
            continue
        following = next((n for n in range(index + 1, min(index + 4, len(lines))) if lines[n].strip()), None)
        answer = _ANSWER.match(lines[following]) if following is not None else None
        if answer is not None and following is not None:
            yield _dist(asked["name"]), Pin(answer["ver"], "env listing", following + 1)


# Versions stated in a sentence: "The version of pytorch-lightning is `1.5.10`", "The versions of torch, timm, and
# submitit are 1.8.0+cpu, 0.6.7 and 1.4.5" (names and versions in the same order).
_NAME_LIST = r"`?[A-Za-z][\w.-]{0,40}`?(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)`?[A-Za-z][\w.-]{0,40}`?){0,5}"
_RELEASE_LIST = rf"`?{_RELEASE}`?(?:(?:\s*,\s*(?:and\s+)?|\s+and\s+)`?{_RELEASE}`?){{0,5}}"
_SENTENCE = re.compile(rf"\b[Vv]ersions? of\s+(?P<names>{_NAME_LIST})\s+(?:is|are|was|were)\s+"
                       rf"(?P<vers>{_RELEASE_LIST})")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+)?|\s+and\s+")


# "the code is not work when pytorch-lightning=1.1.1": the release a sentence says fails is the one that ran.
_FAILS_WITH = re.compile(rf"\b(?:(?:is |does |do )?not work\w*|doesn't work|fails?|failed|breaks?|broken)\s+"
                         rf"(?:when|with|on|using|in|for)\s+(?:using\s+)?(?P<name>[A-Za-z][\w.-]{{1,60}})\s*={{1,2}}\s*"
                         rf"v?(?P<ver>{_RELEASE})", re.IGNORECASE)


# "My asteroid version is 0.3.4", "the torch version was `2.0.1`": the release a sentence says the run had (not
# "the latest version is 0.9", nor on a line saying a release works).
_VERSION_IS = re.compile(rf"(?<![\w.-])(?P<name>[A-Za-z][\w.-]{{1,40}})\s+version\s+(?:is|was)\s+`?v?"
                         rf"(?P<ver>{_RELEASE})`?(?![\w.])", re.IGNORECASE)
_NO_PACKAGE = frozenset({"latest", "newest", "current", "last", "new", "old", "same", "this", "that", "which",
                         "what", "whose", "release", "stable", "previous", "next", "first", "minimum", "required",
                         "its", "the"})


def _sentence_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines):
        if SCHEDULE.search(line):  # a deprecation warning's releases are the library's schedule, not the run's
            continue
        for failing in _FAILS_WITH.finditer(line) if "=" in line else ():
            yield _dist(failing["name"]), Pin(failing["ver"], "env listing", index + 1)
        for stated in _VERSION_IS.finditer(line) if "ersion" in line and not _WORKING.search(line) else ():
            if stated["name"].lower() not in _NO_PACKAGE:
                yield _dist(stated["name"]), Pin(stated["ver"], "env listing", index + 1)
        for match in _SENTENCE.finditer(line) if "ersion" in line else ():
            names = [n.strip("`") for n in _LIST_SEPARATOR.split(match["names"]) if n]
            versions = [v.strip("`") for v in _LIST_SEPARATOR.split(match["vers"]) if v]
            if len(names) == len(versions):
                yield from ((_dist(name), Pin(version, "env listing", index + 1))
                            for name, version in zip(names, versions, strict=True))


# A Python version in parentheses, as an issue title says it: "TypeError in fit (Python 3.6)"
_PAREN_PYTHON = re.compile(r"\((?:on |with |using )?[Pp]ython ?v?(?P<ver>3\.\d{1,2}(?:\.\d{1,2})?)\)")


# A setup written as one "+"-joined run: "win11+python3.11/3.10+cuda12.4/12.1+pytorch2.3.0+cu121" (a name glued to
# its release, alternatives after "/", a local label such as "+cu121" after a release).
_JOINED = re.compile(r"(?<![A-Za-z0-9_.+/-])(?P<run>[A-Za-z][\w.-]{0,30}(?:/[\w.]{1,20})*"
                     r"(?:\+[A-Za-z][\w.-]{0,30}(?:/[\w.]{1,20})*){1,8})(?![A-Za-z0-9_.+/-])")
_GLUED = re.compile(r"^(?P<name>[A-Za-z][A-Za-z_-]{0,30}?)[-_ ]?v?(?P<ver>\d+(?:\.\d+)+)(?:/[\w.]{1,20})*$")
_LOCAL = re.compile(r"^(?:cu|rocm|cpu)\d*(?:\.\d+)*$")


def _joined_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines):
        for match in _JOINED.finditer(line) if "+" in line else ():
            parts = match["run"].split("+")
            for position, part in enumerate(parts):
                glued = _GLUED.match(part)
                if glued is None:
                    continue
                local = parts[position + 1] if position + 1 < len(parts) and _LOCAL.match(parts[position + 1]) else ""
                name = _dist(glued["name"])
                if name in ("cuda", "cudnn", "win", "windows", "ubuntu", "cu"):
                    continue
                yield name, Pin(glued["ver"] + (f"+{local}" if local else ""), "env listing", index + 1)


# A bug template's version check: "print(tianshou.__version__, torch.__version__, sys.version, sys.platform)" and, on
# the next line with text, what it printed ("0.4.8 1.12.0+cu113 3.8.8 (default, ...) [MSC ...] win32").
_PRINT_CALL = re.compile(r"^\s*(?:>>>\s*)?print\((?P<args>[\w.,\s]{1,400})\)\s*$")
_PRINTED_ARG = re.compile(r"^(?P<name>[A-Za-z_]\w{0,60})\.__version__$|^sys\.version$")
_PRINTED_RELEASE = re.compile(rf"^{_RELEASE}$")


def _printed_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines[:-1]):
        call = _PRINT_CALL.match(line) if "__version__" in line else None
        if call is None:
            continue
        following = next((n for n in range(index + 1, min(index + 3, len(lines))) if lines[n].strip()), None)
        if following is None:
            continue
        values = lines[following].split()
        for arg, value in zip((a.strip() for a in call["args"].split(",")), values, strict=False):
            named = _PRINTED_ARG.match(arg)
            if named is None or not _PRINTED_RELEASE.match(value):
                break  # a value that is no release (or an argument that is no version): the order is lost
            yield ("python" if named["name"] is None else _dist(named["name"])), Pin(value, "env listing",
                                                                                    following + 1)
            if named["name"] is None:
                break  # sys.version goes on with spaces: nothing after it can be matched up


# The setup's install of a repository's commit: "pip install git+https://github.com/o/r.git@<sha>" (a commit, not a
# branch: a branch names no code that ran).
_COMMIT_INSTALL = re.compile(r"\bpip3? install (?:-\S+ )*git\+(?P<url>https://(?:github\.com|gitlab\.com)/[\w.-]+/"
                             r"(?P<repo>[\w.-]+?))(?:\.git)?@(?P<sha>[0-9a-f]{7,40})\b")


def source_pin(dist: str, pin: Pin, notes: list[str]) -> str:
    """A source install's requirement: the commit the report's install command names, else (a freeze's source line,
    which may be an edited checkout) a placeholder for the nearest release."""
    if pin.source == "pip install":  # the setup's own install command: that commit is what ran
        notes.append(f"{dist} is pinned to the commit the report installed ({pin.origin}, report line "
                     f"{pin.report_line})")
        return f"{dist} @ {pin.origin}"
    notes.append(f"{dist} came from a source install ({pin.origin}): pin the nearest release and add the "
                 "upstream change as a patch (see cases/ai-toolkit-flux-ids)")
    return f"{MARK}: {dist} was installed from {pin.origin}: pin the nearest release, e.g. {dist}==X.Y.Z, add a patch"


# A model card's "Framework versions" line naming two installs tried: "peft 0.2.0/peft 0.3.0.dev0".
_SLASHED = re.compile(rf"^\s*(?P<name>[A-Za-z][\w-]{{0,60}}) (?P<first>{_RELEASE})\s*/\s*(?P=name) "
                      rf"(?P<second>{_RELEASE})\s*$", re.IGNORECASE)


def _slashed_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """The release of the two that the index has (a ``.dev`` build is a source checkout's), else the first."""
    for index, line in enumerate(lines):
        if match := _SLASHED.match(line):
            released = [ver for ver in (match["first"], match["second"]) if "dev" not in ver]
            yield _dist(match["name"]), Pin((released or [match["first"]])[0], "env listing", index + 1)


# A bug template's series bullet: "* PyTorch 2.4.x, Lightning 2.4.x, torchmetrics 1.4.x" (torch's is read as prose).
_SERIES = re.compile(r"(?<![\w.-])(?P<name>[A-Za-z][\w-]{1,40})\s+v?(?P<ver>\d+\.\d+)\.[xX*](?![\w.])")


def _series_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    """A release series a bullet states per package ("torchmetrics 1.4.x"): kept as written, so the draft asks for
    the release of that series the report ran."""
    asked = _asked(lines)
    for index, line in enumerate(lines):
        if _BULLET_MARK.match(line) and index not in asked and not _WORKING.search(line):
            yield from ((name, Pin(f"{match['ver']}.x", "env listing", index + 1))
                        for match in _SERIES.finditer(line) if (name := _dist(match["name"])) != "torch")


# An environment pasted as a Python dict's repr (mmcv/mmengine collect_env printed as a dict): "'Python': '3.8.6 (tags/
# ...)', ..., 'PyTorch': '2.0.0+cu117', 'TorchVision': '0.15.1+cu117'", one line, the build details' \n escaped.
_DICT_PAIR = re.compile(rf"(?:^|[{{,]\s*)'(?P<name>[A-Za-z][\w.-]{{0,40}})':\s*'v?(?P<ver>{_RELEASE})(?=['\s(])")


def _dict_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines):
        pairs = [(_dist(m["name"]), m["ver"]) for m in _DICT_PAIR.finditer(line)] if "': '" in line else []
        if any(name in ("python", "torch") for name, _ in pairs):  # an environment, not a config's strings
            yield from ((name, Pin(ver, "env listing", index + 1)) for name, ver in pairs)


def _listed_pins(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    yield from _two_line_pins(lines)
    yield from ((_dist(name), pin) for name, pin in (*table_pins(lines), *shown_pins(lines)))
    yield from _dict_pins(lines)
    yield from _slashed_pins(lines)
    yield from _printed_pins(lines)
    yield from _joined_pins(lines)
    yield from _sentence_pins(lines)
    yield from _series_pins(lines)
    asked = _asked(lines)
    for index, raw in enumerate(lines):
        if not _DIGIT.search(raw) or index in asked:  # every listing gives a version number
            continue
        line = _INLINE_CODE.sub("", _COLLECT_ENV.sub("", raw))  # "`swift.version: 3.5.0", "torch:2.6`"
        if (commit := _COMMIT_INSTALL.search(line)) and not _WORKING.search(line):
            yield _dist(commit["repo"]), Pin("", "pip install", index + 1, f"git+{commit['url']}@{commit['sha']}")
            continue
        if "install" in line and _INSTALL.search(line):  # "pip install x==1": a workaround tried, not the setup
            continue
        if source := _SOURCE.match(line):
            name = source["egg"] or source["name"]
            yield _dist(name), Pin("", "pip freeze", index + 1, source["url"] or source["at"])
            continue
        found = False
        # "things are fixed now, you can use x==1": a release said to work, not the run's
        for match in _FREEZE.finditer(line) if "==" in line and not _CODE_TEST.match(line) \
                and not _ADVISED.search(line) else ():
            found = True
            yield _dist(match["name"]), Pin(match["ver"], "pip freeze", index + 1)
        if found:
            continue
        for pattern, source_name in _LISTINGS:
            if listed := pattern.match(line):
                yield _dist(listed["name"]), Pin(listed["ver"].rstrip(",;+"), source_name, index + 1)
                break
    yield from _paren_pythons(lines)  # last: a listing's Python is read first
    yield from prose_pythons(lines)


# torch's release stated in a sentence: "CUDA 11.1 and pytorch 1.8.1 are installed", "with torch 2.0.1+cu117"; not
# one a sentence says works or fixes it (that is the fix's, not the run's).
_PROSE_TORCH = re.compile(r"(?<![\w./-])(?:[Pp]y[Tt]orch|torch)\s*(?:==|version\s+(?:is\s+)?)?[\"'`]?v?"
                          r"(?P<ver>\d+\.\d+(?:\.\d+)?(?:\+\w+)?)(?:\.[xX*])?(?![\w.])")  # "2.4.x": the 2.4 series
_BULLET_MARK = re.compile(r"^\s*[-*+•]\s")


def _asked(lines: list[str]) -> set[int]:
    """The bullets that list versions a question asks about ("Does it work with the following versions?"): not the
    run's, which the report states elsewhere. One pass: a report of many bullets costs no rescans."""
    asked: set[int] = set()
    question = False  # whether the last non-blank line that is no bullet ends with "?"
    for index, line in enumerate(lines):
        if _BULLET_MARK.match(line):
            if question:
                asked.add(index)
        elif line.strip():
            question = line.rstrip().endswith("?")
    return asked


_NOT_THE_RUN = re.compile(r"\b(?:works?|worked|fix(?:ed|es)?|solved?|solution|updat\w*|upgrad\w*|downgrad\w*|instead"
                          r"|install|requires?)\b", re.IGNORECASE)


def _prose_torch(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines):
        if "orch" in line and not line[:1].isspace() and "File " not in line and not _NOT_THE_RUN.search(line) \
                and not SCHEDULE.search(line):
            yield from (("torch", Pin(m["ver"], "env listing", index + 1)) for m in _PROSE_TORCH.finditer(line))


def _paren_pythons(lines: list[str]) -> Iterator[tuple[str, Pin]]:
    for index, line in enumerate(lines):
        for match in _PAREN_PYTHON.finditer(line) if "ython" in line else ():
            yield "python", Pin(match["ver"], "env listing", index + 1)


def _dist(name: str) -> str:
    if attribute := re.fullmatch(r"(?P<module>[A-Za-z_]\w*)\.version", name.strip()):  # "swift.version: 3.5.0"
        return DISTRIBUTIONS.get(attribute["module"], (str(canonicalize_name(attribute["module"])),))[0]
    # "pyTorch_version: 2.10.0" names torch
    canonical = canonicalize_name(re.sub(r"\s+", "-", re.sub(r"(?<=\w)[._]version$", "", name.strip(), flags=re.I)))
    return _ALIASES.get(canonical, canonical)
