"""Kineto traces read with the standard library only (json, Decimal, plain loops), for tests
that check gpuscope's cross-rank numbers against the raw events: GPU ops, NCCL kernels, the
ProfilerStep ranges, the host's late time (after a sync that drained the queue, and without
one), and the waits of one rank for another at the collectives they share."""

from __future__ import annotations

import gzip
import itertools
import json
import re
import statistics
from decimal import Decimal
from functools import cache
from pathlib import Path
from typing import Any

GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
SYNC = re.compile(r"^cuda(Device|Stream|Event|Ctx)Synchronize$")
Span = tuple[int, int]


@cache
def events(path: Path) -> tuple[dict[str, Any], ...]:
    data = json.loads(gzip.decompress(path.read_bytes()))
    return tuple(data["traceEvents"])


def ns(value: Any) -> int:
    return int(Decimal(str(value)) * 1000)


def span_of(e: dict[str, Any]) -> Span:
    return ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])


def union(intervals: list[Span]) -> list[Span]:
    merged: list[Span] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def length(intervals: list[Span]) -> int:
    return sum(e - s for s, e in intervals)


def minus(a: list[Span], b: list[Span]) -> list[Span]:
    """union(a) without union(b), as intervals."""
    out = []
    cover = union(b)
    for s, e in union(a):
        at = s
        for p, q in cover:
            if q <= at or p >= e:
                continue
            if p > at:
                out.append((at, p))
            at = max(at, q)
        if at < e:
            out.append((at, e))
    return out


def clip(intervals: list[Span], lo: int, hi: int) -> list[Span]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def gpu_ops(path: Path) -> list[Span]:
    return [span_of(e) for e in events(path) if e.get("cat") in GPU_CATS and e.get("ph") == "X"]


NCCL = ("ncclKernel", "ncclDevKernel")


def nccl(path: Path) -> list[Span]:
    """The NCCL kernels, by start."""
    found = [span_of(e) for e in events(path)
             if e.get("cat") == "kernel" and e["name"].startswith(NCCL)]  # fmt: skip
    return sorted(found)


def compute_kernels(path: Path) -> list[Span]:
    return [span_of(e) for e in events(path)
            if e.get("cat") == "kernel" and not e["name"].startswith(NCCL)]  # fmt: skip


def steps(path: Path) -> dict[str, Span]:
    return {e["name"]: span_of(e) for e in events(path)
            if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X"
            and e.get("cat") != "gpu_user_annotation"}  # fmt: skip


def host_late_per_step(path: Path) -> dict[str, int]:
    """Per step: the GPU idle time (no GPU op running, from the first step's start) in gaps that
    the host is late for and no sync drained — the next GPU op's launch call began at or after
    the gap began (an op with no launch call: the thread of the next launch call after the gap
    began is taken, else the thread that launches most), and that
    thread was not blocked, as the gap began, in a sync that began before it; less the time that
    thread spent blocked in a sync there (waiting, not late)."""
    return _late_gaps(path, drained=False)


def drained_per_step(path: Path) -> dict[str, int]:
    """Per step: the GPU idle time in the gaps a sync drained — the next GPU op's launch call
    began at or after the gap began, on a thread blocked, as the gap began, in a sync that
    began before it."""
    return _late_gaps(path, drained=True)


def _late_gaps(path: Path, drained: bool) -> dict[str, int]:
    evs = events(path)
    calls = {e["args"]["correlation"]: e for e in evs
             if e.get("cat") in ("cuda_runtime", "cuda_driver")
             and "correlation" in e.get("args", {})}  # fmt: skip
    syncs = [(span_of(e), e["tid"]) for e in evs
             if e.get("cat") == "cuda_runtime" and SYNC.match(e["name"])]  # fmt: skip
    ops = sorted((e for e in evs if e.get("cat") in GPU_CATS and e.get("ph") == "X"),
                 key=lambda e: ns(e["ts"]))  # fmt: skip
    linked = [calls[e["args"]["correlation"]]["tid"] for e in ops
              if e.get("args", {}).get("correlation") in calls]  # fmt: skip
    main = statistics.mode(linked)
    launch_calls = sorted((calls[e["args"]["correlation"]] for e in ops
                           if e.get("args", {}).get("correlation") in calls),
                          key=lambda c: ns(c["ts"]))  # fmt: skip
    busy = union([span_of(e) for e in ops])
    first = min(a for a, _ in steps(path).values())
    if first < busy[0][0]:
        busy.insert(0, (first, first))  # the idle time before the first GPU op
    last = max(b for _, b in steps(path).values())
    if last > busy[-1][1]:
        busy.append((last, last))  # and after the last one, to the last step's end
    chosen = []
    for (_, lo), (hi, _) in itertools.pairwise(busy):
        following = next((e for e in ops if ns(e["ts"]) == hi), {})
        call = calls.get(following.get("args", {}).get("correlation"))
        if call is not None and ns(call["ts"]) < lo:
            continue  # launched before the GPU went idle: queued
        later = [c for c in launch_calls if ns(c["ts"]) >= lo] if following else []
        tid = call["tid"] if call is not None else later[0]["tid"] if later else main
        blocked = any(t == tid and s < lo <= e for (s, e), t in syncs)
        if blocked and drained:
            chosen.append((lo, hi))
        elif not blocked and not drained:
            chosen += minus([(lo, hi)], [span for span, t in syncs if t == tid])
    return {name: length(clip(chosen, a, b)) for name, (a, b) in steps(path).items()}


