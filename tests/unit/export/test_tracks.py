"""Slices that do not nest move to overlap rows; a trace without timestamps is laid end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from gpuscope.export import export_perfetto
from gpuscope.export._tracks import lanes
from gpuscope.trace.model import (
    CpuOps,
    Flows,
    GpuAnnotations,
    GpuOps,
    HostCalls,
    Syncs,
    Trace,
    TraceMeta,
)
from tests.unit.export.chrome_trace_check import check, load


def test_lanes_keep_nesting_and_split_overlaps() -> None:
    # (start, end): a parent, its child, a slice crossing the parent's end, one after both
    start = np.array([0, 10, 50, 200], np.int64)
    end = np.array([100, 20, 150, 210], np.int64)
    assert lanes(start, end).tolist() == [0, 0, 1, 0]
    assert lanes(np.array([0, 5], np.int64), np.array([5, 9], np.int64)).tolist() == [0, 0]


def _trace(gpu: GpuOps, provides: frozenset[str]) -> Trace:
    meta = TraceMeta(
        path="synthetic", format="test", schema="1", vendor="nvidia", devices=(),
        base_time_ns=None, profiler_span=None, rank=None, world_size=None, event_counts={},
        truncated=False, warnings=(), provides=provides, clock="",
    )  # fmt: skip
    return Trace(meta=meta, names=("k0", "k1", "k2"), gpu=gpu, host=HostCalls.empty(),
                 ops=CpuOps.empty(), syncs=Syncs.empty(),
                 gpu_annotations=GpuAnnotations.empty(), flows=Flows.empty())  # fmt: skip


def _export(trace: Trace, tmp_path: Path, monkeypatch: object) -> list[dict[str, object]]:
    import gpuscope.export.perfetto as perfetto

    def read_all(path: str, warnings: list[str], several: bool):  # type: ignore[no-untyped-def]
        yield trace, "synthetic"

    monkeypatch.setattr(perfetto, "_read_all", read_all)  # type: ignore[attr-defined]
    out = tmp_path / "t.json"
    export_perfetto(["synthetic"], out)
    report = check(str(out))
    assert report.ok, report.errors
    events: list[dict[str, object]] = load(str(out))["traceEvents"]
    return events


def test_overlapping_kernels_of_one_stream_get_a_second_row(
    tmp_path: Path, monkeypatch: object
) -> None:
    """Programmatic dependent launch: k1 starts before k0 ends on the same stream."""
    gpu = GpuOps.from_columns({"kind": [0, 0, 0], "name": [0, 1, 2], "start": [0, 900, 2000],
                               "dur": [1000, 500, 100], "device": [0, 0, 0],
                               "stream": [7, 7, 7]})  # fmt: skip
    events = _export(_trace(gpu, frozenset({"kernels", "timestamps"})), tmp_path, monkeypatch)
    rows = {e["name"]: e["tid"] for e in events if e["ph"] == "X"}
    assert rows["k0"] == rows["k2"] != rows["k1"]
    names = {e["tid"]: e["args"]["name"] for e in events if e["name"] == "thread_name"}  # type: ignore[index]
    assert names[rows["k1"]] == "stream 7 (overlap 1)"


def test_without_timestamps_dispatches_are_laid_end_to_end(
    tmp_path: Path, monkeypatch: object
) -> None:
    gpu = GpuOps.from_columns({"kind": [0, 0, 0], "name": [0, 1, 2], "start": [-1, -1, -1],
                               "dur": [3000, -1, 2000], "device": [0, 0, 0],
                               "stream": [7, 7, 7]})  # fmt: skip
    events = _export(_trace(gpu, frozenset({"kernels"})), tmp_path, monkeypatch)
    slices = sorted((e["ts"], e["dur"], e["name"]) for e in events if e["ph"] == "X")
    # 3 µs, then 1 µs for the unknown duration, then 2 µs
    assert slices == [(0.0, 3.0, "k0"), (3.0, 1.0, "k1"), (4.0, 2.0, "k2")]
