"""Synthetic Kineto traces for the diff tests: steps of launched kernels whose durations the test
chooses, so that every expected number is known before gpuscope reads the file.

A step is a `ProfilerStep#N` range; in it each kernel gets a CPU operator (with recorded input
dims and types), a `cudaLaunchKernel` linked to the kernel, and the kernel itself, `gap` µs
(GAP_US unless told) after the previous one ends. All times are µs, as Kineto writes them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

GAP_US = 100.0  # host time between kernels: the GPU waits (a cpu-bound trace)
STEP_TAIL_US = 50.0  # host time after the last kernel of a step


@dataclass(frozen=True)
class Call:
    """One kernel launch: its name, duration (µs) and the operator that launched it."""

    kernel: str
    dur: float
    op: str = "aten::mm"
    dims: tuple[tuple[int, ...], ...] = ()
    types: tuple[str, ...] = ()


@dataclass
class Writer:
    device: str = "NVIDIA H100 80GB HBM3"
    gap: float = GAP_US  # host time between kernels
    events: list[dict[str, Any]] = field(default_factory=list)
    clock: float = 1000.0
    next_id: int = 1
    step_walls: list[float] = field(default_factory=list)  # what each step range lasted

    def step(self, number: int, calls: list[Call]) -> None:
        start = self.clock
        for call in calls:
            self._launch(call)
        self.clock += STEP_TAIL_US
        self.step_walls.append(self.clock - start)
        self.events.append(_x("user_annotation", f"ProfilerStep#{number}", 1, 1, start,
                              self.clock - start, {}))  # fmt: skip
        self.clock += 10.0

    def loose(self, calls: list[Call]) -> None:
        """Launches outside any step."""
        for call in calls:
            self._launch(call)

    def _launch(self, call: Call) -> None:
        ext, corr = self._id(), self._id()
        at = self.clock
        args: dict[str, Any] = {"External id": ext}
        if call.dims:
            args["Input Dims"] = [list(d) for d in call.dims]
            args["Input type"] = list(call.types) or ["c10::BFloat16"] * len(call.dims)
        self.events.append(_x("cpu_op", call.op, 1, 1, at, 8.0, args))
        launch = {"External id": ext, "correlation": corr}
        self.events.append(_x("cuda_runtime", "cudaLaunchKernel", 1, 1, at + 1.0, 5.0, launch))
        kernel = {"External id": ext, "correlation": corr, "device": 0, "stream": 7}
        self.events.append(_x("kernel", call.kernel, 0, 7, at + 7.0, call.dur, kernel))
        self.clock = at + 7.0 + call.dur + self.gap

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id

    def write(self, path: Path) -> Path:
        span = _x("Trace", "PyTorch Profiler (0)", "Spans", "P", 0.0, self.clock + 10.0, {})
        doc = {
            "schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": self.device}],
            "traceEvents": [*self.events, span],
        }
        path.write_text(json.dumps(doc))
        return path


def _x(
    cat: str, name: str, pid: Any, tid: Any, ts: float, dur: float, args: dict[str, Any]
) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": round(ts, 3),
            "dur": round(dur, 3), "args": args}  # fmt: skip
