"""Kineto traces read with the standard library only (json, Decimal, plain loops), for tests
that check gpuscope's cross-rank numbers against the raw events: GPU ops, NCCL kernels, the
ProfilerStep ranges, the host's time after a blocking sync before its next launch, and the
waits of one rank for another at the collectives they share."""

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


def after_sync_per_step(path: Path) -> dict[str, int]:
    """Per step: GPU idle from each blocking sync's return to the next launch call, not counting
    time the host was blocked in another sync."""
    evs = events(path)
    correlated = {e["args"]["correlation"] for e in evs
                  if e.get("cat") in GPU_CATS and "correlation" in e.get("args", {})}  # fmt: skip
    launches = sorted(ns(e["ts"]) for e in evs
                      if e.get("cat") in ("cuda_runtime", "cuda_driver")
                      and e.get("args", {}).get("correlation") in correlated)  # fmt: skip
    syncs = [span_of(e) for e in evs if (e.get("cat") == "cuda_runtime" and SYNC.match(e["name"]))
             or (e.get("cat") == "cuda_sync" and "Wait" not in e["name"])]  # fmt: skip
    host_late = []
    for _, end in union(syncs):
        following = [t for t in launches if t >= end]
        if following:
            host_late.append((end, following[0]))
    idle = minus(host_late, gpu_ops(path) + syncs)
    return {name: length(clip(idle, lo, hi)) for name, (lo, hi) in steps(path).items()}


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