def paired_waits(a: list[Span], b: list[Span]) -> list[int]:
    """Rank 0's wait at each collective it shares with rank 1: NCCL kernels paired in NCCL's
    order (the shift whose ends agree best), overlapping; rank 1's start on rank 0's clock."""

    def pairs(shift: int) -> list[tuple[Span, Span]]:
        return list(zip(a[max(shift, 0) :], b[max(-shift, 0) :]))  # noqa: B905 (windows differ)

    best = min(range(-3, 4), key=lambda k: statistics.median(abs(x[1] - y[1]) for x, y in pairs(k)))
    found = [(x, y) for x, y in pairs(best) if x[0] < y[1] and y[0] < x[1]]
    offset = int(statistics.median(x[1] - y[1] for x, y in found))
    return [max(0, y[0] + offset - x[0]) for x, y in found]


def overlapping_waits(a: list[Span], b: list[Span], within: int = 1_000_000) -> list[int]:
    """Rank 0's wait at each collective it shares with rank 1 when the ranks are in groups the
    other is not in: a kernel of each rank that overlap and end within `within` ns are one
    collective; rank 1's start on rank 0's clock (the median difference of the ends)."""
    pairs = [(x, y) for x in a for y in b
             if x[0] < y[1] and y[0] < x[1] and abs(x[1] - y[1]) <= within]  # fmt: skip
    offset = int(statistics.median(x[1] - y[1] for x, y in pairs))
    return [max(0, y[0] + offset - x[0]) for x, y in pairs]


# -- per stream, copies, memory, steps (the notebook's series: tests/unit/frames/test_series.py)

HOST_CATS = ("cuda_runtime", "cuda_driver")


def launch_ns(path: Path) -> dict[int, int]:
    """correlation id -> start of the runtime / driver call that has it."""
    return {e["args"]["correlation"]: ns(e["ts"]) for e in events(path)
            if e.get("cat") in HOST_CATS and "correlation" in e.get("args", {})}  # fmt: skip


@cache
def device_ops(path: Path) -> list[dict[str, Any]]:
    """Every kernel, memcpy and memset: device, stream, start, end, its launch call's start (its
    own start when it has none, and never later than that), name, category, bytes."""
    calls = launch_ns(path)
    found = []
    for e in events(path):
        if e.get("cat") not in GPU_CATS or e.get("ph") != "X":
            continue
        args = e.get("args", {})
        start, end = span_of(e)
        called = calls.get(args.get("correlation"), start)
        found.append({"device": args.get("device"), "stream": args.get("stream"), "start": start,
                      "end": end, "called": called, "launch": min(called, start),
                      "name": e["name"], "cat": e["cat"], "bytes": args.get("bytes"),
                      "linked": args.get("correlation") in calls})  # fmt: skip
    return found


def queued(ops: list[dict[str, Any]], device: int, stream: int, t: int) -> int:
    """Ops of one stream launched at or before t and not finished at t."""
    return sum(1 for o in ops if o["device"] == device and o["stream"] == stream
               and o["launch"] <= t < o["end"])  # fmt: skip


COPY = re.compile(r"^Memcpy (HtoD|DtoH|DtoD|HtoH|PtoP)")


def copy_kind(op: dict[str, Any]) -> str:
    if op["cat"] == "gpu_memset":
        return "memset"
    found = COPY.match(op["name"])
    return found.group(1) if found else "other"


def copy_rate(ops: list[dict[str, Any]], device: int, kind: str, t: int) -> float:
    """Bytes per second of the copies of one kind running at t (each its bytes ÷ duration)."""
    return sum(o["bytes"] / (o["end"] - o["start"]) * 1e9 for o in ops
               if o["cat"] != "kernel" and o["device"] == device and copy_kind(o) == kind
               and o["end"] > o["start"] and o["start"] <= t < o["end"])  # fmt: skip


def memory_events(path: Path) -> list[dict[str, Any]]:
    """The allocator's `[memory]` events by time (file order among equal times)."""
    found = [{"time": ns(e["ts"]), "device": e["args"]["Device Id"], "bytes": e["args"]["Bytes"],
              "allocated": e["args"]["Total Allocated"], "reserved": e["args"]["Total Reserved"],
              "addr": e["args"]["Addr"]}
             for e in events(path) if e.get("name") == "[memory]"]  # fmt: skip
    return sorted(found, key=lambda m: m["time"])


def stream_idle(path: Path) -> dict[tuple[int, int], dict[str, int]]:
    """Per (device, stream): span, busy (union), and idle put down to the op after each gap:
    launched after the gap began (host_wait), before it (kernel_wait), unlinked (unknown)."""
    lanes: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for o in device_ops(path):
        lanes.setdefault((o["device"], o["stream"]), []).append(o)
    result = {}
    for lane, ops in lanes.items():
        ops.sort(key=lambda o: o["start"])
        busy = union([(o["start"], o["end"]) for o in ops])
        first: dict[int, dict[str, Any]] = {}  # the first op (in file order) at each start
        for o in ops:
            first.setdefault(o["start"], o)
        causes = {"host_wait": 0, "kernel_wait": 0, "unknown": 0}
        for (_, gap_lo), (gap_hi, _) in itertools.pairwise(busy):
            nxt = first[gap_hi]
            cause = ("unknown" if not nxt["linked"]
                     else "host_wait" if nxt["called"] >= gap_lo else "kernel_wait")  # fmt: skip
            causes[cause] += gap_hi - gap_lo
        span = busy[-1][1] - busy[0][0]
        result[lane] = {"span": span, "busy": length(busy), "gaps": len(busy) - 1, **causes}
    return result


def kernels_called_in(path: Path, lo: int, hi: int) -> list[tuple[str, int]]:
    """(name, start) of the kernels whose launch call (else own start) began in [lo, hi)."""
    return sorted((o["name"], o["start"]) for o in device_ops(path)
                  if o["cat"] == "kernel" and lo <= o["called"] < hi)  # fmt: skip
