"""What the host was doing under every microsecond the device was idle.

The device idles from the end of its work to the start of the next (over every device of the
trace: idle = no GPU op on any of them). Who could have ended the idle is the thread that
launches the next work: for each idle interval, its time is attributed to what *that* thread did
during it, from the host timeline, µs by µs:

- `queued` — the next work's launch call had begun before the device went idle: the work was
  waiting in the queue for an event, another stream, a collective or the device's own scheduling,
  not for the host (the whole interval);
- `sync` — the thread was blocked in a synchronization. One that began *before* the device went
  idle emptied the queue: then the state runs from the device going idle until the next work
  reaches it, through the host's relaunch (its operators and launch calls after the sync
  returned: without the sync they would have overlapped the device), unless the host first goes
  off to other work (`host_work`). A sync that begins inside the interval is no cause of it (the
  device was already idle): only the time the host spends blocked in it counts;
- `launch` — inside framework operators, runtime calls (launches, allocations, queries) or the
  short stretches of interpreter time between them (under GLUE_NS with no operator open): the
  host dispatching the next work more slowly than the device runs it;
- `host_work` — no operator and no runtime call open for GLUE_NS or longer: the host was doing
  its own work (an input pipeline, Python, I/O, a sleep); named by the user Python frame or
  annotation that covers most of it where the trace has them, else by the operator before it;
- `copy_staging` — inside a copy call from pageable host memory (the driver stages it through a
  pinned buffer before the device copies it);
- `startup` — inside start-up work: module / code-object loads, library initialisation, device
  allocations, run-time compilation (any thread: the loader blocks the launching thread);
- `host_late` — the trace has no host timeline but records when the next work was dispatched
  (rocprof v1 `DispatchNs`): it was dispatched after the device went idle (what the host did is
  not recorded: rocprof --hip-trace / --sys-trace would tell);
- `unknown` — the trace has neither: the next work is not linked to a launch and no host calls
  are recorded.

Precedence where calls nest: start-up > staging > sync > launch (the innermost, most specific
call wins: `.item()` is an operator holding a copy and a stream sync — the sync decides).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from gpuscope.analysis._intervals import merge, paint, take
from gpuscope.analysis._nesting import is_user_frame
from gpuscope.analysis._unique import sort_by, unique
from gpuscope.analysis.links import Links
from gpuscope.analysis.stepranges import STEP
from gpuscope.analysis.sync import ASYNC_COPY_API, SYNC_API
from gpuscope.trace.model import ANNOTATION, I64, MEMCPY, OP, PAGEABLE, PYTHON, Trace

STATES = (
    "launch",
    "host_work",
    "sync",
    "copy_staging",
    "startup",
    "host_late",
    "queued",
    "unknown",
)
GLUE_NS = 100_000  # shorter stretches with nothing open are the interpreter between operators
REACH_NS = 20_000  # after a thread's last event: its last launch reaching the device
STATE_TEXT = {
    "launch": "the host was dispatching the next work (operators, runtime calls and the host "
    "code between them) more slowly than the device ran it",
    "host_work": "the host ran its own work with no operator or runtime call open",
    "sync": "a blocking synchronization emptied the queue: the device waited for the host to "
    "return from it and launch again",
    "copy_staging": "the host was staging a copy from pageable memory",
    "startup": "start-up work (module loads, library initialisation, allocations, compilation)",
    "host_late": "the next work was dispatched only after the device went idle (the trace has no "
    "host timeline to say what the host was doing)",
    "queued": "the next work was already queued: it waited on an event, another stream, a "
    "collective or the device's own scheduling, not on the host",
    "unknown": "the trace links no launch to the next work and records no host calls (a "
    "trace of the host's runtime API would tell)",
}
# the capture that records the host's runtime API, in each kind of program's terms
_HOST_TRACE = {
    "pytorch": "torch.profiler with ProfilerActivity.CPU and CUDA",
    "cuda-cpp": "nsys --trace=cuda",
    "hip-cpp": "rocprofv3 --hip-trace or --sys-trace",
    "jax": "jax.profiler.trace",
}
# what the host's own work and its dispatch are, in each kind of program's terms
_HOST_WORK = {
    "pytorch": "an input pipeline, Python, I/O, sleeps",
    "jax": "the Python between jitted calls, data loading, I/O",
    "ggml": "tokenization, sampling, model loading",
    "julia": "host code between kernels, I/O",
}
_DISPATCH = {
    "pytorch": "framework operators, runtime calls and the Python between them",
    "jax": "dispatching executables, runtime calls and the Python between them",
}


def state_text(state: str, kind: str = "unknown") -> str:
    """STATE_TEXT in the terms of the program kind (`analysis.program`)."""
    if state == "host_work":
        work = _HOST_WORK.get(kind, "CPU work, I/O, MPI, sleeps")
        return f"{STATE_TEXT[state]} ({work})"
    if state == "unknown" and kind in _HOST_TRACE:
        return STATE_TEXT[state].replace("would tell", f"would tell: {_HOST_TRACE[kind]}")
    if state == "launch" and kind in _DISPATCH:
        return (
            f"the host was dispatching the next work ({_DISPATCH[kind]}) more slowly than the "
            "device ran it"
        )
    return STATE_TEXT[state]


# host calls that are start-up work: module / code-object loads, library initialisation,
# allocations, run-time compilation
STARTUP_CALLS = re.compile(
    r"^(?:cu|hip)Module(?:Load|GetFunction|GetGlobal)|^cuLibrary(?:Load|GetKernel)|"
    r"^__(?:cuda|hip)Register(?:FatBinary|Function)|^hsa_(?:executable|code_object)_|"
    r"^(?:cublas|cublasLt|cudnn|hipblas|hipblasLt|rocblas|miopen|cufft|hipfft)_?[Cc]reate|"
    r"^(?:nccl|rccl)CommInit|^(?:cuda|hip)Malloc(?:Managed|Host|Async)?$|^cuMem(?:Alloc|Create)|"
    r"^(?:nvrtc|hiprtc)|^(?:cuda|hip)(?:Set)?Device(?:Reset|PrimaryCtx)|^cuCtxCreate|^cuInit$"
)
STARTUP_OVERHEAD = re.compile(r"Module Loading", re.IGNORECASE)  # CUPTI's lazy-loading records
# thread-timeline codes, lowest precedence first
_NONE, _ACTIVE, _SYNC, _STAGING, _STARTUP = range(5)


@dataclass(frozen=True)
class Pieces:
    """Idle time cut by state: [start, end), the state (index into STATES), the idle interval it
    belongs to, and a label (a name index of trace.names, -1 when none): for `host_work` the
    innermost user Python frame or annotation around it, else the operator that ended just
    before it (`after`); for the other host states the operator being run (innermost)."""

    start: I64
    end: I64
    state: I64
    gap: I64
    label: I64
    after: I64  # 1 where `label` is the operator that ended before the piece, not around it

    def ns(self) -> I64:
        result: I64 = self.end - self.start
        return result


@dataclass(frozen=True)
class Idle:
    """The device's idle intervals over the window, and their time by state."""

    start: I64  # per idle interval
    end: I64
    next: I64  # row of trace.gpu that ends it (-1: none, the window's end)
    thread: I64  # thread that launched `next` (-1: not known)
    drained: np.ndarray[Any, np.dtype[np.bool_]]  # began with that thread blocked in a sync
    pieces: Pieces
    host_data: str  # "host timeline", "dispatch times" or "none"
    main_thread: int  # the thread that launches most work (-1: unknown)
    blocked: tuple[I64, I64]  # when the main thread was blocked in a sync (merged)

    def total(self, state: str) -> int:
        chosen = self.pieces.state == STATES.index(state)
        return int(self.pieces.ns()[chosen].sum())

    def totals(self) -> dict[str, int]:
        ns = self.pieces.ns()
        sums = np.bincount(self.pieces.state, weights=ns, minlength=len(STATES))
        return {name: int(sums[i]) for i, name in enumerate(STATES)}


