"""The two files ``python -m harness new`` writes, as text: ``case.yaml`` (or its template) and ``repro.py``.

Rendering only: what goes in them is decided in ``_draft``. Text from the report is written as YAML
double-quoted scalars or as ``#`` comments with control characters made visible, so no report can break the
files' syntax.
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field

import yaml

from harness._io import for_terminal
from harness._vocabulary import TORCH_PIN
from harness.authoring._bugreport import Frame, Traceback
from harness.authoring._lines import TURN_MARKER
from harness.authoring._said_prose import said_marked
from harness.authoring._shown import shown_starts
from harness.cases._placeholders import IMPORT_DISTRIBUTION, MARK, SKELETON_HEADER, SKELETON_IMPORT


@dataclass(frozen=True)
class CaseText:
    """What ``case.yaml`` says, decided by the draft."""

    case_id: str
    source: str  # the report's file name
    title: str
    signature: str
    shared: list[tuple[str, str]]  # (requirement, comment)
    buggy: list[tuple[str, str]]
    fix: list[tuple[str, str]]
    expect: dict[str, str]
    guess: str
    tags: list[str]
    upstream: dict[str, str] = field(default_factory=dict)  # from the report's link: issue or pr -> URL


def _q(text: str) -> str:
    """A YAML double-quoted scalar (control characters escaped; never cut by ' #')."""
    return yaml.safe_dump(text, default_style='"', width=10**9, allow_unicode=True).strip()


def _comment(text: str) -> str:
    return for_terminal(text, one_line=True)


_SUMMARY = f"{MARK}: one paragraph: what breaks, why, what fixed it, and how the repro reaches it"


def _chained(traceback: Traceback) -> str:
    """The summary's word on a chain's final exception the report cuts (the case matches its cause)."""
    return (f" (the run ended in {traceback.chained}, raised over this error: say which one the repro raises)"
            if traceback.chained else "")


def case_yaml(case: CaseText, traceback: Traceback) -> str:
    final = f"{traceback.exception}: {traceback.first_message_line}".rstrip(": ")
    exception_comment = ("" if traceback.exception == traceback.exception_class else
                         f"  # {traceback.exception} in the report; the harness matches the class name")
    lines = [
        f"# Written by `python -m harness new {case.case_id}` from {_comment(case.source) or 'a report'}. "
        f"Every {MARK} is yours to write;",
        "# `python -m harness validate` lists the ones left, with their lines.",
        f"id: {_q(case.case_id)}",
        "# From the report's final exception: rewrite it as one line a maintainer recognises.",
        f"title: {_q(case.title)}",
        "upstream:",
        *_upstream_lines(case.upstream),
        f"  fix: {_q(MARK + ': link the pull request or commit that fixed it (or remove this line)')}",
        f"# From report line {traceback.exception_line}: {_comment(final)[:300]}",
        f"signature: {_q(case.signature)}",
        f"exception: {_q(traceback.exception_class)}{exception_comment}",
        *([f"# Chained over it (the report cuts that line): {_comment(traceback.chained)[:300]}"]
          if traceback.chained else []),
        f"summary: {_q(_SUMMARY + _chained(traceback))}",
        "requires:  # shared by every variant; a variant's own pin of a package replaces it",
        *_requirement_lines(case.shared, "  "),
        f"tags: [{', '.join(case.tags)}]",
        "variants:",
        "  buggy:",
        "    role: buggy",
        f"    description: {_q('the releases the report ran')}",
        *(["    requires:", *_requirement_lines(case.buggy, "      ")] if case.buggy else []),
        f"    # A guess from the message ({case.guess}): check it.",
        f"    expect: {_expect(case.expect)}",
        "  fix:",
        "    role: fix",
        f"    description: {_q(MARK + ': the first fixed release, or the documented workaround')}",
        "    requires:",
        *_requirement_lines(case.fix, "      "),
        f"    expect: {_expect({'cpu': 'passes', 'cuda': 'passes', 'cuda-sim': 'passes'})}",
    ]
    return "\n".join(lines) + "\n"


def _upstream_lines(upstream: dict[str, str]) -> list[str]:
    if not upstream:
        return [f"  issue: {_q(MARK + ': link the bug report (or use pr: / commit: when there is no issue)')}"]
    return [f"  {key}: {_q(url)}  # the report's link: check it is the bug's own" for key, url in upstream.items()]


def _requirement_lines(items: list[tuple[str, str]], indent: str) -> list[str]:
    return [f"{indent}- {_q(req)}" + (f"  # {_comment(note)}" if note else "") for req, note in items]


def _expect(expect: dict[str, str]) -> str:
    return "{" + ", ".join(f"{lane}: {_q(value) if ' ' in value else value}" for lane, value in expect.items()) + "}"


_TEMPLATE_YAML = f"""\
# Written by `python -m harness new {{id}}` (no report given). Every {MARK} is yours to write;
# `python -m harness validate` lists the ones left, with their lines. The format is harness/case.schema.json;
# README.md "Adding a case" shows a finished case. Tip: `python -m harness new {{id}} --from report.txt --force`
# fills most of this in from a pasted traceback and environment listing.
id: "{{id}}"
title: "{MARK}: one line a maintainer recognises"
upstream:
  issue: "{MARK}: link the bug report (or use pr: / commit: when there is no issue)"
  fix: "{MARK}: link the pull request or commit that fixed it (or remove this line)"
