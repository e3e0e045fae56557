"""Round H's classes for the exception line: a message that writes inline code itself (a library's "Using `x=True`
requires ...") is read whole, while a backquote that closes inline code opened before the class still ends it."""

from __future__ import annotations

import pytest

from harness.authoring._bugreport import parse_report

FRAMES = ['Traceback (most recent call last):', '  File "train.py", line 12, in <module>',
          '    model = Loader.load(path, quantize=True)',
          '  File "/usr/lib/python3.10/site-packages/kit/loading.py", line 40, in load',
          '    raise ImportError(']


@pytest.mark.parametrize("message", [
    "Using `quantize=True` requires kitquant: `pip install kitquant` and the latest `pip install kit` or pip install kit`",
    "Passing `device_map='auto'` needs `accelerate`; run `pip install accelerate`",
    "Loading a `Tokenizer` from a folder needs its `vocab.json`",
])
def test_a_message_writing_inline_code_is_read_whole(message: str) -> None:
    report = parse_report("# load fails\n\n```\n" + "\n".join([*FRAMES, f"ImportError: {message}"]) + "\n```\n")
    assert (report.traceback.exception, report.traceback.message) == ("ImportError", message)


@pytest.mark.parametrize("line", ["`KeyError: 'optimizer'` when I resume from the checkpoint",
                                  "KeyError: 'optimizer'`", "`KeyError: 'optimizer'` at line 333 of `kit/ckpt.py`"])
def test_a_backquote_closing_code_opened_before_the_class_still_ends_the_message(line: str) -> None:
    lines = [*FRAMES[:-1], "    state = ckpt['optimizer']", line]
    report = parse_report("# resume fails\n\n" + "\n".join(lines) + "\n")
    assert (report.traceback.exception, report.traceback.message) == ("KeyError", "'optimizer'")
