"""Per-step and per-phase time: the steps of `analysis.stepranges`, and forward / backward /
optimizer inside.

A step is a `ProfilerStep#N` user range, else the stretch ending with one optimizer step
(`stepranges.find_steps`). For each: its wall time, the device busy time inside it (the union of
all device activity within the step's interval, over every device), the kernels it launched (by
the host launch time; by kernel start when a kernel has no linked launch), the time the host spent
blocked in synchronization inside it, the idle time (wall minus busy), and its time by part of the
breakdown (`analysis.breakdown`). A ProfilerStep range with no other event inside (the empty range
the profiler opens at its last `step()` call) is left out and named.

Phases come from user ranges when the step has them: `## forward ##` / `forward`, `## backward ##`
/ `backward`, `## optimizer ##` and torch's own `Optimizer.step#…` / `Optimizer.zero_grad#…`
(the union of their intervals). Otherwise from autograd: backward is the span of the
`autograd::engine::evaluate_function: …` operators (on the autograd engine's threads), forward the
span of the operators whose autograd sequence number a backward operator repeats (the operators
that built the graph backward ran), outside backward and the optimizer's ranges. A phase's GPU
busy time is the device busy time inside it.

Variance is judged over the steady steps: leading warm-up steps (each ≥ FIRST_STEP_RATIO × the
median of the steps after it, at most half of them), which cold_start reports, are left out.
When the steps left after them still get faster one after the other, the trace has no steady
state to judge and no variance is reported (cold_start says why). A step's time is its wall time,
or, when the host runs ahead of the device, its time on the device's clock (the breakdown's
steps); the slowest step is explained by the part of the breakdown that grew most.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._intervals import merge, overlap_with, take
from gpuscope.analysis._unique import unique
from gpuscope.analysis.breakdown import PART_LABELS, PARTS
from gpuscope.analysis.hoststate import closing_syncs, engine_rows, engine_threads
from gpuscope.analysis.stepranges import empty_step_names, slot, warmup_count
from gpuscope.document import units as fmt
from gpuscope.document.model import Cell, Facts, Section, Table, Text
from gpuscope.trace.model import ANNOTATION, I64, KERNEL, OP, Mask, Trace

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

NAME = "steps"
VARIANCE_CV = 0.10  # coefficient of variation of step time from which variance is reported
VARIANCE_MIN_STEPS = 3  # fewer steady steps cannot show a variance
EXCESS_WARNING = 0.05  # time above the median step, over all step time: warning from here
PHASES = ("forward", "backward", "optimizer")
_RANGES = {
    "forward": re.compile(r"^#*\s*(forward|fwd)(\s*pass)?\s*#*$", re.IGNORECASE),
    "backward": re.compile(r"^#*\s*(backward|bwd)(\s*pass)?\s*#*$", re.IGNORECASE),
    "optimizer": re.compile(
        r"^(Optimizer\.(step|zero_grad)#.*|#*\s*optimi[sz]er(\s*step)?\s*#*)$", re.IGNORECASE
    ),
}


@dataclass(frozen=True)
class Step:
    name: str
    start: int
    end: int
    gpu_busy_ns: int  # device activity inside [start, end)
    kernels: int
    sync_ns: int  # host blocked in synchronization inside the step (-1: no host API)
    device_start: int  # first start of the device work launched in the step (-1: none)
    device_end: int
    launched_ns: int  # device time of the work launched in the step
    host_ops_ns: int  # time any CPU operator ran inside the step (union over threads)
    ops: int = 0  # CPU operators that started inside the step
    parts: tuple[int, ...] = ()  # ns per breakdown part (PARTS), on the step's clock

    @property
    def wall_ns(self) -> int:
        return self.end - self.start

    @property
    def idle_ns(self) -> int:
        return self.wall_ns - self.gpu_busy_ns

    @property
    def device_ns(self) -> int:
        """From the first start to the last end of the device work the step launched."""
        return self.device_end - self.device_start if self.device_start >= 0 else -1


@dataclass(frozen=True)
class Phase:
    name: str  # forward, backward, optimizer
    source: str  # "ranges" (user ranges) or "autograd"
    steps: int  # steps (or the window) it was found in
    wall_ns: int
    gpu_busy_ns: int  # device activity inside the phase's intervals
    launched_ns: int  # device time of the work launched inside them


@dataclass(frozen=True)
class Steps:
    steps: list[Step]  # complete steps, in time order
    left_out: list[str]  # ranges with nothing inside
    warmup: int  # leading warm-up steps (see `warmup_count`)
    phases: list[Phase]
    backward_threads: list[int]
    timed_by: str  # "host": the step ranges; "device": the device's clock (host runs ahead)
    source: str = "ProfilerStep"  # where the steps come from (stepranges.StepRanges.source)

    @property
    def steady(self) -> list[Step]:
        return self.steps[self.warmup :]

    def time(self, step: Step) -> int:
        """The step's time: its wall time, or its time on the device's clock."""
        if self.timed_by == "device" and step.parts:
            return sum(step.parts)
        return step.wall_ns


# -- statistics -------------------------------------------------------------------------------


def stats(values: list[int]) -> dict[str, float]:
    """mean / median / min / max (ns) and the coefficient of variation (population std / mean)."""
    array = np.asarray(values, np.float64)
    mean = float(array.mean())
    return {
        "mean": mean,
        "median": float(np.median(array)),
        "min": float(array.min()),
        "max": float(array.max()),
        "cv": float(array.std() / mean) if mean else 0.0,
    }


# -- the analysis -----------------------------------------------------------------------------


def analyse(a: Analysis) -> Steps | None:
    trace = a.trace
    if not trace.provides("markers") or len(trace.ops) == 0:
        return None
    ranges = a.steps
    lo, hi = ranges.host_start, ranges.host_end
    steps = _steps(a, ranges.names, lo, hi)
    windows = (lo, hi) if steps else _whole(a)
    phases = _phases(a, *windows) if windows is not None else []
    if not steps and not phases:
        return None
    timed_by = "device" if ranges.source == "device" else "host"
    return Steps(
        steps=steps,
        left_out=empty_step_names(trace),
        warmup=warmup_count([s.wall_ns if timed_by == "host" else sum(s.parts) for s in steps]),
        phases=phases,
        backward_threads=engine_threads(trace),
        timed_by=timed_by,
        source=ranges.source or "ProfilerStep",
    )


def _whole(a: Analysis) -> tuple[I64, I64] | None:
    """Without steps, phases are looked for over the whole trace."""
    ops = a.trace.ops
    timed = ops.start >= 0
    if not timed.any():
        return None
    return np.array([ops.start[timed].min()]), np.array([ops.end[timed].max()])


def _busy(trace: Trace) -> tuple[I64, I64]:
    gpu = trace.gpu
    timed = gpu.start >= 0
    return merge(gpu.start[timed], gpu.end[timed])


def _steps(a: Analysis, names: list[str], lo: I64, hi: I64) -> list[Step]:
    trace = a.trace
    busy = overlap_with(*_busy(trace), lo, hi)
    sync = a.sync
    blocked = overlap_with(sync.start, sync.end, lo, hi) if sync is not None else None
    kernels = _kernels_in(a, lo, hi)
    first, last, launched = _launched_work(a, lo, hi)
    ops = trace.ops.take((trace.ops.kind == OP) & (trace.ops.start >= 0))
    host_ops = overlap_with(*merge(ops.start, ops.end), lo, hi)
    starts = np.sort(ops.start)
    counts = np.searchsorted(starts, hi) - np.searchsorted(starts, lo)
    parts = a.breakdown.ns if a.breakdown is not None else np.zeros((len(lo), 0), np.int64)
    return [
        Step(
            name=name,
            start=int(lo[i]),
            end=int(hi[i]),
            gpu_busy_ns=int(busy[i]),
            kernels=int(kernels[i]),
            sync_ns=int(blocked[i]) if blocked is not None else -1,
            device_start=int(first[i]),
            device_end=int(last[i]),
            launched_ns=int(launched[i]),
            host_ops_ns=int(host_ops[i]),
            ops=int(counts[i]),
            parts=tuple(int(v) for v in parts[i]) if len(parts) == len(lo) else (),
        )
        for i, name in enumerate(names)
    ]


def _launch_times(a: Analysis, rows: Mask) -> I64:
    """When each selected device op was launched: its host call's start, else its own start."""
    gpu = a.trace.gpu
    return take(a.trace.host.start, a.links.host_index[rows], gpu.start[rows])