def busy_intervals(trace: Trace) -> tuple[I64, I64]:
    """The union of device activity (kernels, copies, memsets) over every device."""
    gpu = trace.gpu
    timed = (gpu.start >= 0) & (gpu.dur >= 0)
    return merge(gpu.start[timed], gpu.end[timed])


def idle_states(
    trace: Trace,
    links: Links,
    window: tuple[int, int] | None = None,
    startup: tuple[I64, I64] | None = None,
) -> Idle:
    """The idle intervals of the device within `window` (default: its first to last activity)
    and what the launching host thread did in each of them; `startup`: more start-up intervals
    (the cold-start analysis's first-call outliers, compilation, captures)."""
    busy_start, busy_end = busy_intervals(trace)
    lo, hi = _idle_intervals(busy_start, busy_end, window)
    nxt = _next_rows(trace, hi)
    host = trace.host
    host_row = take(links.host_index, nxt, -1) if len(links.host_index) else np.full_like(nxt, -1)
    dispatched = np.where(host_row < 0, take(trace.gpu.enqueued, nxt, -1), -1)
    # the launch began before the device went idle: the work waited on the device's side
    queued = ((host_row >= 0) & (take(host.start, host_row, 0) < lo)) | (
        (dispatched >= 0) & (dispatched < lo)
    )
    has_host = len(host) > 0 or bool((trace.ops.kind == OP).any())
    thread = take(host.tid, host_row, -1)
    guessed = (host_row < 0) & (dispatched < 0) & has_host
    main = _main_thread(trace, links)
    thread = np.where(guessed, _next_launcher(trace, links, lo, main), thread)
    thread = np.where(nxt < 0, main, thread)
    painter = _Painter(trace, links, startup)
    drained = painter.drained(thread, lo) & ~queued
    by_host = ~queued & (thread >= 0) & (dispatched < 0) & has_host
    by_dispatch = ~queued & (dispatched >= 0)
    parts = [
        _whole(np.flatnonzero(queued), lo, hi, "queued"),
        painter.pieces(np.flatnonzero(by_host), lo, hi, thread, drained),
        _dispatch_pieces(np.flatnonzero(by_dispatch), lo, hi, dispatched),
        _whole(np.flatnonzero(~queued & ~by_host & ~by_dispatch), lo, hi, "unknown"),
    ]
    host_data = "host timeline" if has_host else "dispatch times" if by_dispatch.any() else "none"
    blocked = painter.blocked(main) if main >= 0 else (lo[:0], lo[:0])
    pieces = _library_loads(trace, _concat(parts), nxt)
    return Idle(lo, hi, nxt, thread, drained, pieces, host_data, main, blocked)


