"""What the cross-rank numbers mean: the late rank and why, slower steps, load imbalance,
exposed communication across the job, and what the traces cannot tell (unaligned clocks, ranks
missing from the set). Each message states the threshold it fired at.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import Finding, finding, us
from gpuscope.analysis.communication import KINDS, label
from gpuscope.document.units import time_ns

if TYPE_CHECKING:
    from gpuscope.ranks.job import Job

MIN_COLLECTIVES = 3  # aligned collectives before a straggler is named
LAST_SHARE = 0.5  # a rank last at this share of its collectives is the straggler ...
LAST_SHARE_PAIR = 0.75  # ... with two ranks (one of them is always last)
WAIT_WARNING = 0.05  # the others' wait for it, over their step time: warning from here
SLOWER = 0.05  # a rank's compute per step this much above the others' mean is slower
SLOWER_STEPS = 0.8  # ... in this share of the steps
IMBALANCE_WARNING = 0.10  # max / mean - 1 of compute across ranks
IMBALANCE_INFO = 0.05
EXPOSED_WARNING = 0.10  # exposed communication over step time, mean over ranks
EXPOSED_INFO = 0.03
CAUSE_SHARE = 0.05  # a difference in compute or idle per step worth naming as the cause


def findings(job: Job) -> list[Finding]:
    found = [
        straggler(job),
        slow_steps(job),
        imbalance(job),
        exposed(job),
        unaligned(job),
        partial(job),
    ]
    return [f for f in found if f is not None]


def _step_time(job: Job, r: int) -> int:
    """A rank's time in the matched steps, else its GPU span."""
    if len(job.steps):
        return int(job.steps.wall[r].sum())
    return int(job.ranks[r].span_ns or 0)


def straggler(job: Job) -> Finding | None:
    waits = job.waits
    ranks = len(job.ranks)
    threshold = LAST_SHARE_PAIR if ranks == 2 else LAST_SHARE
    share = np.where(waits.collectives > 0, waits.last / np.maximum(waits.collectives, 1), 0)
    eligible = (waits.last >= MIN_COLLECTIVES) & (share >= threshold)
    if not eligible.any():
        return None
    r = int(np.argmax(np.where(eligible, waits.caused_ns, -1)))
    rid = job.rank_ids[r]
    others = [i for i in range(ranks) if i != r]
    others_time = sum(_step_time(job, i) for i in others)
    wait_share = waits.caused_ns[r] / others_time if others_time else 0.0
    late = waits.late_ns[r] / waits.last[r]
    cause, cause_evidence = _cause(job, r)
    message = (
        f"rank {rid} arrives last at {waits.last[r]} of the {waits.collectives[r]} collectives "
        f"matched across ranks (named at ≥ {threshold:.0%}), {time_ns(late)} after the next latest "
        f"rank on average; the other ranks wait {time_ns(waits.caused_ns[r])} for it in total "
        f"({wait_share:.1%} of their {'step time' if len(job.steps) else 'GPU span'}, warning "
        f"at ≥ {WAIT_WARNING:.0%}). {cause}"
    )
    action = (
        f"Compare rank {rid}'s trace with another rank's (`gpuscope analyze` on both): balance "
        "the work if it computes more (sharding, uneven batches or sequence lengths); if its "
        "GPU idles, speed up its host side (data loader workers, CPU affinity, no "
        "synchronising calls); a rank late with neither points to its launch order or link."
    )
    evidence = {
        "rank": rid,
        "last": int(waits.last[r]),
        "collectives": int(waits.collectives[r]),
        "late_us": us(waits.late_ns[r]),
        "others_wait_us": us(waits.caused_ns[r]),
        "others_wait_share": round(float(wait_share), 4),
        **cause_evidence,
    }
    severity = "warning" if wait_share >= WAIT_WARNING else "info"
    return finding("rank-straggler", severity, message, action, evidence,
                   impact_ns=float(waits.caused_ns[r]), cause="imbalance")  # fmt: skip