def _kernels_in(a: Analysis, lo: I64, hi: I64) -> I64:
    """Kernels launched inside each [lo, hi)."""
    when = np.sort(_launch_times(a, a.trace.gpu.kind == KERNEL))
    result: I64 = np.searchsorted(when, hi, side="left") - np.searchsorted(when, lo, side="left")
    return result


def _launched_work(a: Analysis, lo: I64, hi: I64) -> tuple[I64, I64, I64]:
    """Per step: first start, last end (-1: none) and total time of the device work it launched."""
    gpu = a.trace.gpu
    timed = gpu.start >= 0
    which = slot(_launch_times(a, timed), lo, hi)
    start, end, inside = gpu.start[timed], gpu.end[timed], which >= 0
    first = np.full(len(lo), np.iinfo(np.int64).max)
    last = np.full(len(lo), -1, np.int64)
    np.minimum.at(first, which[inside], start[inside])
    np.maximum.at(last, which[inside], end[inside])
    launched = np.bincount(which[inside], weights=(end - start)[inside], minlength=len(lo))
    first[last < 0] = -1
    return first, last, launched.astype(np.int64)


# -- phases -----------------------------------------------------------------------------------


def _phases(a: Analysis, lo: I64, hi: I64) -> list[Phase]:
    trace = a.trace
    timed = trace.gpu.start >= 0
    work = (_busy(trace), _launch_times(a, timed), trace.gpu.dur[timed])
    found = []
    for phase in PHASES:
        ranges = _range_intervals(trace, phase)
        source = "ranges"
        if len(ranges[0]) == 0:
            ranges, source = _autograd_intervals(trace, phase), "autograd"
        per_step = _clip_spans(ranges, lo, hi, span=source == "autograd")
        if len(per_step[0]):
            found.append(_phase(phase, source, per_step, work))
    return found


