"""`gpuscope analyze` with several traces: each analysed on the chosen engine (`--engine`,
`--workers`), then across ranks when they are the ranks of one job. Errors and reader warnings
are printed as the one-trace path prints them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from rich.console import Console


def analyze_sources(
    sources: Sequence[Any], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, int]:
    """(reports, the cross-rank part or None, traces that failed)."""
    from gpuscope.errors import ReaderError
    from gpuscope.ranks.api import analyze_outcomes, run_tasks
    from gpuscope.ranks.work import task_of

    tasks = [task_of(s, args.categories, args.top) for s in sources]
    result = analyze_outcomes(run_tasks(tasks, engine=args.engine, workers=args.workers))
    for warning in result.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    for error in result.errors:
        print(f"error: {error}", file=sys.stderr)
    if not result.reports:
        where = args.traces[0] if len(args.traces) == 1 else "the arguments"
        raise ReaderError(f"{where}: none of its {len(tasks)} traces could be read")
    return result.reports, result.ranks, len(result.errors)


def render_job(reports: list[dict[str, Any]], lead: Sequence[Any], console: Console) -> None:
    """The terminal view of a job: the cross-rank section and one line per rank; the per-rank
    reports are long, so they go to --json / --md / --html."""
    from gpuscope.report._rich import section
    from gpuscope.report.terminal import combined_table

    for part in lead:
        console.print(section(part, console.width))
    console.print(combined_table(reports))
    console.print(
        f"{len(reports)} per-rank reports: write them with --md / --html / --json "
        "(or analyze one rank's trace)"
    )
