"""The step-time breakdown of a Kineto trace recomputed from its raw events with plain Python
(json, sorted lists, loops), from the definitions in docs/analyze.md — independent of
gpuscope's numpy code (`analysis.hoststate`, `analysis.breakdown`), to check it against.

Each step's time is cut into what the device ran (compute > exposed communication > copies when
several run at once) and, while no GPU op runs, what the thread that launches the next GPU op was
doing, segment by segment: start-up > copy staging > sync > inside an operator or runtime call
("active") > nothing open; nothing open for under 100 µs between two active stretches, and the
20 µs after the thread's last event (or before its first), count as active; a sync that began
before the device went idle makes the active time after it (until the first stretch with nothing
open) sync; active time is otherwise launch, nothing open host work. An idle interval whose next
op's launch call began before the interval is queued. Start-up here is by name only (module
loads, library handles, allocations, the tracer's module-loading records), not first-call
outliers: compare steady steps.
"""

from __future__ import annotations

import bisect
import itertools
import re
import statistics
from pathlib import Path
from typing import Any

from tests.rawkineto import GPU_CATS, events, ns, span_of

GLUE = 100_000
REACH = 20_000
SYNC = re.compile(r"^(cuda|hip|cu)(Device|Stream|Event|Ctx)Synchronize|^(cuda|hip)Memcpy(2D|3D)?$")
STARTUP = re.compile(
    r"^(cu|hip)Module(Load|GetFunction|GetGlobal)|^cuLibrary(Load|GetKernel)|"
    r"^__(cuda|hip)Register(FatBinary|Function)|"
    r"^(cublas|cublasLt|cudnn|hipblas|hipblasLt|rocblas|miopen|cufft|hipfft)_?[Cc]reate|"
    r"^(nccl|rccl)CommInit|^(cuda|hip)Malloc(Managed|Host|Async)?$|^cuMem(Alloc|Create)|"
    r"^(nvrtc|hiprtc)|^(cuda|hip)(Set)?Device(Reset|PrimaryCtx)|^cuCtxCreate|^cuInit$"
)
LAUNCH = re.compile(r"Launch", re.IGNORECASE)
ENGINE = "autograd::engine::evaluate_function"
# FSDP's hooks, recorded as ranges (FSDP2 `FSDP::pre_forward (2)` …, its post-backward function;
# FSDP1 `FullyShardedDataParallel._pre_forward` …): framework work, as an operator is
FSDP_HOOK = re.compile(r"^(FSDP::|FullyShardedDataParallel\._)|RegisterPostBackwardFunction")
NCCL = re.compile(r"nccl", re.IGNORECASE)
PARTS = ("compute", "exposed_comm", "copies", "launch", "host_work", "sync", "copy_staging",
         "startup", "host_late", "queued", "unknown")  # fmt: skip
Span = tuple[int, int]