def _phase(
    name: str, source: str, per_step: tuple[I64, I64, I64], work: tuple[Any, I64, I64]
) -> Phase:
    start, end, step = per_step
    (busy_start, busy_end), when, dur = work
    merged_start, merged_end = merge(start, end)
    inside = overlap_with(busy_start, busy_end, merged_start, merged_end)
    launched = slot(when, merged_start, merged_end) >= 0
    return Phase(
        name=name,
        source=source,
        steps=len(unique(step)),
        wall_ns=int((merged_end - merged_start).sum()),
        gpu_busy_ns=int(inside.sum()),
        launched_ns=int(dur[launched].sum()),
    )


def _range_intervals(trace: Trace, phase: str) -> tuple[I64, I64]:
    ops = trace.ops
    pattern = _RANGES[phase]
    wanted = [i for i in unique(ops.name[ops.kind == ANNOTATION]) if pattern.match(trace.names[i])]
    rows = (ops.kind == ANNOTATION) & np.isin(ops.name, wanted) & (ops.start >= 0)
    return ops.start[rows], ops.end[rows]


def _autograd_intervals(trace: Trace, phase: str) -> tuple[I64, I64]:
    """Backward: evaluate_function operators. Forward: operators whose sequence number a
    backward operator repeats, outside backward and outside the optimizer's ranges (an operator
    records the current sequence number even when it builds no graph node: `zero_grad`'s
    `aten::zero_` carries the number of the last forward operator). No optimizer phase without
    its ranges."""
    ops = trace.ops
    backward = engine_rows(trace)
    if phase == "backward":
        return ops.start[backward], ops.end[backward]
    if phase != "forward" or not backward.any():
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    seen = unique(ops.sequence[backward & (ops.sequence >= 0)])
    other_start, other_end = _range_intervals(trace, "optimizer")
    other_start = np.concatenate([ops.start[backward], other_start])
    other_end = np.concatenate([ops.end[backward], other_end])
    elsewhere_start, elsewhere_end = merge(other_start, other_end)
    covered = overlap_with(elsewhere_start, elsewhere_end, ops.start, ops.start + 1) > 0
    forward = (ops.kind == OP) & np.isin(ops.sequence, seen) & (ops.sequence >= 0) & ~covered
    return ops.start[forward], ops.end[forward]


