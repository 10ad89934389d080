"""`analyse(ranks) -> Job`: one report across the ranks of a distributed job, in order.

From each rank's `RankSummary` (built in parallel, one per trace, by `ranks.work`):

1. key every collective call (`keys`), align the ranks' clocks on collective ends (`align`);
2. match calls into collectives (`match`), find who arrives last and how long the others wait
   (`stragglers`), and the bandwidth of each collective from its last arriver's time
   (`bandwidth`);
3. lay the ranks' steps side by side (`steptable`), judge each rank with the job
   (`verdicts`: waiting for a later rank, or late for its own reason) and say what it means
   (`rules`: the findings).

    >>> job = analyse([summarize(analyze(read_trace(p)), rank=i) for i, p in enumerate(paths)])
    >>> to_dict(job)["per_rank"][1]["last"]                              # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from gpuscope.ranks import align as align_mod
from gpuscope.ranks.bandwidth import BandwidthRow
from gpuscope.ranks.bandwidth import rows as bandwidth_rows
from gpuscope.ranks.job import Job, distinct
from gpuscope.ranks.keys import Key, keys
from gpuscope.ranks.match import Matching, RankCalls, match
from gpuscope.ranks.rules import findings
from gpuscope.ranks.steptable import StepTable, add_waits, step_table
from gpuscope.ranks.stragglers import Arrivals, arrivals, per_rank
from gpuscope.ranks.summary import RankSummary
from gpuscope.ranks.verdicts import verdicts
from gpuscope.trace.model import I64


def analyse(summaries: Sequence[RankSummary]) -> Job:
    """The cross-rank analysis of `summaries` (one per rank, any order; of traces that claim
    the same rank, the first is used and the others are reported: `Job.duplicates`)."""
    kept, duplicates = distinct(summaries)
    ranks = sorted(kept, key=lambda s: (s.rank is None, s.rank or 0))
    key_ids, key_of = keys(ranks)
    tol = align_mod.tolerance(_durations(ranks))
    offsets = align_mod.align(key_ids, [r.calls.end for r in ranks], tol)
    starts, ends = _shifted(ranks, offsets)
    calls = [
        RankCalls(key_ids[i], s, e) if s is not None and e is not None else None
        for i, (s, e) in enumerate(zip(starts, ends, strict=True))
    ]
    matching = match(calls, tol)
    found = arrivals(matching, starts, ends)
    job = Job(
        ranks=ranks,
        world_size=_world_size(ranks),
        tolerance_ns=tol,
        offsets=offsets,
        key_of=key_of,
        keys=key_ids,
        matching=matching,
        arrivals=found,
        waits=per_rank(found, len(ranks)),
        end_spread_ns=_end_spread(matching, found, ends),
        bandwidth=_bandwidth(ranks, key_of, matching, found),
        steps=_steps(ranks, matching, found),
        duplicates=duplicates,
    )
    job = replace(job, verdicts=verdicts(job))
    return replace(job, findings=findings(job))


def _steps(ranks: Sequence[RankSummary], matching: Matching, found: Arrivals) -> StepTable:
    """The step table, with each rank's waits for later ranks in the steps they fell in."""
    rows = matching.rows[found.index]
    steps_of: list[I64] = []
    waits: list[I64] = []
    for r, summary in enumerate(ranks):
        mine = found.present[:, r]
        steps_of.append(summary.calls.step[rows[mine, r]])
        waits.append(found.waits[mine, r])
    return add_waits(step_table(ranks), steps_of, waits)


def _durations(ranks: Sequence[RankSummary]) -> I64:
    parts = [r.calls.end - r.calls.start for r in ranks]
    return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def _shifted(
    ranks: Sequence[RankSummary], offsets: Sequence[align_mod.Offset]
) -> tuple[list[I64 | None], list[I64 | None]]:
    starts: list[I64 | None] = []
    ends: list[I64 | None] = []
    for summary, off in zip(ranks, offsets, strict=True):
        known = off.offset_ns is not None and len(summary.calls) > 0
        starts.append(summary.calls.start + off.offset_ns if known else None)  # type: ignore[operator]
        ends.append(summary.calls.end + off.offset_ns if known else None)  # type: ignore[operator]
    return starts, ends


def _world_size(ranks: Sequence[RankSummary]) -> int | None:
    known = {r.world_size for r in ranks if r.world_size is not None}
    return known.pop() if len(known) == 1 else None


def _end_spread(matching: Matching, found: Arrivals, ends: Sequence[I64 | None]) -> I64:
    """How far apart the members' aligned ends are, per aligned collective: the residual."""
    rows = matching.rows[found.index]
    low = np.full(len(rows), np.iinfo(np.int64).max, np.int64)
    high = np.full(len(rows), np.iinfo(np.int64).min, np.int64)
    for r, e in enumerate(ends):
        if e is None:
            continue
        mine = found.present[:, r]
        low[mine] = np.minimum(low[mine], e[rows[mine, r]])
        high[mine] = np.maximum(high[mine], e[rows[mine, r]])
    spread: I64 = high - low
    return spread


def _bandwidth(
    ranks: Sequence[RankSummary], key_of: list[Key], matching: Matching, found: Arrivals
) -> list[BandwidthRow]:
    """Per aligned collective: its size and group size as the last arriver recorded them."""
    rows = matching.rows[found.index]
    at = np.arange(len(found))
    row = rows[at, found.last]
    sizes = np.full(len(found), -1, np.int64)
    group_sizes = np.full(len(found), -1, np.int64)
    for r, summary in enumerate(ranks):
        mine = found.last == r
        sizes[mine] = summary.calls.bytes[row[mine]]
        group_sizes[mine] = summary.calls.group_size[row[mine]]
    return bandwidth_rows(key_of, matching.key[found.index], sizes, group_sizes, found.transfer_ns)
