"""The regex a case's signature holds, from the report's exception message: literal text escaped, the parts
that vary between runs (devices, sizes, addresses, the reporter's folders) generalised."""

from __future__ import annotations

import re

# An absolute path's folders ("/home/u/.local/lib/x.so" -> "/home/u/.local/lib/"): the reporter's machine's.
_FOLDERS = r"(?<![\w.:/])(?:/|~/|[A-Za-z]:\\)[^\s:'\"]*[/\\]"
# Parts of a message that differ between the report's run and a tiny repro: (pattern, regex written for it).
_VARIES = re.compile(
    r"(?P<device>\b(?:cuda|xpu|npu|hpu|mps|meta|privateuseone):\d+)"
    r"|(?P<gpu>\bGPU \d+)"
    r"|(?P<pid>\b(?:pid|PID|port|Port)(?:\(s\))?(?::? |=)\d+(?:, ?\d+)*)"
    r"|(?P<host>(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?(?![\w.])|\blocalhost:\d+)"
    r"|(?P<address>\b0x[0-9a-fA-F]{4,})"
    r"|(?P<size>torch\.Size\(\[[\d, ]*\]\))"
    r"|(?P<ints>\[\d+(?:, ?\d+)+\]|\(\d+(?:, ?\d+)+,?\))"
    r"|(?P<matmul>\b\d+x\d+\b)"
    r"|(?P<memory>\b\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)\b)"
    r"|(?P<paren>\(\d+\))"
    r"|(?P<field>\{\})"  # a template's field (a message read from its raise statement's format string)
    r"|(?P<temp>\x00?\btmp[\w-]{6,})")  # a temporary file's or folder's random name
_GENERAL = {"gpu": r"GPU \d+", "address": r"0x[0-9a-fA-F]+", "size": r"torch\.Size\(\[[\d, ]*\]\)",
            "matmul": r"\d+x\d+", "memory": r"\d+(?:\.\d+)? ?(?:[KMGTP]i?B|bytes)", "paren": r"\(\d+\)",
            "field": r".+?", "host": r"[\w.]+(?::\d+)?", "temp": r"\S*"}
MAX_SIGNATURE_SOURCE = 200
MAX_SIGNATURE = 1000


# torch words a failed wrapper device check two ways: "... found at least two devices, cuda:0 and cpu! (when checking
# argument for argument ARG in method M)" (torch 2.7 and older) and "... got ARG is on cpu, different from other
# tensors on cuda:0 (when checking argument in method M)" (newer, e.g. 2.13). A case pins torch 2.13 whatever the
# report ran, so its signature must match the wording of either. torch 1.x spelt "arugment" and named the method
# without its dispatch key ("wrapper_addmm" where 2.x says "wrapper_CUDA_addmm").
_DEVICE_CHECK = (
    re.compile(r"Expected all tensors to be on the same device, but found at least two devices, \S+ and \S+! "
               r"\(when checking ar(?:gu|ug)ment for argument (?P<arg>\w+) in method (?P<method>\w+)\)"),
    re.compile(r"Expected all tensors to be on the same device, but got (?P<arg>\w+) is on \S+, different from other "
               r"tensors on \S+ \(when checking argument in method (?P<method>\w+)\)"))


def device_check_signature(message: str) -> str | None:
    """For torch's wrapper device-check message: a regex matching it in either torch's wording."""
    match = next((m for pattern in _DEVICE_CHECK if (m := pattern.search(message))), None)
    if match is None:
        return None
    arg, method = match["arg"], match["method"]
    if method.startswith("wrapper_") and not method.startswith("wrapper_CUDA_"):
        method = "wrapper_(?:CUDA_)?" + method.removeprefix("wrapper_")
    return (r"Expected all tensors to be on the same device, but (?:found at least two devices, \S+ and \S+!"
            rf"|got {arg} is on \S+, different from other tensors on \S+) \(when checking ar(?:gu|ug)ment "
            rf"(?:for argument {arg} )?in method {method}\)")


def make_signature(message: str, colours: tuple[tuple[int, int], ...] = ()) -> tuple[str, str]:
    """A regex for the message's first line: literal text escaped, varying parts generalised. ``colours``: spans
    where the report had terminal colour codes; the real message holds them, so the regex keeps clear of them."""
    colour_note = ""
    if colours:
        message, colour_note = _colour_free(message, colours)
    signature, note = _plain_signature(message)
    return signature, "; ".join(n for n in (colour_note, note) if n)


