"""The commit a pasted report states its run used, or the repository it installed from source at no stated commit
(a split of ``_envlist``), and what marks a sentence about a release that worked rather than the one that failed."""

from __future__ import annotations

import itertools
import re

from harness.authoring._prose import PUSHED, REPLY_HEADER

# A sentence about a release that worked ("works fine on version 0.0.26"): not the release that failed.
WORKING = re.compile(r"\b(?:works?|worked|working|fine|fixed|fixes|solved|resolved|downgrad\w*"
                     r"|no (?:error|issue)s?)\b", re.IGNORECASE)
_DIGIT = re.compile(r"\d")

# The commit a run states: a web UI's sysinfo ("Commit": "5bea443d..."), A1111's "Commit hash: ...", "on commit
# 1a2b3c4", or a blob/tree link at a sha (code the report quotes as it ran). A line saying a commit fixed it is a
# reply's fix (_prose), not the run's.
_COMMIT = re.compile(r'(?<![\w/])"?[Cc]ommit(?:\s+hash)?"?\s*[:=]?\s*"?(?P<sha>[0-9a-f]{7,40})\b')
# An app's version listing: SD.Next's "Version Platform Description" has "app: SD.next", "updated: ...", "hash:
# 083ab521" (the checkout's commit), each key alone on its line ("Model hash: 31e35c80fc", a checkpoint's, is none).
_HASH_KEY = re.compile(r"^\s*(?:[-*]\s+)?(?:(?i:git)\s+)?(?i:hash)\s*:\s*(?P<sha>[0-9a-f]{7,40})\s*$")
_BLOB = re.compile(r"github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100})/(?:blob|tree)/(?P<sha>[0-9a-f]{7,40})/")


def stated_commit(lines: list[str]) -> tuple[str, str]:
    replied = False
    for index, line in enumerate(lines):
        replied = replied or bool(REPLY_HEADER.match(line.strip()))
        if ("ommit" not in line and "/blob/" not in line and "/tree/" not in line and "ash" not in line) \
                or WORKING.search(line):
            continue
        # a reply's link to the code its writer just added there is the fix (_prose), not the code that ran
        pushed = replied and PUSHED.search(" ".join(lines[max(0, index - 3): index + 1]))
        stated = _COMMIT.search(line) or _HASH_KEY.match(line) or (None if pushed else _BLOB.search(line))
        if stated and _DIGIT.search(stated["sha"]):
            return (stated.groupdict().get("repo") or "", stated["sha"])
    built = next((m for line in lines if ".egg" in line for m in _EGG_COMMIT.finditer(line)), None)
    return ("/" + built["name"], built["sha"]) if built else ("", "")  # "/name": the egg names no owner


# An egg built from a checkout, its version's local part the commit (setuptools_scm's "+g<sha>", a setup.py's
# "+<sha>"): ".../dist-packages/TTS-0.0.3+6d6dca0-py3.6.egg/TTS/layers/losses.py"
_EGG_COMMIT = re.compile(r"-packages[/\\]+(?P<name>[A-Za-z][\w.]*)-\d[\w.]*\+g?(?P<sha>(?=[a-f]*\d)[0-9a-f]{7,40})"
                         r"(?:\.[\w.]+)?-py\d[\d.]*\.egg[/\\]")


# An install of a repository's current code: `git clone https://github.com/o/r` then `pip install .` / `pip install -e
# ".[torch]"` within a few lines, or `pip install git+https://github.com/o/r` at no commit (its default branch).
_CLONE = re.compile(r"\bgit clone (?:-\S+ )*https?://github\.com/(?P<repo>[\w.-]{1,100}/[\w.-]{1,100}?)(?:\.git)?/?(?:\s|$)")
_LOCAL_INSTALL = re.compile(r"\bpip3? install (?:-\S+ )*(?:-e |--editable )?['\"]?\.(?:\[[\w,.-]*\])?['\"]?(?:\s|$)")
_BRANCH_INSTALL = re.compile(r"\bpip3? install (?:-\S+ )*['\"]?git\+https?://github\.com/(?P<repo>[\w.-]{1,100}/"
                             r"[\w.-]{1,100}?)(?:\.git)?(?:@(?:main|master|dev|develop))?['\"]?(?:\s|$)")


def installed_from(lines: list[str]) -> str:
    """The repository ("owner/name") the run installed at its default branch, not at a stated commit; "" if none.
    Only the report's own text: a reply's `pip install git+...` is a fix to try, not what ran."""
    own = list(itertools.takewhile(lambda line: not REPLY_HEADER.match(line.strip()), lines))
    for index, line in enumerate(own):
        if ("install" not in line and "clone" not in line) or WORKING.search(line):
            continue
        if branch := _BRANCH_INSTALL.search(line):
            return branch["repo"]
        if (clone := _CLONE.search(line)) and any(_LOCAL_INSTALL.search(later) for later in own[index: index + 5]):
            return clone["repo"]
    return ""
