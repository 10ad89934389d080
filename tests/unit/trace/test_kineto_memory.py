"""The allocator's events of a torch.profiler trace (profile_memory=True: Kineto's `[memory]`
instant events) kept in `Trace.memory`, on small synthetic files: every field, host memory,
other instant events left out, the lenient decode, many batches."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
import pytest

from gpuscope.trace import _jsonstream
from gpuscope.trace.readers.kineto import KinetoReader
from gpuscope.trace.readers.kineto import _decode as dec


def memory(ts: float, size: Any, allocated: int, device: int = 0, **args: Any) -> dict[str, Any]:
    addr = 0x7F0000000000 + abs(size) * 16 if isinstance(size, int) else 1
    return {"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1,
            "tid": 2, "ts": ts, "args": {"Total Reserved": 1 << 21, "Total Allocated": allocated,
            "Bytes": size, "Device Id": device, "Device Type": 1 if device >= 0 else 0,
            "Addr": addr, "Ev Idx": 1, **args}}  # fmt: skip


def kernel(i: int) -> dict[str, Any]:
    return {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1000.0 + 10 * i,
            "dur": 1.5, "args": {"device": 0, "stream": 7, "correlation": i}}  # fmt: skip


def read(tmp_path: Path, events: list[dict[str, Any]]) -> Any:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    return KinetoReader().read(str(path))


def test_every_field_of_an_allocation_and_a_free(tmp_path: Path) -> None:
    start = {"ph": "i", "cat": "cpu_instant_event", "name": "Iteration Start: PyTorch Profiler",
             "ts": 999, "pid": 1, "tid": 2}  # fmt: skip
    events = [kernel(0), memory(1000.25, 4096, 4096), memory(1002.5, 8, 8, device=-1),
              memory(1003.125, -4096, 0), start]  # fmt: skip
    trace = read(tmp_path, events)
    m = trace.memory
    assert len(m) == 3 and "memory" in trace.meta.provides
    assert m.start.tolist() == [1_000_250, 1_002_500, 1_003_125]
    assert m.bytes.tolist() == [4096, 8, -4096] and m.allocated.tolist() == [4096, 8, 0]
    assert m.device.tolist() == [0, -1, 0] and m.device.dtype == np.int32
    assert m.reserved.tolist() == [1 << 21] * 3 and m.tid.tolist() == [2, 2, 2]
    assert m.addr.tolist() == [0x7F0000000000 + s * 16 for s in (4096, 8, 4096)]
    assert len(trace.gpu) == 1 and trace.meta.event_counts["cpu_instant_event"] == 4


def test_a_trace_without_them_has_an_empty_table(tmp_path: Path) -> None:
    trace = read(tmp_path, [kernel(0), kernel(1)])
    assert len(trace.memory) == 0 and "memory" not in trace.meta.provides


def test_odd_values_are_read_leniently(tmp_path: Path) -> None:
    events = [kernel(0), memory(1001.0, "512", 512), memory(1002.0, None, -1, Addr="0x10")]
    trace = read(tmp_path, events)
    assert trace.memory.bytes.tolist() == [512, 0]  # an unknown size is 0, not -1 (a free)
    assert trace.memory.addr.tolist()[1] == 16
    assert any("leniently" in w for w in trace.meta.warnings)


def test_many_batches_keep_every_allocator_event(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_jsonstream, "BATCH", 300)
    monkeypatch.setattr(_jsonstream, "BLOCK", 97)
    events = [kernel(i) for i in range(40)] + [memory(2000.0 + i, 64, 64 * (i + 1))
                                               for i in range(5)]  # fmt: skip
    trace = read(tmp_path, events)
    assert len(trace.memory) == 5 and trace.memory.allocated.tolist()[-1] == 320
    assert msgspec.json.decode(b'{"Bytes": -8}', type=dec.Args).mem_bytes == -8
