"""The cross-rank analysis as library calls.

    >>> from gpuscope.ranks.api import analyze_job
    >>> result = analyze_job(["run/rank0", "run/rank1"], workers=2)        # doctest: +SKIP
    >>> result.ranks["per_rank"][1]["last"], result.failed                 # doctest: +SKIP

`analyze_outcomes` is the step the CLI shares: per-rank outcomes (from any engine) → the report
dicts, the traces that failed, and the `"ranks"` part when the traces are the ranks of one job.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from gpuscope.ranks.work import Outcome, Task, run_task, task_of, with_absolute_paths
from gpuscope.schemas import ANALYSIS_SET


@dataclass(frozen=True)
class JobResult:
    reports: list[dict[str, Any]]  # per trace (empty when not asked for)
    ranks: dict[str, Any] | None  # the cross-rank report; None when not ranks of one job
    failed: list[tuple[str, str]] = field(default_factory=list)  # (trace, one-line error)
    warnings: list[str] = field(default_factory=list)  # reader warnings, "path: text"
    groups: list[tuple[Any, ...]] = field(default_factory=list)  # per report: its KernelGroups


def tasks_for(paths: Sequence[str], categories: str | None = None, top: int = 15,
              report: bool = True) -> list[Task]:  # fmt: skip
    """One task per source found in `paths` (files or directories)."""
    from dataclasses import replace

    from gpuscope.trace.registry import sources

    return [replace(task_of(s, categories, top), report=report) for s in sources(paths)]


def analyze_job(
    paths: Sequence[str],
    *,
    engine: str = "local",
    workers: int | None = None,
    categories: str | None = None,
    reports: bool = False,
    top: int = 15,
    timeout_s: float | None = None,
) -> JobResult:
    """Analyse every trace in `paths` on `engine` and, when they are ranks of one job, across
    them. `reports=False` keeps only the per-rank summaries (memory flat in the rank count);
    `top`: kernels in each report's `top_kernels`. `timeout_s`: how long a Ray / Dask cluster's
    address may take to answer (default $GPUSCOPE_ENGINE_TIMEOUT, else 30 s). When the local
    engine cannot start worker processes here (a main script without an `if __name__ ==
    "__main__":` guard, and other threads), it analyses the traces in this process and
    `warnings` says so."""
    tasks = tasks_for(paths, categories, top, report=reports)
    outcomes = run_tasks(tasks, engine=engine, workers=workers, timeout_s=timeout_s)
    result = analyze_outcomes(outcomes)
    if engine == "local":
        from gpuscope.ranks.engine import in_process_reason

        reason = in_process_reason(len(tasks), workers)
        result.warnings.extend([reason] if reason else [])
    return result


def run_tasks(
    tasks: Sequence[Task], *, engine: str, workers: int | None, timeout_s: float | None = None
) -> Iterator[Outcome]:
    """`run_task` of every task on `engine`, in order. Ray and Dask get absolute paths (their
    workers run in other directories), so their reports name the files by absolute path."""
    from gpuscope.ranks.engine import run_all

    if engine != "local":
        tasks = [with_absolute_paths(t) for t in tasks]
    return run_all(run_task, tasks, engine=engine, workers=workers, timeout_s=timeout_s)


def analyze_outcomes(outcomes: Iterable[Outcome]) -> JobResult:
    from gpuscope.ranks._serialize import to_dict
    from gpuscope.ranks.identity import is_job
    from gpuscope.ranks.job import distinct
    from gpuscope.ranks.pipeline import analyse

    reports: list[dict[str, Any]] = []
    groups: list[tuple[Any, ...]] = []
    failed: list[tuple[str, str]] = []
    warnings: list[str] = []
    summaries = []
    reported: dict[str, list[dict[str, Any]]] = {}  # summary path -> its reports
    for outcome in outcomes:
        if outcome.error is not None:
            failed.append((outcome.path, outcome.error))
            continue
        warnings += [f"{outcome.path}: {w}" for w in outcome.warnings]
        if outcome.report is not None:
            reports.append(outcome.report)
            groups.append(outcome.groups or ())
        if outcome.summary is not None:
            summaries.append(outcome.summary)
            if outcome.report is not None:
                reported.setdefault(outcome.summary.path, []).append(outcome.report)
    ranked = [s for s in summaries if s.rank is not None]
    kept, duplicates = distinct(ranked)
    job = is_job([s.rank for s in kept], [s.world_size for s in kept])
    part = to_dict(analyse(ranked)) if job else None
    for d in duplicates:
        text = duplicate_text(d.rank, d.paths, d.same_file, job)
        warnings.append(text)
        for path in dict.fromkeys(d.paths):
            for report in reported.get(path, []):
                report["integrity"].append(
                    {"id": "duplicate-rank", "message": text, "affects": ["ranks"]}
                )
    return JobResult(reports, part, failed, warnings, groups)


def duplicate_text(rank: int, paths: Sequence[str], same_file: bool, job: bool) -> str:
    """Several traces claim one rank: what was done with them."""
    if same_file:
        done = "it is analysed across ranks once" if job else "its reports are shown side by side"
        return f"rank {rank}: {paths[0]} is given {len(paths)} times; {done}"
    done = (
        f"only {paths[0]} is analysed across ranks" if job
        else "they are reported side by side, not analysed as ranks of one job"
    )  # fmt: skip
    return (
        f"rank {rank} is claimed by {len(paths)} traces (two runs mixed, or a before/after "
        f"pair): {', '.join(paths)}; {done}"
    )


def analysis_set(
    reports: list[dict[str, Any]],
    ranks: dict[str, Any] | None = None,
    failed: list[tuple[str, str]] | None = None,
) -> dict[str, Any]:
    """The document of what was analysed: one report, or a set of schema
    `gpuscope.analysis-set/1` (several reports, the cross-rank part, or inputs that could not be
    read — each recorded with its error). What `analyze --json` writes and a run's
    `analysis.json` holds."""
    if len(reports) == 1 and ranks is None and not failed:
        return reports[0]
    data: dict[str, Any] = {"schema": ANALYSIS_SET, "reports": reports}
    if ranks is not None:
        data["ranks"] = ranks
    if failed:
        data["failed"] = [{"path": path, "error": error} for path, error in failed]
    return data
