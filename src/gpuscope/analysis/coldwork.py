"""Cold-start work, found on the host and device timelines (one clock): `detect(trace, links)`,
run once by the core (for the host states under idle time) and read by the `cold_start` analysis.

- module loading: CUDA's `Lazy Function Loading` and `Runtime Triggered Module Loading` records
  (CUPTI overhead records, `meta.extra["overhead"]`), `cuModuleLoad*`, `cuLibraryLoad*`,
  `hipModuleLoad*` and the like, and a kernel's first launch when it is a first-call outlier
  (its code is loaded or JIT-compiled then);
- slow one-time queries: `cudaGetDeviceProperties`, `cudaFuncGetAttributes` / `SetAttribute`,
  context creation, when one takes ≥ SLOW_QUERY_NS (they return in µs once warm);
- compilation: torch.compile's `(dynamo_timed)` ranges (`entire_frame_compile`,
  `backend_compile`, `inductor_compile`, …) and, in with_stack traces, the frames of
  `torch/_dynamo/convert_frame.py` and `torch/_inductor/compile_fx.py`, which run only to compile;
- CUDA/HIP graph capture: `*StreamBeginCapture` … `*StreamEndCapture`, `*GraphInstantiate*`,
  `*GraphUpload`;
- first-call outliers: the first instance of an operator (same name and input shapes) or of a
  host API call (same name and, for a launch, same kernel) that takes ≥ FIRST_CALL_RATIO × the
  median of the later ones and ≥ FIRST_CALL_EXCESS_NS more — and, when the trace has steps, as
  much more than the first instance in each later step (an operator slow at the start of every
  step, such as the first AccumulateGrad of each backward, is not cold). Calls whose time the
  device sets (syncs, copies, and operators that contain one) are not compared, nor are kernels:
  their time depends on sizes the trace does not tie to their names. A first call during which
  the profiler did its own work (a CUPTI `Activity Buffer Request` record: the tracer starting
  up on the first traced call) is the profiler's stall, not the workload's cold start.

The profiler's own records (`Record`) and the first calls they stalled (`Stall`) are found here
too; `_profiler_overhead` measures them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import merge, overlap_with
from gpuscope.analysis._unique import sort_by, unique, unique_inverse
from gpuscope.analysis.links import Links
from gpuscope.analysis.stepranges import complete_steps, slot
from gpuscope.document.names import short_name
from gpuscope.trace.model import I64, OP, Mask, Trace

FIRST_CALL_RATIO = 5.0
FIRST_CALL_EXCESS_NS = 100_000
SLOW_QUERY_NS = 100_000

LOADING = re.compile(
    r"^(Lazy Function Loading|Runtime Triggered Module Loading|"
    r"cuModuleLoad\w*|cuLibraryLoad\w*|cudaLibraryLoad\w*|hipModuleLoad\w*|"
    r"cuModuleGetFunction|hipModuleGetFunction|cuLibraryGetKernel)$"
)
QUERY = re.compile(
    r"^((cuda|hip)(GetDeviceProperties\w*|FuncGetAttributes|FuncSetAttribute|SetDevice|"
    r"DeviceGetAttribute|Init)|cu(Init|DevicePrimaryCtxRetain|CtxCreate\w*|DeviceGetAttribute|"
    r"FuncGetAttribute|FuncSetAttribute))$"
)
CAPTURE_BEGIN = re.compile(r"^(cuda|hip|cu)StreamBeginCapture\w*$")
CAPTURE_END = re.compile(r"^(cuda|hip|cu)StreamEndCapture\w*$")
GRAPH_BUILD = re.compile(r"^(cuda|hip|cu)Graph(Instantiate\w*|Upload)$")
COMPILE = re.compile(
    r" \(dynamo_timed\)$|^(entire_frame_compile|entire_backward_compile|backend_compile|"
    r"inductor_compile|compile_fx_inner|fx_codegen_and_compile)$|"
    r"^torch/(_dynamo/convert_frame|_inductor/compile_fx)\.py\(\d+\): "
)
WAITING = re.compile(r"Synchronize|Memcpy|Memset|Wait|Query", re.IGNORECASE)
LAUNCH = re.compile(r"LaunchKernel|LaunchCooperativeKernel|ModuleLaunchKernel", re.IGNORECASE)
KINDS = ("loading", "query", "compile", "capture", "first_call")


@dataclass(frozen=True)
class Event:
    kind: str  # one of KINDS
    name: str
    start: int
    end: int
    excess_ns: int  # first calls: over the median of the later ones; else the duration


@dataclass(frozen=True)
class Record:
    """One of the profiler's own overhead records."""

    name: str
    start: int
    end: int


