"""The cross-rank analysis as library calls.

    >>> from gpuscope.ranks.api import analyze_job
    >>> result = analyze_job(["run/rank0", "run/rank1"], workers=2)        # doctest: +SKIP
    >>> result.ranks["per_rank"][1]["last"], result.failed                 # doctest: +SKIP

`analyze_outcomes` is the step the CLI shares: per-rank outcomes (from any engine) → the report
dicts, the traces that failed, and the `"ranks"` part when the traces are the ranks of one job.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuscope.ranks.work import Outcome, Task, run_task, task_of


@dataclass(frozen=True)
class JobResult:
    reports: list[dict[str, Any]]  # per trace (empty when not asked for)
    ranks: dict[str, Any] | None  # the cross-rank report; None when not ranks of one job
    failed: list[tuple[str, str]] = field(default_factory=list)  # (trace, one-line error)
    warnings: list[str] = field(default_factory=list)  # reader warnings, "path: text"


def tasks_for(paths: Sequence[str], categories: str | None = None, top: int = 15,
              report: bool = True) -> list[Task]:  # fmt: skip
    """One task per source found in `paths` (files or directories)."""
    from dataclasses import replace

    from gpuscope.trace.registry import find_sources

    found = []
    for path in paths:
        found += [replace(task_of(s, categories, top), report=report) for s in find_sources(path)]
        forget_heads()
    return found


def forget_heads() -> None:
    """Finding the sources cached file heads (trace._sniff, up to 32 MiB); the workers read the
    files themselves, so the driver lets them go."""
    from gpuscope.trace import forget_heads

    forget_heads()


def analyze_job(
    paths: Sequence[str],
    *,
    engine: str = "local",
    workers: int | None = None,
    categories: str | None = None,
    reports: bool = False,
) -> JobResult:
    """Analyse every trace in `paths` on `engine` and, when they are ranks of one job, across
    them. `reports=False` keeps only the per-rank summaries (memory flat in the rank count)."""
    from gpuscope.ranks.engine import run_all

    tasks = tasks_for(paths, categories, report=reports)
    return analyze_outcomes(run_all(run_task, tasks, engine=engine, workers=workers))


def analyze_outcomes(outcomes: Iterable[Outcome]) -> JobResult:
    from gpuscope.ranks._serialize import to_dict
    from gpuscope.ranks.identity import is_job
    from gpuscope.ranks.job import analyse

    reports: list[dict[str, Any]] = []
    failed: list[tuple[str, str]] = []
    warnings: list[str] = []
    summaries = []
    for outcome in outcomes:
        if outcome.error is not None:
            failed.append((outcome.path, outcome.error))
            continue
        warnings += [f"{outcome.path}: {w}" for w in outcome.warnings]
        if outcome.report is not None:
            reports.append(outcome.report)
        if outcome.summary is not None:
            summaries.append(outcome.summary)
    ranked = [s for s in summaries if s.rank is not None]
    job = is_job([s.rank for s in ranked], [s.world_size for s in ranked])
    part = to_dict(analyse(ranked)) if job else None
    return JobResult(reports, part, failed, warnings)
