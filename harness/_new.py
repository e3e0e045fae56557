"""``python -m harness new ID [--from REPORT]``: a case skeleton from a bug report.

Pipeline: read the report file (:func:`read_report_file`) -> parse it (``_bugreport``) -> draft the case
(signature, exception, requirements, expectations, repro imports) -> write ``cases/ID/case.yaml`` and
``cases/ID/repro.py``. Whatever a report cannot say (the fixed release, the upstream links, the summary, the
call that reproduces the bug) is written as a ``FILL-IN`` placeholder that ``validate`` reports with its line.
"""

from __future__ import annotations

import codecs
import json
import keyword
import os
import re
import tempfile
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from harness._bugreport import BugReport, Environment, Frame, parse_report
from harness._cases import _line_of as line_of
from harness._exceptions import UsageError
from harness._placeholders import MARK, find_placeholders
from harness._text import for_terminal

TORCH_PIN = "torch==2.13.0"  # what runs here (a local CPU wheel); every case pins it
MAX_REPORT_BYTES = 20 * 1024 * 1024
_SCHEMA = json.loads((Path(__file__).with_name("case.schema.json")).read_text())["properties"]["id"]

# Module folder (site-packages/<folder>) -> the distributions that install it, usual one first; the report's
# own listing picks among them (opencv-python-headless over opencv-python when that is what it lists).
# Any other folder is taken as its own distribution name (huggingface_hub -> huggingface-hub).
DISTRIBUTIONS: dict[str, tuple[str, ...]] = {
    "PIL": ("pillow", "pillow-simd"),
    "sklearn": ("scikit-learn",),
    "skimage": ("scikit-image",),
    "yaml": ("pyyaml",),
    "cv2": ("opencv-python", "opencv-python-headless", "opencv-contrib-python", "opencv-contrib-python-headless"),
    "bs4": ("beautifulsoup4",),
    "attr": ("attrs",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "git": ("gitpython",),
    "jwt": ("pyjwt",),
    "google": ("protobuf",),
    "lycoris": ("lycoris-lora",),
    "open_clip": ("open-clip-torch",),
    "pytorch_lightning": ("pytorch-lightning", "lightning"),
    "lightning_fabric": ("lightning-fabric", "lightning"),
    "faiss": ("faiss-cpu", "faiss-gpu"),
    "onnxruntime": ("onnxruntime", "onnxruntime-gpu"),
    "mmcv": ("mmcv", "mmcv-full"),
    "_pytest": ("pytest",),
    "pkg_resources": ("setuptools",),
    "torchgen": ("torch",),
    "functorch": ("torch",),
}
_NOT_PACKAGES = frozenset({"_distutils_hack", "__pycache__", "nvidia", "_virtualenv"})
_SITE = re.compile(r"(?:^|/)(?:site|dist)-packages/(?P<rest>.+)$", re.IGNORECASE)
_DEVICE_ERROR = re.compile(
    r"same device|different device|at least two devices|device type|Input type \(.*\) and weight type"
    r"|\bon (?:the )?(?:cpu|cuda|gpu|meta)\b.*\b(?:cpu|cuda|gpu|meta)\b|\bdevices?\b.*\b(?:cpu|cuda:?\d*|gpu)\b"
    r"|\b(?:cpu|cuda:?\d*|gpu)\b.*\bdevices?\b|Cannot access accelerator device", re.IGNORECASE)
_GPU_ONLY = re.compile(
    r"out of memory|CUDA error|CUDNN_STATUS|cuDNN error|CUBLAS_STATUS|NCCL|device-side assert"
    r"|illegal memory access|CUDA driver|no kernel image", re.IGNORECASE)
_SIM_GAP = ("unsupported: a guess — device memory, CUDA kernels and NCCL are not simulated "
            "(cuda-sim computes on the CPU; see README.md)")


@dataclass
class Draft:
    """What ``new`` writes and says: the two files and the notes for the author."""

    case_yaml: str
    repro_py: str
    notes: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)


# --- reading --------------------------------------------------------------------------------------------


