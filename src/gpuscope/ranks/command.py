"""`gpuscope analyze` with several traces: each analysed on the chosen engine (`--engine`,
`--workers`), then across ranks when they are the ranks of one job. Errors and reader warnings
are printed as the one-trace path prints them."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from gpuscope.commands._say import warn


def analyze_sources(
    sources: Sequence[Any], args: argparse.Namespace
) -> tuple[list[dict[str, Any]], dict[str, Any] | None, list[tuple[str, str]]]:
    """(reports, the cross-rank part or None, the traces that failed: (path, error))."""
    from gpuscope.ranks.api import analyze_outcomes, run_tasks
    from gpuscope.ranks.work import task_of

    tasks = [task_of(s, args.categories, args.top) for s in sources]
    result = analyze_outcomes(run_tasks(tasks, engine=args.engine, workers=args.workers))
    for warning in result.warnings:
        warn(warning)
    return result.reports, result.ranks, result.failed
