"""Round G's classes for the exception line, the frames and the signature: a launcher's or logger's tag on every
line of a traceback, a rich box pasted without its header, a message with apostrophes in its words, and the numbers
of one run (pids, ports, hosts, temporary names) in a signature."""

from __future__ import annotations

import re
import time

import pytest

from harness.authoring._bugreport import parse_report
from harness.authoring._lines import strip_run_prefixes
from harness.authoring._signature import make_signature

BODY = ['Traceback (most recent call last):', '  File "train.py", line 12, in <module>', '    trainer.fit(model)',
        '  File "/usr/lib/python3.10/site-packages/kit/trainer.py", line 40, in fit',
        '    self.step(batch)', 'ValueError: the batch holds 3 items but the model takes 2']


@pytest.mark.parametrize("tag", ["[1,2]<stderr>:", "[rank3]: ", "[default0]:", "0: ", "rank3: ",
                                 "[2024-01-02 10:11:12,345] [ERROR] ", "(RayTrainWorker pid=123) ", "stderr: ",
                                 "gpu-node-01: ", "trainer-1  | "])
def test_a_tag_on_every_line_of_a_traceback_cut_at_its_start_is_stripped(tag: str) -> None:
    report = parse_report("# fit fails\n\nLog:\n```\n" + "\n".join(tag + line for line in BODY[1:]) + "\n```\n")
    assert (report.traceback.exception, report.traceback.message) == ("ValueError", BODY[-1].partition(": ")[2])
    assert [(f.path, f.function) for f in report.traceback.frames] == [
        ("train.py", "<module>"), ("/usr/lib/python3.10/site-packages/kit/trainer.py", "fit")]
    assert report.traceback.frames[0].source == "trainer.fit(model)"


def test_the_stripped_tag_is_named_in_the_notes() -> None:
    report = parse_report("# fit fails\n\n```\n" + "\n".join("[1,2]<stderr>:" + line for line in BODY[1:]) + "\n```\n")
    assert any("launcher's tag" in note and note.endswith("[1,2]<stderr>:") for note in report.notes)
    plain = parse_report("# fit fails\n\n```\n" + "\n".join(BODY) + "\n```\n")
    assert not any("launcher's tag" in note for note in plain.notes)


def test_ranks_and_times_that_change_from_line_to_line_are_one_tag() -> None:
    lines = [f"[rank{n % 2}]:{line}" for n, line in enumerate(BODY)]
    assert strip_run_prefixes(lines) == BODY


@pytest.mark.parametrize("lines", [
    ["[1/3] Building model", "[2/3] Loading data", "[3/3] Training"],  # steps, no traceback among them
    ["0: cpu", "1: cuda", "2: mps"],
    ["Python: 3.10", "torch: 2.1", "OS: Linux"],
    ["RuntimeError: a", "RuntimeError: b", "RuntimeError: c"],
    ["ERROR: no file", "ERROR: no file", "ERROR: no file"],
    ["[rank0]: Traceback (most recent call last):", '  File "a.py", line 1, in <module>'],  # a tag on one line
])
def test_lines_without_a_tagged_traceback_are_kept(lines: list[str]) -> None:
    assert strip_run_prefixes(lines) == lines


def test_a_tensorflow_graph_node_line_is_not_the_message() -> None:
    report = parse_report("# allreduce fails\n\n```\n[1,0]<stderr>:Traceback (most recent call last):\n"
                          '[1,0]<stderr>:  File "x.py", line 3, in <module>\n[1,0]<stderr>:    run()\n'
                          "[1,0]<stderr>:tensorflow.python.framework.errors_impl.FailedPreconditionError: Mismatched "
                          "device selection.\n[1,0]<stderr>:\t [[{{node HorovodAllreduce_0}} = HorovodAllreduce[T=DT_FLOAT]]]"
                          "\n```\n")
    assert report.traceback.message == "Mismatched device selection."