def read_report_file(path: Path) -> str:
    """The report's text: UTF-8 (BOM or not) or UTF-16/32 with a BOM; anything else is a clear error."""
    try:
        with path.open("rb") as handle:
            raw = handle.read(MAX_REPORT_BYTES + 1)
    except FileNotFoundError:
        raise UsageError(f"--from {path}: no such file") from None
    except IsADirectoryError:
        raise UsageError(f"--from {path}: is a folder; give the report's text file") from None
    except OSError as error:
        raise UsageError(f"--from {path}: cannot read it ({error.strerror or error})") from None
    if len(raw) > MAX_REPORT_BYTES:
        raise UsageError(f"--from {path}: larger than {MAX_REPORT_BYTES // 2**20} MiB; keep the traceback and the "
                         "environment listing, cut the rest of the log")
    return decode_report(raw, path)


_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode_report(raw: bytes, path: Path) -> str:
    encoding = next((name for bom, name in _BOMS if raw.startswith(bom)), "utf-8")
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as error:
        hint = ("it looks like UTF-16 without a byte-order mark" if raw.count(0) > len(raw) // 4
                else "re-save it as UTF-8 (e.g. iconv -f cp1252 -t utf-8 REPORT > report.txt)")
        raise UsageError(f"--from {path}: not {encoding} text (byte 0x{raw[error.start]:02x} at offset {error.start}): "
                         f"{hint}") from None
    if "\x00" in text:
        raise UsageError(f"--from {path}: contains NUL characters: it is not a text file (paste the report as text)")
    return text


# --- drafting -------------------------------------------------------------------------------------------


def validate_id(case_id: str) -> str:
    if re.fullmatch(_SCHEMA["pattern"][1:-1], case_id) and len(case_id) <= _SCHEMA["maxLength"]:
        return case_id
    suggestion = "-".join(re.findall(r"[a-z0-9]+", case_id.lower()))[: _SCHEMA["maxLength"]].strip("-")
    hint = f" (e.g. {suggestion!r})" if suggestion and suggestion != case_id else ""
    raise UsageError(f"invalid case id {for_terminal(case_id, one_line=True)!r}: use kebab-case, lower-case letters "
                     f"and digits joined by '-', at most {_SCHEMA['maxLength']} characters{hint}")


def draft_case(case_id: str, report: BugReport | None, source: str = "") -> Draft:
    if report is None:
        return Draft(_TEMPLATE_YAML.replace("{id}", case_id), _repro(case_id, None, [], source))
    traceback = report.traceback
    notes = list(report.notes)
    packages = frame_packages(traceback.frames, report.environment)
    culprit = _culprit(traceback.final_frames or traceback.frames, packages)
    shared, buggy, fix = _requirements(packages, culprit, report.environment, notes)
    expect, guess = _expectations(traceback.exception_class, traceback.first_message_line)
    notes.append(f"expectations per lane are a guess ({guess}): check them against the upstream discussion")
    signature, signature_note = make_signature(traceback.first_message_line)
    if signature_note:
        notes.append(signature_note)
    imports = _imports(traceback.frames)
    text = _case_yaml(case_id, report, shared, buggy, fix, expect, guess, signature, packages, source)
    return Draft(text, _repro(case_id, report, imports, source), notes, imports)


def frame_packages(frames: tuple[Frame, ...], environment: Environment) -> list[str]:
    """Distributions whose files appear in the frames (site-/dist-packages), outermost first, torch first."""
    found: list[str] = ["torch"]
    for frame in frames:
        module = _frame_module(frame)
        if module is None:
            continue
        candidates = DISTRIBUTIONS.get(module, (str(canonicalize_name(module)),))
        dist = next((c for c in candidates if c in environment.pins), candidates[0])
        if dist not in found:
            found.append(dist)
    return found


def _frame_module(frame: Frame) -> str | None:
    match = _SITE.search(frame.posix)
    if not match:
        return None
    parts = [p for p in match["rest"].split("/") if p]
    while parts and (parts[0].endswith((".egg", ".egg-link")) or parts[0].startswith("__editable__")):
        parts.pop(0)
    if not parts:
        return None
    top = parts[0] if len(parts) > 1 else parts[0].partition(".")[0]
    return top if top.isascii() and top.isidentifier() and top not in _NOT_PACKAGES else None


