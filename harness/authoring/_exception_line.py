"""Where a report without a complete traceback states its exception: IPython's header, a sentence or a title naming
it ("Fix AttributeError: ..."), a logger's line, a class named alone, a message Python words one way, a printed
args tuple, a fragment of one of torch's messages. Each finder returns (line index, class, message, where) or None;
``_bugreport`` drafts from the first that answers."""

from __future__ import annotations

import re

from harness.authoring._prose import first_reply
from harness.authoring._torch_messages import library_words, torch_class, torch_fragment
from harness.authoring._torch_paraphrase import paraphrased
from harness.authoring._traceback import _Part, _strong_exception, _unmark
from harness.cases._placeholders import MARK

# IPython's header names the class before its "Traceback (most recent call last)"; a paste cut before the last
# line still gives the class.
_IPY_HEADER = re.compile(r"^\s*(?P<type>[A-Za-z_][\w.]{0,200}?)\s+Traceback \(most recent call last\)")
# An exception named inside a sentence or a title: "Fix AttributeError: module 'torch.nn' has no attribute ...".
# (a stray second colon or extra spaces before the message, "RuntimeError:  :expected ...", are not the message's)
_INLINE = re.compile(r"(?<![\w.])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception)):\s(?:\s*:)?\s*"
                     r"(?P<msg>\S.{0,1000})")


def _header_exception(lines: list[str], chains: list[list[_Part]]) -> tuple[int, str, str, str] | None:
    """The class IPython's header names; the message from the issue's title when it names the same class with one
    ("# TypeError: Accelerator.__init__() got ..."), else none (cut off)."""
    for chain in reversed(chains):
        match = _IPY_HEADER.match(lines[chain[-1].start])
        if match and _strong_exception(match["type"]):
            title = next((line[2:].strip() for line in lines if line.startswith("# ")), "")
            named = next((m for m in _INLINE.finditer(title) if m["type"] == match["type"]), None)
            if named is not None:
                return (chain[-1].start, match["type"], library_words(named["msg"].strip()),
                        "its IPython header (the message is cut off; the message from the issue's title)")
            return chain[-1].start, match["type"], "", "its IPython header (the message is cut off)"
    return None


# An error report's fields (ComfyUI's "- **Exception Type:** RuntimeError" then "- **Exception Message:** ...", a
# debug page's "Exception Value:"): the class and the message, each on its own line.
_TYPE_FIELD = re.compile(r"^[\s>*_-]*Exception Type:?[*_]*:?\s*(?P<type>[A-Za-z_][\w.]{0,200})[*_`]*\s*$")
_MESSAGE_FIELD = re.compile(r"^[\s>*_-]*Exception (?:Message|Value):?[*_]*:?\s*(?P<msg>\S.{0,2000})$")


def _typed_fields(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The class and the message an error report's "Exception Type" and "Exception Message" fields give."""
    for index, line in enumerate(lines):
        if (typed := _TYPE_FIELD.match(line)) and _strong_exception(typed["type"]):
            message = next((m["msg"].rstrip().rstrip("*_`").rstrip() for near in lines[max(0, index - 3):index + 4]
                            if (m := _MESSAGE_FIELD.match(near))), "")
            return index, typed["type"], message, "an error report's \"Exception Type\" and message fields"
    return None


# An exception quoted in prose ends at the closing mark.
_CLOSERS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}


# An exception written as its repr in prose (a logger's or a config tool's `error:TypeError("...")`): class and
# message, the message ending at the quote that closes the call; `raise X("...")` is code, not the error it printed.
_CALL_INLINE = re.compile(r"(?<![\w.])(?<!raise )(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception))"
                          r"\((?P<quote>[\"'])(?P<msg>.{1,1000}?)(?P=quote)\)")


