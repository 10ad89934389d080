"""Who holds the job back, and why: the late ranks (stragglers), whom each rank waits for, and
what makes a late rank late — its host launching late after a sync, its host launching late
without one, or more GPU work — measured per matched step against the other ranks.

Used by the findings (`rank-straggler`) and the per-rank verdicts (`ranks.verdicts`), so both
name the same rank for the same reason with the same numbers.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import us
from gpuscope.document.units import time_ns

if TYPE_CHECKING:
    from gpuscope.ranks.job import Job

MIN_COLLECTIVES = 3  # aligned collectives before a straggler is named
LAST_SHARE = 0.5  # a rank last at this share of its collectives is a straggler ...
LAST_SHARE_PAIR = 0.75  # ... with two ranks (one of them is always last)
EXPLAINS = 0.5  # a difference per step this share of the others' wait for the rank explains it
CAUSE_FLOOR = 0.01  # ... when it is also this share of the rank's step time (not noise)
CAUSE_SHARE = 0.05  # a step "has" the cause when its difference is this share of the step time
EVERY_STEP = 0.8  # "each step" from this share of the steps

KINDS = ("after-sync", "host-wait", "more-compute", "slower-link", "unknown")
TIE = 0.8  # a second cause whose excess is this share of the first's is named with it


def last_share_threshold(job: Job) -> float:
    return LAST_SHARE_PAIR if len(job.ranks) == 2 else LAST_SHARE


def late_ranks(job: Job) -> list[int]:
    """Rank indexes named as stragglers (last at ≥ the threshold share of at least
    MIN_COLLECTIVES aligned collectives, and the others waited for it), the most wait caused
    first."""
    waits = job.waits
    share = np.where(waits.collectives > 0, waits.last / np.maximum(waits.collectives, 1), 0)
    eligible = (waits.last >= MIN_COLLECTIVES) & (share >= last_share_threshold(job))
    eligible &= waits.caused_ns > 0  # last only by a tie: nobody waited
    found = np.flatnonzero(eligible)
    return [int(r) for r in found[np.argsort(-waits.caused_ns[found], kind="stable")]]


def waited_for(job: Job, r: int) -> int | None:
    """The rank index that rank index `r` waited for longest (None: it never waited)."""
    a = job.arrivals
    if len(a) == 0:
        return None
    mine = a.present[:, r] & (a.waits[:, r] > 0)
    if not mine.any():
        return None
    ids, index = np.unique(a.last[mine], return_inverse=True)
    return int(ids[np.argmax(np.bincount(index, weights=a.waits[mine, r]))])


def step_time(job: Job, r: int) -> int:
    """A rank's time in the matched steps, else its GPU span."""
    if len(job.steps):
        return int(job.steps.wall[r].sum())
    return int(job.ranks[r].span_ns or 0)


def step_word(job: Job) -> str:
    """What `step_time` is: "step time" with matched steps, else "GPU span"."""
    return "step time" if len(job.steps) else "GPU span"


def others_wait_share(job: Job, r: int) -> float:
    """The others' wait for rank index `r` over the others' step time (else GPU span)."""
    others = sum(step_time(job, i) for i in range(len(job.ranks)) if i != r)
    return float(job.waits.caused_ns[r]) / others if others else 0.0


@dataclass(frozen=True)
class Others:
    """How a message names the ranks other than one: "rank 0" with two ranks."""

    wait: str  # "rank 0 waits" / "the other ranks wait"
    their: str  # "its" / "their"
    mean: str  # "rank 0" / "the other ranks' mean"
    means: str  # "rank 0's" / "the other ranks' mean"


def others(job: Job, r: int) -> Others:
    if len(job.ranks) == 2:
        other = f"rank {job.rank_ids[1 - r]}"
        return Others(f"{other} waits", "its", other, f"{other}'s")
    mean = "the other ranks' mean"
    return Others("the other ranks wait", "their", mean, mean)


