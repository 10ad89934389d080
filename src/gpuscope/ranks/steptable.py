"""Per-step time per rank: the ProfilerStep ranges every rank has, side by side.

Steps are matched by name (`ProfilerStep#551` on every rank of one job); ranks whose profilers
number steps differently are matched by position instead. Durations need no clock alignment.
With synchronous collectives the step's wall time evens out across ranks (the fast ones wait
inside the collectives), the work each rank did does not: the rank with the most compute in a
step is named per step, and "slower" is kept for wall-time differences (`ranks.rules`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from gpuscope.ranks.summary import RankSummary
from gpuscope.trace.model import I64


@dataclass(frozen=True)
class StepTable:
    """`(rank, step)` arrays, ns; `matched_by` is "name" or "position"."""

    names: tuple[str, ...]
    matched_by: str
    wall: I64
    busy: I64
    compute: I64
    comm: I64
    exposed: I64
    waited: I64  # inside the step, waiting in collectives for a later rank (aligned ones)
    after_sync: I64  # device idle from a blocking sync's return to the next launch (hostlate)
    host_wait: I64  # device idle until a launch made after it went idle (hostlate)
    columns: tuple[dict[int, int], ...] = ()  # per rank: its own step index -> column

    def __len__(self) -> int:
        return len(self.names)

    @property
    def idle(self) -> I64:
        result: I64 = self.wall - self.busy
        return result

    @property
    def working(self) -> I64:
        """Step time not spent waiting for another rank: what a rank's own work takes."""
        result: I64 = self.wall - self.waited
        return result

    def most_compute(self) -> I64:
        """Per step, the rank index with the most compute."""
        result: I64 = np.argmax(self.compute, axis=0) if len(self) else np.zeros(0, np.int64)
        return result

    def imbalance(self) -> np.ndarray:
        """Per step, max / mean - 1 of the ranks' compute (0 when nothing was computed)."""
        mean = self.compute.mean(axis=0) if len(self) else np.zeros(0)
        peak = self.compute.max(axis=0) if len(self) else np.zeros(0)
        return np.where(mean > 0, peak / np.where(mean > 0, mean, 1) - 1, 0.0)


def step_table(ranks: Sequence[RankSummary]) -> StepTable:
    names, columns = _by_name(ranks)
    matched_by = "name"
    if not names:
        names, columns = _by_position(ranks)
        matched_by = "position"
    wall, busy, compute, comm, exposed, after_sync, host_wait = (
        np.asarray(c, np.int64).reshape(len(ranks), len(names)) for c in columns
    )
    return StepTable(
        names=tuple(names),
        matched_by=matched_by,
        wall=wall,
        busy=busy,
        compute=compute,
        comm=comm,
        exposed=exposed,
        waited=np.zeros((len(ranks), len(names)), np.int64),
        after_sync=after_sync,
        host_wait=host_wait,
        columns=_columns(ranks, names, matched_by),
    )


def _columns(
    ranks: Sequence[RankSummary], names: list[str], matched_by: str
) -> tuple[dict[int, int], ...]:
    if matched_by == "position":
        return tuple({i: i for i in range(len(names))} for _ in ranks)
    col = {name: j for j, name in enumerate(names)}
    return tuple({i: col[n] for i, n in enumerate(s.steps.names) if n in col} for s in ranks)


def add_waits(table: StepTable, steps_of_calls: Sequence[I64], waits: Sequence[I64]) -> StepTable:
    """The table with each rank's waits summed into the steps its calls were issued in;
    `steps_of_calls[r]` / `waits[r]`: the rank's own step index and wait of each aligned call."""
    waited = table.waited.copy()
    for r, (steps, wait) in enumerate(zip(steps_of_calls, waits, strict=True)):
        for step, ns in zip(steps.tolist(), wait.tolist(), strict=True):
            column = table.columns[r].get(step)
            if column is not None:
                waited[r, column] += ns
    return replace(table, waited=waited)


def _fields(summary: RankSummary, index: Sequence[int]) -> list[list[int]]:
    s = summary.steps
    pick = list(index)
    none = np.zeros(len(s), np.int64)
    late = [none if a is None else a for a in (s.after_sync, s.host_wait)]
    return [a[pick].tolist() for a in (s.wall, s.busy, s.compute, s.comm, s.exposed, *late)]


def _by_name(ranks: Sequence[RankSummary]) -> tuple[list[str], list[list[int]]]:
    common = set(ranks[0].steps.names)
    for summary in ranks[1:]:
        common &= set(summary.steps.names)
    names = [n for n in ranks[0].steps.names if n in common]
    if len(names) != len(set(names)):  # the same step name twice: positions are safer
        return [], []
    return names, _gather(ranks, [[s.steps.names.index(n) for n in names] for s in ranks])


def _by_position(ranks: Sequence[RankSummary]) -> tuple[list[str], list[list[int]]]:
    count = min(len(s.steps) for s in ranks)
    names = [f"step {i + 1}" for i in range(count)]
    return names, _gather(ranks, [list(range(count)) for _ in ranks])


def _gather(ranks: Sequence[RankSummary], index: list[list[int]]) -> list[list[int]]:
    columns: list[list[int]] = [[] for _ in range(7)]
    for summary, pick in zip(ranks, index, strict=True):
        for column, values in zip(columns, _fields(summary, pick), strict=True):
            column.extend(values)
    return columns
