"""What the cross-rank numbers mean: each late rank and why (one finding per late rank), steps
that are slower by wall time, load imbalance, exposed communication across the job, and what the
traces cannot tell (unaligned clocks, ranks missing from the set, traces claiming one rank). Each
message states the threshold it fired at; every number in it is in the report's tables
(`per_rank`, `steps.per_rank`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import Finding, finding, us
from gpuscope.analysis.communication import EXPOSED_INFO, EXPOSED_WARNING, KINDS, label
from gpuscope.document.units import time_ns
from gpuscope.ranks.causes import (
    LateCause,
    last_share_threshold,
    late_cause,
    late_ranks,
    others,
    others_wait_share,
    step_time,
    step_word,
)

if TYPE_CHECKING:
    from gpuscope.ranks.job import Job

WAIT_WARNING = 0.05  # the others' wait for a late rank, over their step time: warning from here
SLOWER = 0.05  # a rank's step wall time this much above the others' mean is slower ...
SLOWER_STEPS = 0.8  # ... in this share of the steps
IMBALANCE_WARNING = 0.10  # max / mean - 1 of compute across ranks
IMBALANCE_INFO = 0.05


def findings(job: Job) -> list[Finding]:
    late = late_ranks(job)
    found = [
        *(straggler(job, r) for r in late),
        slow_steps(job, late),
        imbalance(job, late),
        exposed(job),
        unaligned(job),
        partial(job),
        duplicate(job),
    ]
    return [f for f in found if f is not None]


def straggler(job: Job, r: int) -> Finding:
    """One finding per late rank: how late, what it costs the others, whether its steps are
    slower (wall time: the only "slower"), and what makes it late (`causes.late_cause`)."""
    waits = job.waits
    rid = job.rank_ids[r]
    threshold = last_share_threshold(job)
    wait_share = others_wait_share(job, r)
    late = waits.late_ns[r] / waits.last[r]
    cause = late_cause(job, r)
    walls, wall_evidence = _walls(job, r)
    names = others(job, r)
    message = (
        f"rank {rid} is late to the collectives: it arrives last at {waits.last[r]} of the "
        f"{waits.collectives[r]} collectives matched across ranks (named at ≥ {threshold:.0%}), "
        f"{time_ns(late)} after the next latest rank on average; {names.wait} "
        f"{time_ns(waits.caused_ns[r])} for it in total ({wait_share:.1%} of {names.their} "
        f"{step_word(job)}, warning at ≥ {WAIT_WARNING:.0%})."
        f"{walls}"
    )
    if cause is not None:
        message += f" Cause: {cause.text(names)}."
    action = _straggler_action(rid, cause, job, r)
    evidence = {
        "rank": rid,
        "last": int(waits.last[r]),
        "collectives": int(waits.collectives[r]),
        "late_us": us(waits.late_ns[r]),
        "others_wait_us": us(waits.caused_ns[r]),
        "others_wait_share": round(float(wait_share), 4),
        **wall_evidence,
        **(cause.evidence() if cause is not None else {}),
    }
    severity = "warning" if wait_share >= WAIT_WARNING else "info"
    return finding("rank-straggler", severity, message, action, evidence,
                   impact_ns=float(waits.caused_ns[r]), cause=_cause_class(cause))  # fmt: skip


def _straggler_action(rid: int, cause: LateCause | None, job: Job, r: int) -> str:
    """What to do about the late rank, for the cause found (the generic checklist without one)."""
    own = f"rank {rid}'s own report (`gpuscope analyze` on its trace)"
    kind = cause.kind if cause is not None else "unknown"
    if kind == "after-sync":
        return (
            f"Find the host work that follows each step's blocking sync on rank {rid} (in {own}: "
            "the host calls and operators in those gaps — data loading, logging, checkpointing, "
            "a per-step read of a device value) and move it off the step or overlap it with the "
            "GPU's work; drop the sync where nothing needs it."
        )
    if kind == "host-wait":
        return _host_wait_action(rid, own, cause)
    if kind == "more-compute":
        peer = job.rank_ids[1 if r == 0 else 0]
        return (
            f"Balance the work: rank {rid}'s GPU has more to do — uneven shards, batches or "
            "sequence lengths (pad or bucket them), or slower kernels on that rank; compare its "
            f"kernels with another rank's (`gpuscope diff` on rank {peer}'s trace and rank "
            f"{rid}'s)."
        )
    return (
        f"Look at {own} for what makes it late: if its host launches late (after a sync, or "
        "between steps), move that host work off the step (data loader workers, no per-step "
        "host sync, CPU affinity); if its GPU computes more, balance the work (sharding, uneven "
        "batches or sequence lengths); late with neither points to its launch order or link."
    )


def _host_wait_action(rid: int, own: str, cause: LateCause | None) -> str:
    """The host-wait cause, by the host state that holds most of it in the rank's own report."""
    state = cause.state if cause is not None else ""
    where = f" ({', '.join(cause.where)})" if cause is not None and cause.where else ""
    if state == "host_work":
        return (
            f"Rank {rid}'s host runs its own code with no operator open before those "
            f"launches{where}, and the other ranks' hosts do not: find that work in {own} — "
            "input loading on the training thread (more DataLoader workers, prefetching), "
            "logging, checkpointing or evaluation on this rank only, sleeps, Python garbage "
            "collection (gc.freeze()) — and move it off the step or spread it over the ranks."
        )
    if state == "launch":
        return (
            f"Rank {rid}'s host dispatches the same work more slowly than the other ranks'"
            f"{where}: a CPU shared with other processes or throttled (pin the rank's threads "
            "to its own cores: CPU affinity, fewer threads per rank), or more Python per step "
            "on this rank; CUDA graphs or torch.compile cut the dispatch on every rank."
        )
    if state == "copy_staging":
        return (
            f"Rank {rid}'s host stages pageable host↔device copies while its GPU waits{where}: "
            "copy from pinned memory (pin_memory=True in the DataLoader, .to(device, "
            "non_blocking=True))."
        )
    return (
        f"Rank {rid}'s GPU waits for its host within the step: find what its host does "
        f"before those launches{where} (in {own}) — input loading (more loader workers, "
        "prefetching), Python work between operators, a CPU shared with other processes "
        "(pin the rank's threads: CPU affinity, fewer threads per rank)."
    )