def _clip_spans(ranges: tuple[I64, I64], lo: I64, hi: I64, span: bool) -> tuple[I64, I64, I64]:
    """Intervals clipped to the step that holds their start; with `span`, one interval per step
    from its first start to its last end (autograd operators are fragments of one phase)."""
    start, end = ranges
    which = slot(start, lo, hi)
    inside = which >= 0
    start, end, which = start[inside], end[inside], which[inside]
    end = np.minimum(end, hi[which])
    if not span or len(start) == 0:
        return start, end, which
    steps = unique(which)
    first = np.full(len(lo), np.iinfo(np.int64).max)
    last = np.full(len(lo), np.iinfo(np.int64).min)
    np.minimum.at(first, which, start)
    np.maximum.at(last, which, end)
    return first[steps], last[steps], steps


# -- findings ---------------------------------------------------------------------------------


def findings(a: Analysis, result: Steps) -> list[Finding]:
    """`step-variance`: steady step times with CV ≥ VARIANCE_CV (≥ VARIANCE_MIN_STEPS steps), a
    last step that holds the window's closing sync left out (the harness's time, not the
    program's)."""
    steady = result.steady
    closing = _closing_step(a, steady)
    if closing is not None:
        steady = [s for s in steady if s is not closing]
    if len(steady) < VARIANCE_MIN_STEPS:
        return []
    times = [result.time(s) for s in steady]
    spread = stats(times)
    if spread["cv"] < VARIANCE_CV or (result.warmup and _still_warming(times)):
        return []
    excess = sum(max(t - spread["median"], 0.0) for t in times) / sum(times)
    slowest = max(steady, key=result.time)
    fastest = min(steady, key=result.time)
    delta = _difference(result, slowest, steady)
    message = (
        f"step time ({_measure(result)}) varies: CV {spread['cv']:.0%} over {len(steady)} steps "
        f"(median {fmt.duration(us(spread['median']))}, fastest {fastest.name} "
        f"{fmt.duration(us(result.time(fastest)))}); the slowest, {slowest.name}, takes "
        f"{fmt.duration(us(result.time(slowest)))} "
        f"({result.time(slowest) / spread['median']:.2f}× the median): {_explain(delta)}"
    )
    evidence = {
        "steps": len(steady),
        "timed_by": result.timed_by,
        "cv": round(spread["cv"], 4),
        "median_us": us(spread["median"]),
        "time_above_median_share": round(excess, 4),
        "slowest": {"name": slowest.name, "time_us": us(result.time(slowest))},
        "fastest": {"name": fastest.name, "time_us": us(result.time(fastest))},
        "slowest_vs_median_us": {k: us(v) for k, v in delta.items() if "ops" not in k},
        "slowest_vs_median_ops": delta["ops"],
        "warmup_steps_left_out": result.warmup,
        "closing_step_left_out": closing.name if closing is not None else None,
    }
    severity = "warning" if excess >= EXCESS_WARNING else "info"
    above = sum(max(result.time(s) - spread["median"], 0.0) for s in steady)
    return [finding("step-variance", severity, message, _variance_action(delta), evidence,
                    impact_ns=above, cause="variance")]  # fmt: skip


