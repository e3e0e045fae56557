"""``--list``: the cases, their upstream links and what each lane expects, without running anything.

Cases are grouped by library: the repository of the case's fix (else its pr, commit or issue link),
else its first tag. A wide terminal gets one table per library; a narrow one, and any output that is
not a terminal (a pipe, a CI log), gets one block per case with every URL written out in full.
Every case-controlled string is shown through ``for_terminal`` and never parsed as rich markup.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.padding import Padding
from rich.style import Style
from rich.table import Table
from rich.text import Text

from harness._io import for_terminal
from harness._vocabulary import LANES
from harness.cases._library import group_by_library as group_ids_by_library
from harness.cases._library import library_of as library_of_links
from harness.cases._load import Case

LINK_KEYS = ("issue", "pr", "commit", "fix")
WIDE = 140  # columns from which a terminal gets tables instead of blocks


def library_of(case: Case) -> str:
    """``owner/repo`` of the first code-host link among fix, pr, commit, issue; else the first tag."""
    return library_of_links(case.upstream, list(case.tags))


def group_by_library(cases: Iterable[Case]) -> dict[str, list[Case]]:
    by_id = {case.id: case for case in cases}
    groups = group_ids_by_library((case.id, case.upstream, list(case.tags)) for case in by_id.values())
    return {library: [by_id[i] for i in ids] for library, ids in groups}


def lane_expectations(case: Case, lane: str) -> str:
    counts = Counter(variant.expect[lane].kind for variant in case.variants.values())
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def print_case_list(console: Console, cases: Sequence[Case]) -> None:
    groups = group_by_library(cases)
    libraries = f"{len(groups)} librar{'y' if len(groups) == 1 else 'ies'}"
    console.print(Text(f"{len(cases)} case(s) from {libraries} (the repository of each fix)", style="bold"))
    if console.is_terminal and console.width >= WIDE:
        console.print(_table(groups))
        return
    for library, members in groups.items():
        console.print()
        console.print(Text(f"{for_terminal(library)} ({len(members)})", style="bold underline"))
        for case in members:
            _print_block(console, case)


def _print_block(console: Console, case: Case) -> None:
    """One case as label/value lines: a hanging indent on a terminal, one unbroken line each otherwise."""
    heading = Text("  ").append(for_terminal(case.id, one_line=True), style="bold")
    if case.status != "active":
        heading.append(f"  retired: {for_terminal(case.retired_reason, one_line=True)}", style="yellow")
    rows = _block_rows(case)
    if not console.is_terminal:
        console.print(heading, soft_wrap=True)
        for label, value in rows:
            console.print(Text(f"    {label:<8} ", style="dim").append_text(value), soft_wrap=True)
        return
    grid = Table.grid(padding=(0, 1))
    grid.add_column(style="dim", no_wrap=True)
    grid.add_column(overflow="fold")
    for label, value in rows:
        grid.add_row(label, value)
    console.print(heading)
    console.print(Padding(grid, (0, 0, 0, 4)))


def _block_rows(case: Case) -> list[tuple[str, Text]]:
    rows = [("title", Text(for_terminal(case.title, one_line=True)))]
    rows += [(key, Text(url, style=Style(link=url))) for key, url in _links(case)]
    more = len(case.upstream.get("links") or ())
    if more:
        rows.append(("", Text(f"+ {more} more link(s) in {case.id}/case.yaml", style="dim")))
    variants = " · ".join(f"{v.name} ({v.role})" for v in case.variants.values())
    rows.append(("variants", Text(for_terminal(variants, one_line=True))))
    rows.append(("expects", Text(" │ ".join(f"{lane}: {lane_expectations(case, lane)}" for lane in LANES))))
    rows += [(lane, Text(f"unsupported ({variant}): {reason}", style="dim"))
             for lane, variant, reason in _unsupported(case)]
    return rows


def _links(case: Case) -> list[tuple[str, str]]:
    return [(key, for_terminal(str(case.upstream[key]), one_line=True)) for key in LINK_KEYS if case.upstream.get(key)]


def _unsupported(case: Case) -> list[tuple[str, str, str]]:
    return [(lane, for_terminal(v.name, one_line=True), for_terminal(v.expect[lane].reason, one_line=True))
            for v in case.variants.values() for lane in LANES if v.expect[lane].kind == "unsupported"]


def _table(groups: dict[str, list[Case]]) -> Table:
    """One table; each library opens with a row of its own, so columns line up across libraries."""
    table = Table(show_lines=True, expand=True)
    table.add_column("library / case", no_wrap=True)
    table.add_column("title / upstream", ratio=3, overflow="fold")
    table.add_column("variants", ratio=1, overflow="fold")
    for lane in LANES:
        table.add_column(lane, no_wrap=True)
    for library, cases in groups.items():
        table.add_row(Text(f"{for_terminal(library)} ({len(cases)})", style="bold magenta"), style="on grey11")
        for case in cases:
            table.add_row(*_table_row(case))
    return table


def _table_row(case: Case) -> list[Text]:
    about = Text(for_terminal(case.title, one_line=True))
    for key, url in _links(case):
        about.append(f"\n{key:<7}", style="dim").append(url, style=Style(link=url))
    if case.upstream.get("links"):
        about.append(f"\n+ {len(case.upstream['links'])} more link(s) in case.yaml", style="dim")
    if case.status != "active":
        about.append(f"\nretired: {for_terminal(case.retired_reason, one_line=True)}", style="yellow")
    for lane, variant, reason in _unsupported(case):
        about.append(f"\n{lane} unsupported ({variant}): {reason}", style="dim")
    variants = "\n".join(f"{v.name} ({v.role})" for v in case.variants.values())
    lanes = [Text(lane_expectations(case, lane).replace(", ", "\n")) for lane in LANES]
    name = Text("  " + for_terminal(case.id, one_line=True), style="bold")
    return [name, about, Text(for_terminal(variants)), *lanes]