def _cause(job: Job, r: int) -> tuple[str, dict[str, Any]]:
    """Does the late rank compute more, or does its GPU idle more (its host holds it back)?"""
    per_step = _per_step(job)
    if per_step is None:
        return "", {}
    compute, idle, wall = per_step
    others = np.delete(np.arange(len(job.ranks)), r)
    c_other, i_other = compute[others].mean(), idle[others].mean()
    more = compute[r] / c_other - 1 if c_other else 0.0
    idler = (idle[r] - i_other) / wall[r] if wall[r] else 0.0
    evidence = {
        "compute_per_step_us": us(compute[r]),
        "others_compute_per_step_us": us(c_other),
        "idle_per_step_us": us(idle[r]),
        "others_idle_per_step_us": us(i_other),
    }
    if more >= CAUSE_SHARE and more * compute[r] >= idler * wall[r]:
        text = (
            f"Its GPU computes {more:.0%} longer per step than the other ranks' mean "
            f"({time_ns(compute[r])} against {time_ns(c_other)}): it has more work, or slower "
            "kernels."
        )
    elif idler >= CAUSE_SHARE:
        text = (
            f"Its GPU idles {time_ns(idle[r] - i_other)} longer per step than the others' "
            f"({idler:.0%} of its step): its host holds it back (data loading, Python, "
            "synchronisation; see the gaps in its own report)."
        )
    else:
        text = (
            f"Neither its compute nor its GPU idle time per step differs by {CAUSE_SHARE:.0%} "
            "from the others': it reaches the collectives late for another reason (the order "
            "it launches them in, a slower link)."
        )
    return text, evidence