def _colour_free(message: str, colours: tuple[tuple[int, int], ...]) -> tuple[str, str]:
    """The text before the first colour code, or the longest colour-free piece when that one is short."""
    bounds = [0, *(edge for span in colours for edge in span), len(message)]
    pieces = [message[start:stop].strip() for start, stop in zip(bounds[::2], bounds[1::2], strict=True)]
    first = pieces[0]
    chosen = first if len(first) >= 24 else max(pieces, key=len)
    if not chosen:
        return message, ""
    where = "before the first one" if chosen is first else "of the longest piece without them"
    return chosen, (f"the report's exception message has terminal colour codes ({len(colours)}; the raised message "
                    f"holds them, the report's text not): the signature matches the text {where}")


def _plain_signature(message: str) -> tuple[str, str]:
    device_check = device_check_signature(message[:MAX_SIGNATURE_SOURCE * 2])
    if device_check:
        return device_check, ("the signature matches torch's device-check message as older (2.7) and newer (2.13) "
                              "torch word it")
    signature, note = _signature(message)
    while len(signature) > MAX_SIGNATURE:  # the schema's bound; only a message dense with numbers gets here
        message = message[: len(message) * 2 // 3]
        signature, _ = _signature(message)
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    return signature, note


def _signature(message: str) -> tuple[str, str]:
    note = ""
    message = re.sub(_FOLDERS, "\x00", message)  # the reporter's folders: any folders match (\S*) in their place
    if len(message) > MAX_SIGNATURE_SOURCE:
        cut = max(message.rfind(mark, 0, MAX_SIGNATURE_SOURCE) for mark in (". ", "! ", "; ", ", ", " "))
        message = message[: cut if cut > 40 else MAX_SIGNATURE_SOURCE]
        note = f"the signature matches the first {len(message)} characters of the message (re.search needs no more)"
    # what the reporter left out ("......", "…"): any text there, nothing required after a last one
    kept = _ELIDED.split(message)
    while len(kept) > 1 and not kept[-1].strip():
        kept.pop()
    kept[-1] = without_dangling(kept[-1])
    if not "".join(kept):
        return r"^$", "the report's exception has no message: the signature matches an empty one"
    return ".*".join(_lines_signature(piece) for piece in kept), note


def _lines_signature(message: str) -> str:
    # a line break and the next line's indent ("\n\t" in torch's message, spaces or none in a paste): any whitespace
    return r"\s+".join(_generalised(line) for line in re.split(r"\s*\n\s*", message)).replace("\x00", r"\S*")


# The reporter's elision in a pasted message ("Missing key(s): "a.b", ......................", "… 3 more"): torch
# never prints a run of dots there, so the signature matches any text in its place (and nothing after a last one).
_ELIDED = re.compile(r"[ \t]*(?:\.{4,}|…+)[ \t]*")
# A message cut after a connective ("... the indexed tensor (cpu) and", an issue title cut short): the words before it.
_DANGLING = re.compile(r"(?:\s*,|\s+(?:and|or|but|with|to|of|for|the|a|an|in|on|at|from))\s*$")


def without_dangling(message: str) -> str:
    """The message without a connective it was cut after (never the whole message)."""
    cut = _DANGLING.sub("", message)
    return cut if cut.strip() else message


def _generalised(message: str) -> str:
    """One line of the message as a regex: literal text escaped, the parts that vary generalised."""
    pieces, last = [], 0
    for match in _VARIES.finditer(message):
        pieces.append(_escape(message[last:match.start()]))
        kind = match.lastgroup or ""
        if kind == "device":
            pieces.append(re.escape(match.group().partition(":")[0]) + r":\d+")
        elif kind == "pid":  # a process id, port or rank: the word kept, its numbers any
            word = re.match(r"[A-Za-z]+(?:\(s\))?(?::? |=)", match.group())
            pieces.append(_escape(word.group() if word else "") + r"\d+(?:, ?\d+)*")
        elif kind == "ints":
            pieces.append(r"\[[\d, ]*\]" if match.group().startswith("[") else r"\([\d, ]*\)")
        else:
            pieces.append(_GENERAL[kind])
        last = match.end()
    pieces.append(_escape(message[last:]))
    return "".join(pieces)


def _escape(text: str) -> str:
    """Escape regex metacharacters only (re.escape also escapes spaces, which reads badly in YAML)."""
    return re.sub(r"([\\.^$*+?{}\[\]|()])", r"\\\1", text)