@dataclass(frozen=True)
class Stall:
    """A first call slowed by the profiler's own work that ran meanwhile (CUPTI requesting an
    activity buffer when the first traced call comes): start-up of the tracer, not the model."""

    name: str
    start: int
    end: int
    excess_ns: int  # over the later calls
    record: str  # the profiler record it overlaps


@dataclass(frozen=True)
class Detected:
    """What `detect` finds: the cold-start events, the profiler's own records and the first calls
    they stalled."""

    events: list[Event]
    profiler: list[Event]
    stalls: list[Stall]
    waiting: list[Event]  # first-call outliers of operators that wait on the device inside

    def intervals(self) -> tuple[I64, I64]:
        """The union of the cold-start events, sorted and disjoint, the first calls that wait on
        the device included: where the device idles inside one (cuDNN's autotuning, a library
        loading its kernels), the host is doing first-call work, not waiting."""
        events = self.events + self.waiting
        start = np.array([e.start for e in events], np.int64)
        end = np.array([e.end for e in events], np.int64)
        return merge(start, end)


def detect(trace: Trace, links: Links) -> Detected:
    """Cold-start work on the host and device timelines (a pure function of the trace: the
    core runs it once, for the host states under idle time and for this analysis)."""
    records = _records(trace)
    profiler = [r for r in records if r.kind != "loading"]
    first, stalls = _split_stalls(_first_calls(trace, links), profiler)
    waiting, _ = _split_stalls(_first_calls(trace, links, waiting=True), profiler)
    found = [*_named(trace), *[r for r in records if r.kind == "loading"], *_captures(trace)]
    return Detected(found + first, profiler, stalls, waiting)


def _rows(trace: Trace) -> list[tuple[str, I64, I64, I64]]:
    """(table, name, start, end) of the host calls and operators with known times."""
    host, ops = trace.host, trace.ops
    host_ok, ops_ok = host.start >= 0, ops.start >= 0
    return [
        ("host", host.name[host_ok].astype(np.int64), host.start[host_ok], host.end[host_ok]),
        ("ops", ops.name[ops_ok].astype(np.int64), ops.start[ops_ok], ops.end[ops_ok]),
    ]


def _named(trace: Trace) -> list[Event]:
    """Loading, slow queries and compilation, recognised by name."""
    found: list[Event] = []
    for _, name, start, end in _rows(trace):
        for index in unique(name):
            text = trace.names[index]
            kind = _kind_of(text)
            if kind is None:
                continue
            rows = np.flatnonzero(name == index)
            if kind == "query":
                rows = rows[end[rows] - start[rows] >= SLOW_QUERY_NS]
            found += [_event(kind, text, start[r], end[r]) for r in rows]
    return found


def _kind_of(name: str) -> str | None:
    if LOADING.match(name):
        return "loading"
    if QUERY.match(name):
        return "query"
    if COMPILE.search(name):
        return "compile"
    if GRAPH_BUILD.match(name):
        return "capture"
    return None


def _event(kind: str, name: str, start: Any, end: Any, excess: Any = None) -> Event:
    dur = int(end) - int(start)
    return Event(kind, name, int(start), int(end), dur if excess is None else int(excess))


