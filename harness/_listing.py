"""``--list``: the cases, their upstream links and what each lane expects, without running anything."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from harness._cases import LANES, Case


def lane_expectations(case: Case, lane: str) -> str:
    counts = Counter(variant.expect[lane].kind for variant in case.variants.values())
    return ", ".join(f"{n} {kind}" for kind, n in sorted(counts.items()))


def print_case_list(console: Console, cases: Sequence[Case]) -> None:
    table = Table(title=f"{len(cases)} case(s)", show_lines=True)
    table.add_column("case", style="bold", no_wrap=True)
    table.add_column("title / upstream")
    table.add_column("variants")
    for lane in LANES:
        table.add_column(lane)
    for case in cases:
        urls = (case.upstream.get(key) for key in ("issue", "pr", "commit", "fix"))
        links = "\n".join(f"[link={url}]{url}[/link]" for url in urls if url)
        status = "" if case.status == "active" else f"\n[yellow]retired: {case.retired_reason}[/]"
        variants = "\n".join(f"{v.name} ({v.role})" for v in case.variants.values())
        table.add_row(case.id, f"{case.title}\n[dim]{links}[/]{status}", variants,
                      *(lane_expectations(case, lane) for lane in LANES))
    console.print(table)
