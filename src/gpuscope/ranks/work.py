"""The per-rank work as one pure function of plain data, so any engine can run it anywhere:
`run_task(Task) -> Outcome` reads one source, analyses it, and returns its report dict and its
`RankSummary` (or the one-line error). Tasks and outcomes pickle small; nothing is shared.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from gpuscope.analysis.categories import Rules
    from gpuscope.analysis.hotspots import KernelGroup
    from gpuscope.ranks.summary import RankSummary
    from gpuscope.trace.registry import Source


@dataclass(frozen=True)
class Task:
    """One source: the files one reader turns into one trace, by the reader's name."""

    reader: str
    paths: tuple[str, ...]
    key: str
    categories: str | None = None  # extra category rules file
    top: int = 15
    report: bool = True  # return the full analysis dict too (the CLI's per-rank reports)

    @property
    def path(self) -> str:
        return self.paths[0] if len(self.paths) == 1 else self.key


@dataclass(frozen=True)
class Outcome:
    path: str
    report: dict[str, Any] | None
    summary: RankSummary | None
    error: str | None = None
    warnings: tuple[str, ...] = ()
    peak_rss_mb: float = 0.0  # of the process that ran it, when it finished (its high mark)
    groups: tuple[KernelGroup, ...] | None = None  # every kernel name's totals, with the report


def task_of(source: Source, categories: str | None = None, top: int = 15) -> Task:
    return Task(source.reader.name, tuple(source.paths), source.key, categories, top)


def with_absolute_paths(task: Task) -> Task:
    """The task as a cluster worker must get it: its processes run in other directories, where
    the relative paths of the command line name nothing (or something else)."""
    rules = None if task.categories is None else os.path.abspath(task.categories)
    paths = tuple(os.path.abspath(p) for p in task.paths)
    return replace(task, paths=paths, key=os.path.abspath(task.key), categories=rules)


def run_task(task: Task) -> Outcome:
    """Read, analyse and summarise one rank; a bad input is an Outcome with `error`, never an
    exception (one rank's broken file must not lose the others)."""
    from gpuscope.errors import GpuscopeError

    try:
        outcome = _run(task)
    except GpuscopeError as error:
        outcome = Outcome(task.path, None, None, error=str(error))
    return replace(outcome, peak_rss_mb=_peak_rss_mb())


def _peak_rss_mb() -> float:
    try:
        import resource
    except ImportError:  # not on every platform
        return 0.0
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _run(task: Task) -> Outcome:
    from gpuscope.analysis.pipeline import analyze
    from gpuscope.ranks.identity import host_from_path, rank_from_path
    from gpuscope.ranks.summary import summarize
    from gpuscope.trace.registry import Source, read_source, readers

    source = Source(readers()[task.reader], task.paths, task.key)
    trace = read_source(source)
    a = analyze(trace, _rules(task.categories), task.top)
    where = task.paths[0]
    summary = summarize(a, rank=rank_from_path(where), host=host_from_path(where))
    report = a.to_dict() if task.report else None
    groups = tuple(a.groups) if task.report else None
    return Outcome(task.path, report, summary, warnings=trace.meta.warnings, groups=groups)


@functools.lru_cache(maxsize=4)
def _rules(categories: str | None) -> Rules:
    from gpuscope.analysis.categories import load_rules

    return load_rules(categories)