# A regular expression (Python re.search) the buggy failure's exception message must match, e.g.
# "Expected all tensors to be on the same device.*cuda:\\\\d+ and cpu"
signature: "{MARK}: a regular expression the buggy failure's message matches"
# exception: RuntimeError            # optional: the class the buggy failure raises
summary: "{MARK}: one paragraph: what breaks, why, what fixed it, and how the repro reaches it"
requires:  # shared by every variant; a variant's own pin of a package replaces it
  - {TORCH_PIN}  # always pinned: an unpinned torch pulls a multi-GB CUDA build
# tags: [somelib, device-placement]
variants:
  buggy:
    role: buggy
    description: "{MARK}: the code or releases that have the bug"
    requires:
      - "{MARK}: pin the release that has the bug, e.g. somelib==1.0.0"
    # per lane: reproduces | passes | "unsupported: <why>"; a device-placement bug cannot show on cpu
    expect: {{cpu: passes, cuda: reproduces, cuda-sim: reproduces}}
  fix:
    role: fix
    description: "{MARK}: the first fixed release, or the documented workaround"
    requires:
      - "{MARK}: pin the first fixed release, e.g. somelib==1.0.1"
    expect: {{cpu: passes, cuda: passes, cuda-sim: passes}}
# optional: env, patches (diffs applied to site-packages), shims, args (per variant), timeout, image,
# status: retired + retired_reason
"""


def template_yaml(case_id: str) -> str:
    return _TEMPLATE_YAML.replace("{id}", case_id)


def _unnamed_import(project: str, named: dict[str, str]) -> list[str]:
    """A placeholder for the blamed project's import when the report shows none (its module name is not guessed
    from the project's: OpenNMT-py's package is onmt): validate lists it until the author writes the import."""
    if not project or project in named.values():
        return []
    return [f"# {MARK}: import {project}'s module here (the report shows no import of it: the name is in its "
            "pyproject.toml or setup.py)"]


def repro_py(case_id: str, source: str, imports: list[str], where: list[tuple[str, Frame]], final: str,
             distributions: dict[str, str] | None = None, api: str = "", project: str = "", command: str = "",
             shown: tuple[str, ...] = (), entered: dict[str, str] | None = None) -> str:
    """The skeleton: the repro contract, the frames' imports, the frames to follow as comments, a FILL-IN raise.
    ``distributions``: module -> the distribution installing it, said in the import's comment (validate checks
    that every variant pins it). ``api``: with no frame, the API the report names (the call to write); with neither,
    the skeleton says that ``project``'s call is to be found. ``command``: the report's command line, whose settings
    the repro keeps. ``shown``: the calls the report's own code shows (``BugReport.shown_calls``), the repro's start.
    ``entered``: package -> the module its first installed frame is in, imported instead of the bare package."""
    named = distributions or {}
    deep = entered or {}
    shows = "The report shows no frame of the blamed project" if where else "The report shows no frame"
    comments: list[str] = [f"    # {shows}; the API it names: {api}"] if api else []
    if not api and not where and project:
        comments = [f"    # The report shows no frame and names no API: find the call of {project} that ends this way"]
    if starts := shown_starts(shown):
        comments += ["    # The report's own code calls (start the repro there):",
                     *_wrapped(", ".join(starts), "    #   ")]
    if failing := said_marked(shown, "line"):  # a box traceback's cell frame: no frame carries its source line
        comments += ["    # Its notebook cell's line on the failing path:", *_wrapped(failing[-1], "    #   ")]
    for label, frame in where:
        comments += [f"    # {label}:", *_wrapped(_frame_text(frame), "    #   ")]
        comments += _wrapped(frame.source, "    #     ") if frame.source and not TURN_MARKER.match(frame.source) else []
    if command := _PROSE_TAIL.sub("", command):
        comments += ["    # The report ran (keep its settings: launcher, precision, plugin, flags):",
                     *_wrapped(command, "    #   ")]
    if final:
        comments += ["    # The buggy variant must end the same way:", *_wrapped(final[:300], "    #   ")]
    body = "\n".join([
        '"""Repro for cases/' + case_id + ": see case.yaml for the bug, its upstream links and the variants.",
        "",
        f"{SKELETON_HEADER} {_docstring_safe(source) or 'no report'}: write the {MARK} call.",
        "Build tiny models from configs (no downloads: HF_HUB_OFFLINE=1 is set), call the library on the path",
        "the traceback shows, and let the bug raise. The harness runs `repro.py --variant NAME --device cpu|cuda`",
        "(plus the variant's args) and matches the exception against case.yaml's signature.",
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "import argparse",
        "import sys",
        "",
        *sorted(["import torch", *(f"import {deep.get(m, m)}  {SKELETON_IMPORT}"
                                   + (f" ({IMPORT_DISTRIBUTION} {named[m]})" if m in named else "")
                                   + "; the call uses it" for m in imports)],
                key=lambda line: line.split()[1].lower()),
        *_unnamed_import(project, named),
        "",
        "",
        "def parse_args(argv: list[str]) -> argparse.Namespace:",
        "    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])",
        '    parser.add_argument("--variant", required=True)',
        '    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)',
        "    return parser.parse_args(argv)",
        "",
        "",
        "def main(argv: list[str]) -> None:",
        "    args = parse_args(argv)",
        "    torch.manual_seed(0)",
        "    device = torch.device(args.device)",
        '    print(f"variant={args.variant} device={device} torch={torch.__version__}")',
        *comments,
        f'    raise NotImplementedError("{MARK}: call the library as the traceback does, on `device`")',
        "",
        "",
        'if __name__ == "__main__":',
        "    main(sys.argv[1:])",
    ])
    return body + "\n"


