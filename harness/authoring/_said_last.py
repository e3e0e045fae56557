"""The last resort of a title's API: when neither the frames nor what the report says ran name one, the project's own
source file its text names (a linked line, a script it ran or quotes), else the activity its words say failed
("resume", "training"). A title naming no API at all is never kept by a maintainer; these are what one writes first."""

from __future__ import annotations

import re

# A source file written in the text (``model.py``, ``tools/train.py``, ``scripts/run.sh``), or a linked one's path.
_SOURCE_FILE = re.compile(r"(?<![\w.-])(?P<file>[A-Za-z_][\w-]{0,60}\.(?:py|sh|ipynb))(?![\w(])")
# A link to a file of a GitHub repository: ``github.com/<owner>/<repo>/blob/<ref>/<path>``.
_BLOB = re.compile(r"github\.com/(?P<repo>[\w.-]+/[\w.-]+)/blob/[^/\s]+/(?P<path>[^\s#?)\]>'\"]+)")
# Lines that are another program's, not the report's words: a traceback's frames, an installed tree's path.
_FOREIGN_LINE = re.compile(r"^\s*File \"|[/\\](?:site|dist)-packages[/\\]|[/\\]lib[/\\]python\d|^\s*(?:pip|conda) ")
# Files every project has, or other tools' files, that say nothing of where the bug is.
_EVERYWHERE = frozenset({"setup.py", "__init__.py", "conftest.py", "__main__.py", "pip.sh", "install.sh",
                         "collect_env.py", "env.py"})
# The activity a report's words say failed, most specific first: (pattern, the title's word).
_ACTIVITIES = (
    (re.compile(r"\bresum(?:e|es|ed|ing)\b|\bresume_from_checkpoint\b", re.I), "resume"),
    (re.compile(r"\bfine-?tun(?:e|es|ed|ing)\b", re.I), "fine-tuning"),
    (re.compile(r"\bexport(?:s|ed|ing)?\b", re.I), "export"),
    (re.compile(r"\b(?:inference|infer(?:s|red|ring)?)\b", re.I), "inference"),
    (re.compile(r"\bevaluat(?:e|es|ed|ing|ion)\b", re.I), "evaluation"),
    (re.compile(r"\btrain(?:s|ed|ing)?\b", re.I), "training"),
)

_ANY_ACTIVITY = re.compile("|".join(f"(?:{pattern.pattern})" for pattern, _ in _ACTIVITIES), re.IGNORECASE)


def said_file(lines: list[str], url: str) -> str:
    """The first source file of the report's own repository its text names: a link into that repository (its file's
    name), else a file its words or commands name outside any installed tree or traceback frame; "" for none."""
    own = re.search(r"github\.com/[\w.-]+/(?P<repo>[\w.-]+)", url)
    for line in (line for line in lines if "/blob/" in line):  # a cheap test before the patterns
        for link in _BLOB.finditer(line):
            name = link["path"].rstrip("/").rpartition("/")[2]
            # the repository's name, whoever owns it: a fork, or the project before it moved (a/x, then x/x)
            if own and link["repo"].rpartition("/")[2].lower() == own["repo"].lower() and _SOURCE_FILE.fullmatch(name) \
                    and name not in _EVERYWHERE:
                return name
    for line in lines:
        if not any(suffix in line for suffix in (".py", ".sh", ".ipynb")) or _FOREIGN_LINE.search(line):
            continue
        text = _BLOB.sub(" ", re.sub(r"https?://\S+", " ", line))  # a link's file is another repository's
        for found in _SOURCE_FILE.finditer(text):
            if found["file"] not in _EVERYWHERE:
                return found["file"]
    return ""


def said_activity(title: str, lines: list[str]) -> str:
    """The most specific activity the issue's title says failed, else the first line of its text that says one does
    (``resume``, ``training``)."""
    for text in (title, *(line for line in lines if _ANY_ACTIVITY.search(line) and not _FOREIGN_LINE.search(line))):
        if said := next((word for pattern, word in _ACTIVITIES if pattern.search(text)), ""):
            return said
    return ""


def activity_said(activity: str, text: str) -> bool:
    """Whether ``text`` already says the activity ``activity`` (one of the words ``said_activity`` gives)."""
    return any(word == activity and pattern.search(text) for pattern, word in _ACTIVITIES)