def _union(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s, e in sorted(spans):
        if out and s <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out


def _covers(union: list[Span], t: int) -> bool:
    i = bisect.bisect_right(union, (t, 1 << 62)) - 1
    return i >= 0 and union[i][0] <= t < union[i][1]


def breakdown(path: Path) -> list[tuple[str, dict[str, int]]]:
    """(step name, ns per part) for each step, on the step's clock (device-timed when the host
    runs ahead of the device)."""
    steps, pieces = states(path)
    return [(name, _sum(pieces, lo, hi)) for name, (lo, hi) in steps]


def states(path: Path) -> tuple[list[tuple[str, Span]], list[tuple[int, int, str]]]:
    """The steps, and every piece of time with its part (device work, then what the launching
    thread did under each idle interval)."""
    evs = [e for e in events(path) if e.get("ph") == "X" and "ts" in e]
    calls = [e for e in evs if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    by_corr = {e["args"]["correlation"]: e for e in calls if "correlation" in e.get("args", {})}
    ops = sorted((e for e in evs if e.get("cat") in GPU_CATS), key=lambda e: ns(e["ts"]))
    cpu = [e for e in evs if e.get("cat") == "cpu_op"]
    hooks = [e for e in evs if e.get("cat") == "user_annotation" and FSDP_HOOK.search(e["name"])]
    steps = _steps(evs, ops, by_corr)
    device = _device(ops)
    idle = _idle(ops, steps)
    pageable = {e["args"]["correlation"] for e in ops
                if e.get("cat") == "gpu_memcpy" and "Pageable" in e["name"]}  # fmt: skip
    startup = _union([span_of(e) for e in calls if STARTUP.search(e["name"])]
                     + [span_of(e) for e in evs if e.get("cat") == "overhead"
                        and "Module Loading" in e["name"]])  # fmt: skip
    main = statistics.mode([by_corr[e["args"]["correlation"]]["tid"] for e in ops
                            if e.get("args", {}).get("correlation") in by_corr])  # fmt: skip
    launches = sorted((by_corr[e["args"]["correlation"]] for e in ops
                       if e.get("args", {}).get("correlation") in by_corr),
                      key=lambda c: ns(c["ts"]))  # fmt: skip
    pieces: list[tuple[int, int, str]] = [*device]
    starting: dict[int, dict[str, Any]] = {}
    for e in ops:
        starting.setdefault(ns(e["ts"]), e)
    launch_starts = [ns(c["ts"]) for c in launches]
    threads: dict[Any, Any] = {}
    for lo, hi in idle:
        following = starting.get(hi)
        call = by_corr.get(following["args"].get("correlation")) if following else None
        if call is not None and ns(call["ts"]) < lo:
            pieces.append((lo, hi, "queued"))
            continue
        if call is not None:
            tid = call["tid"]
        elif following is not None:
            at = bisect.bisect_left(launch_starts, lo)
            tid = launches[at]["tid"] if at < len(launches) else main
        else:
            tid = main
        if tid not in threads:
            threads[tid] = _thread(tid, calls, cpu, hooks, pageable)
        pieces += _thread_states(lo, hi, *threads[tid], startup)
    return steps, pieces


def _steps(
    evs: list[dict[str, Any]], ops: list[dict[str, Any]], by_corr: dict[Any, dict[str, Any]]
) -> list[tuple[str, Span]]:
    ranges = sorted((span_of(e), e["name"]) for e in evs
                    if e.get("cat") == "user_annotation"
                    and e["name"].startswith("ProfilerStep#"))  # fmt: skip
    others = sorted(ns(e["ts"]) for e in evs if e.get("cat") in ("cpu_op", "user_annotation",
                    "python_function", "cuda_runtime", "cuda_driver")
                    and not e["name"].startswith("ProfilerStep#"))  # fmt: skip
    kept = [(n, r) for r, n in ranges
            if bisect.bisect_left(others, r[1]) > bisect.bisect_left(others, r[0])]  # fmt: skip
    work = []
    for _, (lo, hi) in kept:
        mine = [o for o in ops if lo <= ns(by_corr.get(o["args"].get("correlation"),
                                                        o)["ts"]) < hi]  # fmt: skip
        work.append((min(span_of(o)[0] for o in mine), max(span_of(o)[1] for o in mine)))
    late = statistics.median(w[1] - r[1] for w, (_, r) in zip(work, kept, strict=True))
    walls = statistics.median(r[1] - r[0] for _, r in kept)
    ahead = len(kept) > 1 and late >= 0.5 * walls
    if not ahead:
        return kept
    tiled, previous = [], work[0][0]
    for (name, _), (_, end) in zip(kept, work, strict=True):
        tiled.append((name, (previous, end)))
        previous = end
    return tiled


def _device(ops: list[dict[str, Any]]) -> list[tuple[int, int, str]]:
    def kind(e: dict[str, Any]) -> str:
        if e.get("cat") != "kernel":
            return "copies"
        return "exposed_comm" if NCCL.search(e["name"]) else "compute"

    spans = [(span_of(e), kind(e)) for e in ops]
    unions = {k: _union([s for s, kk in spans if kk == k])
              for k in ("compute", "exposed_comm", "copies")}  # fmt: skip
    points = sorted({t for (s, e), _ in spans for t in (s, e)})
    out = []
    for a, b in itertools.pairwise(points):
        for k in ("compute", "exposed_comm", "copies"):
            if _covers(unions[k], a):
                out.append((a, b, k))
                break
    return out


def _idle(ops: list[dict[str, Any]], steps: list[tuple[str, Span]]) -> list[Span]:
    busy = _union([span_of(e) for e in ops])
    lo = min([busy[0][0], *(s for _, (s, _) in steps)])
    hi = max([busy[-1][1], *(e for _, (_, e) in steps)])
    gaps, at = [], lo
    for s, e in busy:
        if s > at:
            gaps.append((at, s))
        at = max(at, e)
    if hi > at:
        gaps.append((at, hi))
    return gaps


def _thread(tid: Any, calls: list[dict[str, Any]], cpu: list[dict[str, Any]],
            hooks: list[dict[str, Any]],
            pageable: set[Any]) -> tuple[list[Span], list[Span], list[Span]]:  # fmt: skip
    """A thread's active (any call or operator open, or an operator open on a thread of the
    autograd engine: the backward that thread waits for, or an FSDP hook's range), sync and
    staging intervals."""
    mine = [e for e in calls if e["tid"] == tid]
    engine = {e["tid"] for e in cpu if e["name"].startswith(ENGINE)}
    ops = [span_of(e) for e in cpu + hooks if e["tid"] == tid or e["tid"] in engine]
    active = _union([span_of(e) for e in mine] + ops)
    syncs = _union([span_of(e) for e in mine if SYNC.match(e["name"])
                    or e.get("args", {}).get("correlation") in pageable])  # fmt: skip
    staging = _union([span_of(e) for e in mine
                      if e.get("args", {}).get("correlation") in pageable])  # fmt: skip
    return active, syncs, staging


def _thread_states(
    lo: int, hi: int, active: list[Span], syncs: list[Span], staging: list[Span],
    startup: list[Span],
) -> list[tuple[int, int, str]]:  # fmt: skip
    drained = any(s < lo <= e for s, e in syncs)
    first, last = active[0][0], active[-1][1]
    points = sorted({lo, hi, first - REACH, last + REACH}
                    | {t for layer in (active, syncs, staging, startup)
                       for s, e in _within(layer, lo, hi) for t in (s, e)})  # fmt: skip
    points = [t for t in points if lo <= t <= hi]
    segments = []
    for a, b in itertools.pairwise(points):
        if _covers(startup, a):
            code = "startup"
        elif _covers(staging, a):
            code = "staging"
        elif _covers(syncs, a):
            code = "sync"
        elif _covers(active, a) or first - REACH <= a < first or last <= a < last + REACH:
            code = "active"
        else:
            code = "none"
        segments.append([a, b, code])
    for seg in segments:  # short stretches with nothing open between two open ones
        if seg[2] == "none" and first <= seg[0] and seg[1] <= last:
            gap = _open_gap(active, seg[0])
            if gap is not None and gap[1] - gap[0] < GLUE:
                seg[2] = "active"
    out, gone = [], False
    for a, b, code in segments:
        if code == "none":
            gone = True
            out.append((a, b, "host_work"))
        elif code == "active":
            out.append((a, b, "sync" if drained and not gone else "launch"))
        else:
            out.append((a, b, {"staging": "copy_staging"}.get(code, code)))
    return out


def _within(layer: list[Span], lo: int, hi: int) -> list[Span]:
    """The intervals of a sorted, disjoint layer that reach into [lo, hi)."""
    start = max(bisect.bisect_right(layer, (lo, 1 << 62)) - 1, 0)
    end = bisect.bisect_left(layer, (hi, -1))
    return layer[start:end]


def _open_gap(active: list[Span], t: int) -> Span | None:
    """The stretch with nothing open that holds t, between two active intervals."""
    i = bisect.bisect_right(active, (t, 1 << 62))
    if i == 0 or i == len(active):
        return None
    return active[i - 1][1], active[i][0]


def _sum(pieces: list[tuple[int, int, str]], lo: int, hi: int) -> dict[str, int]:
    out = dict.fromkeys(PARTS, 0)
    for a, b, part in pieces:
        overlap = min(b, hi) - max(a, lo)
        if overlap > 0:
            out[part] += overlap
    return out