def _culprit(frames: tuple[Frame, ...], packages: list[str]) -> str:
    """The distribution of the innermost library frame that is not torch's (torch when there is none)."""
    for frame in reversed(frames):
        module = _frame_module(frame)
        if module is None:
            continue
        dist = next((p for p in packages if p in DISTRIBUTIONS.get(module, (str(canonicalize_name(module)),))), None)
        if dist and dist != "torch":
            return dist
    return "torch"


def innermost_library_frame(frames: tuple[Frame, ...]) -> Frame | None:
    return next((f for f in reversed(frames) if _frame_module(f) is not None), None)


def entry_frame(frames: tuple[Frame, ...]) -> Frame | None:
    """The report's own code calling into the libraries: the last frame outside site-packages before them."""
    inner = innermost_library_frame(frames)
    if inner is None:
        return None
    outside = [f for f in frames[: frames.index(inner)] if _frame_module(f) is None and not _stdlib(f)]
    return outside[-1] if outside else None


def _stdlib(frame: Frame) -> bool:
    return bool(re.search(r"/lib/python\d[\d.]*/[^/]+\.py$|<frozen |^<string>$", frame.posix))


def _requirements(packages: list[str], culprit: str, environment: Environment,
                  notes: list[str]) -> tuple[list[tuple[str, str]], list[tuple[str, str]], list[tuple[str, str]]]:
    """(requirement, comment) lists: shared by every variant, the buggy variant's, the fix variant's."""
    torch = environment.pins.get("torch")
    if torch and torch.version and not torch.version.startswith("2.13.0"):
        torch_comment = (f"the report ran torch {torch.version} (report line {torch.report_line}); "
                         "torch 2.13.0 is what runs here")
        notes.append(f"the report ran torch {torch.version}; the case pins {TORCH_PIN} (what runs here): if the "
                     "bug needs the older torch, say why in the case (or reproduce it with a patch, as "
                     "cases/var-resume does)")
    else:
        torch_comment = "torch 2.13.0 is what runs here" + ("" if torch else " (the report lists no torch version)")
    shared = [(TORCH_PIN, torch_comment)]
    buggy: list[tuple[str, str]] = []
    for dist in packages[1:]:
        pinned = _pin(dist, environment, notes)
        (buggy if dist == culprit else shared).append(pinned)
    if culprit == "torch":
        fix = [(f"{MARK}: the fix as requirements: a release of a library, or remove this list and describe a "
                "workaround with args or a patch (torch stays 2.13.0; see cases/var-resume)", "")]
    else:
        fix = [(f"{MARK}: pin the first fixed release, e.g. {culprit}==X.Y.Z (or the documented workaround's pins)",
                "the innermost library frame is in " + culprit)]
    for conflict in environment.conflicts:
        notes.append(f"the report lists two versions of {conflict}")
    return shared, buggy, fix


def _pin(dist: str, environment: Environment, notes: list[str]) -> tuple[str, str]:
    pin = environment.pins.get(dist)
    if pin is None:
        notes.append(f"the report lists no version of {dist} (its files are in the traceback)")
        return f"{MARK}: pin the {dist} release the report ran, e.g. {dist}==X.Y.Z (the report lists none)", ""
    where = f"report line {pin.report_line}, {pin.source}"
    if not pin.version:
        notes.append(f"{dist} came from a source install ({pin.origin}): pin the nearest release and add the "
                     "upstream change as a patch (see cases/ai-toolkit-flux-ids)")
        return f"{MARK}: {dist} was installed from {pin.origin}: pin the nearest release, add a patch", where
    try:
        version = Version(pin.version)
    except InvalidVersion:
        return f"{MARK}: pin {dist} (the report lists the unreadable version {pin.version!r})", where
    if version.is_devrelease:
        notes.append(f"{dist} {pin.version} is a development build (not on PyPI as such): pin the nearest release and "
                     "add the upstream change as a patch (see cases/ai-toolkit-flux-ids)")
        return f"{MARK}: {dist} {pin.version} is a development build: pin the nearest release, add a patch", where
    if version.local:
        notes.append(f"{dist} {pin.version}: the local label +{version.local} is dropped (PyPI has {version.public})")
        return f"{dist}=={version.public}", f"{where}: {pin.version}"
    return f"{dist}=={pin.version}", where


