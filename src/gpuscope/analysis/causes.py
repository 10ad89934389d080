"""Causes: one finding for each part of the step-time breakdown that costs time, read off the one
model (host states → breakdown → critical path), never off one fact alone.

Each finding's cause is a part of the breakdown with its time over the judged steps (the steady
steps, else the device's active span) and its what-if bound from the critical path (`at most`:
what removing it could save). Its action is chosen by the part × the kind of program
(`analysis.program`) × what the trace already shows, and never contradicts it:

- launch / dispatch: CUDA/HIP graphs and fusion only for a step without syncs (a step that
  syncs cannot be captured: its syncs go first); `mode="reduce-overhead"` for a compiled step
  (and compiling the optimizer step when its launches are outside the compiled code); the host
  between replays when the kernels already replay from graphs; the serving engine's graph
  options for vLLM / SGLang; each runtime's own words for JAX, llama.cpp, Julia, C++;
- host work outside operators: the input pipeline (the DataLoader's workers by what the trace
  shows of them), the Python frames or annotations that hold it — never graphs;
- sync wait: the operators that sync, how often per step, "at most once per step", and the
  bound of removing them alone (the host's own dispatch then sets the pace);
- copies and copy staging: achieved bandwidth against the host link's, pageable against pinned;
- queued (dependency), host late (no host timeline): what waited and how to see more.

Start-up time is the cold-start analysis's (`coldstart`); compute, communication, kernel
efficiency and patterns are their analyses' (efficiency, communication, patterns).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np

from gpuscope.analysis import advice
from gpuscope.analysis._finding import Finding, finding, us
from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis._nesting import Nesting, PythonLines
from gpuscope.analysis._unique import unique
from gpuscope.analysis.breakdown import Breakdown
from gpuscope.analysis.hoststate import (
    FRAMEWORK_RANGES,
    STATES,
    blocking_calls,
    closing_syncs,
    state_text,
)
from gpuscope.analysis.hotspots import migrations
from gpuscope.analysis.launch import GRAPH_REPLAYED
from gpuscope.analysis.program import fsdp_units
from gpuscope.analysis.stepranges import slot
from gpuscope.document.units import nbytes, time_ns
from gpuscope.peaks import peaks_for
from gpuscope.trace.model import ANNOTATION, DTOH, HTOD, MEMCPY, OP, PAGEABLE, PINNED, PYTHON

if TYPE_CHECKING:
    from gpuscope.analysis.analyze import Analysis

REPORT_SHARE = 0.05  # a part with this share of the judged time gets a finding
WARNING_SHARE = 0.20  # ... a warning from this share
COPY_INFO = 0.01  # copies: reported from this share (or when any is from pageable memory)
COPY_WARNING = 0.05
SMALL_COPY = 64 * 1024  # bytes per copy under which copies are latency, not bandwidth
SYNCS_IN_STEP = 2  # a step with this many blocking syncs cannot be captured as a graph
PINNED_NEAR_LINK = 0.6  # pinned copies at this share of the host link: already at the link's pace
COMPILED = re.compile(r"^(CompiledFunction(Backward)?|Torch-Compiled Region|## Call Compiled)")
OPTIMIZER = re.compile(r"^Optimizer\.step#")
DATALOADER = re.compile(r"DataLoader")
SINGLE_PROCESS_LOADER = re.compile(r"_SingleProcessDataLoaderIter")
TOP = 5
COLD_UNRELIABLE = 0.25  # start-up this share of the judged time: host-side causes provisional
HOST_SIDE = ("host-launch", "host-work", "host-sync")


@dataclass(frozen=True)
class Context:
    """What the trace already shows, for choosing an action."""

    steps: int  # judged steps (0: judged over the device's active span)
    syncs_per_step: float  # blocking syncs on the launching thread per judged step
    graph_share: float  # kernels launched by graph launches
    short_share: float  # kernels shorter than 10 µs
    cold: float  # start-up's share of the judged time (the cold start is not behind us)


def findings(a: Analysis) -> list[Finding]:
    """The cause findings. Where start-up holds COLD_UNRELIABLE of the judged time, the steady
    state is not in the trace: the host-side causes are said as provisional."""
    b = a.breakdown
    if b is None or not b.judged_wall():
        return []
    context = _context(a, b)
    found = [f for rule in RULES if (f := rule(a, b, context)) is not None]
    if context.cold >= COLD_UNRELIABLE:
        found = [_provisional(f, context.cold) if f["cause"] in HOST_SIDE else f for f in found]
    return found


def _provisional(f: Finding, cold: float) -> Finding:
    then = f["action"][0].lower() + f["action"][1:]
    return replace(
        f,
        severity="info",
        message=f["message"] + f"; but start-up holds {cold:.0%} of that time (see "
        "cold-start): this may be the first iteration's host work, not the steady state's",
        action=f"Profile after warm-up first (see cold-start); if it persists: {then}",
        evidence={**f["evidence"], "startup_share": round(cold, 4)},
    )


def _context(a: Analysis, b: Breakdown) -> Context:
    launch = a.launch
    steps = len(b.steps) - b.warmup if b.judged_by_steps else 0
    return Context(
        steps=steps,
        syncs_per_step=_syncs_per_step(a, b),
        graph_share=launch.graph_kernels / launch.kernels if launch.kernels else 0.0,
        short_share=launch.short_kernels / launch.kernels if launch.kernels else 0.0,
        cold=b.share("startup"),
    )


def _syncs_per_step(a: Analysis, b: Breakdown) -> float:
    """Blocking syncs of the main thread inside the judged steps, per step (over the device's
    active span when there are no steps: then per that span)."""
    rows = _judged_syncs(a, b)
    steps = len(b.steps) - b.warmup if b.judged_by_steps else 1
    return len(rows) / max(steps, 1)


def _judged_syncs(a: Analysis, b: Breakdown) -> Any:
    """Rows of trace.host: the main thread's blocking calls that start in the judged steps
    (else in the device's active span), less a one-off that closes the window (no device op
    starts after it ends, and no earlier sync has its name: a harness's final synchronize, not
    the last of a loop's per-step `.item()`)."""
    host = a.trace.host
    judged = blocking_calls(a.trace, a.links) & ~closing_syncs(a.trace, a.links)
    rows = np.flatnonzero(judged & (host.tid == b.idle.main_thread))
    if b.judged_by_steps:
        lo, hi = b.steps.start[b.steady], b.steps.end[b.steady]
        return rows[slot(host.start[rows], lo, hi) >= 0]
    w0, w1 = b.window
    return rows[(host.start[rows] >= w0) & (host.start[rows] < w1)]


# -- shared ------------------------------------------------------------------------------------


def _times(count: float) -> str:
    return "once" if count == 1 else "twice" if count == 2 else f"{count:g} times"


def _severity(share: float) -> str:
    return "warning" if share >= WARNING_SHARE else "info"


def _where(b: Breakdown, text: str) -> str:
    """`of the step time (6 steps)` / `of its active span`."""
    if b.judged_by_steps:
        steps = len(b.steps) - b.warmup
        return f"{text} over {steps} step{'s' * (steps != 1)}"
    return "of the GPU's active span"


def _per_step(b: Breakdown, ns: int) -> str:
    steps = len(b.steps) - b.warmup
    return f", {time_ns(ns / steps)} per step" if b.judged_by_steps and steps > 1 else ""


def _links(a: Analysis, parts: tuple[str, ...]) -> list[dict[str, Any]]:
    """The critical path's links of these parts over the judged steps, summed by what."""
    path = a.critical
    b = a.breakdown
    if path is None or b is None:
        return []
    judged = set(range(b.warmup, len(b.steps))) if b.judged_by_steps else {-1}
    totals: dict[str, list[int]] = {}
    for link in path.links:
        if link.step in judged and link.part in parts:
            entry = totals.setdefault(link.what or "(not named)", [0, 0])
            entry[0] += link.ns
            entry[1] += link.count
    ranked = sorted(totals.items(), key=lambda kv: -kv[1][0])[:TOP]
    return [{"what": w, "time_us": us(ns), "count": n} for w, (ns, n) in ranked]


def _named(links: list[dict[str, Any]]) -> str:
    """The named links with their share of the part's time on the critical path."""
    total = sum(link["time_us"] for link in links)
    shown = [f"{link['what']} {link['time_us'] / total:.0%}" for link in links[:3]
             if link["what"] != "(not named)" and total]  # fmt: skip
    return f" — {'; '.join(shown)}" if shown else ""


def _evidence(a: Analysis, b: Breakdown, part: str, ns: int, at_most: int) -> dict[str, Any]:
    wall = b.judged_wall()
    return {
        "part": part,
        "time_us": us(ns),
        "share_of_step_time": round(ns / wall, 4) if wall else 0.0,
        "at_most_saved_us": us(at_most),
        "judged_steps": len(b.steps) - b.warmup if b.judged_by_steps else 0,
        "on_critical_path": _links(a, (part,)),
    }


def _at_most(a: Analysis, part: str) -> int:
    path = a.critical
    return path.at_most_ns.get(part, 0) if path is not None else 0


# -- launch / dispatch -------------------------------------------------------------------------


def launch_overhead(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    ns = b.part("launch")
    share = b.share("launch")
    if share < REPORT_SHARE:
        return None
    at_most = _at_most(a, "launch")
    inside = _share_inside(a, "launch", COMPILED)
    optimizer = _share_inside(a, "launch", OPTIMIZER)
    hooks = _share_inside(a, "launch", FRAMEWORK_RANGES) if a.program.fsdp else 0.0  # FSDP's hooks
    syncing = c.syncs_per_step >= SYNCS_IN_STEP and b.share("sync") > 0 and b.judged_by_steps
    evidence = _evidence(a, b, "launch", ns, at_most)
    evidence.update(
        kernels=a.launch.kernels,
        short_kernel_share=round(c.short_share, 4),
        graph_replayed_share=round(c.graph_share, 4),
        syncs_per_step=round(c.syncs_per_step, 2),
        share_inside_compiled_code=round(inside, 4),
        share_inside_optimizer_step=round(optimizer, 4),
    )
    if a.program.fsdp:
        evidence["share_inside_fsdp_hooks"] = round(hooks, 4)
    context = advice.LaunchContext(
        graphs=c.graph_share >= GRAPH_REPLAYED,
        syncs_per_step=c.syncs_per_step if syncing else 0.0,
        compiled_share=inside,
        optimizer_share=optimizer,
        short_kernels=c.short_share >= 0.5,
        hooks_share=hooks,
        fsdp_units=fsdp_units(a.trace, a.program.wrapper) if hooks else 0,
    )
    message = (
        f"launch / dispatch: the GPU waits {time_ns(ns)} ({share:.0%} "
        f"{_where(b, 'of the step time')}{_per_step(b, ns)}) while "
        f"{state_text('launch', a.program.kind)}"
        f"{_named(evidence['on_critical_path'])}; removing that dispatch would shorten it "
        f"by at most {time_ns(at_most)}"
    )
    if inside >= 0.5:
        message += f" ({inside:.0%} of it inside torch.compile'd code)"
    return finding("launch-overhead", _severity(share), message,
                   advice.launch(a.program, context), evidence, impact_ns=at_most,
                   cause="host-launch")  # fmt: skip


def _share_inside(a: Analysis, part: str, pattern: re.Pattern[str]) -> float:
    """The share of a part's idle pieces that lie inside ops or ranges named by `pattern`."""
    b = a.breakdown
    if b is None:
        return 0.0
    pieces = b.idle.pieces
    chosen = pieces.state == STATES.index(part)
    if not chosen.any():
        return 0.0
    ops = a.trace.ops
    names = [i for i in unique(ops.name) if pattern.search(a.trace.names[i])]
    rows = np.isin(ops.name, names) & (ops.start >= 0)
    if not rows.any():
        return 0.0
    regions = merge(ops.start[rows], ops.end[rows])
    start, end = pieces.start[chosen], pieces.end[chosen]
    covered = overlap_with(*regions, start, end).sum()
    return float(covered / (end - start).sum())


# -- host work outside operators ---------------------------------------------------------------


def host_work(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    ns = b.part("host_work")
    share = b.share("host_work")
    if share < REPORT_SHARE:
        return None
    at_most = _at_most(a, "host_work")
    evidence = _evidence(a, b, "host_work", ns, at_most)
    inside = _annotations_over(a, "host_work")
    evidence["inside_annotations"] = inside
    loader = next((x["name"] for x in inside if DATALOADER.search(x["name"])), "")
    frames = bool((a.trace.ops.kind == PYTHON).any())
    after_sync = _after_sync_share(b)
    context = advice.HostWorkContext(
        dataloader="single" if SINGLE_PROCESS_LOADER.search(loader) else "workers" if loader
        else "",
        stack_recorded=frames,
        where=[x["what"] for x in evidence["on_critical_path"] if x["what"] != "(not named)"],
        graphs=c.graph_share >= GRAPH_REPLAYED,
        after_sync=after_sync >= 0.5,
        optimizer_share=_share_inside(a, "host_work", OPTIMIZER),
    )  # fmt: skip
    where = _named(evidence["on_critical_path"])
    if loader:
        covered = next(x["time_us"] for x in inside if x["name"] == loader) * 1000
        where += f"; {covered / ns:.0%} of it inside {loader}"
    if after_sync >= 0.5:
        where += (
            f"; {after_sync:.0%} of it follows a blocking sync (the host returned from it, then "
            "worked before it launched again)"
        )
    message = (
        f"host work outside operators: the GPU waits {time_ns(ns)} ({share:.0%} "
        f"{_where(b, 'of the step time')}{_per_step(b, ns)}) while "
        f"{state_text('host_work', a.program.kind)}, ≥ 100 µs at a time"
        f"{where}; it shortens the step by at most {time_ns(at_most)} if removed or overlapped "
        "with the GPU's work"
    )
    return finding("host-work", _severity(share), message, advice.host_work_outside(a.program,
                   context), evidence, impact_ns=at_most, cause="host-work")  # fmt: skip


def _after_sync_share(b: Breakdown) -> float:
    """The share of host-work time that lies in idle intervals a sync began (the host blocked,
    returned, then worked before launching again)."""
    pieces = b.idle.pieces
    mine = pieces.state == STATES.index("host_work")
    total = int(pieces.ns()[mine].sum())
    after = int(pieces.ns()[mine & b.idle.drained[pieces.gap]].sum())
    return after / total if total else 0.0


def _annotations_over(a: Analysis, part: str) -> list[dict[str, Any]]:
    """User annotations (not steps) that the part's idle pieces lie inside, by time."""
    b = a.breakdown
    assert b is not None
    pieces = b.idle.pieces
    chosen = pieces.state == STATES.index(part)
    ops = a.trace.ops
    rows = (ops.kind == ANNOTATION) & (ops.start >= 0)
    found = []
    start, end = pieces.start[chosen], pieces.end[chosen]
    for name in unique(ops.name[rows]):
        text = a.trace.names[name]
        if text.startswith("ProfilerStep#"):
            continue
        mine = rows & (ops.name == name)
        covered = int(overlap_with(*merge(ops.start[mine], ops.end[mine]), start, end).sum())
        if covered:
            found.append({"name": text, "time_us": us(covered)})
    return sorted(found, key=lambda x: -x["time_us"])[:TOP]


# -- sync --------------------------------------------------------------------------------------


def sync_overhead(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    ns = b.part("sync")
    share = b.share("sync")
    at_most = _at_most(a, "sync")
    wall = b.judged_wall()
    if max(share, at_most / wall) < REPORT_SHARE or not c.syncs_per_step or not at_most:
        return None  # nothing to save: the host's own time and the GPU's busy time remain
    evidence = _evidence(a, b, "sync", ns, at_most)
    sites = _sync_sites(a, b)
    evidence["syncs_per_step"] = round(c.syncs_per_step, 2)
    evidence["sync_sites"] = sites
    launch = b.part("launch")
    unit = "/step" if b.judged_by_steps else ""
    named = "; ".join(f"{s['op']} ×{s['per_step']:g}{unit}" + (f" ({s['line']})" if s["line"]
                      else "") for s in sites[:3])  # fmt: skip
    message = (
        f"sync wait: blocking syncs empty the GPU's queue {_times(c.syncs_per_step)} "
        f"{'per step' if b.judged_by_steps else 'in its active span'}"
        f"{f' ({named})' if named else ''}"
    )
    if share >= 0.01:
        message += (
            f"; the GPU waits {time_ns(ns)} ({share:.0%} {_where(b, 'of the step time')}) for "
            "the host to return from them and launch again"
        )
    if at_most > ns:
        message += (
            "; after them the host works on its own before it launches again (host work "
            "outside operators), and the syncs keep that work from overlapping the GPU's"
        )
    message += (
        f". Removing them shortens it by at most {time_ns(at_most)} ({at_most / wall:.0%}): "
        "the host's own time and the GPU's busy time remain"
    )
    if launch >= REPORT_SHARE * wall and c.syncs_per_step >= SYNCS_IN_STEP:
        message += (
            f" (launch / dispatch, {time_ns(launch)}, goes only once the step can be captured "
            "as a graph, which needs it free of syncs)"
        )
    severity = _severity(max(share, at_most / wall))
    return finding("sync-overhead", severity, message, advice.sync_once_per_step(a.program),
                   evidence, impact_ns=at_most, cause="host-sync")  # fmt: skip


def _sync_sites(a: Analysis, b: Breakdown) -> list[dict[str, Any]]:
    """Where the main thread blocks: the outermost operator around each blocking call (and the
    user's Python line where the trace has frames), per judged step."""
    trace = a.trace
    host, ops = trace.host, trace.ops
    main = b.idle.main_thread
    rows = _judged_syncs(a, b)
    if len(rows) == 0:
        return []
    op_rows = np.flatnonzero((ops.kind == OP) & (ops.tid == main) & (ops.start >= 0))
    outer = np.full(len(rows), -1, np.int64)
    where = [""] * len(rows)
    if len(op_rows):
        nesting = Nesting(ops.start[op_rows], ops.end[op_rows], ops.tid[op_rows])
        inner = nesting.innermost(host.tid[rows], host.start[rows], host.end[rows])
        outer = nesting.outermost(inner)
        where = PythonLines(trace).lines(np.where(outer >= 0, op_rows[np.maximum(outer, 0)], 0))
    steps = len(b.steps) - b.warmup if b.judged_by_steps else 1
    counts: dict[tuple[str, str], int] = {}
    for i, row in enumerate(rows.tolist()):
        name = trace.names[ops.name[op_rows[outer[i]]]] if outer[i] >= 0 else trace.names[
            host.name[row]]  # fmt: skip
        key = (name, where[i] if outer[i] >= 0 else "")
        counts[key] = counts.get(key, 0) + 1
    ranked = sorted(counts.items(), key=lambda kv: -kv[1])[:TOP]
    return [{"op": op, "line": line, "count": n, "per_step": round(n / steps, 2)}
            for (op, line), n in ranked]  # fmt: skip


# -- copies ------------------------------------------------------------------------------------


def copies(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    device = b.part("copies")
    staging = b.part("copy_staging")
    ns = device + staging
    wall = b.judged_wall()
    share = ns / wall
    moves = _moves(a)
    pageable = sum(m["pageable"] for m in moves.values())
    if not moves or (share < COPY_INFO and not (pageable and share > 0)):
        return None
    count = sum(m["count"] for m in moves.values())
    if sum(m["bytes"] for m in moves.values()) < SMALL_COPY * count and share < COPY_WARNING:
        return None  # scalars read back by syncs: their cost is the sync's, not bandwidth
    link = _link(a)
    at_most = _at_most(a, "copies") + _at_most(a, "copy_staging")
    evidence = _evidence(a, b, "copies", ns, at_most)
    evidence.update(
        copies_us=us(device), copy_staging_us=us(staging), by_kind=moves,
        host_link=link[0] if link else None, host_link_gb_per_s=link[1] if link else None,
        launched_by=_copy_launchers(a),
    )  # fmt: skip
    rates = "; ".join(_rate_text(kind, m, link) for kind, m in moves.items())
    message = (
        f"copies: host↔device copies keep the GPU {time_ns(device)} busy with nothing else "
        f"running" + (f" and the host staged pageable copies for {time_ns(staging)} while it "
                      "idled" if staging else "")
        + f" ({share:.0%} {_where(b, 'of the step time')}; {rates}); at most "
        f"{time_ns(at_most)} could be saved"
    )  # fmt: skip
    context = advice.CopyContext(
        pageable_share=pageable / max(sum(m["count"] for m in moves.values()), 1),
        near_link=_near_link(moves, link),
    )
    severity = "warning" if share >= COPY_WARNING else "info"
    return finding("host-device-copies", severity, message, advice.copies_for(a.program, context),
                   evidence, impact_ns=at_most, cause="copies")  # fmt: skip


def _moves(a: Analysis) -> dict[str, dict[str, Any]]:
    """Host↔device copies by direction: count, bytes, time, pageable / pinned, achieved rate."""
    gpu = a.trace.gpu
    found = {}
    migrated = migrations(a.trace)  # unified memory: its own finding (findings.unified_memory)
    for code, kind in ((HTOD, "HtoD"), (DTOH, "DtoH")):
        rows = (gpu.kind == MEMCPY) & (gpu.copy == code) & (gpu.dur > 0) & ~migrated
        if not rows.any():
            continue
        sized = rows & (gpu.bytes > 0)
        size, time = int(gpu.bytes[sized].sum()), int(gpu.dur[sized].sum())
        found[kind] = {
            "count": int(rows.sum()),
            "bytes": size,
            "time_us": us(int(gpu.dur[rows].sum())),
            "pageable": int((rows & (gpu.host_memory == PAGEABLE)).sum()),
            "pinned": int((rows & (gpu.host_memory == PINNED)).sum()),
            "gb_per_s": float(f"{size / time:.4g}") if time else None,
            "pageable_gb_per_s": _rate(gpu, sized & (gpu.host_memory == PAGEABLE)),
            "pinned_gb_per_s": _rate(gpu, sized & (gpu.host_memory == PINNED)),
        }
    return found


def _copy_launchers(a: Analysis) -> dict[str, int]:
    """The operators that launched the host↔device copies, by count."""
    gpu = a.trace.gpu
    rows = np.flatnonzero((gpu.kind == MEMCPY) & np.isin(gpu.copy, [HTOD, DTOH]))
    parents = a.parent_op[rows]
    names, counts = np.unique(parents[parents >= 0], return_counts=True)
    found = {a.trace.names[n]: int(c) for n, c in zip(names, counts, strict=True)}
    return dict(sorted(found.items(), key=lambda kv: -kv[1])[:8])


def _rate(gpu: Any, rows: Any) -> float | None:
    time = int(gpu.dur[rows].sum())
    return float(f"{int(gpu.bytes[rows].sum()) / time:.4g}") if time else None


def _link(a: Analysis) -> tuple[str, float] | None:
    for device in a.trace.meta.devices:
        found = peaks_for(device)
        if found is not None and found.host_link_gbs is not None:
            return found.host_link, found.host_link_gbs
    return None


def _rate_text(kind: str, m: dict[str, Any], link: tuple[str, float] | None) -> str:
    text = f"{m['count']:,} {kind}, {nbytes(m['bytes'])}"
    if m["gb_per_s"] is not None:
        text += f" at {m['gb_per_s']:.3g} GB/s"
        if link:
            text += f" ({m['gb_per_s'] / link[1]:.0%} of {link[0]}'s {link[1]:g} GB/s)"
    if m["pageable"]:
        text += f", {m['pageable']:,} from pageable memory"
        if m["pageable_gb_per_s"] and m["pinned_gb_per_s"]:
            text += (
                f" ({m['pageable_gb_per_s']:.3g} GB/s against {m['pinned_gb_per_s']:.3g} pinned)"
            )
    return text


def _near_link(moves: dict[str, dict[str, Any]], link: tuple[str, float] | None) -> bool:
    """The pinned copies already run near the host link's rate."""
    rates = [m["pinned_gb_per_s"] for m in moves.values() if m["pinned_gb_per_s"]]
    if not rates or link is None:
        return False
    return bool(max(rates) >= PINNED_NEAR_LINK * link[1])


# -- queued, host late -------------------------------------------------------------------------


def dependency_wait(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    ns = b.part("queued")
    share = b.share("queued")
    if share < REPORT_SHARE or (a.verdict.bound == "gpu-bound" and a.verdict.cause == "queued"):
        return None
    at_most = _at_most(a, "queued")
    evidence = _evidence(a, b, "queued", ns, at_most)
    message = (
        f"queued: the GPU idles {time_ns(ns)} ({share:.0%} {_where(b, 'of the step time')}) "
        "with the next work already launched: it waited on an event, another stream, a "
        "collective or another process, not on the host"
    )
    return finding("dependency-wait", _severity(share), message, advice.dependency(),
                   evidence, impact_ns=at_most, cause="dependency")  # fmt: skip


def host_late(a: Analysis, b: Breakdown, c: Context) -> Finding | None:
    ns = b.part("host_late")
    share = b.share("host_late")
    if share < REPORT_SHARE:
        return None
    at_most = _at_most(a, "host_late")
    evidence = _evidence(a, b, "host_late", ns, at_most)
    leading = _leading_share(a, b)
    evidence["share_at_the_start"] = round(leading, 4)
    message = (
        f"host late: the GPU idles {time_ns(ns)} ({share:.0%} {_where(b, 'of the step time')}) "
        "until the host dispatches the next work, which it did only after the GPU went idle "
        f"(the trace's dispatch times; it has no host timeline to say why)"
    )
    if leading >= 0.5:
        where = ("before the steady part" if a.verdict.steady_from_ns is not None
                 else "in the first tenth of the trace")  # fmt: skip
        message += f"; {leading:.0%} of it lies {where}"
    return finding("host-late", _severity(share), message,
                   advice.host_late(a.program, a.trace.meta.format, leading >= 0.5), evidence,
                   impact_ns=at_most, cause="host-work")  # fmt: skip


def _leading_share(a: Analysis, b: Breakdown) -> float:
    """The share of host-late time before the steady part (the verdict's split), else in the
    first tenth of the span."""
    pieces = b.idle.pieces
    late = pieces.state == STATES.index("host_late")
    w0, w1 = b.window
    split = a.verdict.steady_from_ns
    cut = split if split is not None else w0 + (w1 - w0) // 10
    total = int(pieces.ns()[late].sum())
    early = int(overlap_with(pieces.start[late], pieces.end[late], np.array([w0]),
                             np.array([cut]))[0])  # fmt: skip
    return early / total if total else 0.0


Rule = Callable[["Analysis", Breakdown, Context], "Finding | None"]
RULES: tuple[Rule, ...] = (launch_overhead, host_work, sync_overhead, copies, dependency_wait,
                           host_late)  # fmt: skip