def _signed(share: float) -> str:
    """`+2.5%`, `-1.3%`, and `0.0%` for what rounds to zero (never `-0.0%`)."""
    return "0.0%" if round(share * 100, 1) == 0 else f"{share:+.1%}"


def _cause_class(cause: LateCause | None) -> str:
    if cause is not None and cause.kind == "after-sync":
        return "host-sync"
    if cause is not None and cause.kind == "host-wait":
        return "host-launch"
    return "imbalance"


def _wall_ratios(job: Job) -> np.ndarray:
    """(rank, step): the rank's step wall time over the other ranks' mean, minus 1."""
    wall = job.steps.wall.astype(np.float64)
    others = (wall.sum(axis=0)[None, :] - wall) / max(len(job.ranks) - 1, 1)
    result: np.ndarray = np.where(others > 0, wall / np.where(others > 0, others, 1) - 1, 0.0)
    return result


def _wall_ratio(job: Job, r: int) -> np.ndarray:
    result: np.ndarray = _wall_ratios(job)[r]
    return result


def _walls(job: Job, r: int) -> tuple[str, dict[str, Any]]:
    """What the step wall times say about the late rank: slower (by wall), or evened out."""
    if len(job.steps) == 0:
        return "", {}
    ratio = _wall_ratio(job, r)
    rid = job.rank_ids[r]
    evidence = {"wall_vs_others": [round(float(x), 4) for x in ratio]}
    share = float((ratio >= SLOWER).mean())
    if share >= SLOWER_STEPS:
        every = "every step" if share == 1 else f"{share:.0%} of the steps"
        text = (
            f" Its steps are {ratio.mean():.1%} slower than {others(job, r).means} in {every} "
            f"(wall time; named at ≥ {SLOWER:.0%} in ≥ {SLOWER_STEPS:.0%} of the steps)."
        )
    else:
        text = (
            f" Its step wall times are within {_signed(ratio.min())} … {_signed(ratio.max())} of "
            f"{others(job, r).means} over {len(job.steps)} steps: the waits even the steps "
            f"out, so every rank runs at rank {rid}'s pace."
        )
    return text, evidence


