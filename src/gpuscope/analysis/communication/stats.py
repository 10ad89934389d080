"""Statistics of communication kernels: per collective, per group of identical calls (their
spread), and achieved bandwidth per message size.

On one rank a collective's kernel starts when it is launched and ends when every peer has done
its part, so its duration holds the wait for the slowest peer as well as the transfer. Identical
calls (same collective, kernel and size; or, without sizes, the same call of every profiler step)
that take very different times are therefore a straggler signal, not a link measurement, and the
other ranks' traces are needed to name the late rank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gpuscope.analysis.communication.calls import Calls
from gpuscope.analysis.communication.groups import Groups, dense, group_ids
from gpuscope.analysis.communication.names import KINDS, bus_factor
from gpuscope.trace.model import F64, I64

MIN_CALLS = 5  # identical calls needed before their spread means anything
SPREAD_P90 = 1.5  # p90 / p50 at or above this: a recurring spread
SPREAD_MAX = 2.0  # max / p50 at or above this: at least one call took twice the typical time
SLOW_FACTOR = 2.0  # a size whose median time is this many times the trace's own envelope


@dataclass(frozen=True)
class Summary:
    count: int
    total_ns: int
    mean_ns: float
    p50_ns: float
    p90_ns: float
    max_ns: int


def summary(durations: I64) -> Summary:
    d = np.sort(durations)
    return Summary(
        count=len(d),
        total_ns=int(d.sum()),
        mean_ns=float(d.mean()),
        p50_ns=float(np.percentile(d, 50)),
        p90_ns=float(np.percentile(d, 90)),
        max_ns=int(d[-1]),
    )


@dataclass(frozen=True)
class CollectiveRow:
    """The calls of one collective kind through one kernel (name)."""

    kind: str
    which: int  # index into Calls.parsed
    kernel: int  # name index (trace.names)
    launched_by: int  # most frequent issuing op (name index), -1 when none
    stats: Summary
    exposed_ns: int  # sum over the calls of their own time not overlapped by compute
    sized: int  # calls with a known size
    bytes_min: int | None
    bytes_max: int | None
    ranks: int | None  # the most frequent group size among the sized calls
    # over the sized calls: their bytes (times the bus factor) over their summed time, GB/s
    algbw: float | None
    busbw: float | None


def collective_rows(calls: Calls, exposed: I64) -> list[CollectiveRow]:
    """One row per (kind, kernel name), by total time."""
    ids, first = group_ids(calls.kind, calls.which)
    factors = _factors(calls)
    rows = [
        _row(calls, exposed, factors, (int(calls.kind[f]), int(calls.which[f])), ids == g)
        for g, f in enumerate(first)
    ]
    return sorted(rows, key=lambda r: -r.stats.total_ns)


def _row(
    calls: Calls, exposed: I64, factors: F64, key: tuple[int, int], mine: np.ndarray
) -> CollectiveRow:
    kind, which = key
    dur = calls.dur
    sized = mine & (calls.bytes > 0) & (calls.ranks > 0) & (dur > 0)
    size, time = calls.bytes[sized], dur[sized]
    factor = factors[sized]
    known = bool(sized.any())
    return CollectiveRow(
        kind=KINDS[kind],
        which=which,
        kernel=int(calls.parsed_names[which]),
        launched_by=_mode_or(calls.launched_by[mine & (calls.launched_by >= 0)], -1),
        stats=summary(dur[mine]),
        exposed_ns=int(exposed[mine].sum()),
        sized=int(sized.sum()),
        bytes_min=int(size.min()) if known else None,
        bytes_max=int(size.max()) if known else None,
        ranks=_mode(calls.ranks[sized]),
        algbw=float(size.sum() / time.sum()) if known else None,
        busbw=float((size * factor).sum() / time.sum()) if known and (factor > 0).all() else None,
    )


def _mode_or(values: I64, missing: int) -> int:
    found = _mode(values)
    return missing if found is None else found


def _mode(values: I64) -> int | None:
    if len(values) == 0:
        return None
    found, inverse = dense(values)
    return int(found[np.argmax(np.bincount(inverse))])


@dataclass(frozen=True)
class Bucket:
    """Identical calls: same collective and kernel, and the same size (or step position)."""

    kind: str
    which: int
    bytes: int  # -1 when grouped by position in the step
    position: int  # the call's rank among its kernel's calls of a step; -1 when by size
    count: int
    p50_ns: float
    p90_ns: float
    max_ns: int
    cv: float  # standard deviation over mean
    excess_ns: int  # time above the median, summed over the calls
    excess_exposed_ns: int  # the part of that excess not hidden behind compute
    slowest: int  # index into Calls of the slowest call

    @property
    def varies(self) -> bool:
        return self.count >= MIN_CALLS and (
            self.p90_ns >= SPREAD_P90 * self.p50_ns or self.max_ns >= SPREAD_MAX * self.p50_ns
        )


def buckets(
    calls: Calls, exposed: I64, step_of: I64, n_steps: int
) -> tuple[list[Bucket], str | None]:
    """Groups of identical calls and how they were told apart ("size", "step position" or None).

    With sizes (record_param_comms), calls of one kernel and size are identical. Without, the
    k-th call of a kernel on a stream in every profiler step is the same call (the same DDP bucket,
    the same layer's all-gather) when every step makes the same number of them."""
    sized = calls.bytes >= 0
    # kind, kernel, size, ranks, group | device, stream, position (-1 where not applicable)
    key = np.full((len(calls), 8), -1, np.int64)
    key[:, 0], key[:, 1] = calls.kind, calls.which
    key[sized, 2], key[sized, 3], key[sized, 4] = (
        calls.bytes[sized],
        calls.ranks[sized],
        calls.group[sized],
    )
    grouped = sized.copy()
    modes = ["size"] if sized.any() else []
    if not sized.all() and n_steps >= MIN_CALLS:
        position = _step_positions(calls, step_of, n_steps)
        use = ~sized & (position >= 0)
        key[use, 5], key[use, 6], key[use, 7] = (
            calls.device[use],
            calls.stream[use],
            position[use],
        )
        grouped |= use
        modes += ["step position"] if use.any() else []
    mode = " and ".join(modes) or None
    if not grouped.any():
        return [], None
    return _buckets(calls, exposed, key, grouped, sized), mode


def _step_positions(calls: Calls, step_of: I64, n_steps: int) -> I64:
    """Per call: its rank among the calls of the same kernel, stream and device in its step;
    -1 where the steps do not all make the same number of such calls."""
    position = np.full(len(calls), -1, np.int64)
    inside = np.flatnonzero(step_of >= 0)
    if len(inside) == 0:
        return position
    columns = (calls.kind, calls.which, calls.device, calls.stream)
    kernel_key, _ = group_ids(*(c[inside] for c in columns))
    order = np.lexsort((calls.start[inside], step_of[inside], kernel_key))
    k, s = kernel_key[order], step_of[inside][order]
    run_start = np.r_[True, (k[1:] != k[:-1]) | (s[1:] != s[:-1])]
    first = np.maximum.accumulate(np.where(run_start, np.arange(len(k)), 0))
    rank = np.arange(len(k)) - first
    regular = _regular(k, s, run_start, n_steps)
    position[inside[order]] = np.where(regular[k], rank, -1)
    return position


def _regular(k: I64, s: I64, run_start: np.ndarray, n_steps: int) -> np.ndarray:
    """Per kernel key: every step holds the same number of its calls."""
    runs = np.flatnonzero(run_start)
    sizes = np.diff(np.r_[runs, len(k)])
    run_key = k[runs]
    n_keys = int(k.max()) + 1
    steps_seen = np.bincount(run_key, minlength=n_keys)
    low = np.full(n_keys, np.iinfo(np.int64).max)
    high = np.zeros(n_keys, np.int64)
    np.minimum.at(low, run_key, sizes)
    np.maximum.at(high, run_key, sizes)
    regular: np.ndarray = (steps_seen == n_steps) & (low == high)
    return regular


def _buckets(
    calls: Calls, exposed: I64, key: I64, grouped: np.ndarray, sized: np.ndarray
) -> list[Bucket]:
    index = np.flatnonzero(grouped)
    inverse, first = group_ids(*key[index].T)
    found = key[index][first]
    groups = Groups(inverse, calls.dur[index].astype(np.float64))
    p50 = groups.percentile(50)
    d = groups.values
    over = np.maximum(d - p50[groups.ids], 0.0)
    own = exposed[index][groups.order]
    share = np.where(d > 0, own / np.where(d > 0, d, 1.0), 0.0)
    excess, excess_exposed = groups.sum(over), groups.sum(over * share)
    mean = groups.sum(d) / groups.count
    std = np.sqrt(np.maximum(groups.sum(d * d) / groups.count - mean * mean, 0.0))
    p90, slowest = groups.percentile(90), index[groups.order[groups.last]]
    result = [
        Bucket(
            kind=KINDS[int(found[g, 0])],
            which=int(found[g, 1]),
            bytes=int(found[g, 2]) if sized[slowest[g]] else -1,
            position=-1 if sized[slowest[g]] else int(found[g, 7]),
            count=int(groups.count[g]),
            p50_ns=float(p50[g]),
            p90_ns=float(p90[g]),
            max_ns=int(d[groups.last[g]]),
            cv=float(std[g] / mean[g]) if mean[g] > 0 else 0.0,
            excess_ns=round(float(excess[g])),
            excess_exposed_ns=round(float(excess_exposed[g])),
            slowest=int(slowest[g]),
        )
        for g in range(len(found))
    ]
    return sorted(result, key=lambda b: -b.excess_exposed_ns)


@dataclass(frozen=True)
class SizeRow:
    """The calls of one collective, process group and message size, against the envelope the
    trace itself shows for that collective and group: time = latency + size × factor / bandwidth,
    with the lowest median time of any size as the latency and the highest median bus bandwidth
    of any size as the bandwidth."""

    kind: str
    group: int  # process group name index, -1
    ranks: int
    bytes: int
    count: int
    p50_ns: float
    busbw: float  # GB/s at the median time
    envelope_ns: float  # what the envelope allows for this size
    best_busbw: float
    latency_ns: float
    excess_exposed_ns: int  # exposed time above the envelope, summed over the calls

    @property
    def slow(self) -> bool:
        return self.p50_ns >= SLOW_FACTOR * self.envelope_ns


def sizes(calls: Calls, exposed: I64) -> list[SizeRow]:
    """Per (collective, group, size) with a known bus-bandwidth factor; only for collectives and
    groups seen at two sizes or more (else there is nothing to compare with)."""
    dur = calls.dur
    factor = np.array(
        [
            bus_factor(KINDS[int(k)], int(n)) or 0.0
            for k, n in zip(calls.kind, calls.ranks, strict=True)
        ],
        np.float64,
    )
    index = np.flatnonzero((calls.bytes > 0) & (calls.ranks > 0) & (dur > 0) & (factor > 0))
    if len(index) == 0:
        return []
    key = np.stack([calls.kind, calls.group, calls.ranks, calls.bytes], axis=1)[index]
    inverse, first = group_ids(*key.T)
    found = key[first]
    groups = Groups(inverse, dur[index].astype(np.float64))
    p50 = groups.percentile(50)
    busbw = found[:, 3] * factor[index[groups.order[groups.first]]] / p50
    family, _ = group_ids(*found[:, :3].T)
    latency = np.full(family.max() + 1, np.inf)
    best = np.zeros(family.max() + 1)
    np.minimum.at(latency, family, p50)
    np.maximum.at(best, family, busbw)
    sizes_seen = np.bincount(family)
    envelope = (
        latency[family] + found[:, 3] * factor[index[groups.order[groups.first]]] / best[family]
    )
    d = groups.values
    own = exposed[index][groups.order]
    over = np.maximum(d - envelope[groups.ids], 0.0) * own / d
    excess = groups.sum(over)
    return [
        SizeRow(
            kind=KINDS[int(found[g, 0])],
            group=int(found[g, 1]),
            ranks=int(found[g, 2]),
            bytes=int(found[g, 3]),
            count=int(groups.count[g]),
            p50_ns=float(p50[g]),
            busbw=float(busbw[g]),
            envelope_ns=float(envelope[g]),
            best_busbw=float(best[family[g]]),
            latency_ns=float(latency[family[g]]),
            excess_exposed_ns=round(float(excess[g])),
        )
        for g in range(len(found))
        if sizes_seen[family[g]] >= 2
    ]


def _factors(calls: Calls) -> F64:
    """Per call: its bus-bandwidth factor (0 when unknown), looked up once per (kind, ranks)."""
    ids, first = group_ids(calls.kind, calls.ranks)
    pairs = zip(calls.kind[first], calls.ranks[first], strict=True)
    table = np.array([bus_factor(KINDS[int(k)], int(n)) or 0.0 for k, n in pairs], np.float64)
    result: F64 = table[ids]
    return result
