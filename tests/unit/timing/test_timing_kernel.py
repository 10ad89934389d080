"""Kernel mode's trace parsing: per-call device time from a marker-separated Kineto trace."""

from __future__ import annotations

from typing import Any

import pytest

from gpuscope.errors import ToolError
from gpuscope.timing.kernel import (
    DeviceEvent,
    device_events,
    split_by_count,
    split_calls,
    summarize_calls,
)

MARK = "spin_kernel(long)"


def _ev(name: str, ts: float, dur: float) -> DeviceEvent:
    return DeviceEvent(name, ts, dur)


def _sequence(calls: int, flush: bool) -> list[DeviceEvent]:
    """marker, [flush], marker, gemm, bias, [flush], marker, gemm, bias, ..."""
    out, t = [_ev(MARK, 0.0, 1.0)], 10.0
    for i in range(calls):
        if flush:
            out.append(_ev("fill_kernel", t, 40.0))
            t += 50
        out += [_ev(MARK, t, 1.0), _ev("gemm", t + 2, 5.0 + i), _ev("bias", t + 8, 1.5)]
        t += 20
    return out


def test_device_events_keeps_kernels_memcpy_and_memset_in_start_order() -> None:
    trace: dict[str, Any] = {
        "traceEvents": [
            {"cat": "kernel", "name": "k2", "ts": 5.0, "dur": 2.0},
            {"cat": "cpu_op", "name": "aten::add", "ts": 1.0, "dur": 9.0},
            {"cat": "Kernel", "name": "k1", "ts": 3.0, "dur": 1.0},
            {"cat": "gpu_memset", "name": "Memset", "ts": 8.0, "dur": 0.5},
            {"ph": "M", "name": "process_name"},
        ]
    }
    assert [e.name for e in device_events(trace)] == ["k1", "k2", "Memset"]


@pytest.mark.parametrize("flush", [False, True])
def test_split_calls_separates_calls_and_drops_the_flush(flush: bool) -> None:
    groups = split_calls(_sequence(3, flush), 3)
    assert [[e.name for e in g] for g in groups] == [["gemm", "bias"]] * 3
    profile = summarize_calls(groups)
    assert profile.per_call_us == (6.5, 7.5, 8.5)
    assert profile.kernels_per_call == 2
    assert profile.names == ("gemm", "bias")


def test_marker_is_found_even_if_something_precedes_it() -> None:
    events = [_ev("leftover", -5.0, 1.0), *_sequence(2, False)]
    groups = split_calls(events, 2)
    assert [len(g) for g in groups] == [2, 2]


@pytest.mark.parametrize("flush", [False, True])
def test_a_dropped_first_marker_is_tolerated(flush: bool) -> None:
    groups = split_calls(_sequence(3, flush)[1:], 3)
    assert [[e.name for e in g] for g in groups] == [["gemm", "bias"]] * 3


def test_missing_markers_are_an_error() -> None:
    with pytest.raises(ToolError, match="marker"):
        split_calls(_sequence(3, False), 5)
    with pytest.raises(ToolError, match="no device activity"):
        split_calls([], 1)


def test_split_by_count_needs_equal_groups() -> None:
    events = [_ev("a", 0, 1), _ev("b", 1, 2), _ev("a", 3, 1), _ev("b", 4, 2)]
    assert summarize_calls(split_by_count(events, 2)).per_call_us == (3.0, 3.0)
    with pytest.raises(ToolError, match="equal calls"):
        split_by_count(events[:3], 2)
