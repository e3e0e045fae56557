"""How much of one run a page (or junit.xml) embeds, whatever its results.json holds.

results.json itself is refused above 32 MB (``_inputs.MAX_RESULTS_BYTES``); within that, one string or list can
still be huge, and per-cell text multiplies with the cells. A run page therefore shows:

- every string cut at ``MAX_TEXT`` characters and every list or mapping at ``MAX_ITEMS`` entries (except the
  run's cells, verdicts, cases and environments, which are bounded below); the page says what was cut;
- at most ``MAX_PAGE_CASES`` cases and ``MAX_PAGE_CELLS`` cells; traceback frames: the innermost ``MAX_FRAMES``;
  ``MAX_LISTED`` entries in "needs attention" and "skipped";
- captured text (messages, tracebacks, descriptions, log tails, package lists) until ``PAGE_BUDGET`` characters
  are spent; later cells show their verdict, status and log link only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

MAX_TEXT = 2000
MAX_ITEMS = 500
MAX_FRAMES = 30
MAX_FRAME_TEXT = 300
MAX_LISTED = 300  # entries of the "needs attention" and "skipped" lists, and cases named per skipped line
MAX_PAGE_CASES = 1000
MAX_PAGE_CELLS = 3000
PAGE_BUDGET = 6 * 2**20
LOG_TAIL_BYTES = 16384
_TOP_LEVEL = frozenset({"cells", "verdicts", "cases", "environments"})
_MAX_NOTES = 20


def clip_text(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit:,} more characters not shown]"


@dataclass(slots=True)
class Bounded:
    """The results with strings and lists cut, and a note per cut (for the page to say)."""

    results: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    def note(self, text: str) -> None:
        if len(self.notes) < _MAX_NOTES:
            self.notes.append(text)
        elif len(self.notes) == _MAX_NOTES:
            self.notes.append("… and more")


def bound_results(results: Mapping[str, Any]) -> Bounded:
    bounded = Bounded({})
    for key, value in results.items():
        if key in _TOP_LEVEL and type(value) is dict:
            value = {k: _clip(v, f"{key}.{k}", bounded) for k, v in value.items()}
        elif key in _TOP_LEVEL and type(value) is list:
            value = [_clip(v, f"{key}[{i}]", bounded) for i, v in enumerate(value)]
        else:
            value = _clip(value, key, bounded)
        bounded.results[key] = value
    return bounded


def _clip(value: Any, where: str, bounded: Bounded) -> Any:
    """``value`` with long strings and containers cut (``where`` names the top-level entry, for the note)."""
    kind = type(value)  # exact types: this runs over every value of a run, and JSON makes no subclasses
    if kind is str:
        if len(value) <= MAX_TEXT:
            return value
        bounded.note(f"{clip_text(where, 80)}: a text of {len(value):,} characters, the first {MAX_TEXT:,} shown")
        return clip_text(value)
    if kind is dict:
        if len(value) > MAX_ITEMS:
            bounded.note(f"{clip_text(where, 80)}: {len(value):,} entries, the first {MAX_ITEMS} shown")
            value = dict(list(value.items())[:MAX_ITEMS])
        return {(k if len(k) <= 200 else clip_text(k, 200)): _clip(v, where, bounded) for k, v in value.items()}
    if kind is list:
        if len(value) > MAX_ITEMS:
            bounded.note(f"{clip_text(where, 80)}: {len(value):,} items, the first {MAX_ITEMS} shown")
        return [_clip(v, where, bounded) for v in value[:MAX_ITEMS]]
    return value


def clip_strings(value: Any, limit: int = MAX_TEXT) -> Any:
    """``value`` with every string cut at ``limit`` (containers kept whole): what the history carries forward."""
    kind = type(value)
    if kind is str:
        return value if len(value) <= limit else clip_text(value, limit)
    if kind is dict:
        return {(k if len(k) <= 200 else clip_text(k, 200)): clip_strings(v, limit) for k, v in value.items()}
    if kind is list:
        return [clip_strings(v, limit) for v in value]
    return value


@dataclass(slots=True)
class Budget:
    """Characters of captured text a page may still embed; ``refused`` counts what did not fit."""

    left: int = PAGE_BUDGET
    refused: int = 0

    def take(self, size: int) -> bool:
        if size > self.left:
            self.refused += 1
            return False
        self.left -= size
        return True