def _library_loads(trace: Trace, pieces: Pieces, nxt: I64) -> Pieces:
    """A library loading its kernels: in an idle interval that holds start-up work and ends in
    the first dispatch of its kernel, the host's unrecorded work before the load (rocBLAS
    reading its Tensile files, then loading the code object) is start-up too."""
    startup = pieces.state == STATES.index("startup")
    if not startup.any():
        return pieces
    gaps = unique(pieces.gap[startup])
    first = _first_dispatch(trace, nxt[gaps])
    loading = np.zeros(int(pieces.gap.max()) + 1, bool)
    loading[gaps[first]] = True
    own = (pieces.state == STATES.index("host_work")) & loading[pieces.gap]
    state = pieces.state.copy()
    state[own] = STATES.index("startup")
    return Pieces(pieces.start, pieces.end, state, pieces.gap, pieces.label, pieces.after)


def _first_dispatch(trace: Trace, rows: I64) -> Any:
    """Per row of trace.gpu in `rows` (-1: none): is it the first dispatch of its kernel?"""
    gpu = trace.gpu
    order = np.argsort(gpu.start, kind="stable")
    _, first = np.unique(gpu.name[order], return_index=True)
    is_first = np.zeros(len(gpu) + 1, bool)
    is_first[order[first]] = True
    result: Any = is_first[rows]  # row -1 reads the extra False at the end
    return result


