"""Each rank's verdict read with the job: what paces this rank, once the other ranks are known.

A rank's own trace cannot tell waiting from working: a collective kernel that waits for a late
peer keeps the GPU "busy", so a rank that spends its step waiting looks GPU-bound, and a rank
whose host is late looks like its own sync or launch problem. With the cross-rank waits
(`ranks.stragglers`: per collective, each member's wait for the last arriver) the verdict becomes:

1. a **late rank** (a straggler, `causes.late_ranks`) whose lateness costs the others ≥ 5 % of
   their step time is paced by what makes it late (`causes.late_cause`): `host-bound` (its host
   launches late after each step's sync, or without one) or `more-work` (its GPU computes more);
2. a rank whose waits for later ranks are ≥ 10 % of its GPU span and at least its idle time is
   `waiting` (for the rank it waited for longest): its busy collective kernels are waits, and
   its own work's utilization is (busy − waits) / span;
3. a rank whose own verdict is `gpu-bound` by utilization, but whose own work (busy − waits)
   stays under the 80 % bar, is judged by its idle time's dominant cause instead
   (`analysis.verdict`'s causes and words);
4. otherwise the rank's own verdict stands, with its waits and the others' waits for it named.

The rank's own verdict (`trace_bound`) is kept beside it: its per-trace report still says it.
"""

from __future__ import annotations

from typing import Any

from gpuscope.analysis.breakdown import part_text
from gpuscope.analysis.verdict import BOUND_BY_PART, GPU_BOUND_UTILIZATION
from gpuscope.document.units import time_ns
from gpuscope.ranks.causes import (
    late_cause,
    late_ranks,
    others,
    others_wait_share,
    step_word,
    waited_for,
)
from gpuscope.ranks.job import Job, RankVerdict
from gpuscope.ranks.summary import RankSummary

WAITING_SHARE = 0.10  # waits for later ranks over the GPU span: "waiting" from here ...
LATE_IMPACT = 0.05  # a late rank costing the others this share of their step time is paced by
NOTE_SHARE = 0.01  # waits below this share of the span are not mentioned
BOUNDS = ("waiting", "host-bound", "more-work")  # besides analysis.verdict's own


def verdicts(job: Job) -> list[RankVerdict]:
    late = late_ranks(job)
    return [_verdict(job, r, r in late) for r in range(len(job.ranks))]


def _verdict(job: Job, r: int, late: bool) -> RankVerdict:
    s = job.ranks[r]
    own = s.verdict
    trace_bound = own.bound if own is not None else None
    if s.span_ns is None or s.busy_ns is None or not s.span_ns:
        reason = own.reason if own is not None else "the trace has no device timeline"
        return RankVerdict(trace_bound or "unknown", reason, None, None, trace_bound, None, None)
    span, busy = s.span_ns, s.busy_ns
    waited = min(int(job.waits.waited_ns[r]), busy)
    base = RankVerdict(
        bound=trace_bound or "unknown",
        reason=own.reason if own is not None else "",
        cause=(own.cause or None) if own is not None else None,
        waiting_for=None,
        trace_bound=trace_bound,
        utilization=busy / span,
        own_work_utilization=(busy - waited) / span,
    )
    peer = waited_for(job, r)
    if late:
        found = _late(job, r, base)
        if found is not None:
            return found
    if waited >= WAITING_SHARE * span and waited >= span - busy and peer is not None:
        return _waiting(job, r, base, waited, peer)
    if (
        own is not None
        and own.bound == "gpu-bound"
        and base.utilization is not None
        and base.utilization >= GPU_BOUND_UTILIZATION
        and base.own_work_utilization is not None
        and base.own_work_utilization < GPU_BOUND_UTILIZATION
        and peer is not None
    ):
        return _rejudged(job, s, base, waited, peer)
    return _annotated(job, r, base, waited, peer, late)