def _docstring_safe(text: str, limit: int = 50) -> str:
    text = _comment(text).replace("\\", "/").replace('"', "'")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _wrapped(text: str, prefix: str, width: int = 116) -> list[str]:
    """Comment lines that keep the repro within ruff's line length (paths are cut where they must be)."""
    lines = textwrap.wrap(_comment(text), width - len(prefix) - 2, break_on_hyphens=False) or [""]
    return [prefix + lines[0], *(prefix + "  " + line for line in lines[1:])]


# A sentence in a CJK script after the command, with no flag after it ("python train.py 的时候报错": "when running
# it, it errors"): the report's words, not the command's.
_PROSE_TAIL = re.compile(r"\s+[\u2e80-\u9fff\uac00-\ud7af\uff01-\uff60](?:(?!\s-)[^\n])*$")
# A path pasted as a markdown link's text ("[~/venv/.../memory.py:158](http://localhost:8889/...)"): its "[" is not
# part of the path.
_LINK_OPEN = re.compile(r"^\[(?=[~/.]|[A-Za-z]:[\\/])")


def _frame_text(frame: Frame) -> str:
    line = f", line {frame.line}" if frame.line else ""
    function = f", in {frame.function}" if frame.function else ""
    return f'File "{_LINK_OPEN.sub("", frame.path)}"{line}{function}'