def _idle_intervals(
    busy_start: I64, busy_end: I64, window: tuple[int, int] | None
) -> tuple[I64, I64]:
    if len(busy_start) == 0:
        if window is None:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return np.array([window[0]], np.int64), np.array([window[1]], np.int64)
    w0, w1 = window if window is not None else (int(busy_start[0]), int(busy_end[-1]))
    lo = np.concatenate([[w0], busy_end])
    hi = np.concatenate([busy_start, [w1]])
    lo, hi = np.maximum(lo, w0), np.minimum(hi, w1)
    keep = hi > lo
    return lo[keep], hi[keep]


def _next_rows(trace: Trace, times: I64) -> I64:
    """The GPU op that starts at each time (the first of several), -1 where none does."""
    gpu = trace.gpu
    rows = np.flatnonzero((gpu.start >= 0) & (gpu.dur >= 0))
    if len(rows) == 0:
        return np.full(len(times), -1, np.int64)
    order = rows[np.argsort(gpu.start[rows], kind="stable")]
    pos = np.minimum(np.searchsorted(gpu.start[order], times), len(order) - 1)
    found = order[pos]
    result: I64 = np.where(gpu.start[found] == times, found, -1)
    return result


def _next_launcher(trace: Trace, links: Links, lo: I64, main: int) -> I64:
    """For work with no linked launch: the thread of the first launch call that begins at or
    after each time (the thread that launches next), else the main thread."""
    host = trace.host
    rows = unique(links.host_index[links.host_index >= 0])
    if len(rows) == 0:
        return np.full(len(lo), main, np.int64)
    rows = rows[np.argsort(host.start[rows], kind="stable")]
    pos = np.searchsorted(host.start[rows], lo, side="left")
    found: I64 = np.where(pos < len(rows), host.tid[rows[np.minimum(pos, len(rows) - 1)]], main)
    return found


def _main_thread(trace: Trace, links: Links) -> int:
    """The thread that launches most work (else runs most operators), -1 without host data."""
    host = trace.host
    launches = host.tid[links.is_launch] if len(links.is_launch) else host.tid[:0]
    if len(launches):
        ids, counts = np.unique(launches, return_counts=True)
        return int(ids[np.argmax(counts)])
    ops = trace.ops.tid[trace.ops.kind == OP]
    if len(ops):
        ids, counts = np.unique(ops, return_counts=True)
        return int(ids[np.argmax(counts)])
    return -1


def _whole(gaps: I64, lo: I64, hi: I64, state: str) -> Pieces:
    none = np.full(len(gaps), -1, np.int64)
    return Pieces(lo[gaps], hi[gaps], none * 0 + STATES.index(state), gaps, none, none * 0)


def _dispatch_pieces(gaps: I64, lo: I64, hi: I64, dispatched: I64) -> Pieces:
    """Without a host timeline: idle until the dispatch is the host's lateness, the rest the
    dispatch reaching the device (launch latency)."""
    at = np.clip(dispatched[gaps], lo[gaps], hi[gaps])
    none = np.full(len(gaps), -1, np.int64)
    late = Pieces(lo[gaps], at, none * 0 + STATES.index("host_late"), gaps, none, none * 0)
    latency = Pieces(at, hi[gaps], none * 0 + STATES.index("launch"), gaps, none, none * 0)
    return _concat([late, latency])