def _captures(trace: Trace) -> list[Event]:
    """Graph capture: from each BeginCapture to the next EndCapture on the same thread."""
    host = trace.host
    begin = _matching(trace, host.name, CAPTURE_BEGIN)
    end = _matching(trace, host.name, CAPTURE_END)
    found = []
    for row in np.flatnonzero(begin):
        later = np.flatnonzero(end & (host.tid == host.tid[row]) & (host.start >= host.start[row]))
        if len(later):
            stop = later[np.argmin(host.start[later])]
            found.append(_event("capture", "graph capture", host.start[row], host.end[stop]))
    return found


def _matching(trace: Trace, name: Any, pattern: re.Pattern[str]) -> Mask:
    wanted = [i for i in unique(name) if pattern.match(trace.names[i])]
    result: Mask = np.isin(name, wanted)
    return result


def _records(trace: Trace) -> list[Event]:
    """The profiler's overhead records (Kineto category `overhead`, kept by the reader in
    `meta.extra["overhead"]` as [name, start ns, duration ns]): module loading ones are cold
    start (kind "loading"), the others the profiler's own work (kind "profiler")."""
    found = []
    for item in trace.meta.extra.get("overhead", ()):
        name, start, dur = str(item[0]), int(item[1]), int(item[2])
        kind = "loading" if LOADING.match(name) else "profiler"
        found.append(Event(kind, name, start, start + dur, dur))
    return found


def _split_stalls(first: list[Event], profiler: list[Event]) -> tuple[list[Event], list[Stall]]:
    """First-call outliers during which a profiler record ran are the profiler's stalls, and so
    is every first call inside one (a first launch within the stalled operator)."""
    stalls = []
    for event in first:
        record = next((r for r in profiler if r.start < event.end and event.start < r.end), None)
        if record is not None:
            stalls.append(Stall(event.name, event.start, event.end, event.excess_ns, record.name))
    kept = [e for e in first if not any(s.start <= e.start and e.end <= s.end for s in stalls)]
    return kept, [s for s in stalls if not _inside_another(s, stalls)]


def _inside_another(stall: Stall, stalls: list[Stall]) -> bool:
    return any(
        o is not stall
        and o.start <= stall.start
        and stall.end <= o.end
        and o.end - o.start > stall.end - stall.start
        for o in stalls
    )


# -- first-call outliers ----------------------------------------------------------------------


def _first_calls(trace: Trace, links: Links, waiting: bool = False) -> list[Event]:
    """Host-side first calls only: a kernel's or copy's duration depends on its size, which the
    trace does not tie to its name, and device-side warm-up effects are small. Operators that
    wait on the device inside are left out (their time is the device's), unless `waiting`: then
    only the first calls of those are kept, each compared with all the later calls of its name
    and shapes."""
    ops, host = trace.ops, trace.host
    waits = _waiting_calls(trace)
    blocked = _overlaps(host.start[waits], host.end[waits], ops.start, ops.end)
    timed_ops = (ops.kind == OP) & (ops.start >= 0)
    if waiting:  # only a name with a blocked call can have a blocked first call
        timed_ops &= np.isin(ops.name, unique(ops.name[timed_ops & blocked]))
    op_rows = np.flatnonzero(timed_ops if waiting else timed_ops & ~blocked)
    host_rows = np.flatnonzero((host.start >= 0) & ~waits) if not waiting else np.zeros(0, int)
    tables = (
        (False, ops.name[op_rows], ops.input_dims[op_rows], ops.start[op_rows], ops.end[op_rows]),
        (
            True,
            host.name[host_rows],
            _launched_kernel(trace, links)[host_rows],
            host.start[host_rows],
            host.end[host_rows],
        ),
    )
    _, step_lo, step_hi = complete_steps(trace)
    found = []
    for is_host, names, details, start, end in tables:
        name: I64 = names.astype(np.int64)
        detail: I64 = details.astype(np.int64)
        hits = _outliers(name, detail, start, end)
        for i, excess in _not_per_step(hits, name, detail, start, end, (step_lo, step_hi)):
            if waiting and not blocked[op_rows[i]]:
                continue
            text = trace.names[int(name[i])]
            if _kind_of(text) is not None:  # loading / compile records are counted as such
                continue
            if is_host and detail[i] >= 0 and LAUNCH.search(text):
                kernel = short_name(trace.names[int(detail[i])], 60)
                found.append(_event("loading", f"first launch of {kernel}", start[i], end[i]))
            else:
                found.append(_event("first_call", text, start[i], end[i], excess))
    return found