def slow_steps(job: Job, late: list[int]) -> Finding | None:
    """A rank whose step wall time is ≥ SLOWER above the other ranks' mean in ≥ SLOWER_STEPS of
    the steps, when it is not a late rank (whose finding says it): slower means wall time."""
    steps = job.steps
    if len(steps) < 2 or len(job.ranks) < 2:
        return None
    ratios = _wall_ratios(job)
    slower = (ratios >= SLOWER).mean(axis=1) >= SLOWER_STEPS
    slower[late] = False
    if not slower.any():
        return None
    r = int(np.argmax(np.where(slower, ratios.mean(axis=1), -np.inf)))
    ratio = ratios[r]
    rid = job.rank_ids[r]
    share = float((ratio >= SLOWER).mean())
    every = "every step" if share == 1 else f"{share:.0%} of the steps"
    mine = float(steps.wall[r].mean())
    others = float(np.delete(steps.wall, r, axis=0).mean())
    message = (
        f"rank {rid}'s steps are {ratio.mean():.1%} slower than the other ranks' mean in {every} "
        f"({len(steps)} steps, wall time; named at ≥ {SLOWER:.0%} in ≥ {SLOWER_STEPS:.0%} of "
        f"them): {time_ns(mine)} per step against {time_ns(others)}; it is not late to the "
        "collectives, so its steps do not hold the others back through them"
    )
    action = (
        f"Find what rank {rid} does more of: diff its trace against another rank's "
        "(`gpuscope diff`): uneven shards, batches or sequence lengths, a slower GPU (clocks, "
        "thermals: the power sampler's CSV), or its host (data loading) when its GPU idles."
    )
    evidence = {
        "rank": rid,
        "measured_by": "wall",
        "wall_vs_others": [round(float(x), 4) for x in ratio],
        "per_step_us": us(mine),
        "others_per_step_us": us(others),
    }
    return finding("rank-slow-steps", "warning", message, action, evidence, cause="imbalance")


def imbalance(job: Job, late: list[int] | None = None) -> Finding | None:
    """The busiest rank's compute over the mean. When another rank is the straggler for a
    reason other than its compute, the imbalance is not what paces the job: moving work off
    the busiest rank would move it onto the late one; it is said as such, as information."""
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
        f"computes {_more(share)} ({time_ns(compute[r])} against {time_ns(mean)}; "
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
    pacing = [s for s in (late or []) if s != r]
    if pacing:
        cause = late_cause(job, pacing[0])
        if cause is None or cause.kind != "more-compute":
            slow = job.rank_ids[pacing[0]]
            message += (
                f"; but rank {slow}, not rank {job.rank_ids[r]}, is the one the others wait for "
                "(see rank-straggler), for a reason other than its compute: this imbalance does "
                "not pace the job"
            )
            action = (
                f"Fix rank {slow}'s lateness first (rank-straggler); giving rank "
                f"{job.rank_ids[r]} less work now would move it onto the rank that is already "
                "late."
            )
            severity = "info"
            evidence["straggler"] = slow
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
    totals = [step_time(job, r) for r in range(len(job.ranks))]
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


def duplicate(job: Job) -> Finding | None:
    """Traces that claim the same rank: said, with every path, never silently merged."""
    if not job.duplicates:
        return None
    parts = []
    for d in job.duplicates[:10]:
        if d.same_file:
            parts.append(f"rank {d.rank} by {d.paths[0]} given {len(d.paths)} times")
        else:
            parts.append(f"rank {d.rank} by {' and '.join(d.paths)}")
    more = len(job.duplicates) - 10
    message = (
        f"{len(job.duplicates)} rank(s) are claimed by more than one trace: "
        f"{'; '.join(parts)}{f'; and {more} more' if more > 0 else ''}. Across ranks, the first "
        "trace of each rank is used; the others are reported on their own only"
    )
    action = (
        "Give each rank's trace once, from one run (`gpuscope analyze <run>/rank*/`): two runs "
        "mixed give waits and offsets that mean nothing; compare runs with `gpuscope diff`."
    )
    evidence = {
        "duplicates": [
            {"rank": d.rank, "paths": list(d.paths), "used": d.paths[0], "same_file": d.same_file}
            for d in job.duplicates
        ]
    }
    return finding("duplicate-rank", "warning", message, action, evidence)


def _list(ids: list[int]) -> str:
    shown = ", ".join(str(i) for i in ids[:10])
    return shown + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


def _more(share: float) -> str:
    """`max / mean - 1` in words: "75% more than the mean", "3.55 times the mean"."""
    return f"{share:.0%} more than the mean" if share < 1 else f"{share + 1:.3g} times the mean"
