"""A tiny Kineto trace writer for analysis tests: events with known times, in µs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.pipeline import analyze
from gpuscope.trace.registry import read_trace


class TraceBuilder:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.next_id = 1

    def op(self, name: str, ts: float, dur: float, ext: int | None = None) -> int:
        ext = ext if ext is not None else self._id()
        self.events.append(_x("cpu_op", name, 100, 100, ts, dur, {"External id": ext}))
        return ext

    def annotation(self, name: str, ts: float, dur: float) -> None:
        self.events.append(_x("user_annotation", name, 100, 100, ts, dur, {}))

    def runtime(self, name: str, ts: float, dur: float, corr: int, ext: int = -1) -> None:
        args = {"correlation": corr, "External id": ext}
        self.events.append(_x("cuda_runtime", name, 100, 100, ts, dur, args))

    def kernel(
        self,
        name: str,
        ts: float,
        dur: float,
        corr: int = -1,
        ext: int = -1,
        stream: int = 7,
        cat: str = "kernel",
        device: int = 0,
        **extra: Any,
    ) -> None:
        args = {"device": device, "stream": stream, "correlation": corr, "External id": ext}
        args.update(extra)
        self.events.append(_x(cat, name, device, stream, ts, dur, args))

    def launch(self, name: str, at: float, start: float, dur: float, ext: int = -1) -> None:
        """A cudaLaunchKernel at `at` and its kernel at `start`."""
        corr = self._id()
        self.runtime("cudaLaunchKernel", at, 2.0, corr, ext)
        self.kernel(name, start, dur, corr, ext)

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def write(self, path: Path, span: tuple[float, float] | None = (0.0, 10_000.0)) -> str:
        events = list(self.events)
        if span is not None:
            events.append(_x("Trace", "PyTorch Profiler (0)", "Spans", "P", span[0], span[1], {}))
        doc = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}],
            "cupti_version": 1,
            "traceEvents": events,
        }
        path.write_text(json.dumps(doc))
        return str(path)

    def analyze(self, path: Path, **kwargs: Any) -> Analysis:
        return analyze(read_trace(self.write(path, **kwargs)))


def _x(
    cat: str, name: str, pid: Any, tid: Any, ts: float, dur: float, args: dict[str, Any]
) -> dict[str, Any]:
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": pid,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


@pytest.fixture
def builder() -> TraceBuilder:
    return TraceBuilder()
