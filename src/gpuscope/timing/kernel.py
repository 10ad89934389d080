"""Kernel mode: the device's own kernel durations per call, from the PyTorch profiler (Kineto).

This is the ground truth the event modes are validated against. Calls are separated on the
device timeline by a marker (a zero-length spin kernel): the profiled sequence is

    marker, [flush], marker, fn, [flush], marker, fn, ...

so the first marker names the marker kernel, the events between the first two markers are the
flush's signature, and each later segment is one call (minus its trailing flush). The time of a
call is the sum of the durations of its kernels, memcpys and memsets.
"""

from __future__ import annotations

import json
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuscope.errors import ToolError

DEVICE_CATEGORIES = frozenset({"kernel", "gpu_memcpy", "gpu_memset"})
TIMER = "profiler-kernel-durations"


@dataclass(frozen=True)
class DeviceEvent:
    """One device activity from the trace; times in µs."""

    name: str
    ts: float
    dur: float


@dataclass(frozen=True)
class KernelProfile:
    """Per-call device time (µs) and what ran in each call."""

    per_call_us: tuple[float, ...]
    kernels_per_call: float
    names: tuple[str, ...]


def device_events(trace: dict[str, Any]) -> list[DeviceEvent]:
    """Kernels, memcpys and memsets of a Chrome-format (Kineto) trace, in start order."""
    found = [
        DeviceEvent(str(e.get("name", "")), float(e["ts"]), float(e.get("dur", 0.0)))
        for e in trace.get("traceEvents", [])
        if isinstance(e, dict) and str(e.get("cat", "")).lower() in DEVICE_CATEGORIES and "ts" in e
    ]
    return sorted(found, key=lambda e: e.ts)


def _strip(segment: list[DeviceEvent], signature: Sequence[str]) -> list[DeviceEvent]:
    k = len(signature)
    if k and [e.name for e in segment[-k:]] == list(signature):
        return segment[:-k]
    return segment


def marker_name(events: Sequence[DeviceEvent], calls: int) -> str:
    """The marker kernel: a spin/sleep kernel occurring calls + 1 times (or calls, when the
    profiler dropped the very first one); failing that, the first event's kernel."""
    if not events:
        raise ToolError("the profiler recorded no device activity; is the GPU profiler usable?")
    counts = Counter(e.name for e in events)
    right = [name for name, count in counts.items() if count in (calls, calls + 1)]
    spins = [name for name in right if "spin" in name.lower() or "sleep" in name.lower()]
    if spins:
        return spins[0]
    if events[0].name in right:
        return events[0].name
    raise ToolError(
        f"no marker kernel occurs {calls + 1} times among {len(events)} device events; "
        "another process or stream may be using the GPU, or the profiler dropped kernels"
    )


def split_calls(events: Sequence[DeviceEvent], calls: int) -> list[list[DeviceEvent]]:
    """Per-call device events of a marker-separated sequence (see the module docstring).

    The last `calls` markers open the calls; what lies between the marker before them (or the
    start) and the first call's marker is the flush's signature, stripped from each call's end.
    """
    marker = marker_name(events, calls)
    marks = [i for i, e in enumerate(events) if e.name == marker]
    opens = marks[-calls:]
    before = marks[-calls - 1] if len(marks) > calls else -1
    signature = [e.name for e in events[before + 1 : opens[0]]]
    ends = [*opens[1:], len(events)]
    segments = [list(events[i + 1 : j]) for i, j in zip(opens, ends, strict=True)]
    return [_strip(s, signature) for s in segments[:-1]] + [segments[-1]]


def split_by_count(events: Sequence[DeviceEvent], calls: int) -> list[list[DeviceEvent]]:
    """Fallback without markers: equal consecutive groups (needs the same kernels every call)."""
    per = len(events) // calls if calls else 0
    if per == 0 or per * calls != len(events):
        raise ToolError(
            f"{len(events)} device events do not split into {calls} equal calls and no marker "
            "kernel is available (torch.cuda._sleep); use mode 'hot'"
        )
    return [list(events[i * per : (i + 1) * per]) for i in range(calls)]


def summarize_calls(groups: Sequence[Sequence[DeviceEvent]]) -> KernelProfile:
    per_call = tuple(sum(e.dur for e in g) for g in groups)
    count = sum(len(g) for g in groups) / len(groups)
    names = tuple(e.name for e in groups[0]) if groups else ()
    return KernelProfile(per_call_us=per_call, kernels_per_call=count, names=names)


def _trace_of(prof: Any) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="gpuscope-") as tmp:
        path = Path(tmp) / "trace.json"
        prof.export_chrome_trace(str(path))
        loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def profile(
    torch: ModuleType,
    call: Callable[[], Any],
    calls: int,
    flush: Callable[[], Any] | None = None,
) -> KernelProfile:
    """Run `call` `calls` times under the profiler and return per-call device time."""
    marker: Callable[[int], None] | None = getattr(torch.cuda, "_sleep", None)
    stream = torch.cuda.current_stream()
    stream.synchronize()
    from torch.profiler import ProfilerActivity
    from torch.profiler import profile as torch_profile

    # The profiler warns about its own set-up (e.g. CUPTI notes); they say nothing about `call`.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        with torch_profile(activities=activities) as prof:
            _enqueue(call, calls, flush, marker)
            stream.synchronize()
        events = device_events(_trace_of(prof))
    groups = split_calls(events, calls) if marker else split_by_count(events, calls)
    return summarize_calls(groups)


def _enqueue(
    call: Callable[[], Any],
    calls: int,
    flush: Callable[[], Any] | None,
    marker: Callable[[int], None] | None,
) -> None:
    if marker is None:
        for _ in range(calls):
            if flush is not None:
                raise ToolError("kernel mode with a flush needs torch.cuda._sleep as a marker")
            call()
        return
    marker(1)
    for _ in range(calls):
        if flush is not None:
            flush()
        marker(1)
        call()
