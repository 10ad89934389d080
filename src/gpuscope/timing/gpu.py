"""Device-event timers (hot, cold, graph) for callables that launch work through PyTorch.

Each sample is: [flush] → guard kernel → start event → N calls → end event → wait on the end
event. The guard (a calibrated spin kernel, like NVBench's blocking kernel) keeps the GPU busy
while the host enqueues the start event and the calls, so the window holds device time only,
not host launch latency. If the guard finished before the host was done enqueuing, the sample
is retaken with a longer guard and the underrun is counted. Synchronization is on the end
event (stream level), never the whole device. `torch.cuda` is HIP on ROCm builds.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from gpuscope.errors import InputError

_RETRIES = 4
_MAX_GUARD_US = 100_000.0
_FIRST_HOST_ESTIMATE_US = 50.0
# A call that keeps the device busy this many times longer than the host takes to enqueue one
# needs the guard only until the first call is queued: the host then stays ahead by itself.
_DEVICE_BOUND = 4.0
EVENT_TIMER = "device-events+guard"
GRAPH_TIMER = "graph-replay+device-events+guard"


class Guard:
    """A spin kernel sized from the host's enqueue time; reports when it ran out too early."""

    def __init__(self, torch: ModuleType) -> None:
        self._sleep: Callable[[int], None] | None = getattr(torch.cuda, "_sleep", None)
        self._done = torch.cuda.Event()
        self.slack = 2.0
        self.cycles_per_us = self._calibrate(torch) if self._sleep is not None else 0.0

    @property
    def available(self) -> bool:
        return self._sleep is not None

    def _calibrate(self, torch: ModuleType) -> float:
        assert self._sleep is not None
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        cycles = 2_000_000
        rate = 0.0
        for _ in range(2):  # the first run loads the module and wakes the clocks
            start.record()
            self._sleep(cycles)
            end.record()
            end.synchronize()
            rate = cycles / max(start.elapsed_time(end) * 1000.0, 1e-3)
        return rate

    def enqueue(self, host_us: float) -> None:
        """Spin for `slack` × the expected host enqueue time (+20 µs), then mark the end."""
        if self._sleep is None:
            return
        us = min(self.slack * host_us + 20.0, _MAX_GUARD_US)
        self._sleep(max(1, int(us * self.cycles_per_us)))
        self._done.record()

    def ran_out(self) -> bool:
        """True when the guard already finished: the GPU may have idled inside the window."""
        return self._sleep is not None and bool(self._done.query())


