"""`analyze(trace) -> Analysis`: run every analysis once, in order — the core ones, then the
extra analyses (`extras`), then the findings and integrity flags that read them all.
`Analysis.to_dict()` is the report.

    >>> analyze(read_trace("trace.json.gz")).to_dict()["verdict"]["bound"]   # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from gpuscope.analysis import causes, coldwork
from gpuscope.analysis import integrity as integrity_mod
from gpuscope.analysis import rules as rules_mod
from gpuscope.analysis._intervals import union_length
from gpuscope.analysis._unique import unique
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.breakdown import breakdown, hoststate_window
from gpuscope.analysis.categories import Rules, classify, load_rules, parent_ops
from gpuscope.analysis.critical import critical_path
from gpuscope.analysis.extras import extra_findings, run_extras
from gpuscope.analysis.hoststate import idle_states
from gpuscope.analysis.hotspots import category_totals, copies, kernel_groups, memset_totals
from gpuscope.analysis.inputs import inputs
from gpuscope.analysis.launch import launch_stats, link
from gpuscope.analysis.program import program
from gpuscope.analysis.regions import regions
from gpuscope.analysis.stepranges import device_timed, find_steps
from gpuscope.analysis.sync import sync_stats
from gpuscope.analysis.timeline import timeline, with_states
from gpuscope.analysis.verdict import unknown_verdict, verdict
from gpuscope.trace import Progress
from gpuscope.trace.model import OP, Trace
from gpuscope.trace.registry import read_trace


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
    cold = coldwork.detect(trace, links)
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
        findings=causes.findings(partial) + rules_mod.findings(partial) + extra_findings(partial),
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