def _late(job: Job, r: int, base: RankVerdict) -> RankVerdict | None:
    """The late rank paced by its own cause, when its lateness costs the others enough."""
    share = others_wait_share(job, r)
    cause = late_cause(job, r)
    if share < LATE_IMPACT or cause is None or cause.kind == "unknown":
        return None
    bound = "more-work" if cause.kind == "more-compute" else "host-bound"
    names = others(job, r)
    reason = (
        f"{_strip_its(cause.text(names))}; {names.wait} {time_ns(job.waits.caused_ns[r])} for it "
        f"at the collectives ({share:.1%} of {names.their} {step_word(job)}){_alone(base)}"
    )
    return RankVerdict(bound, reason, cause.kind, None, base.trace_bound, base.utilization,
                       base.own_work_utilization)  # fmt: skip


def _strip_its(text: str) -> str:
    """The cause as a verdict reason: "the host is late …" rather than "its host is late …"."""
    return "the " + text[4:] if text.startswith("its ") else text


def _waiting(job: Job, r: int, base: RankVerdict, waited: int, peer: int) -> RankVerdict:
    span = job.ranks[r].span_ns or 1
    pid = job.rank_ids[peer]
    reason = (
        f"it waits {time_ns(waited)} ({waited / span:.1%} of its GPU span) inside collective "
        f"kernels for rank {pid} to arrive: those kernels are waits, not work; its own work keeps "
        f"the GPU busy {base.own_work_utilization:.1%} of its span ({base.utilization:.1%} "
        f"counting the waits){_alone(base)}"
    )
    return RankVerdict("waiting", reason, "waiting", pid, base.trace_bound, base.utilization,
                       base.own_work_utilization)  # fmt: skip


def _rejudged(job: Job, s: RankSummary, base: RankVerdict, waited: int, peer: int) -> RankVerdict:
    """GPU-bound only thanks to its waits: judged by its idle time's dominant cause."""
    causes = s.verdict.idle_causes if s.verdict is not None else {}
    total = sum(causes.values())
    cause = max(causes, key=lambda k: causes[k]) if total else "unknown"
    share = causes.get(cause, 0) / total if total else 0.0
    reason = (
        f"the GPU is busy with its own work {base.own_work_utilization:.1%} of its span "
        f"({base.utilization:.1%} counting {time_ns(waited)} of waiting for rank "
        f"{job.rank_ids[peer]} in collectives; below {GPU_BOUND_UTILIZATION:.0%}); {share:.0%} "
        f"of its idle time: {part_text(cause)}"
    )
    return RankVerdict(BOUND_BY_PART[cause], reason, cause, None, base.trace_bound,
                       base.utilization, base.own_work_utilization)  # fmt: skip


def _annotated(
    job: Job, r: int, base: RankVerdict, waited: int, peer: int | None, late: bool
) -> RankVerdict:
    """The rank's own verdict, with its waits and the others' waits for it named."""
    span = job.ranks[r].span_ns or 1
    notes = []
    if peer is not None and waited >= NOTE_SHARE * span:
        notes.append(
            f"it also waits {time_ns(waited)} ({waited / span:.1%} of its GPU span) in "
            f"collectives for rank {job.rank_ids[peer]}"
        )
    if late:
        cause = late_cause(job, r)
        names = others(job, r)
        text = f": {cause.text(names)}" if cause is not None and cause.kind != "unknown" else ""
        notes.append(
            f"{names.wait} {time_ns(job.waits.caused_ns[r])} for it at the collectives "
            f"({others_wait_share(job, r):.1%} of {names.their} {step_word(job)}){text}"
        )
    reason = "; ".join([base.reason, *notes]) if notes else base.reason
    return RankVerdict(base.bound, reason, base.cause, None, base.trace_bound, base.utilization,
                       base.own_work_utilization)  # fmt: skip


def _alone(base: RankVerdict) -> str:
    return f" (its trace alone reads {base.trace_bound})" if base.trace_bound else ""


def label(verdict: dict[str, Any]) -> str:
    """The verdict as one short label: "waiting for rank 1", "host-bound", "gpu-bound"."""
    if verdict["bound"] == "waiting" and verdict.get("waiting_for") is not None:
        return f"waiting for rank {verdict['waiting_for']}"
    return str(verdict["bound"])