def _still_warming(times: list[int]) -> bool:
    """Each step faster than the one before: a cold trace that never reached a steady state."""
    return all(later < earlier for earlier, later in itertools.pairwise(times))


def _measure(result: Steps) -> str:
    return "on the device's clock" if result.timed_by == "device" else "wall"


def _closing_step(a: Analysis, steady: list[Step]) -> Step | None:
    """The last steady step when a sync that closes the window starts inside it."""
    if not steady:
        return None
    last = steady[-1]
    starts = a.trace.host.start[closing_syncs(a.trace, a.links)]
    return last if bool(((starts >= last.start) & (starts < last.end)).any()) else None


def _difference(result: Steps, step: Step, steady: list[Step]) -> dict[str, float]:
    """How a step differs from the median of each quantity over the steady steps (ns; `ops`: a
    count): its time, each part of the breakdown, and the operators it runs."""

    def median(values: list[int]) -> float:
        return float(np.median(values))

    delta = {"time": result.time(step) - median([result.time(s) for s in steady])}
    if step.parts and all(len(s.parts) == len(step.parts) for s in steady):
        for i, part in enumerate(PARTS):
            delta[part] = step.parts[i] - median([s.parts[i] for s in steady])
    else:
        delta["gpu_busy"] = step.gpu_busy_ns - median([s.gpu_busy_ns for s in steady])
        delta["gpu_idle"] = step.idle_ns - median([s.idle_ns for s in steady])
    delta["ops"] = step.ops - median([s.ops for s in steady])
    delta["median_ops"] = median([s.ops for s in steady])
    return delta


def _grown(delta: dict[str, float]) -> list[tuple[str, float]]:
    """The parts (or busy / idle) that grew, largest first."""
    keys = [k for k in (*PARTS, "gpu_busy", "gpu_idle") if k in delta]
    return sorted(((k, delta[k]) for k in keys if delta[k] > 0), key=lambda kv: -kv[1])


def _explain(delta: dict[str, float]) -> str:
    grown = _grown(delta)[:3]
    parts = [f"{_signed(ns)} {PART_LABELS.get(k, k.replace('_', ' '))}" for k, ns in grown]
    text = ", ".join(parts) if parts else "no part grew"
    ops = delta["ops"]
    if ops:
        text += f"; {int(abs(ops)):,} {'more' if ops > 0 else 'fewer'} operators"
    else:
        text += f"; the same {int(delta['median_ops']):,} operators"
    return text + " against the median step"


def _signed(ns: float) -> str:
    return ("+" if ns >= 0 else "−") + fmt.duration(us(abs(ns)))


def _variance_action(delta: dict[str, float]) -> str:
    grown = _grown(delta)
    top = grown[0][0] if grown else ""
    if top in ("compute", "exposed_comm", "copies", "gpu_busy"):
        return (
            "That step gives the GPU more work: inputs of varying size (sequence length, batch) "
            "or periodic extra work (evaluation, gradient-accumulation boundary); bucket or pad "
            "input shapes, and profile the periodic work separately."
        )
    if top == "sync":
        return (
            "A host sync runs in some steps only: find the .item(), .cpu(), print or logging "
            "that runs every N steps and make it asynchronous or move it out of the loop."
        )
    if top == "startup":
        return (
            "That step does first-call work (a new input shape compiles or picks its algorithms "
            "again): pad or bucket input shapes, or run each shape once before measuring."
        )
    if top == "launch" and delta["ops"] <= 0.05 * max(delta["median_ops"], 1):
        return (
            "That step runs the same operators as the others, dispatched more slowly: something "
            "else held the host then (another thread or process on its cores, Python's garbage "
            "collector, a lower CPU clock); pin the process to its cores and check what else "
            "runs (gc.freeze() after setup keeps the collector off long-lived objects)."
        )
    if top == "launch":
        return (
            "The host runs more operators in that step: look for work done every N steps "
            "(logging metrics, gradient clipping, learning-rate schedules, checkpointing) and "
            "make it cheaper or move it off the step."
        )
    return (
        "The GPU waits for the host in that step, outside any operator: data loading "
        "(DataLoader workers, pin_memory, prefetching), Python garbage collection or other "
        "Python work; profile with with_stack=True to see it, move it off the step or overlap it."
    )