def _not_per_step(
    hits: list[tuple[int, int]],
    name: I64,
    detail: I64,
    start: I64,
    end: I64,
    steps: tuple[I64, I64],
) -> list[tuple[int, int]]:
    """The outliers that are not how every step starts: with steps, the first call must also be
    FIRST_CALL_RATIO × (and FIRST_CALL_EXCESS_NS more than) the median of the first calls of the
    same group in the later steps; the excess is then counted over those."""
    lo, hi = steps
    if len(lo) < 2:
        return hits
    kept = []
    for row, excess in hits:
        same = np.flatnonzero((name == name[row]) & (detail == detail[row]))
        step = slot(start[same], lo, hi)
        later = step > step[same == row][0]
        if not later.any():
            kept.append((row, excess))
            continue
        rows, slots = same[later], step[later]
        order = np.lexsort((start[rows], slots))
        firsts = rows[order][np.r_[True, slots[order][1:] != slots[order][:-1]]]
        typical = float(np.median(end[firsts] - start[firsts]))
        dur = int(end[row] - start[row])
        if dur >= FIRST_CALL_RATIO * typical and dur - typical >= FIRST_CALL_EXCESS_NS:
            kept.append((row, int(dur - typical)))
    return kept


def _waiting_calls(trace: Trace) -> Mask:
    """Host calls whose time is set by the device, not by warm-up: syncs and copies."""
    wanted = [i for i in unique(trace.host.name) if WAITING.search(trace.names[i])]
    result: Mask = np.isin(trace.host.name, wanted)
    return result


def _overlaps(start: I64, end: I64, lo: I64, hi: I64) -> Mask:
    """Which [lo, hi) windows contain any of the intervals."""
    merged_start, merged_end = merge(start, end)
    result: Mask = overlap_with(merged_start, merged_end, lo, hi) > 0
    return result


def _launched_kernel(trace: Trace, links: Links) -> I64:
    """Per host call: the name of a device op it launched (-1: none)."""
    result = np.full(len(trace.host), -1, np.int64)
    linked = links.host_index >= 0
    result[links.host_index[linked]] = trace.gpu.name[linked]
    return result


def _outliers(name: I64, detail: I64, start: I64, end: I64) -> list[tuple[int, int]]:
    """(row, excess) of the first instance of each (name, detail) group that is an outlier."""
    if len(name) < 2:
        return []
    _, detail_rank = unique_inverse(detail)
    key = name * (int(detail_rank.max()) + 1) + detail_rank
    _, group = unique_inverse(key)
    order = sort_by(group, start)
    first = order[np.r_[True, group[order][1:] != group[order][:-1]]]
    rest = np.ones(len(name), bool)
    rest[first] = False
    median = _group_medians(group[rest], (end - start)[rest], int(group.max()) + 1)
    dur = (end - start)[first]
    later = median[group[first]]
    hit = (later >= 0) & (dur >= FIRST_CALL_RATIO * later) & (dur - later >= FIRST_CALL_EXCESS_NS)
    return [(int(r), int(d - m)) for r, d, m in zip(first[hit], dur[hit], later[hit], strict=True)]


def _group_medians(group: I64, value: I64, groups: int) -> Any:
    """Lower median of `value` per group (-1 where a group has no value)."""
    result = np.full(groups, -1.0)
    if len(group) == 0:
        return result
    low, span = int(value.min()), int(value.max()) - int(value.min()) + 1
    if int(group.min()) >= 0 and (int(group.max()) + 1) * span < 2**62:
        # the values sorted within their group: one sort of (group, value) as one number
        both = np.sort(group.astype(np.int64) * span + (value - low))
        g, v = both // span, both % span + low
    else:
        order = np.lexsort((value, group))
        g, v = group[order], value[order]
    begin = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    count = np.diff(np.r_[begin, len(g)])
    result[g[begin]] = v[begin + (count - 1) // 2]
    return result
