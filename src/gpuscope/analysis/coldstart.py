"""Cold start and profiler overhead: is this a trace of the steady state?

The cold-start work itself — module loading, slow one-time queries, compilation, graph capture,
first-call outliers, the profiler's stalls — is found by `coldwork.detect` (the core runs it once;
this analysis reads `Analysis.cold`). On top of it, warm-up steps: leading ProfilerSteps each ≥
steps.FIRST_STEP_RATIO × the median of the steps after it (stepranges.warmup_count).

Cold-start time is the union of those intervals, or the warm-up steps' excess over the median of
the steady steps when that is larger; its share is taken of the profiled window.

Profiler overhead (`_profiler_overhead`): the tracing cost of with_stack and record_shapes
estimated from the trace's counts, and the profiler's own records and the first calls they
stalled, measured.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import advice
from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._intervals import merge
from gpuscope.analysis._profiler_overhead import Overhead, facts, measure, overhead_finding
from gpuscope.analysis._profiler_overhead import to_dict as overhead_dict
from gpuscope.analysis.coldwork import KINDS, Event, Record
from gpuscope.analysis.stepranges import complete_steps, warmup_count
from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, Facts, Section, Table, Text
from gpuscope.document.names import short_name
from gpuscope.trace.model import Trace

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NAME = "cold_start"
STEP_NUMBER = re.compile(r"ProfilerStep#(\d+)$")
COLD_WARNING_SHARE = 0.10  # cold-start time over the window: warning from here
COLD_INFO_SHARE = 0.01  # below this, nothing is said
MAX_LISTED = 8


@dataclass(frozen=True)
class WarmUp:
    names: list[str]  # the leading warm-up steps
    walls: list[int]
    median_others_ns: int  # median of the steady steps after them
    end_ns: int = -1  # where the last of them ends
    skipped: int = 0  # steps torch.profiler's schedule ran before its window (ProfilerStep#N)

    @property
    def excess_ns(self) -> int:
        return sum(w - self.median_others_ns for w in self.walls)


@dataclass(frozen=True)
class ColdStart:
    events: list[Event]  # outermost first, longest first
    names: dict[str, list[str]]  # per kind: the names of its events, longest first
    by_kind: dict[str, tuple[int, int]]  # kind -> (count, union ns)
    union_ns: int
    warmup: WarmUp | None  # set when the trace starts with warm-up steps
    window_ns: int
    overhead: Overhead

    @property
    def cold_ns(self) -> int:
        return max(self.union_ns, self.warmup.excess_ns if self.warmup else 0)

    @property
    def share(self) -> float:
        return self.cold_ns / self.window_ns if self.window_ns else 0.0


def analyse(a: Analysis) -> ColdStart | None:
    trace = a.trace
    if not a.inputs.timeline and not a.inputs.cpu:
        return None
    detected = a.cold
    found = detected.events
    warmup = _warmup(trace)
    overhead = measure(
        a, [Record(r.name, r.start, r.end) for r in detected.profiler], detected.stalls
    )
    if not found and warmup is None and not overhead.total_ns:
        return None
    window = a.window_ns or 0
    by_kind = {k: _count_union([e for e in found if e.kind == k]) for k in KINDS}
    return ColdStart(
        events=_outermost(found),
        names={k: _names([e for e in found if e.kind == k]) for k in KINDS},
        by_kind={k: v for k, v in by_kind.items() if v[0]},
        union_ns=_count_union(found)[1],
        warmup=warmup,
        window_ns=window,
        overhead=overhead,
    )


# -- first step, overhead, totals -------------------------------------------------------------


def _warmup(trace: Trace) -> WarmUp | None:
    names, lo, hi = complete_steps(trace)
    walls = [int(w) for w in hi - lo]
    count = warmup_count(walls)
    if not count:
        return None
    number = STEP_NUMBER.match(names[0])
    return WarmUp(names[:count], walls[:count], int(np.median(walls[count:])), int(hi[count - 1]),
                  int(number.group(1)) if number else 0)  # fmt: skip


def _count_union(events: list[Event]) -> tuple[int, int]:
    if not events:
        return 0, 0
    start = np.array([e.start for e in events], np.int64)
    end = np.array([e.end for e in events], np.int64)
    merged_start, merged_end = merge(start, end)
    return len(events), int((merged_end - merged_start).sum())


def _names(events: list[Event]) -> list[str]:
    ranked = sorted(events, key=lambda e: (-(e.end - e.start), e.start))
    return list(dict.fromkeys(e.name for e in ranked))[:MAX_LISTED]


def _outermost(events: list[Event]) -> list[Event]:
    """Longest first; an event lying inside one already kept is dropped (it is part of it)."""
    kept: list[Event] = []
    for event in sorted(events, key=lambda e: (-(e.end - e.start), e.start)):
        if not any(k.start <= event.start and event.end <= k.end for k in kept):
            kept.append(event)
        if len(kept) >= MAX_LISTED:
            break
    return kept


# -- findings ---------------------------------------------------------------------------------

_KIND_TEXT = {
    "loading": "module loading",
    "query": "slow device queries",
    "compile": "compilation",
    "capture": "graph capture",
    "first_call": "first-call outliers",
}


def findings(a: Analysis, result: ColdStart) -> list[Finding]:
    found = [_cold_finding(a, result), overhead_finding(a, result.overhead, result.window_ns)]
    return [f for f in found if f is not None]


def _cold_finding(a: Analysis, result: ColdStart) -> Finding | None:
    if result.share < COLD_INFO_SHARE:
        return None
    severity = "warning" if result.share >= COLD_WARNING_SHARE else "info"
    evidence = _cold_evidence(result)
    if not result.events:
        return _first_step_finding(a, result, severity, evidence)
    what = "; ".join(_kind_summary(result, k) for k in KINDS if k in result.by_kind)
    warm = _after_a_schedule(result)
    if warm is not None:  # the program was warm: the profiler's first active step
        message = (
            f"the first recorded step is slow ({fmt.duration(us(result.cold_ns))}, "
            f"{result.share:.0%} of the window): {what}{_first_step_text(result)}. The verdict "
            f"leaves {_listed(warm.names)} out."
        )
        return finding("cold-start", "info", message, _scheduled_action(warm), evidence,
                       impact_ns=result.cold_ns, cause="cold-start")  # fmt: skip
    message = (
        f"this trace includes cold-start work ({fmt.duration(us(result.cold_ns))}, "
        f"{result.share:.0%} of the window): {what}{_first_step_text(result)}. "
        f"{_unreliable(a, severity)}"
    )
    return finding("cold-start", severity, message, _cold_action(a, result), evidence,
                   impact_ns=result.cold_ns, cause="cold-start")  # fmt: skip


def _after_a_schedule(result: ColdStart) -> WarmUp | None:
    """The warm-up steps when torch.profiler's schedule already ran steps before its window
    (the first recorded step is ProfilerStep#1 or later) and every cold event is a first call
    inside those steps: what is left is the profiler's first active step, not the program's
    start-up (module loads, compilation or captures would say otherwise)."""
    warm = result.warmup
    if warm is None or warm.skipped < 1 or set(result.by_kind) - {"first_call"}:
        return None
    return warm if all(e.end <= warm.end_ns for e in result.events) else None


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{names[0]} … {names[-1]}"


def _scheduled_action(warm: WarmUp) -> str:
    return (
        f"Nothing to change in the program: the profiler's schedule already ran {warm.skipped} "
        f"step{'s' if warm.skipped > 1 else ''} before its window, so the first calls were "
        "warm; the first active step also pays the profiler starting to record operators (its "
        "CPU-side callbacks turn on there, not in the schedule's warm-up). gpuscope judges the "
        "steady steps; for totals without that step, profile one more active step and leave "
        "the first out."
    )


def _first_step_finding(
    a: Analysis, result: ColdStart, severity: str, evidence: dict[str, Any]
) -> Finding:
    warm = result.warmup
    assert warm is not None  # a share without events comes from warm-up steps
    message = (
        f"{_warmup_text(warm)}; no module loading, compilation or first-call outlier explains "
        "it (warm-up work the trace does not name: allocator growth, data-loader start, "
        "cuDNN/cuBLAS autotuning, optimizer state creation)"
    )
    if warm.skipped:  # the schedule's own steps ran first: its advice is already followed
        action = _scheduled_action(warm)
    else:
        action = (
            advice.warm_up(a.program, a.trace.meta.format) + ", and judge the steady steps only."
        )
    return finding("first-step-outlier", severity, message, action, evidence,
                   impact_ns=result.cold_ns, cause="cold-start")  # fmt: skip


def _warmup_text(warm: WarmUp) -> str:
    steps = ", ".join(
        f"{name} {fmt.duration(us(wall))}"
        for name, wall in zip(warm.names, warm.walls, strict=True)
    )
    ratio = max(warm.walls) / warm.median_others_ns if warm.median_others_ns else 0.0
    if len(warm.names) == 1:
        return f"the first step ({steps}) takes {ratio:.1f}× the median steady step " + (
            f"({fmt.duration(us(warm.median_others_ns))})"
        )
    return (
        f"the first {len(warm.names)} steps ({steps}) take up to {ratio:.1f}× the median "
        f"steady step ({fmt.duration(us(warm.median_others_ns))})"
    )


def _kind_summary(result: ColdStart, kind: str) -> str:
    count, ns = result.by_kind[kind]
    names = result.names.get(kind, [])[:2]
    named = f" ({', '.join(short_name(n, 60) for n in names)})" if names else ""
    return f"{_KIND_TEXT[kind]} {fmt.duration(us(ns))} in {count:,}{named}"


def _first_step_text(result: ColdStart) -> str:
    return f"; {_warmup_text(result.warmup)}" if result.warmup else ""


def _unreliable(a: Analysis, severity: str) -> str:
    if severity != "warning":
        return "This trace's totals include it."
    bound = a.verdict.bound
    if bound in ("cpu-bound", "sync-bound"):
        return f"Its {bound} verdict is unreliable."
    return "Its timings are not the steady state."


def _cold_action(a: Analysis, result: ColdStart) -> str:
    text = advice.warm_up(a.program, a.trace.meta.format) + "."
    if "compile" in result.by_kind and a.program.is_("pytorch"):
        text += (
            " Run the compiled model once on representative inputs before profiling "
            "(torch.compile compiles on the first call and on every recompilation)."
        )
    if "capture" in result.by_kind:
        text += f" Capture the {a.program.graphs} before the profiled window."
    if "loading" in result.by_kind and a.program.is_("pytorch", "jax", "unknown"):
        text += (
            " Module loading happens on each kernel's first launch (CUDA's lazy loading, "
            "CUDA_MODULE_LOADING=LAZY; ROCm loads code objects the same way): run one iteration "
            "before the profiled ones, or set CUDA_MODULE_LOADING=EAGER to load at start-up."
        )
    return text


def _cold_evidence(result: ColdStart) -> dict[str, Any]:
    return {
        "cold_start_us": us(result.cold_ns),
        "share_of_window": round(result.share, 4),
        "by_kind": {k: {"count": c, "time_us": us(t)} for k, (c, t) in result.by_kind.items()},
        "events": [_event_dict(e) for e in result.events[:5]],
        "warmup_steps": _warmup_dict(result.warmup),
    }


def _warmup_dict(warm: WarmUp | None) -> dict[str, Any] | None:
    if warm is None:
        return None
    return {
        "steps": [
            {"name": n, "wall_us": us(w)} for n, w in zip(warm.names, warm.walls, strict=True)
        ],
        "median_steady_us": us(warm.median_others_ns),
        "excess_us": us(warm.excess_ns),
    }


# -- report -----------------------------------------------------------------------------------


def _event_dict(event: Event) -> dict[str, Any]:
    return {
        "kind": event.kind,
        "name": event.name,
        "time_us": us(event.end - event.start),
        "excess_us": us(event.excess_ns),
    }


def to_dict(result: ColdStart) -> dict[str, Any]:
    cost = result.overhead
    return {
        "cold_us": us(result.cold_ns),
        "share": round(result.share, 6),
        "window_us": us(result.window_ns),
        "by_kind": {k: {"count": c, "time_us": us(t)} for k, (c, t) in result.by_kind.items()},
        "events": [_event_dict(e) for e in result.events],
        "warmup_steps": _warmup_dict(result.warmup),
        "profiler_overhead": overhead_dict(cost, result.window_ns),
    }


def section(part: dict[str, Any]) -> Section:
    blocks: list[Any] = [Facts(tuple(_facts(part)))]
    if part["events"]:
        blocks.append(_events_table(part["events"]))
    blocks.append(
        Text(
            "Cold start: module loading (and kernels' slow first launches), slow first device "
            "queries, compilation, graph capture and first calls ≥ 5× slower than the later ones "
            "of the same operator (same input shapes) or API call (same kernel) — and than the "
            "first call of each later step; time is the union of their intervals. Profiler "
            "overhead: an estimate from the number of Python calls and shape-recorded operators, "
            "plus the profiler's own records and the first calls they stalled (measured)."
        )
    )
    return Section("Cold start and profiler overhead", tuple(blocks))


def _facts(part: dict[str, Any]) -> list[tuple[str, str]]:
    items = [
        (
            "cold-start time",
            f"{fmt.duration(part['cold_us'])} ({fmt.percent(part['share'])} of the window)",
        ),
    ]
    items += [
        (_KIND_TEXT[k], f"{fmt.count(v['count'])}, {fmt.duration(v['time_us'])}")
        for k, v in part["by_kind"].items()
    ]
    warm = part["warmup_steps"]
    if warm:
        steps = ", ".join(f"{w['name']} {fmt.duration(w['wall_us'])}" for w in warm["steps"])
        items.append(
            (
                "warm-up steps",
                f"{steps}; steady median {fmt.duration(warm['median_steady_us'])}",
            )
        )
    items += facts(part["profiler_overhead"])
    return items


def _events_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(_KIND_TEXT[r["kind"]]),
            Cell(short_name(r["name"]), full=r["name"], code=True),
            Cell(fmt.duration(r["time_us"])),
            Cell(fmt.duration(r["excess_us"])),
        )
        for r in rows
    )
    headers = ("kind", "event", "time", "over the steady calls")
    return Table(headers, cells, (False, False, True, True), "longest cold-start events")
