"""`Job`: one report across the ranks of a distributed job (`pipeline.analyse` builds it).

From each rank's `RankSummary` (built in parallel, one per trace, by `ranks.work`):

1. key every collective call (`keys`), align the ranks' clocks on collective ends (`align`);
2. match calls into collectives (`match`), find who arrives last and how long the others wait
   (`stragglers`), and the bandwidth of each collective from its last arriver's time
   (`bandwidth`);
3. lay the ranks' steps side by side (`steptable`), judge each rank with the job
   (`verdicts`: waiting for a later rank, or late for its own reason) and say what it means
   (`findings`).

The result is plain data; `to_dict` (in `ranks._serialize`) is what the JSON holds under
`"ranks"`. `RankVerdict` is one rank's verdict read with the job (`verdicts` reads it).

    >>> job = analyse([summarize(analyze(read_trace(p)), rank=i) for i, p in enumerate(paths)])
    >>> to_dict(job)["per_rank"][1]["last"]                              # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from gpuscope.analysis import Finding
from gpuscope.ranks import align as align_mod
from gpuscope.ranks.bandwidth import BandwidthRow
from gpuscope.ranks.keys import Key
from gpuscope.ranks.match import Matching
from gpuscope.ranks.steptable import StepTable
from gpuscope.ranks.stragglers import Arrivals, RankWaits
from gpuscope.ranks.summary import RankSummary
from gpuscope.trace.model import I64


@dataclass(frozen=True)
class Duplicate:
    """Several traces claim one rank: the first is analysed across ranks, the others are not."""

    rank: int
    paths: tuple[str, ...]  # the first is the one used
    same_file: bool  # all of them are one file (given twice)


@dataclass(frozen=True)
class RankVerdict:
    bound: str
    reason: str
    cause: str | None  # causes.KINDS, "waiting", or the own verdict's idle cause; None: busy
    waiting_for: int | None  # rank id
    trace_bound: str | None  # the verdict of the rank's own trace alone
    utilization: float | None  # busy / span, as the rank's own report has it
    own_work_utilization: float | None  # (busy - waits for later ranks) / span

    def to_dict(self) -> dict[str, Any]:
        def share(x: float | None) -> float | None:
            return None if x is None else round(x, 4)

        return {
            "bound": self.bound,
            "reason": self.reason,
            "cause": self.cause,
            "waiting_for": self.waiting_for,
            "trace_bound": self.trace_bound,
            "utilization": share(self.utilization),
            "own_work_utilization": share(self.own_work_utilization),
        }


@dataclass(frozen=True)
class Job:
    ranks: list[RankSummary]  # by rank
    world_size: int | None
    tolerance_ns: int
    offsets: list[align_mod.Offset]
    key_of: list[Key]
    keys: list[I64]  # per rank, the key id of each call
    matching: Matching
    arrivals: Arrivals
    waits: RankWaits
    end_spread_ns: I64  # per aligned collective: max - min of the members' aligned ends
    bandwidth: list[BandwidthRow]
    steps: StepTable
    duplicates: list[Duplicate] = field(default_factory=list)  # ranks claimed by several traces
    verdicts: list[RankVerdict] = field(default_factory=list)  # per rank, read with the job
    findings: list[Finding] = field(default_factory=list)

    @cached_property
    def rank_ids(self) -> list[int]:
        return [r.rank if r.rank is not None else i for i, r in enumerate(self.ranks)]

    def aligned(self, r: int) -> bool:
        return self.offsets[r].offset_ns is not None


def distinct(summaries: Sequence[RankSummary]) -> tuple[list[RankSummary], list[Duplicate]]:
    """The first summary of each rank (in the given order), and the ranks claimed more than
    once with every path that claims them."""
    first: dict[int, RankSummary] = {}
    claims: dict[int, list[str]] = {}
    kept = []
    for s in summaries:
        if s.rank is None or s.rank not in first:
            kept.append(s)
        if s.rank is not None:
            first.setdefault(s.rank, s)
            claims.setdefault(s.rank, []).append(s.path)
    duplicates = [
        Duplicate(rank, tuple(paths), len({_real(p) for p in paths}) == 1)
        for rank, paths in sorted(claims.items())
        if len(paths) > 1
    ]
    return kept, duplicates


def _real(path: str) -> str:
    return os.path.realpath(path)