# -- report -----------------------------------------------------------------------------------

MAX_ROWS = 100  # steps kept in the report
SHOWN_STEPS = 20  # steps shown in the table


def to_dict(result: Steps) -> dict[str, Any]:
    steady = result.steady
    times = [result.time(s) for s in steady]
    total = sum(s.wall_ns for s in result.steps)
    return {
        "count": len(result.steps),
        "left_out": result.left_out,
        "warmup_steps": result.warmup,
        "steady_count": len(steady),
        "timed_by": result.timed_by,
        "time": _stats_dict(times) if times else None,
        "gpu_busy": _stats_dict([_busy_of(result, s) for s in steady]) if times else None,
        "slowest": _slowest(result) if times else None,
        "steps": [_step_dict(s) for s in result.steps[:MAX_ROWS]],
        "phases": [_phase_dict(p, total) for p in result.phases],
        "backward_threads": result.backward_threads,
    }


def _busy_of(result: Steps, step: Step) -> int:
    """A step's GPU work: the device time it launched when steps are timed on the device (the
    host range then holds the previous steps' work), else the device activity inside it."""
    return step.launched_ns if result.timed_by == "device" else step.gpu_busy_ns


def _stats_dict(values: list[int]) -> dict[str, float]:
    found = stats(values)
    result = {f"{k}_us": us(v) for k, v in found.items() if k != "cv"}
    result["cv"] = round(found["cv"], 6)
    return result


def _slowest(result: Steps) -> dict[str, Any]:
    slowest = max(result.steady, key=result.time)
    median = float(np.median([result.time(s) for s in result.steady]))
    return {
        "name": slowest.name,
        "time_us": us(result.time(slowest)),
        "vs_median": round(result.time(slowest) / median, 4) if median else None,
    }


def _step_dict(step: Step) -> dict[str, Any]:
    return {
        "name": step.name,
        "wall_us": us(step.wall_ns),
        "gpu_busy_us": us(step.gpu_busy_ns),
        "idle_us": us(step.idle_ns),
        "busy_share": _ratio(step.gpu_busy_ns, step.wall_ns),
        "kernels": step.kernels,
        "sync_us": us(step.sync_ns) if step.sync_ns >= 0 else None,
        "device_span_us": us(step.device_ns) if step.device_ns >= 0 else None,
        "launched_us": us(step.launched_ns),
        "host_ops_us": us(step.host_ops_ns),
    }


def _phase_dict(phase: Phase, step_total: int) -> dict[str, Any]:
    return {
        "name": phase.name,
        "source": phase.source,
        "steps": phase.steps,
        "wall_us": us(phase.wall_ns),
        "gpu_busy_us": us(phase.gpu_busy_ns),
        "busy_share": _ratio(phase.gpu_busy_ns, phase.wall_ns),
        "launched_us": us(phase.launched_ns),
        "share_of_steps": _ratio(phase.wall_ns, step_total) if step_total else None,
    }


def _ratio(part: float, whole: float) -> float:
    return round(part / whole, 6) if whole else 0.0


