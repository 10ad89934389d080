"""`to_dict(job)`: the cross-rank report as plain data (µs floats, shares 0..1, null = unknown).

Schema `gpuscope.ranks/1`, under the key `"ranks"` of a `gpuscope.analysis-set/1` document
(docs/ranks.md lists every key).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from gpuscope.analysis import us
from gpuscope.analysis.communication import KINDS
from gpuscope.ranks.job import Job
from gpuscope.ranks.summary import RankSummary
from gpuscope.schemas import RANKS as SCHEMA

WORST = 10  # collectives listed by the others' wait


def us_or_none(ns: float | None) -> float | None:
    return None if ns is None else us(ns)


def to_dict(job: Job) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "world_size": job.world_size,
        "ranks_analysed": len(job.ranks),
        "hosts": sorted({r.host for r in job.ranks if r.host}),
        "clock": _clock(job),
        "per_rank": [_rank(job, i, s) for i, s in enumerate(job.ranks)],
        "imbalance": _imbalance(job),
        "steps": _steps(job),
        "collectives": _collectives(job),
        "bandwidth": [_bandwidth(row) for row in job.bandwidth],
        "findings": [f.to_dict() for f in job.findings],
    }


def _percentiles(values: np.ndarray) -> dict[str, float] | None:
    if len(values) == 0:
        return None
    return {
        "p50_us": us(float(np.percentile(values, 50))),
        "p90_us": us(float(np.percentile(values, 90))),
        "max_us": us(float(values.max())),
    }


def _clock(job: Job) -> dict[str, Any]:
    offsets = [
        {
            "rank": job.rank_ids[i],
            "offset_us": us_or_none(o.offset_ns),
            "aligned_against": job.rank_ids[o.against] if o.against is not None else None,
            "support": o.support,
        }
        for i, o in enumerate(job.offsets)
    ]
    known = [o.offset_ns for o in job.offsets if o.offset_ns is not None]
    return {
        "reference_rank": job.rank_ids[0],
        "aligned_on": "collective ends",
        "tolerance_us": us(job.tolerance_ns),
        "offsets": offsets,
        "unaligned_ranks": [job.rank_ids[i] for i in range(len(job.ranks)) if not job.aligned(i)],
        "spread_of_offsets_us": us(max(known) - min(known)) if known else None,
        "residual": _percentiles(job.end_spread_ns),
    }


def _rank(job: Job, i: int, s: RankSummary) -> dict[str, Any]:
    waits = job.waits
    steps = job.steps
    return {
        "rank": job.rank_ids[i],
        "host": s.host,
        "path": s.path,
        "format": s.format,
        "devices": list(s.devices),
        "span_us": us_or_none(s.span_ns),
        "busy_us": us_or_none(s.busy_ns),
        "idle_us": us_or_none(s.idle_ns),
        "compute_us": us_or_none(s.compute_ns),
        "communication_us": us_or_none(s.comm_ns),
        "exposed_communication_us": us_or_none(s.exposed_ns),
        "exposed_share_of_span": _share(s.exposed_ns, s.span_ns),
        "calls": len(s.calls),
        "step_mean_us": us(float(steps.wall[i].mean())) if len(steps) else None,
        "collectives_aligned": int(waits.collectives[i]),
        "last": int(waits.last[i]),
        "late_us": us(waits.late_ns[i]),
        "others_wait_us": us(waits.caused_ns[i]),
        "waited_us": us(waits.waited_ns[i]),
        "after_sync_us": us_or_none(s.after_sync_ns),
        "host_wait_us": us_or_none(s.host_wait_ns),
        "verdict": job.verdicts[i].to_dict() if job.verdicts else None,
    }


def _share(part: int | None, whole: int | None) -> float | None:
    if part is None or not whole:
        return None
    return round(part / whole, 4)


def _imbalance(job: Job) -> dict[str, Any]:
    def spread(values: list[int | None]) -> dict[str, Any] | None:
        if any(v is None for v in values) or not values:
            return None
        array = np.asarray(values, np.float64)
        mean = float(array.mean())
        top = int(np.argmax(array))
        return {
            "max_over_mean": round(float(array.max()) / mean - 1, 4) if mean else None,
            "max_rank": job.rank_ids[top],
            "max_us": us(float(array.max())),
            "mean_us": us(mean),
            "min_us": us(float(array.min())),
        }

    return {
        "compute": spread([r.compute_ns for r in job.ranks]),
        "busy": spread([r.busy_ns for r in job.ranks]),
        "communication": spread([r.comm_ns for r in job.ranks]),
    }


def _steps(job: Job) -> dict[str, Any] | None:
    s = job.steps
    if not len(s):
        return None
    columns = {"wall": s.wall, "busy": s.busy, "compute": s.compute, "communication": s.comm,
               "exposed": s.exposed, "idle": s.idle, "waited": s.waited,
               "working": s.working, "after_sync": s.after_sync,
               "host_wait": s.host_wait}  # fmt: skip
    return {
        "names": list(s.names),
        "matched_by": s.matched_by,
        "per_rank": [
            {
                "rank": job.rank_ids[i],
                **{f"{k}_us": [us(v) for v in c[i]] for k, c in columns.items()},
            }
            for i in range(len(job.ranks))
        ],
        "most_compute_rank": [job.rank_ids[int(r)] for r in s.most_compute()],
        "compute_imbalance": [round(float(x), 4) for x in s.imbalance()],
    }


def _collectives(job: Job) -> dict[str, Any]:
    a = job.arrivals
    members = job.matching.members()
    calls = sum(len(r.calls) for r in job.ranks)
    matched_calls = int(a.present.sum()) if len(a) else 0
    return {
        "matched": len(a),
        "calls": calls,
        "calls_unmatched": calls - matched_calls,
        "single_rank_collectives": int((members == 1).sum()),
        "skew": _percentiles(a.skew_ns.astype(np.float64)),
        "wait_total_us": us(float(a.wait_ns.sum())) if len(a) else 0.0,
        "by_kind": _by_kind(job),
        "worst": _worst(job),
    }


def _by_kind(job: Job) -> list[dict[str, Any]]:
    a = job.arrivals
    keys = job.matching.key[a.index]
    kinds = np.asarray([KINDS.index(job.key_of[int(k)][1]) for k in keys], np.int64)
    result = []
    for kind in np.unique(kinds):
        mine = kinds == kind
        result.append(
            {
                "kind": KINDS[int(kind)],
                "count": int(mine.sum()),
                "wait_us": us(float(a.wait_ns[mine].sum())),
                "skew": _percentiles(a.skew_ns[mine].astype(np.float64)),
                "transfer": _percentiles(a.transfer_ns[mine].astype(np.float64)),
                "last_rank_counts": {
                    str(job.rank_ids[int(r)]): int(n)
                    for r, n in zip(*np.unique(a.last[mine], return_counts=True), strict=True)
                },
            }
        )
    return sorted(result, key=lambda r: -r["wait_us"])


def _worst(job: Job) -> list[dict[str, Any]]:
    a = job.arrivals
    order = np.argsort(-a.wait_ns, kind="stable")[:WORST]
    result = []
    for i in order:
        group, kind, size = job.key_of[int(job.matching.key[a.index[i]])]
        last = int(a.last[i])
        row = int(job.matching.rows[a.index[i], last])
        step = int(job.ranks[last].calls.step[row])
        result.append(
            {
                "kind": kind,
                "group": group,
                "bytes": size if size >= 0 else None,
                "members": int(a.present[i].sum()),
                "last_rank": job.rank_ids[last],
                "skew_us": us(float(a.skew_ns[i])),
                "late_us": us(float(a.last_ns[i] - a.second_ns[i])),
                "wait_us": us(float(a.wait_ns[i])),
                "transfer_us": us(float(a.transfer_ns[i])),
                "step": job.ranks[last].steps.names[step] if step >= 0 else None,
            }
        )
    return result


def _bandwidth(row: Any) -> dict[str, Any]:
    return {
        "kind": row.kind,
        "bytes": row.bytes,
        "group_size": row.group_size,
        "count": row.count,
        "time_p50_us": us(row.time_p50_ns),
        "algbw_gbs": round(row.algbw_gbs, 3),
        "busbw_gbs": round(row.busbw_gbs, 3) if row.busbw_gbs is not None else None,
        "busbw_best_gbs": round(row.busbw_best_gbs, 3) if row.busbw_best_gbs is not None else None,
    }