def _concat(parts: list[Pieces]) -> Pieces:
    columns = [np.concatenate([getattr(p, name) for p in parts]).astype(np.int64)
               for name in ("start", "end", "state", "gap", "label", "after")]  # fmt: skip
    keep = columns[1] > columns[0]
    kept = [c[keep] for c in columns]
    order = sort_by(kept[3], kept[0])  # by gap, then start
    return Pieces(*(c[order] for c in kept))


class _Painter:
    """Each launching thread's timeline cut into segments of one state (codes _NONE … _STARTUP),
    and idle intervals cut along them."""

    def __init__(self, trace: Trace, links: Links, startup: tuple[I64, I64] | None = None) -> None:
        self.trace = trace
        self.links = links
        self.blocking = blocking_calls(trace, links)
        self.segments: dict[int, tuple[I64, I64, I64, I64, I64]] = {}
        self.syncs: dict[int, tuple[I64, I64]] = {}
        own = _startup_intervals(trace)
        if startup is not None:
            own = merge(np.concatenate([own[0], startup[0]]), np.concatenate([own[1], startup[1]]))
        self.startup = own
        self.engine = engine_threads(trace)
        names = [i for i in unique(trace.ops.name) if FRAMEWORK_RANGES.search(trace.names[i])]
        self.framework = (trace.ops.kind == ANNOTATION) & np.isin(trace.ops.name, names)

    def blocked(self, tid: int) -> tuple[I64, I64]:
        """When thread `tid` was blocked in a sync (merged)."""
        return self._syncs(tid)

    def drained(self, thread: I64, lo: I64) -> np.ndarray[Any, np.dtype[np.bool_]]:
        """Per idle interval: its thread was blocked in a sync that began before it."""
        result = np.zeros(len(lo), bool)
        for tid in unique(thread[thread >= 0]).tolist():
            start, end = self._syncs(tid)
            mine = np.flatnonzero(thread == tid)
            pos = np.searchsorted(start, lo[mine], side="left") - 1  # began strictly before
            ok = pos >= 0
            result[mine[ok]] = end[pos[ok]] >= lo[mine[ok]]  # still blocked as the device idled
        return result

    def pieces(self, gaps: I64, lo: I64, hi: I64, thread: I64, drained: Any) -> Pieces:
        parts = []
        for tid in unique(thread[gaps]).tolist():
            mine = gaps[thread[gaps] == tid]
            parts.append(self._cut(mine, lo, hi, drained, *self._segments(tid)))
        return _concat(parts) if parts else _whole(gaps[:0], lo, hi, "unknown")

    def _cut(self, gaps: I64, lo: I64, hi: I64, drained: Any, s: I64, e: I64, code: I64,
             label: I64, after: I64) -> Pieces:  # fmt: skip
        first = np.searchsorted(e, lo[gaps], side="right")
        last = np.searchsorted(s, hi[gaps], side="left")
        counts = np.maximum(last - first, 0)
        gap = np.repeat(gaps, counts)
        offsets = np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)
        seg = np.repeat(first, counts) + offsets
        start, end = np.maximum(s[seg], lo[gap]), np.minimum(e[seg], hi[gap])
        kind = code[seg]
        # the host's relaunch after a sync counts to the sync until it first goes off to its own
        # work (a stretch with nothing open)
        cut = hi.copy()
        own = kind == _NONE
        np.minimum.at(cut, gap[own], start[own])
        relaunch = drained[gap] & (start < cut[gap])
        state = np.full(len(gap), STATES.index("launch"), np.int64)
        state[own] = STATES.index("host_work")
        state[(kind == _SYNC) | ((kind == _ACTIVE) & relaunch)] = STATES.index("sync")
        state[kind == _STAGING] = STATES.index("copy_staging")
        state[kind == _STARTUP] = STATES.index("startup")
        return Pieces(start, end, state, gap, label[seg], after[seg])

    def _syncs(self, tid: int) -> tuple[I64, I64]:
        if tid not in self.syncs:
            host = self.trace.host
            rows = self.blocking & (host.tid == tid)
            self.syncs[tid] = merge(host.start[rows], host.end[rows])
        return self.syncs[tid]

    def _segments(self, tid: int) -> tuple[I64, I64, I64, I64, I64]:
        if tid not in self.segments:
            self.segments[tid] = self._paint(tid)
        return self.segments[tid]

    def _paint(self, tid: int) -> tuple[I64, I64, I64, I64, I64]:
        trace = self.trace
        host, ops = trace.host, trace.ops
        mine = (host.tid == tid) & (host.start >= 0)
        # the autograd engine's threads run the backward (and its hooks) while the thread that
        # called backward() waits in it with no operator open: their operators are the
        # framework's work toward the next launch, not the program's own host work
        helpers = np.isin(ops.tid, [t for t in self.engine if t != tid])
        own_ops = ((ops.tid == tid) | helpers) & (ops.start >= 0)
        own_ops &= (ops.kind == OP) | self.framework  # and the wrappers' hooks (FSDP's)
        active = merge(np.concatenate([host.start[mine], ops.start[own_ops]]),
                       np.concatenate([host.end[mine], ops.end[own_ops]]))  # fmt: skip
        staging_rows = mine & _pageable_copy_calls(trace, self.links)
        layers = [
            active,
            self._syncs(tid),
            merge(host.start[staging_rows], host.end[staging_rows]),
            self.startup,
        ]
        s, e, code = _glue(*_paint(layers))
        return (s, e, code, *_labels(trace, tid, s, e, code, self.engine))