def _expectations(exception: str, message: str) -> tuple[dict[str, str], str]:
    message = message[:MAX_SIGNATURE_SOURCE * 2]  # the message's head decides; its patterns scan it more than once
    if _GPU_ONLY.search(message) or exception in ("OutOfMemoryError", "CudaError"):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": _SIM_GAP}, "a GPU runtime error"
    if _DEVICE_ERROR.search(message):
        return {"cpu": "passes", "cuda": "reproduces", "cuda-sim": "reproduces"}, "a device-placement error"
    return {"cpu": "reproduces", "cuda": "reproduces", "cuda-sim": "reproduces"}, "not a device error"


# Parts of a message that differ between the report's run and a tiny repro: (pattern, regex written for it).
_VARIES = re.compile(
    r"(?P<device>\b(?:cuda|xpu|npu|hpu|mps|meta|privateuseone):\d+)"
    r"|(?P<gpu>\bGPU \d+)"
    r"|(?P<address>\b0x[0-9a-fA-F]{4,})"
    r"|(?P<size>torch\.Size\(\[[\d, ]*\]\))"
    r"|(?P<ints>\[\d+(?:, ?\d+)+\]|\(\d+(?:, ?\d+)+,?\))"
    r"|(?P<matmul>\b\d+x\d+\b)"
    r"|(?P<memory>\b\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)\b)"
    r"|(?P<paren>\(\d+\))")
_GENERAL = {"gpu": r"GPU \d+", "address": r"0x[0-9a-fA-F]+", "size": r"torch\.Size\(\[[\d, ]*\]\)",
            "matmul": r"\d+x\d+", "memory": r"\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)", "paren": r"\(\d+\)"}
MAX_SIGNATURE_SOURCE = 200
MAX_SIGNATURE = 1000


