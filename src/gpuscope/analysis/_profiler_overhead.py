"""Profiler overhead: how much of the host time a trace shows is the profiler's own.

Estimated from the trace's counts: with_stack records every Python call; the tracer costs about
PY_EVENT_NS per call on the host (measured with torch 2.11 on an H100 host: 100,000 calls of a
one-line function took 0.49 µs more each with with_stack=True than with with_stack=False), which
lands in the host time the trace shows. record_shapes adds about SHAPES_EVENT_NS per recorded
operator (an assumption, not measured). Measured on top of that estimate: the profiler's own
overhead records (CUPTI `Activity Buffer Request` and the like, `meta.extra["overhead"]`) and
the first calls they stalled (`cold_start` finds those).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis.coldwork import Record, Stall
from gpuscope.analysis.verdict import GPU_BOUND_UTILIZATION
from gpuscope.document import units as fmt
from gpuscope.trace.model import OP, PYTHON

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

PY_EVENT_NS = 500
SHAPES_EVENT_NS = 1_000
OVERHEAD_INFO_SHARE = 0.05  # estimated tracing cost + measured work in the GPU span, of the window
OVERHEAD_WARNING_SHARE = 0.15
STALL_INFO_SHARE = 0.01  # a first call stalled by the profiler by this share of the window
MENTION_SHARE = 0.01  # a tracing cost under this share of the window is not mentioned


@dataclass(frozen=True)
class Overhead:
    python_events: int
    shape_ops: int  # operators with recorded input shapes
    estimate_ns: int  # tracing cost estimated from those counts
    overhead_events: int  # the tracer's own `overhead` records
    records: dict[str, tuple[int, int]]  # the profiler's records by name: count, union ns
    stalls: list[Stall]
    measured_ns: int  # union of the profiler's records and the calls they stalled
    measured_in_span_ns: int  # ... inside the GPU's active span (what GPU numbers include)

    @property
    def total_ns(self) -> int:
        return self.estimate_ns + self.measured_ns


def measure(a: Analysis, profiler: list[Record], stalls: list[Stall]) -> Overhead:
    """The tracing cost estimated from the trace's counts, and the profiler's own records and
    the first calls they stalled, measured."""
    trace = a.trace
    ops = trace.ops
    python = int((ops.kind == PYTHON).sum())
    shapes = int(((ops.kind == OP) & (ops.input_dims >= 0)).sum())
    spans = [(r.start, r.end) for r in profiler] + [(s.start, s.end) for s in stalls]
    start = np.array([lo for lo, _ in spans], np.int64)
    end = np.array([hi for _, hi in spans], np.int64)
    merged_start, merged_end = merge(start, end)
    line = a.timeline
    in_span = 0
    if line is not None and line.devices:
        lo = np.array([min(d.first_ns for d in line.devices)])
        hi = np.array([max(d.last_ns for d in line.devices)])
        in_span = int(overlap_with(merged_start, merged_end, lo, hi)[0])
    names = sorted({r.name for r in profiler})
    return Overhead(
        python_events=python,
        shape_ops=shapes,
        estimate_ns=python * PY_EVENT_NS + shapes * SHAPES_EVENT_NS,
        overhead_events=int(trace.meta.event_counts.get("overhead", 0)),
        records={n: _count_union([r for r in profiler if r.name == n]) for n in names},
        stalls=stalls,
        measured_ns=int((merged_end - merged_start).sum()),
        measured_in_span_ns=in_span,
    )


def overhead_finding(a: Analysis, cost: Overhead, window: int) -> Finding | None:
    """Fires when the estimated tracing cost plus the measured profiler work inside the GPU's
    span is ≥ OVERHEAD_INFO_SHARE of the window, or when the profiler stalled a first call by
    ≥ STALL_INFO_SHARE of the window (that call's slowness is the tracer's, not the model's)."""
    share = (cost.estimate_ns + cost.measured_in_span_ns) / window if window else 0.0
    stalled = sum(s.excess_ns for s in cost.stalls)
    if share < OVERHEAD_INFO_SHARE and (not window or stalled / window < STALL_INFO_SHARE):
        return None
    tracing = _tracing_text(cost, window)
    message = "; ".join(tracing + _measured_text(a, cost, window))
    message += _verdict_text(a, cost.estimate_ns + cost.measured_in_span_ns)
    actions = []
    if tracing:
        actions.append(
            "Time the host in a run without with_stack and record_shapes; keep them for a "
            "separate run that attributes operators to Python lines and input shapes."
        )
    if cost.stalls:
        actions.append(
            "Start the profiler (or its active window: schedule(wait=1, warmup=1, ...)) one "
            "iteration before the one you measure, so the tracer's start-up is not in it."
        )
    action = " ".join(actions) or "Judge the host times knowing the profiler's share in them."
    severity = "warning" if share >= OVERHEAD_WARNING_SHARE else "info"
    evidence = {
        "python_events": cost.python_events,
        "shape_ops": cost.shape_ops,
        "estimate_us": us(cost.estimate_ns),
        "measured_us": us(cost.measured_ns),
        "measured_in_gpu_span_us": us(cost.measured_in_span_ns),
        "share_of_window": round(share, 4),
        "per_python_call_us": us(PY_EVENT_NS),
        "per_shape_op_us": us(SHAPES_EVENT_NS),
        "records": {n: {"count": c, "time_us": us(t)} for n, (c, t) in cost.records.items()},
        "stalled_first_calls": [stall_dict(s) for s in cost.stalls[:5]],
    }
    return finding("profiler-overhead", severity, message, action, evidence,
                   impact_ns=cost.estimate_ns + cost.measured_in_span_ns + stalled,
                   cause="profiler")  # fmt: skip


def _tracing_text(cost: Overhead, window: int) -> list[str]:
    parts = []
    if cost.python_events:
        parts.append(
            f"with_stack recorded {cost.python_events:,} Python calls (about "
            f"{PY_EVENT_NS / 1000:g} µs of tracer time each)"
        )
    if cost.shape_ops:
        parts.append(
            f"record_shapes recorded the inputs of {cost.shape_ops:,} operators (about "
            f"{SHAPES_EVENT_NS / 1000:g} µs each)"
        )
    if not parts or cost.estimate_ns < MENTION_SHARE * window:
        return []
    estimate = fmt.duration(us(cost.estimate_ns))
    return [f"{' and '.join(parts)}: an estimated {estimate} of host time"]


def _measured_text(a: Analysis, cost: Overhead, window: int) -> list[str]:
    if not cost.measured_ns:
        return []
    records = ", ".join(f"{n} ×{c:,}" for n, (c, _) in cost.records.items())
    share = cost.measured_ns / window if window else 0.0
    text = (
        f"the profiler's own work ({records}) held the host "
        f"{fmt.duration(us(cost.measured_ns))} ({share:.0%} of the window"
        + (
            ", all outside the GPU's active span: GPU utilization and the verdict do not "
            "include it)"
            if cost.measured_in_span_ns == 0
            else ")"
        )
    )
    if cost.stalls:
        first = max(cost.stalls, key=lambda s: s.excess_ns)
        what = (
            " (in a graph-replayed trace: the copy of the inputs into the graph's static "
            "buffers before a replay)"
            if "copy" in first.name and a.launch.graph_replayed
            else ""
        )
        text += (
            f": the first {first.name}{what} took {fmt.duration(us(first.end - first.start))}, "
            f"{fmt.duration(us(first.excess_ns))} more than its later calls, while the "
            f"profiler's {first.record} ran — the tracer starting up, not the model's cold start"
        )
    return [text]


def _verdict_text(a: Analysis, host_ns: int) -> str:
    """Whether a CPU-bound verdict survives taking the profiler's host time out of the gaps."""
    line = a.timeline
    if a.verdict.bound != "cpu-bound" or line is None or not line.device_span_ns or not host_ns:
        return ""
    waiting = line.gaps.attribution_ns.get("launch", 0) + line.gaps.attribution_ns.get(
        "host_work", 0
    )
    removable = min(host_ns, waiting)
    span = line.device_span_ns
    best = line.busy_ns / (span - removable) if span > removable else 1.0
    if best < GPU_BOUND_UTILIZATION:
        return (
            f". Even if all of it fell in the GPU's host-late gaps ({fmt.duration(us(waiting))}),"
            f" the GPU would be busy at most {best:.0%} of its span: the CPU-bound verdict stands,"
            " the host times are inflated"
        )
    return (
        f". Taken out of the GPU's host-late gaps ({fmt.duration(us(waiting))}), it could leave "
        f"the GPU busy up to {best:.0%} of its span (GPU-bound from "
        f"{GPU_BOUND_UTILIZATION:.0%}): the CPU-bound verdict may be the profiler's doing"
    )


def stall_dict(stall: Stall) -> dict[str, Any]:
    return {
        "name": stall.name,
        "time_us": us(stall.end - stall.start),
        "excess_us": us(stall.excess_ns),
        "during": stall.record,
    }


def _count_union(records: list[Record]) -> tuple[int, int]:
    start = np.array([r.start for r in records], np.int64)
    end = np.array([r.end for r in records], np.int64)
    merged_start, merged_end = merge(start, end)
    return len(records), int((merged_end - merged_start).sum())


def to_dict(cost: Overhead, window: int) -> dict[str, Any]:
    return {
        "python_events": cost.python_events,
        "shape_ops": cost.shape_ops,
        "estimate_us": us(cost.estimate_ns),
        "measured_us": us(cost.measured_ns),
        "measured_in_gpu_span_us": us(cost.measured_in_span_ns),
        "share": round(cost.total_ns / window, 6) if window else None,
        "overhead_events": cost.overhead_events,
        "records": {n: {"count": c, "time_us": us(t)} for n, (c, t) in cost.records.items()},
        "stalled_first_calls": [stall_dict(s) for s in cost.stalls],
    }


def facts(cost: dict[str, Any]) -> list[tuple[str, str]]:
    """The report lines of a `to_dict` part."""
    items = [
        (
            "profiler overhead",
            f"{fmt.duration(cost['estimate_us'] + cost['measured_us'])} "
            f"({fmt.percent(cost['share'])} of the window): estimated "
            f"{fmt.duration(cost['estimate_us'])} for {fmt.count(cost['python_events'])} Python "
            f"calls and {fmt.count(cost['shape_ops'])} operators with shapes, measured "
            f"{fmt.duration(cost['measured_us'])} of the profiler's own work",
        )
    ]
    for stall in cost["stalled_first_calls"][:3]:
        items.append(
            (
                "first call stalled by the profiler",
                f"{stall['name']}: {fmt.duration(stall['time_us'])} "
                f"(+{fmt.duration(stall['excess_us'])}) during {stall['during']}",
            )
        )
    return items