def _per_step(job: Job) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Per rank: mean compute, idle and wall per matched step (else over the whole trace)."""
    if len(job.steps):
        s = job.steps
        return s.compute.mean(axis=1), s.idle.mean(axis=1), s.wall.mean(axis=1)
    values = [(r.compute_ns, r.idle_ns, r.span_ns) for r in job.ranks]
    if any(v is None for row in values for v in row):
        return None
    array = np.asarray(values, np.float64)
    return array[:, 0], array[:, 1], array[:, 2]


def slow_steps(job: Job) -> Finding | None:
    """A rank slower in most steps: by the time its own work takes (step time minus its waits
    for later ranks), else by its compute (a partial set of ranks hides some of the waits)."""
    steps = job.steps
    if len(steps) < 2 or len(job.ranks) < 2:
        return None
    for metric, values in (("working", steps.working), ("compute", steps.compute)):
        found = _slower(values.astype(np.float64))
        if found is not None:
            return _slow_finding(job, metric, *found)
    return None


def _slower(values: np.ndarray) -> tuple[int, np.ndarray, np.ndarray] | None:
    """(rank index, its ratio to the others' mean per step, the others' mean per step)."""
    ranks = values.shape[0]
    others = (values.sum(axis=0)[None, :] - values) / (ranks - 1)
    ratio = np.where(others > 0, values / np.where(others > 0, others, 1) - 1, 0.0)
    slower = (ratio >= SLOWER).mean(axis=1)
    r = int(np.argmax(np.where(slower >= SLOWER_STEPS, ratio.mean(axis=1), -np.inf)))
    return (r, ratio[r], others[r]) if slower[r] >= SLOWER_STEPS else None


def _slow_finding(job: Job, metric: str, r: int, ratio: np.ndarray, others: np.ndarray) -> Finding:
    rid = job.rank_ids[r]
    steps = job.steps
    share = float((ratio >= SLOWER).mean())
    every = "every step" if share == 1 else f"{share:.0%} of the steps"
    mine = (steps.working if metric == "working" else steps.compute)[r].mean()
    what = (
        "its own work (step time minus its waits for other ranks) takes"
        if metric == "working"
        else "its GPU computes"
    )
    cause, cause_evidence = _cause(job, r) if metric == "working" else ("", {})
    message = (
        f"rank {rid} is {ratio.mean():.0%} slower in {every} ({len(steps)} steps; named at "
        f"≥ {SLOWER:.0%} in ≥ {SLOWER_STEPS:.0%} of them): {what} {time_ns(mine)} per step "
        f"against {time_ns(others.mean())} on the other ranks' mean, and the collectives wait for "
        f"it. {cause}"
    ).rstrip()
    action = (
        f"Find what rank {rid} does more of: diff its trace against another rank's "
        "(`gpuscope diff`): uneven shards, batches or sequence lengths, a slower GPU (clocks, "
        "thermals: the power sampler's CSV), or its host (data loading) when its GPU idles."
    )
    evidence = {
        "rank": rid,
        "measured_by": metric,
        "slower_share_per_step": [round(float(x), 4) for x in ratio],
        "per_step_us": us(mine),
        "others_per_step_us": us(others.mean()),
        **cause_evidence,
    }
    return finding("rank-slow-steps", "warning", message, action, evidence, cause="imbalance")


def imbalance(job: Job) -> Finding | None:
    values = [r.compute_ns for r in job.ranks]
    if len(values) < 2 or any(v is None for v in values):
        return None
    compute = np.asarray(values, np.float64)
    mean = compute.mean()
    if mean <= 0:
        return None
    share = compute.max() / mean - 1
    if share < IMBALANCE_INFO:
        return None
    r = int(np.argmax(compute))
    message = (
        f"compute is imbalanced across the {len(job.ranks)} ranks: rank {job.rank_ids[r]} "
        f"computes {share:.0%} more than the mean ({time_ns(compute[r])} against {time_ns(mean)}; "
        f"warning at ≥ {IMBALANCE_WARNING:.0%}, reported at ≥ {IMBALANCE_INFO:.0%}); each "
        "synchronising collective waits for the busiest rank"
    )
    action = (
        "Even out the work per rank: shard parameters, embeddings and data evenly (pad or "
        "bucket variable-length inputs), or give the busiest rank less."
    )
    evidence = {
        "rank": job.rank_ids[r],
        "imbalance": round(float(share), 4),
        "compute_us": [us(v) for v in compute],
    }
    severity = "warning" if share >= IMBALANCE_WARNING else "info"
    return finding("load-imbalance", severity, message, action, evidence,
                   impact_ns=float(compute.max() - mean), cause="imbalance")  # fmt: skip


def exposed(job: Job) -> Finding | None:
    share, by_kind, what = _exposed_shares(job)
    if share is None or share < EXPOSED_INFO or not by_kind:
        return None
    kind, kind_share = max(by_kind.items(), key=lambda kv: kv[1])
    waited = _waiting_exposed(job)
    message = (
        f"{label(KINDS[kind])} exposed {kind_share:.0%} of {what} (communication with no "
        f"compute kernel on the GPU, mean over {len(job.ranks)} ranks; every collective: "
        f"{share:.0%}; warning at ≥ {EXPOSED_WARNING:.0%}, reported at ≥ {EXPOSED_INFO:.0%})"
    )
    if waited:
        message += (
            f"; up to {time_ns(waited / len(job.ranks))} of it per rank is waiting for a later "
            "rank (see rank-straggler)"
        )
    evidence = {
        "exposed_share": round(share, 4),
        "by_kind": {KINDS[k]: round(v, 4) for k, v in by_kind.items()},
        "waiting_in_exposed_us_per_rank": us(waited / len(job.ranks)),
    }
    severity = "warning" if share >= EXPOSED_WARNING else "info"
    return finding("exposed-communication", severity, message, _overlap_action(kind), evidence,
                   cause="communication")  # fmt: skip


def _exposed_shares(job: Job) -> tuple[float | None, dict[int, float], str]:
    """Exposed communication over step time (else span), mean over ranks; and per kind."""
    in_steps = len(job.steps) > 0
    totals = [_step_time(job, r) for r in range(len(job.ranks))]
    if not all(totals):
        return None, {}, ""
    if in_steps:
        shares = job.steps.exposed.sum(axis=1) / np.asarray(totals, np.float64)
    else:
        shares = np.asarray(
            [(r.exposed_ns or 0) / t for r, t in zip(job.ranks, totals, strict=True)]
        )
    per_kind: dict[int, float] = {}
    for summary, total in zip(job.ranks, totals, strict=True):
        calls = summary.calls
        counted = calls.step >= 0 if in_steps else np.ones(len(calls), bool)
        for kind in np.unique(calls.kind[counted]):
            mine = counted & (calls.kind == kind)
            part = float(calls.exposed[mine].sum()) / total / len(job.ranks)
            per_kind[int(kind)] = per_kind.get(int(kind), 0.0) + part
    return float(shares.mean()), per_kind, "step time" if in_steps else "the GPU span"


def _waiting_exposed(job: Job) -> float:
    """Sum over ranks and aligned calls of min(wait, the call's exposed time): an upper bound
    of the exposed time spent waiting for a later rank."""
    total = 0.0
    rows = job.matching.rows[job.arrivals.index]
    for r, summary in enumerate(job.ranks):
        mine = job.arrivals.present[:, r]
        exposed = summary.calls.exposed[rows[mine, r]]
        total += float(np.minimum(job.arrivals.waits[mine, r], exposed).sum())
    return total


def _overlap_action(kind: int) -> str:
    name = KINDS[kind]
    if name == "all_reduce":
        return (
            "Overlap the gradient all-reduce with backward (DDP: smaller bucket_cap_mb so the "
            "first buckets start earlier, gradient_as_bucket_view; no sync inside backward), "
            "and fix a straggler first: waiting for a late rank is exposed too."
        )
    if name in ("all_gather", "reduce_scatter"):
        return (
            "Prefetch: FSDP forward_prefetch / backward_prefetch=BACKWARD_PRE, and "
            "limit_all_gathers so the next layer's all-gather runs under this layer's compute."
        )
    if name == "all_to_all":
        return (
            "Pipeline the all-to-all with compute of another micro-batch (as TorchRec's train "
            "pipeline does), or shrink it (fewer, larger features per rank)."
        )
    return "Issue it on a side stream early enough that compute runs beside it."


def unaligned(job: Job) -> Finding | None:
    lost = [
        job.rank_ids[r]
        for r, summary in enumerate(job.ranks)
        if len(summary.calls) and not job.aligned(r)
    ]
    none = [job.rank_ids[r] for r, s in enumerate(job.ranks) if not len(s.calls)]
    if not lost and not none:
        return None
    parts = []
    if lost:
        parts.append(
            f"the clocks of rank(s) {_list(lost)} cannot be aligned with the others: fewer "
            "than 2 of their collectives end together with another rank's (different process "
            "groups, or profiling windows that do not overlap); no straggler is named among them"
        )
    if none:
        parts.append(f"rank(s) {_list(none)} recorded no collective")
    action = (
        "Profile the same steps on every rank (torch.profiler schedule with the same wait / "
        "warmup / active on each), with the communication kernels recorded."
    )
    evidence = {"unaligned": lost, "without_collectives": none}
    return finding("ranks-unaligned", "warning", "; ".join(parts), action, evidence)


def partial(job: Job) -> Finding | None:
    world = job.world_size
    if world is None or world <= len(job.ranks):
        return None
    message = (
        f"{len(job.ranks)} of the job's {world} ranks were analysed: a straggler among the "
        "others, and collectives of groups none of these ranks is in, are not visible"
    )
    action = "Analyse every rank's trace together (`gpuscope analyze rank*/`) to see them all."
    evidence = {"ranks": job.rank_ids, "world_size": world}
    return finding("ranks-partial", "info", message, action, evidence)


def _list(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:10])
    return shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