def make_signature(message: str) -> tuple[str, str]:
    """A regex for the message's first line: literal text escaped, varying parts generalised."""
    signature, note = _signature(message)
    while len(signature) > MAX_SIGNATURE:  # the schema's bound; only a message dense with numbers gets here
        message = message[: len(message) * 2 // 3]
        signature, _ = _signature(message)
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    return signature, note


def _signature(message: str) -> tuple[str, str]:
    note = ""
    if len(message) > MAX_SIGNATURE_SOURCE:
        cut = max(message.rfind(mark, 0, MAX_SIGNATURE_SOURCE) for mark in (". ", "! ", "; ", ", ", " "))
        message = message[: cut if cut > 40 else MAX_SIGNATURE_SOURCE]
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    if not message:
        return r"^$", "the report's exception has no message: the signature matches an empty one"
    pieces, last = [], 0
    for match in _VARIES.finditer(message):
        pieces.append(_escape(message[last:match.start()]))
        kind = match.lastgroup or ""
        if kind == "device":
            pieces.append(re.escape(match.group().partition(":")[0]) + r":\d+")
        elif kind == "ints":
            pieces.append(r"\[[\d, ]*\]" if match.group().startswith("[") else r"\([\d, ]*\)")
        else:
            pieces.append(_GENERAL[kind])
        last = match.end()
    pieces.append(_escape(message[last:]))
    return "".join(pieces), note


def _escape(text: str) -> str:
    """Escape regex metacharacters only (re.escape also escapes spaces, which reads badly in YAML)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)


def _title(report: BugReport, packages: list[str]) -> str:
    message = " ".join(report.traceback.first_message_line.split()) or report.traceback.exception
    inner = innermost_library_frame(report.traceback.final_frames or report.traceback.frames)
    module = _frame_module(inner) if inner else None
    where = f"{module} {inner.function}: " if inner and module and inner.function else ""
    title = where + message
    return title if len(title) <= 200 else title[:196].rstrip() + " ..."


def _imports(frames: tuple[Frame, ...]) -> list[str]:
    modules: list[str] = []
    for frame in frames:
        module = _frame_module(frame)
        if module and module not in modules and DISTRIBUTIONS.get(module) != ("torch",) and module != "torch" \
                and not keyword.iskeyword(module):
            modules.append(module)
    return sorted(modules, key=str.lower)


# --- writing ------------------------------------------------------------------------------------------


def _q(text: str) -> str:
    """A YAML double-quoted scalar (control characters escaped; never cut by ' #')."""
    return yaml.safe_dump(text, default_style='"', width=10**9, allow_unicode=True).strip()


def _comment(text: str) -> str:
    return for_terminal(text, one_line=True)


def _case_yaml(case_id: str, report: BugReport, shared: list[tuple[str, str]], buggy: list[tuple[str, str]],
               fix: list[tuple[str, str]], expect: dict[str, str], guess: str, signature: str,
               packages: list[str], source: str) -> str:
    traceback = report.traceback
    final = f"{traceback.exception}: {traceback.first_message_line}".rstrip(": ")
    exception_comment = ("" if traceback.exception == traceback.exception_class else
                         f"  # {traceback.exception} in the report; the harness matches the class name")
    tags = [p for p in packages[1:] if re.fullmatch(r"[a-z0-9][a-z0-9._+-]{0,39}", p)]
    if "device-placement" in guess:
        tags.append("device-placement")
    lines = [
        f"# Written by `python -m harness new {case_id}` from {_comment(source) or 'a report'}. Every {MARK} is yours "
        "to write;",
        "# `python -m harness validate` lists the ones left, with their lines.",
        f"id: {_q(case_id)}",
        "# From the report's final exception: rewrite it as one line a maintainer recognises.",
        f"title: {_q(_title(report, packages))}",
        "upstream:",
        f"  issue: {_q(MARK + ': link the bug report (or use pr: / commit: when there is no issue)')}",
        f"  fix: {_q(MARK + ': link the pull request or commit that fixed it (or remove this line)')}",
        f"# From report line {traceback.exception_line}: {_comment(final)[:300]}",
        f"signature: {_q(signature)}",
        f"exception: {_q(traceback.exception_class)}{exception_comment}",
        f"summary: {_q(MARK + ': one paragraph: what breaks, why, what fixed it, and how the repro reaches it')}",
        "requires:  # shared by every variant; a variant's own pin of a package replaces it",
        *_requirement_lines(shared, "  "),
        f"tags: [{', '.join(tags)}]",
        "variants:",
        "  buggy:",
        "    role: buggy",
        f"    description: {_q('the releases the report ran')}",
        *(["    requires:", *_requirement_lines(buggy, "      ")] if buggy else []),
        f"    # A guess from the message ({guess}): check it.",
        f"    expect: {_expect(expect)}",
        "  fix:",
        "    role: fix",
        f"    description: {_q(MARK + ': the first fixed release, or the documented workaround')}",
        "    requires:",
        *_requirement_lines(fix, "      "),
        f"    expect: {_expect({'cpu': 'passes', 'cuda': 'passes', 'cuda-sim': 'passes'})}",
    ]
    return "\n".join(lines) + "\n"


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
  - torch==2.13.0  # always pinned: an unpinned torch pulls a multi-GB CUDA build
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


def _repro(case_id: str, report: BugReport | None, imports: list[str], source: str) -> str:
    where: list[str] = []
    if report is not None:
        frames = report.traceback.final_frames or report.traceback.frames
        final = f"{report.traceback.exception}: {report.traceback.first_message_line}".rstrip(": ")
        for label, frame in (("The report's own call into the libraries", entry_frame(frames)),
                             ("The innermost library frame, where it failed", innermost_library_frame(frames))):
            if frame is not None:
                where += [f"    # {label}:", *_wrapped(_frame_text(frame), "    #   ")]
                where += _wrapped(frame.source, "    #     ") if frame.source else []
        where += ["    # The buggy variant must end the same way:", *_wrapped(final[:300], "    #   ")]
    body = "\n".join([
        '"""Repro for cases/' + case_id + ": see case.yaml for the bug, its upstream links and the variants.",
        "",
        f"Written by `python -m harness new` from {_docstring_safe(source) or 'no report'}: write the {MARK} call.",
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
        *sorted(["import torch", *(f"import {m}  # noqa: F401 - in the traceback; the call uses it" for m in imports)],
                key=lambda line: line.split()[1].lower()),
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
        *where,
        f'    raise NotImplementedError("{MARK}: call the library as the traceback does, on `device`")',
        "",
        "",
        'if __name__ == "__main__":',
        "    main(sys.argv[1:])",
    ])
    return body + "\n"


