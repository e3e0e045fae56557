"""How much of one run a page (or junit.xml) embeds, whatever its results.json holds.

results.json itself is refused above 32 MB (``_inputs.MAX_RESULTS_BYTES``); within that, one string or list can
still be huge, and per-cell text multiplies with the cells. A run page therefore shows:

- every string cut at ``MAX_TEXT`` characters and every list or mapping at ``MAX_ITEMS`` entries (except the
  run's cells, verdicts, cases and environments, which are bounded below); the page says what was cut;
- at most ``MAX_PAGE_CASES`` cases and ``MAX_PAGE_CELLS`` cells; traceback frames: the innermost ``MAX_FRAMES``;
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
    bounded.results = {key: value if key in _TOP_LEVEL else _clip(value, key, bounded)
                       for key, value in results.items()}
    for key in _TOP_LEVEL & set(results):
        value = results[key]
        if isinstance(value, Mapping):
            bounded.results[key] = {k: _clip(v, f"{key}.{k}", bounded) for k, v in value.items()}
        else:
            bounded.results[key] = [_clip(v, f"{key}[{i}]", bounded) for i, v in enumerate(value)]
    return bounded


def _clip(value: Any, where: str, bounded: Bounded) -> Any:
    if isinstance(value, str):
        if len(value) > MAX_TEXT:
            bounded.note(f"{where}: {len(value):,} characters, the first {MAX_TEXT:,} shown")
        return clip_text(value)
    if isinstance(value, Mapping):
        if len(value) > MAX_ITEMS:
            bounded.note(f"{where}: {len(value):,} entries, the first {MAX_ITEMS} shown")
        clipped = {}
        for key, item in list(value.items())[:MAX_ITEMS]:
            name = clip_text(str(key), 200)
            clipped[name] = _clip(item, f"{where}.{name}", bounded)
        return clipped
    if isinstance(value, list):
        if len(value) > MAX_ITEMS:
            bounded.note(f"{where}: {len(value):,} items, the first {MAX_ITEMS} shown")
        return [_clip(v, f"{where}[{i}]", bounded) for i, v in enumerate(value[:MAX_ITEMS])]
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