@dataclass(frozen=True)
class LateCause:
    """What makes a late rank late, as a per-step mean of the rank against the other ranks' mean
    (`steps` = 0: over the whole trace, when the ranks have no matched steps)."""

    kind: str  # one of KINDS
    mine_ns: float
    others_ns: float
    steps_with: int  # steps in which the difference is ≥ CAUSE_SHARE of the rank's step
    steps: int
    tie: LateCause | None = None  # a second cause about as large: the two are said together
    parts: tuple[tuple[str, int], ...] = ()  # host-wait: the rank's host states there (ns)
    where: tuple[str, ...] = ()  # host-wait / after-sync: what its host ran there, most first

    @property
    def state(self) -> str:
        """The host state holding most of a host-wait ("" for other kinds)."""
        return self.parts[0][0] if self.parts else ""

    @property
    def every(self) -> bool:
        return self.steps > 0 and self.steps_with >= EVERY_STEP * self.steps

    def text(self, names: Others) -> str:
        text = self._text(names)
        if self.tie is not None:
            text += f"; and, about as much, {self.tie._text(names)}"
        return text

    def _text(self, names: Others) -> str:
        mine, others = time_ns(self.mine_ns), time_ns(self.others_ns)
        per = "per step" if self.steps else "in total"
        mean = f"mean over {self.steps} steps; " if self.steps else ""
        if self.kind == "after-sync":
            when = self._when("after each step's sync", "after a sync in {k} of {n} steps")
            return (
                f"its host is late to launch {when}: {mine} of Python/host time {per} between "
                f"a blocking sync's return and its next launch ({mean}{names.mean}: {others})"
                + self._where_text()
            )
        if self.kind == "host-wait":
            when = self._when("in each step", "in {k} of {n} steps")
            return (
                f"its host launches late {when}: its GPU waits {mine} {per} for work launched "
                f"after it went idle ({mean}{names.mean}: {others})" + self._parts_text()
            )
        if self.kind == "more-compute":
            more = self.mine_ns / self.others_ns - 1 if self.others_ns else 0.0
            how = (  # "1751% more" reads worse than "18.5 times as much"
                f"{more:.0%} more {per} than {names.mean}" if more < 1
                else f"{more + 1:.3g} times as much {per} as {names.mean}"
            )  # fmt: skip
            return (
                f"its GPU computes {how} ({mine} against {others}): it has more work, or less "
                "efficient kernels"
            )
        if self.kind == "slower-link":
            return (
                f"its collectives themselves take longer: {mine} {per} of communication with no "
                f"compute beside it, against {others} of transfer (their waits left out) for "
                f"{names.mean} — a slower link or NIC on its host, or a different ring position"
            )
        return (
            f"neither its compute, its host's launch delays nor its collectives' own time {per} "
            f"exceed {names.means} by {EXPLAINS:.0%} of the wait it causes: it reaches the "
            "collectives late for a reason the traces do not show (the order it launches them "
            "in, another process on its GPU)"
        )

    def _parts_text(self) -> str:
        """`; of it: host work outside operators 92%, launch / dispatch 8%` (its own report's
        host states)."""
        from gpuscope.analysis.breakdown import PART_LABELS

        total = sum(ns for _, ns in self.parts)
        where = f" ({'; '.join(self.where)})" if self.where else ""
        shown = [f"{PART_LABELS[state]} {ns / total:.0%}{where * (i == 0)}"
                 for i, (state, ns) in enumerate(self.parts[:2])
                 if ns >= 0.05 * total] if total else []  # fmt: skip
        return f"; of it: {', '.join(shown)}" if shown else ""

    def _where_text(self) -> str:
        return f" — {'; '.join(self.where)}" if self.where else ""

    def _when(self, every: str, some: str) -> str:
        if not self.steps:
            return "after its syncs" if "sync" in every else "between its launches"
        return every if self.every else some.format(k=self.steps_with, n=self.steps)

    def evidence(self) -> dict[str, Any]:
        known = self.kind != "unknown"
        return {
            "cause": self.kind,
            "cause_per_step_us": us(self.mine_ns) if known and self.steps else None,
            "cause_total_us": us(self.mine_ns) if known and not self.steps else None,
            "others_cause_us": us(self.others_ns) if known else None,
            "cause_steps": self.steps_with,
            "cause_states": {state: us(ns) for state, ns in self.parts},
            "cause_where": list(self.where),
        }


def late_cause(job: Job, r: int) -> LateCause | None:
    """Which of (host late after a sync, host late without one, more compute) exceeds the other
    ranks' mean most per step; it is the cause when that excess is at least EXPLAINS of the
    others' mean wait for the rank per step (and CAUSE_FLOOR of its step time), else "unknown";
    None when the traces cannot tell (no timeline)."""
    values = _values(job)
    if values is None or len(job.ranks) < 2:
        return None
    wall, by_kind = values
    others = np.delete(np.arange(len(job.ranks)), r)
    columns = wall.shape[1]
    wait = float(job.waits.caused_ns[r]) / len(others) / columns  # per other rank and step
    bar = max(EXPLAINS * wait, CAUSE_FLOOR * float(wall[r].mean()))
    excess = {k: float(v[r].mean() - v[others].mean()) for k, v in by_kind.items()}
    ranked = sorted(excess, key=lambda k: -excess[k])
    kind = ranked[0]
    steps = len(job.steps)
    if excess[kind] < bar or excess[kind] <= 0:
        return LateCause("unknown", 0.0, 0.0, 0, steps)
    found = _cause(job, kind, by_kind[kind], wall, r, others, steps)
    second = ranked[1] if len(ranked) > 1 else None
    if second is not None and excess[second] >= max(bar, TIE * excess[kind]):
        found = replace(found, tie=_cause(job, second, by_kind[second], wall, r, others, steps))
    return found


def _cause(job: Job, kind: str, v: np.ndarray, wall: np.ndarray, r: int, others: np.ndarray,
           steps: int) -> LateCause:  # fmt: skip
    per_step = v[r] - v[others].mean(axis=0)
    rank = job.ranks[r]
    return LateCause(
        kind=kind,
        mine_ns=float(v[r].mean()),
        others_ns=float(v[others].mean()),
        steps_with=int((per_step >= CAUSE_SHARE * wall[r]).sum()) if steps else 0,
        steps=steps,
        parts=rank.host_wait_parts if kind == "host-wait" else (),
        where=_WHERE[kind](rank) if kind in _WHERE else (),
    )


_WHERE = {
    "host-wait": lambda rank: rank.host_wait_where,
    "after-sync": lambda rank: rank.after_sync_where,
}


def _values(job: Job) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
    """(wall, {kind: values}) as (rank, step) arrays: per matched step, else one column of
    whole-trace totals (the GPU span for the wall)."""
    s = job.steps
    if len(s):
        return s.wall.astype(np.float64), {
            "after-sync": s.after_sync.astype(np.float64),
            "host-wait": s.host_wait.astype(np.float64),
            "more-compute": s.compute.astype(np.float64),
            # its collectives' own time: exposed communication less its waits for later ranks
            "slower-link": np.maximum(s.exposed - s.waited, 0).astype(np.float64),
        }
    rows = [(r.span_ns, r.after_sync_ns, r.host_wait_ns, r.compute_ns) for r in job.ranks]
    if any(v is None for row in rows for v in row):
        return None
    array = np.asarray(rows, np.float64)[:, :, None]
    return array[:, 0], {"after-sync": array[:, 1], "host-wait": array[:, 2],
                         "more-compute": array[:, 3]}  # fmt: skip