def blocking_calls(trace: Trace, links: Links) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Host calls that block until the device is done: syncs, synchronous copies, async copies
    whose host side is pageable (analysis.sync's rules)."""
    host, names = trace.host, trace.names
    wanted = [i for i in unique(host.name) if SYNC_API.match(names[i])]
    blocking = np.isin(host.name, wanted)
    blocking |= _pageable_copy_calls(trace, links)
    return blocking


def closing_syncs(trace: Trace, links: Links) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Blocking calls that close the profiled window: no device op starts after one ends, and no
    earlier blocking call has its name (a harness's final synchronize, not the last of a loop's
    per-step `.item()`)."""
    host, gpu = trace.host, trace.gpu
    blocking = blocking_calls(trace, links)
    timed = gpu.start[gpu.start >= 0]
    if not len(timed):
        return np.zeros(len(host), bool)
    closing = blocking & (host.end >= timed.max())
    again = np.isin(host.name, host.name[blocking & ~closing])
    result: np.ndarray[Any, np.dtype[np.bool_]] = closing & ~again
    return result


def _pageable_copy_calls(trace: Trace, links: Links) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Host copy calls whose copy has a pageable host side."""
    host, gpu = trace.host, trace.gpu
    result = np.zeros(len(host), bool)
    pageable = (gpu.kind == MEMCPY) & (gpu.host_memory == PAGEABLE)
    if len(links.host_index):
        pageable &= links.host_index >= 0
    else:
        return result
    if pageable.any():
        result[links.host_index[pageable]] = True
        names = trace.names
        copies = [i for i in unique(host.name[result]) if ASYNC_COPY_API.match(names[i])
                  or SYNC_API.match(names[i])]  # fmt: skip
        result &= np.isin(host.name, copies)
    return result


def _startup_intervals(trace: Trace) -> tuple[I64, I64]:
    """Start-up calls on any thread, and the tracer's module-loading records."""
    host, names = trace.host, trace.names
    wanted = [i for i in unique(host.name) if STARTUP_CALLS.search(names[i])]
    rows = np.isin(host.name, wanted) & (host.start >= 0)
    starts, ends = [host.start[rows]], [host.end[rows]]
    overhead = trace.meta.extra.get("overhead") or []
    loads = [(int(t), int(t) + int(d)) for name, t, d in overhead if STARTUP_OVERHEAD.search(name)]
    if loads:
        starts.append(np.array([t for t, _ in loads], np.int64))
        ends.append(np.array([t for _, t in loads], np.int64))
    return merge(np.concatenate(starts), np.concatenate(ends))


def _paint(layers: list[tuple[I64, I64]]) -> tuple[I64, I64, I64]:
    """`paint`, extended to all time: before the first and after the last boundary nothing is
    open."""
    s, e, code = paint(layers)
    if len(s) == 0:
        return s, e, code
    big = np.iinfo(np.int64).max // 4
    s = np.concatenate([[-big], s, [e[-1]]])
    e = np.concatenate([[s[1]], e, [big]])
    code = np.concatenate([[_NONE], code, [_NONE]])
    return s, e, code


def _glue(s: I64, e: I64, code: I64) -> tuple[I64, I64, I64]:
    """Stretches with nothing open shorter than GLUE_NS between two open ones are the
    interpreter between operators: dispatch; so are the REACH_NS after the thread's last event
    and before its first (its last launch reaching the device; a call that began before the
    trace did)."""
    glue = (code == _NONE) & (e - s < GLUE_NS)
    glue[0] = glue[-1] = False
    code = code.copy()
    code[glue] = _ACTIVE
    if len(s) < 3:
        return s, e, code
    head, tail = int(e[0]) - REACH_NS, int(s[-1]) + REACH_NS
    s = np.concatenate([s[:1], [head], s[1:-1], [s[-1], tail]])
    e = np.concatenate([[head], e[:1], e[1:-1], [tail], e[-1:]])
    code = np.concatenate([[_NONE, _ACTIVE], code[1:-1], [_ACTIVE, _NONE]])
    return s, e, code


ENGINE_OP = "autograd::engine::evaluate_function"
# ranges a data-parallel wrapper records around its own hooks (FSDP2's `FSDP::…` and its
# post-backward function, FSDP1's `FullyShardedDataParallel._…` methods; not a wrapper's
# `.forward`, which holds the program's own forward): the framework's work, like an operator
FRAMEWORK_RANGES = re.compile(r"^FSDP::|RegisterPostBackwardFunction|^FullyShardedDataParallel\._")


def engine_rows(trace: Trace) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """The autograd engine's functions (`autograd::engine::evaluate_function: …`): the backward."""
    ops = trace.ops
    wanted = [i for i in unique(ops.name) if trace.names[i].startswith(ENGINE_OP)]
    result: np.ndarray[Any, np.dtype[np.bool_]] = (
        (ops.kind == OP) & np.isin(ops.name, wanted) & (ops.start >= 0)
    )
    return result


def engine_threads(trace: Trace) -> list[int]:
    """Threads that ran the autograd engine's functions (PyTorch's backward threads)."""
    return [int(t) for t in unique(trace.ops.tid[engine_rows(trace)])]


def _labels(
    trace: Trace, tid: int, s: I64, e: I64, code: I64, engine: list[int] | None = None
) -> tuple[I64, I64]:
    """A name index per segment (-1: none) and whether it is the operator before it: with
    nothing open, the deepest user Python frame covering most of it (COVER), else such a user
    annotation (not a ProfilerStep); otherwise the outermost operator being run at its middle;
    else (nothing open, the interpreter between two operators) the operator that ended last
    before it."""
    label = np.full(len(s), -1, np.int64)
    after = np.zeros(len(s), np.int64)
    ops = trace.ops
    if len(s) == 0 or len(ops) == 0:
        return label, after
    names = trace.names
    chosen = (ops.tid == tid) & (ops.start >= 0)
    own = np.flatnonzero(code == _NONE)
    # the open-ended segments before and after everything: from / to the thread's first / last
    # event of any kind (a step range, an annotation, a Python frame)
    lo = np.maximum(s, ops.start[chosen].min()) if chosen.any() else s
    hi = np.minimum(e, ops.end[chosen].max()) if chosen.any() else e
    own = own[hi[own] > lo[own]]
    annotations = [i for i in unique(ops.name[chosen & (ops.kind == ANNOTATION)])
                   if not STEP.match(names[i])]  # fmt: skip
    frames = [i for i in unique(ops.name[chosen & (ops.kind == PYTHON)])
              if is_user_frame(names[i])]  # fmt: skip
    for wanted in (frames, annotations):  # a user frame is the more precise name
        rows = np.flatnonzero(chosen & np.isin(ops.name, wanted))
        todo = own[label[own] < 0]
        label[todo] = _covering(trace, rows, lo[todo], hi[todo])
    busy = np.flatnonzero(code != _NONE)
    middle = s[busy] + (e[busy] - s[busy]) // 2
    _outermost(trace, chosen & (ops.kind == OP), busy, middle, label)
    for other in [t for t in engine or [] if t != tid]:  # busy in the backward's thread alone
        todo = label[busy] < 0
        rows = (ops.tid == other) & (ops.kind == OP) & (ops.start >= 0)
        _outermost(trace, rows, busy[todo], middle[todo], label)
    # the rest (nothing open, or the interpreter's glue between two operators): after the
    # operator that ended last before it
    operators = np.flatnonzero(chosen & (ops.kind == OP))
    unnamed = np.flatnonzero(label < 0)
    if len(operators) and len(unnamed):
        order = operators[np.argsort(ops.end[operators], kind="stable")]
        pos = np.searchsorted(ops.end[order], lo[unnamed], side="right") - 1
        ok = pos >= 0
        label[unnamed[ok]] = ops.name[order[pos[ok]]]
        after[unnamed[ok]] = 1
    return label, after


COVER = 0.5  # a frame or annotation over this share of a stretch names it


def _covering(trace: Trace, rows: I64, lo: I64, hi: I64) -> I64:
    """Per stretch [lo, hi): the name of the shortest of `rows` (ops) that covers at least COVER
    of it (-1: none)."""
    result = np.full(len(lo), -1, np.int64)
    if len(rows) == 0 or len(lo) == 0:
        return result
    ops = trace.ops
    order = rows[np.argsort(ops.start[rows], kind="stable")]
    start, end = ops.start[order], ops.end[order]
    longest = int((end - start).max())
    for i, (a, z) in enumerate(zip(lo.tolist(), hi.tolist(), strict=True)):
        first = int(np.searchsorted(start, a - longest, side="left"))
        last = int(np.searchsorted(start, z, side="left"))
        if last <= first:
            continue
        cover = np.minimum(end[first:last], z) - np.maximum(start[first:last], a)
        good = np.flatnonzero(cover >= COVER * (z - a))
        if len(good):
            best = good[np.argmin((end - start)[first:last][good])]
            result[i] = ops.name[order[first + best]]
    return result


def _outermost(trace: Trace, rows: Any, segments: I64, at: I64, label: I64) -> None:
    """Label `segments` with the outermost of the chosen operators running at `at` (one time
    per segment): the operator the program called (aten::max, not the aten::resize_ inside)."""
    ops = trace.ops
    rows = np.flatnonzero(rows)
    if len(rows) == 0 or len(segments) == 0:
        return
    # by start, the longer first on ties: an operator is top level when it starts at or after
    # the end of every operator that started before it (one thread's operators nest)
    order = rows[sort_by(ops.start[rows], -ops.end[rows])]
    start, end = ops.start[order], ops.end[order]
    top = np.ones(len(order), bool)
    top[1:] = start[1:] >= np.maximum.accumulate(end)[:-1]
    start, end, names = start[top], end[top], ops.name[order[top]]
    pos = np.searchsorted(start, at, side="right") - 1
    hit = (pos >= 0) & (at < end[np.maximum(pos, 0)])
    label[segments[hit]] = names[pos[hit]]