def test_a_rich_box_without_its_header_gives_its_frames() -> None:
    rows = [r"D:\app\modules\queue.py:34 in f", "", "  33 │   try:", "> 34 │       res = func(*args)", "",
            r"D:\app\modules\txt2img.py:66 in txt2img", "", "> 66 │   out = processing.process_images(p)"]
    box = "\n".join(f"│ {row:<70} │" for row in rows)
    report = parse_report(f"# generate fails\n\nFrom the console:\n```shell\n{box}\n```\n\nRuntimeError: boom in "
                          "txt2img\n")
    assert [(f.path, f.line, f.function) for f in report.traceback.frames] == [
        (r"D:\app\modules\queue.py", 34, "f"), (r"D:\app\modules\txt2img.py", 66, "txt2img")]


def test_a_box_of_prose_is_no_frame() -> None:
    report = parse_report("# question\n\n│ see notes.py for how to run it │\n│ and the README │\n")
    assert report.traceback.frames == ()


@pytest.mark.parametrize(("line", "message"), [
    ("I get a error : ValueError: loaded state dict contains a parameter group that doesn't match the size of "
     "optimizer's group. But resume works.",
     "loaded state dict contains a parameter group that doesn't match the size of optimizer's group"),
    ("It fails with 'KeyError: the model's head isn't registered' when loading.",
     "the model's head isn't registered"),
    ("It fails with KeyError: 'head' when loading.", "'head'"),
])
def test_an_apostrophe_in_a_word_is_no_closing_quote(line: str, message: str) -> None:
    report = parse_report(f"# loading fails\n\n{line}\n")
    assert report.traceback.message == message


def test_a_quoted_message_elsewhere_is_not_cut_at_a_words_apostrophe() -> None:
    report = parse_report("# 'ValueError: the model's head isn't registered' on load\n\nI get ValueError: the model's "
                          "head isn't registered when I load the checkpoint\n")
    assert report.traceback.message == "the model's head isn't registered"


@pytest.mark.parametrize(("message", "other_run"), [
    ("DataLoader worker (pid 2126) is killed by signal: Bus error.",
     "DataLoader worker (pid 77) is killed by signal: Bus error."),
    ("DataLoader worker (pid(s) 2126, 2127) exited unexpectedly", "DataLoader worker (pid(s) 9) exited unexpectedly"),
    ("The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0",
     "The server socket has failed to listen on any local network address. port: 12355, useIpv6: 0"),
    ("connect to 10.0.0.12:29500 failed", "connect to 127.0.0.1:40000 failed"),
    ("cannot open /tmp/tmpab12cd9x", "cannot open /tmp/tmp_q8w7e6r5"),
])
def test_a_runs_numbers_are_generalised_in_the_signature(message: str, other_run: str) -> None:
    signature, _ = make_signature(message)
    assert re.search(signature, message) and re.search(signature, other_run)
    assert not re.search(signature, other_run.replace("signal", "sigterm").replace("failed", "refused")
                         .replace("open", "read").replace("unexpectedly", "fine").replace("useIpv6", "ipv4"))


@pytest.mark.parametrize("message", ["size mismatch for version 1.2.3", "expected rank 3 tensor, got rank 2",
                                     "Caught RuntimeError in DataLoader worker process 0.",
                                     "the temperature must be positive"])
def test_other_numbers_and_words_stay_literal(message: str) -> None:
    signature, _ = make_signature(message)
    assert "\\d" not in signature and "\\S*" not in signature


def test_stripping_tags_takes_linear_time() -> None:
    def timed(count: int) -> float:
        lines = [f"[rank{n % 8}]:{BODY[n % len(BODY)]}" for n in range(count)]
        start = time.process_time()
        strip_run_prefixes(lines)
        return time.process_time() - start
    small, large = timed(20_000), timed(80_000)
    assert large < 8 * max(small, 0.01)