def _description_first(lines: list[str]) -> list[int]:
    """Line indexes, last first, the report's own text (title, description) before its replies': an exception a
    reply or review note quotes in prose ("it resolved this problem RuntimeError: ... not the TypeError problem")
    is the report's only when its own text names none."""
    replies = first_reply(lines)
    replies = len(lines) if replies is None else replies
    return [*range(replies - 1, -1, -1), *range(len(lines) - 1, replies - 1, -1)]


def _open_quote(before: str) -> str | None:
    """The closing quote of a span the text before an exception opened further back ('**"[rank0]: RuntimeError')."""
    if before.count('"') % 2:
        return '"'
    return "\u201d" if before.count("\u201c") > before.count("\u201d") else None


def _stated_in_body(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The exception a sentence or the title names; when only the title names it and the body prints the same
    torch message whole without its class ("# RuntimeError: Expected all tensors to be on the same device" over
    "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"), the body's."""
    found = _inline_exception(lines)
    if found is None or not lines[found[0]].startswith("# ") or not found[2]:
        return found
    whole = torch_fragment(["" if line.startswith("# ") else line for line in lines])
    if whole is not None and len(whole[2]) > len(found[2]) and whole[2].lower().startswith(found[2].lower()):
        return whole[0], found[1], whole[2], "the title's exception, its message as the body prints it whole"
    return found


def _inline_exception(lines: list[str]) -> tuple[int, str, str, str] | None:
    for index in _description_first(lines):
        if "rror" not in lines[index] and "xception" not in lines[index]:
            continue
        calls = [m for m in _CALL_INLINE.finditer(lines[index]) if m["type"] not in ("Error", "Exception")]
        if calls:
            return index, calls[-1]["type"], calls[-1]["msg"], "its repr in a sentence (Class(\"message\"))"
        for match in reversed(list(_INLINE.finditer(lines[index]))):
            if match["type"] not in ("Error", "Exception"):
                before = lines[index][:match.start()]
                emphasis = re.search(r"(?<![*_\w])[*_]{1,3}$", before)  # **RuntimeError: ...**
                closer = emphasis.group()[::-1] if emphasis else _CLOSERS.get(before[-1:]) or _open_quote(before)
                message = match["msg"][:_closing(match["msg"], closer)] if closer else _quoted_end(
                    lines, match["type"], _sentence_message(match["msg"]))
                return index, match["type"], library_words(message, match["msg"]), \
                    "a sentence that names it (check where the message ends)"
    return None


# A logging record in Python's default format ("ERROR:whisperlivekit.diarization:Error in diarize: <message>"): the
# logger's own words before the message ("Error in diarize: ", "Exception in worker: ") are not the exception's.
_LOGGED = re.compile(r"^(?P<level>ERROR|CRITICAL|FATAL|WARNING):[\w.]+:\s*(?P<text>\S.{2,1000})$")
# Any other logger's format (a timestamp, "[ERROR]", a thread, a source): the level in capitals as a word, then the
# logger's "Exception: <message>" ("2020-09-04T21:10:54Z ERROR    Model training failed. Exception: <message>").
_LEVELLED = re.compile(r"(?<![\w.])(?P<level>ERROR|CRITICAL|FATAL)\b(?!:[\w.]+:).{0,300}?(?<![\w.])"
                       r"(?P<text>(?:Unhandled |Uncaught )?(?:Exception|Error):\s*\S.{2,1000})$")
_LOGGER_WORDS = re.compile(r"^(?:(?:Unhandled |Uncaught )?(?:Error|Exception|Failure|Failed)\b[^:]{0,80}:\s*)+")


def _logged_error(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The first error a logger recorded (an ERROR record before a WARNING one: the innermost code logs first), its
    message without the logger's words; the class the issue's title names alone, else torch's for a well-known
    message, else left to fill in."""
    records = [(i, m) for i, line in enumerate(lines)
               if (m := _LOGGED.match(line.strip()) or _LEVELLED.search(line[:2000]))  # bounded: a log line's length
               and not m["text"].lstrip().startswith("Traceback")]
    records.sort(key=lambda record: record[1]["level"] == "WARNING")
    for index, match in records:
        message = _LOGGER_WORDS.sub("", match["text"]).strip()
        if message == match["text"].strip() and match["level"] == "WARNING":
            continue  # a warning that names no error is not one
        title = next((line[2:] for line in lines if line.startswith("# ")), "")
        named = next((m["type"] for m in _CLASS_NAMED.finditer(title) if m["type"] not in ("Error", "Exception")), "")
        torch = torch_class(message) or ""
        if not (torch or named) and (rebuilt := paraphrased(message)) is not None:
            torch, message = rebuilt[1], rebuilt[0]
        exception = named or torch or f"{MARK}: the exception class (the log records only its message)"
        return index, exception, message, "a logged error record (the logger's words before the message dropped)"
    return None


# A class named without a message: "NotImplementedError while trying to train YoloV8" (a title over a screenshot).
_CLASS_NAMED = re.compile(r"(?<![\w.`'\"])(?P<type>[A-Z][A-Za-z0-9_]{0,80}(?:Error|Exception))\b(?![:.(])")


def _class_named(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last exception class the report names in prose without its message (the title's, when the body has
    none): enough for the exception and the title; the signature stays a placeholder."""
    for index in range(len(lines) - 1, -1, -1):
        if "rror" not in lines[index] and "xception" not in lines[index]:
            continue
        for match in reversed(list(_CLASS_NAMED.finditer(lines[index]))):
            if match["type"] not in ("Error", "Exception"):
                return index, match["type"], "", "a sentence that names only its class (no message)"
    return None


# Messages Python words itself, printed without their class ("Trainer.__init__() got an unexpected keyword argument
# 'gpus'" under a bug template's heading): (shape, the class Python raises with it).
_BARE_MESSAGES = (
    (re.compile(r"[\w.]+\(\) (?:got an unexpected keyword argument|got multiple values for argument|takes (?:from )?"
                r"\d+ (?:to \d+ )?positional arguments? but \d+ (?:was|were) given|missing \d+ required "
                r"(?:positional|keyword-only) arguments?)\b.*"), "TypeError"),
    (re.compile(r"'[\w.]+' object (?:is not (?:callable|subscriptable|iterable)|cannot be interpreted as)\b.*"),
     "TypeError"),
    (re.compile(r"(?:'[\w.]+' object|module '[\w.]+') has no attribute '\w+'.*"), "AttributeError"),
    (re.compile(r"No module named '[\w.]+'.*"), "ModuleNotFoundError"),
    (re.compile(r"name '\w+' is not defined.*"), "NameError"))


def _bare_message(lines: list[str]) -> tuple[int, str, str, str] | None:
    """The last message the report prints without an exception class: its class is left to fill in (the message's
    shape says which class Python raises with it; the draft's placeholder names it as a guess)."""
    for index in range(len(lines) - 1, -1, -1):
        for shape, guess in _BARE_MESSAGES:
            if (match := shape.search(_unmark(lines[index].strip()))) is not None:
                exception = f"{MARK}: the exception class (the report prints its message alone; Python words it so " \
                            f"for a {guess})"
                return index, exception, match.group().strip(" `*"), "a message printed without its exception class"
    return None


# A message without any class: an exception's args printed as a tuple ("('If capturable=False, ...',)"), or a
# title's "ERROR: message" in capitals (not a class name).
_ARGS_TUPLE = re.compile(r"^\(\s*(?P<quote>[\"'])(?P<msg>.{3,1000}?)(?P=quote)\s*,?\s*\)$")
_TITLE_ERROR = re.compile(r"(?<![\w.])(?:ERROR|[Ee]rror)\s*:\s*(?P<msg>\S.{2,1000})$")
# A title that says what failed, then the message after a colon ("[Bug] Training a loaded model fails : <message>",
# "Inference crashed: <message>"): the failure verb is what tells a message from a title's topic.
_TITLE_FAILS = re.compile(r"(?<![\w.])(?:[Ff]ail(?:s|ed|ing|ure)?|[Cc]rash(?:es|ed|ing)?|[Bb]reaks|[Bb]roken|"
                          r"[Rr]aises|[Tt]hrows|[Ee]rrors)\s*:\s*(?P<msg>\S.{2,1000})$")
# A message that states a condition the code checks ("... should not be CUDA tensors"): what `assert` words.
_ASSERT_LIKE = re.compile(r"\b(?:should(?: not)?|must(?: not)?|expected\b.{0,80}\bto) be\b", re.IGNORECASE)


def _printed_message(lines: list[str]) -> tuple[int, str, str, str] | None:
    """A message with no class anywhere (the args tuple a script printed, else the issue title's "ERROR: ..."):
    drafted with the class left to fill in, the likely one named (AssertionError for a checked condition)."""
    found = next(((i, m["msg"], "its arguments printed as a tuple") for i in range(len(lines) - 1, -1, -1)
                  if (m := _ARGS_TUPLE.match(_unmark(lines[i].strip())))), None)
    if found is None:
        title = next(((i, line[2:].strip()) for i, line in enumerate(lines) if line.startswith("# ")), None)
        match = (_TITLE_ERROR.search(title[1]) or _TITLE_FAILS.search(title[1])) if title else None
        if title is None or match is None:
            return None
        found = (title[0], library_words(match["msg"].strip()), "the issue title's text after its colon")
    index, message, where = found
    known = torch_class(message)
    if known is not None:
        return index, known, message, f"{where}: a known torch message, its class {known} torch's (check it)"
    if (rebuilt := paraphrased(message)) is not None:
        return (index, rebuilt[1], rebuilt[0], f"{where}: {rebuilt[2]} (the report's: {message!r}), its class "
                f"{rebuilt[1]} torch's (check both)")
    assert_like = _ASSERT_LIKE.search(message)
    guess = "an AssertionError (it states a checked condition)" if assert_like else "the class it raised"
    exception = f"{MARK}: the exception class (the report prints no class, only its message; likely {guess})"
    return index, exception, message, f"a message without its exception class ({where})"


# A comma or semicolon, then the reporter going on in the first person: no library's message says "I".
_NARRATION = re.compile(r"\s*[,;]\s+(?:(?:and|but|so|then|when|after|because)\s+)?(?:I|I'm|I've|my|My)\b")


def _named_with_message(lines: list[str], framed: bool) -> tuple[int, str, str, str] | None:
    """A class the report names alone ("# RuntimeError" as the title) with the message it prints without a class
    elsewhere (torch's "Expected all tensors to be on the same device, ..." on a line of its own): the class named,
    the message printed. With no such message, the class alone (the signature left to fill in)."""
    named = _class_named(lines)
    if named is None:
        return None
    found = torch_fragment(lines) or (None if framed else _bare_message(lines))
    # the message's own class (torch's, or the one Python words it for) must be the one named: else another error's
    # (an OOM torch<2.5 raised as a RuntimeError)
    if found is None or not (named[1] in found[1] or (named[1] == "RuntimeError" and "OutOfMemory" in found[1])):
        return named
    return (found[0], named[1], found[2],
            f"a message printed without its class (the class, {named[1]}, named at report line {named[0] + 1})")


def _quoted_end(lines: list[str], exception: str, message: str) -> str:
    """A sentence's message cut where the report quotes the same exception elsewhere (the title's
    ``"RuntimeError: Format is invalid"`` ends "Format is invalid when training csmsc/tts1")."""
    for opener, closer in _CLOSERS.items():
        end = re.escape(closer)  # a word's apostrophe ("optimizer's") inside the span does not close it
        quoted = re.compile(re.escape(f"{opener}{exception}: ") + f"((?:[^{end}]|{_INNER_APOSTROPHE.pattern}){{3,500}})"
                            f"{end}")
        for line in lines:
            for match in quoted.finditer(line):
                if message.startswith(found := match[1].strip()) and len(found) < len(message):
                    return found
    return message


# An apostrophe between letters ("doesn't", "optimizer's") is a word's, never a closing quote.
_INNER_APOSTROPHE = re.compile(r"(?<=[^\W\d_])['\u2019](?=[^\W\d_])")


def _closing(text: str, closer: str) -> int:
    """Where the quote ``closer`` closes ``text`` (its end if it never does), apostrophes in words skipped."""
    at = _INNER_APOSTROPHE.sub("\0", text).find(closer)
    return at if at >= 0 else len(text)


def _sentence_message(text: str) -> str:
    """Where a message named in prose ends: a code span's end, else its last quoted name ("... 'Layernorm' in
    vit_1d." -> "... 'Layernorm'"), else the sentence's end; the reporter's own clause (", I change ...") is never
    the message's."""
    spans = text.split("`")  # a message set in a code span of its own ("RuntimeError: `Expected ...`") is the span
    text = _NARRATION.split(spans[1] if len(spans) > 2 and not spans[0].strip() else spans[0], maxsplit=1)[0]
    if not text.strip():
        return text.strip()
    text = re.split(r"\s{3,}", text, maxsplit=1)[0]  # prose set off by a run of spaces goes on after the message
    # a sentence ends at "!" or "?" (torch's "...cpu! (when checking ...)" goes on) and at CJK full stops
    text = re.split(r"(?<=[!?])\s+(?=[^\s(])|[\u3002\uff01\uff1f]", text, maxsplit=1)[0]
    bare = _INNER_APOSTROPHE.sub("\0", text)
    quote = max(bare.rfind("'"), bare.rfind('"'))
    # (a name whose quote the reporter's cut left open, "... argument #2 'weight", ends the message itself)
    if quote > 0:
        opened = bare.count(bare[quote]) % 2 == 1 and re.fullmatch(r"\w[\w.]*", text[quote + 1:]) is not None
        if bare.count(bare[quote]) >= 2 and not opened:
            return text[:quote + 1]
    text = re.split(r"\.(?:\s|$)", text, maxsplit=1)[0].rstrip(" .")
    return _unclosed_end(_TAGS.sub("", _CIRCUMSTANCE.sub("", _HAPPENED.sub("", text))))


# The reporter saying it happened, glued after the message ("... wrapper_CUDA_clamp_Tensor) happend.").
_HAPPENED = re.compile(r"\s+(?:(?:is|was|has been|gets|got)\s+)?(?:happen(?:s|ed|d)?|occur(?:s|red|ed)?|appear(?:s|ed)?"
                       r"|shows? up)$", re.IGNORECASE)


def _unclosed_end(text: str) -> str:
    """A message without the markdown and the quote that closed the reporter's span around it ('... Float"**')."""
    text = re.sub(r"[*_`]+$", "", text)
    if text[:-1] and text[-1] in "\"\u201d" and text.count(text[-1]) % 2:
        text = text[:-1]
    return text.rstrip()


# A title's closing tags: short items, one a version ("... but found Float (DCN, fp16, MMCV 1.3.2)"), never torch's
# own parenthesis ("(when checking argument ...)").
_TAGS = re.compile(r"\s+\((?=[^()]*\bv?\d+\.\d+)(?:[\w.+-]+(?: [\w.+-]+){0,2})(?:, [\w.+-]+(?: [\w.+-]+){0,2}){0,5}\)$")


# Where the reporter ran it, said after the message in a title ("... expected BFloat16 on a CPU"): not the message's.
_CIRCUMSTANCE = re.compile(r"\s+on\s+(?:(?:a|an|the|my|multiple|several|\d+)\s+)?(?:CPU|GPU|TPU|MPS|XPU|NPU|Mac|M[123]"
                           r"|Apple Silicon|Windows|Colab)s?$", re.IGNORECASE)