class EventTimer:
    """Hot mode: N back-to-back calls per sample on warm caches."""

    mode = "hot"
    name = EVENT_TIMER
    fixed_calls: int | None = None
    min_sample_us = 500.0
    max_calls = 256

    def __init__(
        self,
        torch: ModuleType,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        self._torch = torch
        self._fn, self._args, self._kwargs = fn, args, kwargs or {}
        self._start = torch.cuda.Event(enable_timing=True)
        self._end = torch.cuda.Event(enable_timing=True)
        self._guard = Guard(torch)
        if not self._guard.available:
            self.name = self.name.replace("+guard", "")
        self._host: list[float] = []
        self._device_us = 0.0  # per-call device time of the last sample
        self._underruns = 0
        self._pairs = [
            (torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
            for _ in range(2)
        ]
        self._in_flight: tuple[Any, Any, int] | None = None

    def first_call(self) -> float:
        stream = self._torch.cuda.current_stream()
        stream.synchronize()
        begin = time.perf_counter()
        self._fn(*self._args, **self._kwargs)
        stream.synchronize()
        return (time.perf_counter() - begin) * 1e6

    def prepare(self, calls: int) -> None:
        """Work enqueued before the guard, outside the timed window (cold: the flush)."""

    def launch(self, calls: int) -> None:
        fn, args, kwargs = self._fn, self._args, self._kwargs
        for _ in range(calls):
            fn(*args, **kwargs)

    @property
    def device_bound(self) -> bool:
        """Hot mode, and the last sample kept the device busy ≥ 4× longer per call than the
        host took to enqueue one: the host stays ahead of the device by itself."""
        host = self._host[-1] if self._host else 0.0
        return self.mode == "hot" and host > 0 and self._device_us >= _DEVICE_BOUND * host

    def covered(self, calls: int) -> int:
        """Calls the guard must cover: all of them, unless device-bound (then the first; a guard
        sized for every call would idle the device for most of its length, lowering its power
        draw under a real loop's). Graph and cold keep all."""
        return 1 if self.device_bound else calls

    def stream(self, calls: int) -> float | None:
        """Enqueue a sample of `calls` calls behind the one in flight — no guard, no wait in
        between, the device never idles, as in a real loop — then wait for the one before and
        return its per-call µs (None on the first). For device-bound calls only (under load,
        `sustain.py`); `stream_end()` waits for the last one and drops it."""
        start, end = self._pairs[0]
        self._pairs.reverse()
        start.record()
        self.launch(calls)
        end.record()
        before, self._in_flight = self._in_flight, (start, end, calls)
        if before is None:
            return None
        s, e, n = before
        e.synchronize()
        self._device_us = float(s.elapsed_time(e)) * 1000.0 / n
        return self._device_us

    def stream_end(self) -> None:
        if self._in_flight is not None:
            self._in_flight[1].synchronize()
            self._in_flight = None

    def sample(self, calls: int) -> float:
        for attempt in range(_RETRIES):
            self.prepare(calls)
            cover = self.covered(calls)
            estimate = (self._host[-1] if self._host else _FIRST_HOST_ESTIMATE_US) * cover
            self._guard.enqueue(estimate)
            begin = time.perf_counter()
            self._start.record()
            self.launch(cover)
            late = self._guard.ran_out()
            if cover < calls:
                self.launch(calls - cover)
            self._end.record()
            self._host.append((time.perf_counter() - begin) * 1e6 / calls)
            self._end.synchronize()
            if not late or attempt == _RETRIES - 1:
                break
            self._underruns += 1
            self._guard.slack *= 2
        self._device_us = float(self._start.elapsed_time(self._end)) * 1000.0 / calls
        return self._device_us

    def host_us_per_call(self) -> float | None:
        return statistics.median(self._host) if self._host else None

    def guard_underruns(self) -> int:
        return self._underruns

    @property
    def guarded(self) -> bool:
        return self._guard.available


def flush_bytes_for(torch: ModuleType, device: int) -> int:
    """At least twice the last-level cache; ROCm MI300-class parts also have a 256 MiB
    Infinity Cache that `L2_cache_size` does not report, hence the 512 MiB floor on HIP."""
    l2 = int(getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0) or 0)
    floor = 512 << 20 if getattr(torch.version, "hip", None) else 32 << 20
    return max(2 * l2, floor)


class ColdTimer(EventTimer):
    """Cold mode: one call per sample after a cache flush enqueued ahead of the guard."""

    mode = "cold"
    fixed_calls: int | None = 1

    def __init__(
        self,
        torch: ModuleType,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
        flush_bytes: int | None = None,
    ) -> None:
        super().__init__(torch, fn, args, kwargs)
        size = flush_bytes or flush_bytes_for(torch, torch.cuda.current_device())
        self.flush_bytes = size
        self._buffer = torch.empty(size, dtype=torch.uint8, device="cuda")

    def prepare(self, calls: int) -> None:
        self._buffer.zero_()


class GraphTimer(EventTimer):
    """Graph mode: N calls captured in one CUDA/HIP graph; each sample times one replay."""

    mode = "graph"
    name = GRAPH_TIMER

    def __init__(
        self,
        torch: ModuleType,
        fn: Callable[..., Any],
        args: tuple[Any, ...] = (),
        kwargs: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(torch, fn, args, kwargs)
        self._graph: Any = None
        self._graph_calls = 0

    def prepare(self, calls: int) -> None:
        if calls != self._graph_calls:
            self._graph = None  # free the old graph's pool before capturing the new one
            self._graph = self._capture(calls)
            self._graph_calls = calls

    def _capture(self, calls: int) -> Any:
        torch = self._torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # capture needs a warm-up on a side stream first
            super().launch(2)
        torch.cuda.current_stream().wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        try:
            with torch.cuda.graph(graph):
                super().launch(calls)
        except RuntimeError as error:
            raise InputError(
                f"the callable cannot be captured in a CUDA/HIP graph ({error}); "
                "time it with mode 'hot' instead"
            ) from error
        return graph

    def launch(self, calls: int) -> None:
        self._graph.replay()