def _docstring_safe(text: str) -> str:
    return _comment(text).replace("\\", "/").replace('"', "'")


def _wrapped(text: str, prefix: str, width: int = 116) -> list[str]:
    """Comment lines that keep the repro within ruff's line length (paths are cut where they must be)."""
    lines = textwrap.wrap(_comment(text), width - len(prefix) - 2, break_on_hyphens=False) or [""]
    return [prefix + lines[0], *(prefix + "  " + line for line in lines[1:])]


def _frame_text(frame: Frame) -> str:
    line = f", line {frame.line}" if frame.line else ""
    function = f", in {frame.function}" if frame.function else ""
    return f'File "{frame.path}"{line}{function}'


@dataclass(frozen=True)
class Written:
    folder: Path
    files: tuple[Path, ...]
    notes: tuple[str, ...]
    todo: tuple[tuple[Path, int, str], ...]  # (file, line, what to write)


def create_case(case_id: str, cases_dir: Path, report_path: Path | None, *, force: bool = False) -> Written:
    """Validate the id, read and parse the report, refuse to overwrite, write the two files atomically."""
    validate_id(case_id)
    if not cases_dir.is_dir():
        raise UsageError(f"--cases-dir {cases_dir}: not a folder")
    folder = cases_dir / case_id
    if folder.exists() and not force:
        raise UsageError(f"{folder} already exists: pick another id (ids are never reused), or pass --force to "
                         "overwrite its case.yaml and repro.py")
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"{folder} exists and is not a folder")
    files = (folder / "case.yaml", folder / "repro.py")
    odd = [str(path) for path in files if path.exists() and not path.is_file()]
    if odd:
        raise UsageError(f"{', '.join(odd)}: not a file; --force overwrites files only")
    report = _parse(report_path) if report_path is not None else None
    draft = draft_case(case_id, report, source=report_path.name if report_path else "")
    created = not folder.exists()
    try:
        folder.mkdir(exist_ok=True)
        for path, text in zip(files, (draft.case_yaml, draft.repro_py), strict=True):
            _write_atomically(path, text)
    except OSError as error:
        if created:
            for path in files:
                path.unlink(missing_ok=True)
            if folder.is_dir() and not any(folder.iterdir()):
                folder.rmdir()
        raise UsageError(f"cannot write {folder}: {error.strerror or error}") from None
    return Written(folder, files, tuple(draft.notes), _todo(files[0], draft))


def _parse(report_path: Path) -> BugReport:
    text = read_report_file(report_path)
    try:
        return parse_report(text)
    except UsageError as error:
        raise UsageError(f"--from {report_path}: {error}") from None


def _write_atomically(path: Path, text: str) -> None:
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _todo(case_file: Path, draft: Draft) -> tuple[tuple[Path, int, str], ...]:
    todo = [(case_file, line_of(draft.case_yaml, list(p.trail)) or 0, f"{p.where}: {p.fix()}")
            for p in find_placeholders(yaml.safe_load(draft.case_yaml))]
    repro = case_file.with_name("repro.py")
    number = next(n for n, line in enumerate(draft.repro_py.splitlines(), 1) if "raise NotImplementedError" in line)
    todo.append((repro, number, "the call that reproduces the bug (replace the NotImplementedError)"))
    return tuple(todo)
