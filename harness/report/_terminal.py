"""The one-screen summary the CLI prints: the same matrix, words, reasons and skip groups as index.html.

Every string read from results.json (ids, reasons, host text, load errors) goes through ``for_terminal``:
a repro or a case file controls it, and it must not move the cursor or retitle the terminal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from harness._io import for_terminal
from harness._vocabulary import RICH_STYLES
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
    for library, cases in groups:
        if len(groups) > 1:  # a catalogue reads by library; one library needs no heading
            table.add_row(Text(for_terminal(f"{library} ({len(cases)})", one_line=True), style="bold"))
        for case in cases:
            row = [Text(for_terminal(f"  {case}" if len(groups) > 1 else case, one_line=True))]
            for lane in lanes:
                verdict = verdicts.get((case, lane))
                word = verdict["verdict"] if verdict else "not selected"
                row.append(Text(for_terminal(word, one_line=True), style=RICH_STYLES.get(word, "dim")))
            table.add_row(*row, end_section=case == cases[-1] and len(groups) > 1)
    parts.append(table)
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
        lines.append(Text(for_terminal(f"  {group.lane} ({len(group.cases)} case{plural}: {', '.join(group.cases)}): "
                                       f"{group.reason or 'no reason given'}"), style="dim"))
    return lines


def _join(pieces: list[tuple[str, str]]) -> list[tuple[str, str] | str]:
    joined: list[tuple[str, str] | str] = []
    for i, piece in enumerate(pieces):
        if i:
            joined.append(" · ")
        joined.append(piece)
    return joined
