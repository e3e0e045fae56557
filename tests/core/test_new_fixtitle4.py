"""Title classes of graded24-26's misses (issue 21 §1), each on a made-up report of its shape: a word of the message
taken as the API where the prose names the script, and the function a reply's patch changes as the API of a report
that shows no frame (tests/fixtures/graded24..26/EXPECTED.md list the real reports)."""

from __future__ import annotations

from typing import Any

from harness.authoring._shown import shown_calls
from harness.authoring._skeleton import repro_py
from tests.core.test_new_graded14 import _draft
from tests.core.test_new_graded16 import PLACED


def _title(report: str) -> str:
    data: dict[str, Any] = _draft(report, released=lambda dist: True)[1]
    return str(data["title"])


def _titled(title: str, body: str) -> str:
    return f"https://github.com/someone/widgetsplat/issues/7\n# {title}\n\n{body}\n"


def test_a_camelcase_word_of_the_message_the_title_quotes_is_no_api() -> None:
    """Class (gaussianeditor-75 "BFloat16"): the title is the message ("... but found BFloat16"); its CamelCase word is
    the symptom, not a class that ran: the script the prose runs is the API. A class the title names before the
    message still is."""
    message = "expected scalar type Float but found BFloat16"
    body = f'When I run the **train_splat.py**, I get "**{message}**" during training. How to fix?'
    title = _title(_titled(message, body))
    assert title.startswith("widgetsplat train_splat.py: "), title
    before = _title(_titled(f"SplatRenderer: {message}", body))
    assert before.startswith("widgetsplat SplatRenderer: "), before


_PATCH = """```patch
diff --git a/widgetdet/encoder.py b/widgetdet/encoder.py
--- a/widgetdet/encoder.py
+++ b/widgetdet/encoder.py
@@ -240,6 +240,7 @@ class FusionLayer(nn.Module):

     @staticmethod
     def add_position(tensor, pos):
+        pos = pos.to(tensor.device)
         return tensor if pos is None else tensor + pos
```"""


def test_the_function_a_replys_patch_changes_is_the_api() -> None:
    """Class (rt-detrv4-36 `with_pos_embed`): a frameless report (the message only in the title, Chinese prose) whose
    reply gives a unified diff: the function around the patch's first changed line, with the class the hunk header
    names, is where the fix lands; the patch's own calls (``pos.to``) are not the API."""
    report = _titled(f"RuntimeError: {PLACED}", f"有人遇到这个问题吗\n\nhelper · comment · 2026-06-08\nThis patch fixes it:\n\n{_PATCH}")
    title = _title(report)
    assert title.startswith("widgetsplat FusionLayer.add_position: "), title
    header_only = _PATCH.replace(" class FusionLayer(nn.Module):", " def add_position(tensor, pos):").replace(
        "\n     @staticmethod\n     def add_position(tensor, pos):", "")
    assert shown_calls(["x", "helper · comment · 2026-06-08", *header_only.splitlines()]) == ("add_position",)


def test_a_patch_in_the_reporters_own_text_or_without_a_change_names_nothing() -> None:
    """The reporter's own diff is not a reply's fix (its code's calls are read as before), and a hunk with no added or
    removed line names no function."""
    unchanged = _PATCH.replace("+        pos = pos.to(tensor.device)\n", "")
    assert shown_calls(["x", "helper · comment · 2026-06-08", *unchanged.splitlines()]) == ()
    assert "FusionLayer.add_position" not in shown_calls(_PATCH.splitlines())


def test_a_report_with_no_api_names_the_device_its_title_says_it_failed_on() -> None:
    """Class (n-beats-18): a one-line report, the title only says where it failed ("Doesn't work with CUDA mode"):
    "on CUDA" is the most a title can name; a title that names nothing of the kind, or says what failed there ("load
    the checkpoint"), keeps "project: message", and a device the message itself ends with is its symptom."""
    body = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    assert _title(_titled("Doesn't work with CUDA mode", body)).startswith("widgetsplat on CUDA: Expected all")
    assert _title(_titled("Training fails on GPU", body)).startswith("widgetsplat training on GPU: Expected")
    assert _title(_titled("Doesn't work", body)).startswith("widgetsplat: Expected all")
    assert _title(_titled("Cannot load the checkpoint on GPU", body)).startswith("widgetsplat: Expected all")


def test_dataparallels_message_names_dataparallel_when_nothing_else_does() -> None:
    """Class (mlcreid-5): a frameless report of DataParallel's own message ("... on device cuda:0 (device_ids[0]) but
    found one of them on device: cpu") names torch's wrapper by its argument: DataParallel is the API."""
    message = ("module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on "
               "device: cpu")
    title = _title(_titled(f"RuntimeError: {message}", f"RuntimeError: {message}"))
    assert title.startswith("widgetsplat DataParallel: module must have"), title
    called = _title(_titled(f"RuntimeError: {message}", f"```python\nmodel = build_reid_net(cfg)\n```\nRuntimeError: "
                                                        f"{message}"))
    assert not called.startswith("widgetsplat DataParallel"), called


def test_a_skeleton_shows_the_calls_the_reports_own_code_makes() -> None:
    """Skeleton class (transformerlens-517: the innermost frame shown, not the reporter's own
    ``HookedTransformer.from_pretrained(...)``): given the report's shown calls, the skeleton names them as the repro's
    start, never torch's (``torch.device``) nor every object's methods (``model.to``); none shown, no such comment."""
    calls = ("widgetlens:WidgetModel.from_pretrained", "torch:torch.device", "model.to", "run_with_cache")
    text = repro_py("w", "w.txt", [], [], "RuntimeError: boom", shown=calls)
    assert "    # The report's own code calls (start the repro there):\n    #   WidgetModel.from_pretrained, " \
           "run_with_cache\n" in text, text
    assert "own code calls" not in repro_py("w", "w.txt", [], [], "RuntimeError: boom")
