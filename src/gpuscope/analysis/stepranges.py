"""The steps of a trace: where they are, and which step holds a moment.

A step is, in order of preference:

- a `ProfilerStep#N` range (torch.profiler's `prof.step()` under a schedule) that holds at least
  one other event (the empty range the profiler opens at its last `step()` is left out);
- without them, the stretch that ends with one optimizer step: torch's own
  `Optimizer.step#<Optimizer>.step` ranges (recorded by every torch.optim optimizer) cut the
  main thread's timeline into steps, step i running from the end of optimizer step i-1 to the
  end of optimizer step i (the first from the first event of that thread);
- otherwise the trace has no steps (a serving trace, an inference loop without markers).

Steps are host ranges. When the host runs ahead of the device (a GPU-bound loop: each range
ends long before the work it launched does), `device_timed` turns them into the device's own
steps: from the end of the previous step's work to the end of this step's (they tile the device
timeline, so a breakdown of each still sums to its time).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from gpuscope.analysis._intervals import take
from gpuscope.analysis._unique import unique
from gpuscope.analysis.links import Links
from gpuscope.trace.model import ANNOTATION, I64, OP, Mask, Trace

STEP = re.compile(r"^ProfilerStep#\d+$")
OPTIMIZER_STEP = re.compile(r"^Optimizer\.step#.*\.step$")
FIRST_STEP_RATIO = 1.5  # a leading step ≥ this × the median of the later ones: warm-up
AHEAD = 0.5  # the work of the median step ends this share of its range after the range ends


@dataclass(frozen=True)
class StepRanges:
    names: list[str]
    start: I64
    end: I64
    source: str  # "ProfilerStep", "optimizer", "device" (ProfilerStep timed on the device), ""
    host_start: I64  # the host ranges (the same as start / end unless timed on the device)
    host_end: I64

    def __len__(self) -> int:
        return len(self.names)

    @property
    def wall(self) -> I64:
        result: I64 = self.end - self.start
        return result


NO_STEPS = StepRanges([], *(np.zeros(0, np.int64),) * 2, "", *(np.zeros(0, np.int64),) * 2)


def find_steps(trace: Trace) -> StepRanges:
    """The trace's steps by start time (`NO_STEPS` when it has none)."""
    names, lo, hi = complete_steps(trace)
    if len(names):
        return StepRanges(names, lo, hi, "ProfilerStep", lo, hi)
    return _optimizer_steps(trace)


def slot(times: I64, lo: I64, hi: I64) -> I64:
    """Index of the range [lo, hi) holding each time (-1: none); ranges sorted and disjoint."""
    if len(lo) == 0:
        return np.full(len(times), -1, np.int64)
    found = np.searchsorted(lo, times, side="right") - 1
    inside = (found >= 0) & (times < hi[np.maximum(found, 0)])
    result: I64 = np.where(inside, found, -1)
    return result


def warmup_count(walls: list[int]) -> int:
    """Leading steps each ≥ FIRST_STEP_RATIO × the median of the steps after it (at most half)."""
    count = 0
    while count < len(walls) // 2:
        if walls[count] < FIRST_STEP_RATIO * float(np.median(walls[count + 1 :])):
            break
        count += 1
    return count


def complete_steps(trace: Trace) -> tuple[list[str], I64, I64]:
    """Names, starts and ends of the ProfilerStep ranges that hold something, by start time."""
    rows = step_rows(trace)
    rows = rows[_has_events(trace, rows)]
    names = [trace.names[i] for i in trace.ops.name[rows]]
    return names, trace.ops.start[rows], trace.ops.end[rows]


def step_rows(trace: Trace) -> I64:
    """Rows of trace.ops that are ProfilerStep#N ranges, by start time."""
    ops = trace.ops
    wanted = [i for i in unique(ops.name) if STEP.match(trace.names[i])]
    rows = np.flatnonzero((ops.kind == ANNOTATION) & np.isin(ops.name, wanted) & (ops.start >= 0))
    result: I64 = rows[np.argsort(ops.start[rows], kind="stable")]
    return result


def empty_step_names(trace: Trace) -> list[str]:
    """The ProfilerStep ranges with nothing inside (the range the last `step()` opens)."""
    rows = step_rows(trace)
    return [trace.names[i] for i in trace.ops.name[rows[~_has_events(trace, rows)]]]


def _has_events(trace: Trace, rows: I64) -> Mask:
    """Ranges with at least one other event (operator, range, Python frame, runtime call)
    starting inside."""
    ops = trace.ops
    lo, hi = ops.start[rows], ops.end[rows]
    others = np.ones(len(ops), bool)
    others[rows] = False
    starts = np.sort(np.concatenate([ops.start[others], trace.host.start]))
    inside = np.searchsorted(starts, hi, side="left") - np.searchsorted(starts, lo, side="left")
    result: Mask = inside > 0
    return result


def _optimizer_steps(trace: Trace) -> StepRanges:
    ops = trace.ops
    wanted = [i for i in unique(ops.name) if OPTIMIZER_STEP.match(trace.names[i])]
    rows = np.flatnonzero((ops.kind == ANNOTATION) & np.isin(ops.name, wanted) & (ops.start >= 0))
    if len(rows) < 2:
        return NO_STEPS
    ids, counts = np.unique(ops.tid[rows], return_counts=True)
    tid = ids[np.argmax(counts)]  # the thread that runs the optimizer: the training loop's
    rows = rows[ops.tid[rows] == tid]
    rows = rows[np.argsort(ops.start[rows], kind="stable")]
    ends = ops.end[rows]
    mine = (ops.tid == tid) & (ops.start >= 0) & ((ops.kind == OP) | (ops.kind == ANNOTATION))
    first = int(ops.start[mine].min())
    starts = np.concatenate([[first], ends[:-1]])
    names = [f"step {i} ({trace.names[ops.name[r]]})" for i, r in enumerate(rows.tolist())]
    starts = starts.astype(np.int64)
    return StepRanges(names, starts, ends, "optimizer", starts, ends)


def launched_work(trace: Trace, links: Links, steps: StepRanges) -> tuple[I64, I64]:
    """Per step: the first start and last end of the device work it launched (-1: none). Work
    is the step's by its launch call's start (by its own start when it has no linked launch)."""
    gpu = trace.gpu
    timed = np.flatnonzero((gpu.start >= 0) & (gpu.dur >= 0))
    when = take(trace.host.start, links.host_index[timed], gpu.start[timed])
    which = slot(when, steps.start, steps.end)
    inside = which >= 0
    first = np.full(len(steps), np.iinfo(np.int64).max)
    last = np.full(len(steps), -1, np.int64)
    np.minimum.at(first, which[inside], gpu.start[timed][inside])
    np.maximum.at(last, which[inside], gpu.end[timed][inside])
    first[last < 0] = -1
    return first, last


def device_timed(trace: Trace, links: Links, steps: StepRanges) -> StepRanges:
    """The steps on the device's clock when the host runs ahead of it (the median step's work
    ends AHEAD × its range or more after the range ends), else the steps unchanged."""
    if len(steps) < 2 or steps.source != "ProfilerStep":
        return steps
    first, last = launched_work(trace, links, steps)
    if (last < 0).any():
        return steps
    late = np.median(last - steps.end)
    if late < AHEAD * np.median(steps.wall) or (np.diff(last) < 0).any():
        return steps
    starts = np.concatenate([[first[0]], last[:-1]])
    return replace(steps, start=starts, end=last, source="device")
