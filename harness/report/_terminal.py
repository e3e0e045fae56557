"""The one-screen summary the CLI prints: the same matrix, words, reasons and skip groups as index.html.

Every string read from results.json (ids, reasons, host text, load errors) goes through ``for_terminal``:
a repro or a case file controls it, and it must not move the cursor or retitle the terminal.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from harness._io import for_terminal
from harness._vocabulary import OK_VERDICTS, RICH_STYLES
from harness.report._common import (
    attention,
    clean_text,
    counts,
    host_line,
    host_torch_lines,
    hosts_of,
    lanes_of,
    library_groups,
    skip_groups,
    verdict_table,
)

# From this many cases a library whose every verdict is fine (confirmed, skipped, or the lane not selected)
# takes one row: at 60 cases the table then shows what needs reading, not 90 rows of green.
COMPACT_FROM = 24
_FINE = OK_VERDICTS | {"not selected"}
_SKIPS_NAMED = 8  # a skip line names this many cases, then says how many more ("no GPU here" covers them all)


def terminal_summary(results: Mapping[str, Any]) -> Group:
    run = results["run"]
    lanes = lanes_of(results)
    verdicts = verdict_table(results)
    header = Text.assemble(("repro-matrix run ", "bold"), (for_terminal(str(run["id"])), "bold cyan"),
                           for_terminal(f" · {run.get('status') or '?'} · exit code {run.get('exit_code')}"))
    parts: list[Any] = [header]
    parts += [Text(for_terminal(f"host {line}"), style="dim") for line in (host_line(h) for h in hosts_of(results))]
    parts += [Text(for_terminal(line), style="bold yellow") for line in host_torch_lines(results)]
    table = Table(show_edge=True, header_style="bold", pad_edge=False)
    table.add_column("case", no_wrap=True)
    for lane in lanes:
        table.add_column(lane, no_wrap=True, justify="center")
    groups = library_groups(results)
    compact = sum(len(cases) for _, cases in groups) >= COMPACT_FROM
    fold = [compact and all(_word(verdicts, case, lane) in _FINE for case in cases for lane in lanes)
            for _, cases in groups]
    for index, (library, cases) in enumerate(groups):
        if fold[index]:  # one row; a rule only where a listed library follows
            table.add_row(*_library_row(library, cases, lanes, verdicts),
                          end_section=index + 1 < len(groups) and not fold[index + 1])
            continue
        if len(groups) > 1:  # a catalogue reads by library; one library needs no heading
            table.add_row(Text(for_terminal(f"{library} ({len(cases)})", one_line=True), style="bold"))
        for case in cases:
            row = [Text(for_terminal(f"  {case}" if len(groups) > 1 else case, one_line=True))]
            for lane in lanes:
                word = _word(verdicts, case, lane)
                row.append(Text(for_terminal(word, one_line=True), style=RICH_STYLES.get(word, "dim")))
            table.add_row(*row, end_section=case == cases[-1] and len(groups) > 1)
    parts.append(table)
    folded = sum(fold)
    if folded:
        parts.append(Text(f"{folded} librar{'y' if folded == 1 else 'ies'} with every verdict confirmed or skipped "
                          "take one row each; the run's index.html lists every case", style="dim"))
    tally = counts(results)
    pieces = [(for_terminal(f"{n} {verdict}"), RICH_STYLES.get(verdict, "")) for verdict, n in tally.items()]
    parts.append(Text.assemble(*_join(pieces)) if tally else Text("no verdicts recorded", style="dim"))
    parts += _attention_lines(results)
    parts += _skip_lines(results)
    errors = [for_terminal(clean_text(str(e))) for e in run.get("load_errors") or []]
    if errors:
        parts.append(Text(f"Case files that could not be loaded ({len(errors)}):", style="bold red"))
        parts += [Text(f"  {error}", style="red") for error in errors]
    return Group(*parts)


def _word(verdicts: Mapping[tuple[str, str], Mapping[str, Any]], case: str, lane: str) -> str:
    verdict = verdicts.get((case, lane))
    return str(verdict["verdict"]) if verdict else "not selected"


def _library_row(library: str, cases: list[str], lanes: list[str],
                 verdicts: Mapping[tuple[str, str], Mapping[str, Any]]) -> list[Text]:
    """One row for a library whose cases need nothing: each lane says how many cases had which verdict."""
    row = [Text(for_terminal(f"{library} ({len(cases)})", one_line=True), style="bold")]
    for lane in lanes:
        tally = Counter(_word(verdicts, case, lane) for case in cases)
        words = [(for_terminal(f"{n} {word}", one_line=True), RICH_STYLES.get(word, "dim"))
                 for word, n in sorted(tally.items(), key=lambda item: (-item[1], item[0]))]
        row.append(Text.assemble(*_join(words)))
    return row


def _attention_lines(results: Mapping[str, Any]) -> list[Text]:
    items = attention(results)
    if not items:
        return [Text("Nothing needs attention: every verdict is confirmed or skipped.", style="green")]
    lines = [Text("Needs attention:", style="bold")]
    for item in items:
        lines.append(Text.assemble("  ", (for_terminal(item.verdict), RICH_STYLES.get(item.verdict, "")),
                                   for_terminal(f" {item.case} / {item.lane}: {item.reason}")))
    return lines


def _skip_lines(results: Mapping[str, Any]) -> list[Text]:
    groups = skip_groups(results)
    if not groups:
        return []
    lines = [Text("Skipped:", style="bold")]
    for group in groups:
        plural = "s" if len(group.cases) != 1 else ""
        names = ", ".join(group.cases[:_SKIPS_NAMED])
        if len(group.cases) > _SKIPS_NAMED:
            names += f" and {len(group.cases) - _SKIPS_NAMED} more"
        lines.append(Text(for_terminal(f"  {group.lane} ({len(group.cases)} case{plural}: {names}): "
                                       f"{group.reason or 'no reason given'}"), style="dim"))
    return lines


def _join(pieces: list[tuple[str, str]]) -> list[tuple[str, str] | str]:
    joined: list[tuple[str, str] | str] = []
    for i, piece in enumerate(pieces):
        if i:
            joined.append(" · ")
        joined.append(piece)
    return joined