def section(part: dict[str, Any]) -> Section:
    blocks: list[Any] = []
    if part["count"]:
        blocks += [Facts(tuple(_facts(part))), _steps_table(part["steps"][:SHOWN_STEPS])]
    if part["phases"]:
        blocks.append(_phases_table(part["phases"]))
    blocks.append(Text(_note(part)))
    return Section("Steps and phases", tuple(blocks))


def _facts(part: dict[str, Any]) -> list[tuple[str, str]]:
    items = [("steps", _count_text(part))]
    time, slowest = part["time"], part["slowest"]
    if time:
        measure = "device span" if part["timed_by"] == "device" else "wall"
        items.append(
            (
                f"step time ({measure})",
                f"mean {fmt.duration(time['mean_us'])}, median {fmt.duration(time['median_us'])}, "
                f"min {fmt.duration(time['min_us'])}, max {fmt.duration(time['max_us'])}, "
                f"CV {fmt.percent(time['cv'])}",
            )
        )
    if slowest:
        items.append(
            (
                "slowest",
                f"{slowest['name']}: {fmt.duration(slowest['time_us'])} "
                f"({fmt.count(slowest['vs_median'])}× the median)",
            )
        )
    if part["backward_threads"]:
        items.append(("autograd threads", ", ".join(str(t) for t in part["backward_threads"])))
    return items


def _count_text(part: dict[str, Any]) -> str:
    text = fmt.count(part["count"])
    if part["warmup_steps"]:
        text += (
            f"; the first {fmt.count(part['warmup_steps'])} are warm-up (cold start), left out "
            "of the statistics"
        )
    if part["left_out"]:
        text += f"; empty ranges left out: {', '.join(part['left_out'])}"
    return text


def _steps_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(r["name"], code=True),
            Cell(fmt.duration(r["wall_us"])),
            Cell(fmt.duration(r["gpu_busy_us"])),
            Cell(fmt.percent(r["busy_share"])),
            Cell(fmt.duration(r["idle_us"])),
            Cell(fmt.count(r["kernels"])),
            Cell(fmt.duration(r["sync_us"])),
            Cell(fmt.duration(r["device_span_us"])),
        )
        for r in rows
    )
    headers = (
        "step",
        "wall",
        "GPU busy",
        "busy share",
        "GPU idle",
        "kernels",
        "host sync",
        "device span",
    )
    return Table(headers, cells, (False,) + (True,) * 7, "per step")


def _phases_table(rows: list[dict[str, Any]]) -> Table:
    cells = tuple(
        (
            Cell(r["name"]),
            Cell("user ranges" if r["source"] == "ranges" else "autograd"),
            Cell(fmt.count(r["steps"])),
            Cell(fmt.duration(r["wall_us"])),
            Cell(fmt.percent(r["share_of_steps"])),
            Cell(fmt.duration(r["gpu_busy_us"])),
            Cell(fmt.percent(r["busy_share"])),
            Cell(fmt.duration(r["launched_us"])),
        )
        for r in rows
    )
    headers = (
        "phase",
        "from",
        "steps",
        "time",
        "share of steps",
        "GPU busy inside",
        "busy share",
        "GPU time launched",
    )
    return Table(headers, cells, (False, False) + (True,) * 6, "phases")


def _note(part: dict[str, Any]) -> str:
    text = (
        "Steps are ProfilerStep#N ranges: GPU busy = device activity (union over devices) inside "
        "the range; kernels, device span and GPU time launched count the work launched inside "
        "it. Phases come from user ranges (## forward ##, Optimizer.step#…) or, without them, "
        "from autograd (backward: the autograd engine's evaluate_function operators; forward: "
        "the operators whose sequence numbers backward repeats)."
    )
    if part["timed_by"] == "device":
        text += (
            " GPU-bound: the host runs ahead and its ranges measure the launch queue, so step "
            "statistics use the device span of each step's work."
        )
    if not part["count"]:
        text += " This trace has no ProfilerStep ranges: phases are over the whole trace."
    return text
