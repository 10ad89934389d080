"""`analyze(trace) -> Analysis`: run every analysis once; `Analysis.to_dict()` is the report.

The dict (schema `gpuscope.analysis/1`) is what `--json` writes and what every renderer shows:
renderers never compute. Times are int64 ns inside and µs floats in the dict.
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuscope.analysis import causes, coldstart
from gpuscope.analysis import findings as findings_mod
from gpuscope.analysis import integrity as integrity_mod
from gpuscope.analysis._intervals import union_length
from gpuscope.analysis._unique import unique
from gpuscope.analysis.breakdown import Breakdown, breakdown, hoststate_window
from gpuscope.analysis.categories import Classification, Rules, classify, load_rules, parent_ops
from gpuscope.analysis.critical import CriticalPath, critical_path
from gpuscope.analysis.extras import Extra, extra_findings, run_extras
from gpuscope.analysis.hoststate import idle_states
from gpuscope.analysis.hotspots import (
    CopyKind,
    KernelGroup,
    category_totals,
    copies,
    kernel_groups,
    memset_totals,
)
from gpuscope.analysis.inputs import Inputs, inputs
from gpuscope.analysis.launch import LaunchStats, Links, launch_stats, link
from gpuscope.analysis.program import Program, program
from gpuscope.analysis.regions import Region, regions
from gpuscope.analysis.stepranges import StepRanges, device_timed, find_steps
from gpuscope.analysis.sync import SyncStats, sync_stats
from gpuscope.analysis.timeline import Timeline, timeline, with_states
from gpuscope.analysis.verdict import Verdict, unknown_verdict, verdict
from gpuscope.trace import Progress
from gpuscope.trace.model import I32, OP, Trace
from gpuscope.trace.registry import read_trace


@dataclass(frozen=True, repr=False)
class Analysis:
    """Everything computed about one trace. `findings` and `integrity` are plain dicts.

    Analyses the source cannot support (see `inputs`) are None: no timeline without timestamps,
    no sync or launch analysis without host API calls, no CPU time without framework operators.
    """

    trace: Trace
    inputs: Inputs
    classes: Classification
    parent_op: I32  # per row of trace.gpu: name index of the launching CPU op, -1 if none
    groups: list[KernelGroup]
    categories: dict[str, tuple[int, int]]
    copies: dict[str, CopyKind]
    memset: tuple[int, int, int]
    links: Links
    launch: LaunchStats
    sync: SyncStats | None
    timeline: Timeline | None
    cpu_busy_ns: int | None
    window_ns: int | None
    verdict: Verdict
    steps: StepRanges
    cold: coldstart.Detected
    breakdown: Breakdown | None  # the step-time breakdown (None without a timeline)
    critical: CriticalPath | None
    program: Program = field(default_factory=lambda: Program("unknown"))
    regions: list[Region] = field(default_factory=list)
    extras: dict[str, Extra] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    integrity: list[dict[str, Any]] = field(default_factory=list)
    top: int = 15

    @functools.cached_property
    def owners(self) -> Any:
        """Per row of trace.gpu: the row of trace.ops (an operator) that launched it, else -1
        (`_opinputs.owner_rows`); computed once for every analysis that needs it."""
        from gpuscope.analysis._opinputs import owner_rows

        return owner_rows(self.trace, self.links)

    @property
    def kernel_ns(self) -> int:
        return sum(max(g.total_ns, 0) for g in self.groups)

    @property
    def kernel_times_known(self) -> bool:
        return all(g.total_ns >= 0 for g in self.groups)

    @property
    def gemm_share(self) -> float | None:
        total = self.kernel_ns
        if not self.kernel_times_known:
            return None
        return self.categories["gemm"][1] / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        from gpuscope.analysis._serialize import analysis_dict

        return analysis_dict(self)

    def __repr__(self) -> str:  # the generated one printed every column: 160 k characters
        meta = self.trace.meta
        kernels = sum(g.count for g in self.groups)
        return (
            f"<Analysis {meta.path!r} ({meta.format}): {kernels:,} kernels, verdict "
            f"{self.verdict.bound}, {len(self.findings)} findings>"
        )


def analyze(trace: Trace, rules: Rules | None = None, top: int = 15) -> Analysis:
    """Analyse one trace. Example: `analyze(read_trace("trace.json.gz")).to_dict()`."""
    rules = rules or load_rules()
    available = inputs(trace)
    classes = classify(trace, rules)
    links = link(trace)
    window = _window(trace) if available.timeline else None
    sync = sync_stats(trace, links, window or 0) if available.sync else None
    launch = launch_stats(trace, links)
    host_steps = find_steps(trace)
    cold = coldstart.detect(trace, links)
    kind = program(trace)
    steps, line, parts, path = host_steps, None, None, None
    if available.timeline:
        line = timeline(trace)
    if line is not None and len(trace.gpu.start):  # a CPU-only trace has no device to wait
        steps = device_timed(trace, links, host_steps)
        idle = idle_states(trace, links, hoststate_window(trace, steps), cold.intervals())
        parts = breakdown(trace, classes, steps, idle, host_steps)
        path = critical_path(trace, parts)
        line = with_states(line, idle)
    partial = Analysis(
        trace=trace,
        inputs=available,
        classes=classes,
        parent_op=parent_ops(trace, trace.gpu.external_id),
        groups=kernel_groups(trace, classes),
        categories=category_totals(trace, classes),
        copies=copies(trace),
        memset=memset_totals(trace),
        links=links,
        launch=launch,
        sync=sync,
        timeline=line,
        cpu_busy_ns=_cpu_busy(trace) if available.cpu else None,
        window_ns=window,
        verdict=verdict(line, launch if available.launch else None, trace, parts, kind.kind)
        if line is not None and parts is not None
        else unknown_verdict(trace),
        steps=steps,
        cold=cold,
        breakdown=parts,
        critical=path,
        program=kind,
        regions=regions(trace) if trace.provides("markers") else [],
        top=top,
    )
    partial = dataclasses.replace(partial, extras=run_extras(partial))
    return dataclasses.replace(
        partial,
        findings=causes.findings(partial)
        + findings_mod.findings(partial)
        + extra_findings(partial),
        integrity=integrity_mod.integrity(partial),
    )


def analyze_file(
    path: str | Path,
    *,
    categories: str | Path | None = None,
    top: int = 15,
    progress: Progress | None = None,
) -> Analysis:
    """Read a trace file and analyse it (`gpuscope.analyze`)."""
    trace = read_trace(str(path), progress)
    return analyze(trace, load_rules(categories), top)


def _window(trace: Trace) -> int:
    """The profiled window: the profiler's own span, else first to last event of any kind."""
    if trace.meta.profiler_span is not None:
        lo, hi = trace.meta.profiler_span
        return hi - lo
    tables = [t.take(t.start >= 0) for t in (trace.gpu, trace.host, trace.ops)]
    starts = [t.start.min() for t in tables if len(t)]
    ends = [t.end.max() for t in tables if len(t)]
    return int(max(ends) - min(starts)) if starts else 0


def _cpu_busy(trace: Trace) -> int:
    """CPU operator time: the union of cpu_op intervals per thread, summed over threads."""
    ops = trace.ops
    chosen = ops.kind == OP
    total = 0
    for tid in unique(ops.tid[chosen]):
        rows = chosen & (ops.tid == tid)
        total += union_length(ops.start[rows], ops.end[rows])
    return total
