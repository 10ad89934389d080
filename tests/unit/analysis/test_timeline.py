"""Busy time, gaps and what the device waited on, on traces whose answer is known by hand."""

from __future__ import annotations

from pathlib import Path

from tests.unit.analysis.conftest import TraceBuilder


def test_busy_is_the_union_and_overlap_on_one_stream_is_flagged(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    builder.kernel("a", 100.0, 10.0)
    builder.kernel("b", 105.0, 10.0)  # same stream, overlaps a by 5 µs
    builder.kernel("c", 200.0, 1.25, stream=9)
    result = builder.analyze(tmp_path / "t.json").to_dict()
    assert result["kernels"]["time_us"] == 21.25  # raw durations
    assert result["gpu_busy_us"] == 16.25  # union: [100, 115) + [200, 201.25)
    assert result["span_us"] == 101.25
    assert result["idle_us"] == 85.0
    assert [f["id"] for f in result["integrity"]].count("same-stream-overlap") == 1


def test_gap_attribution(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.launch("k1", at=0.0, start=10.0, dur=5.0)
    # host launches k2 only after k1 ended, with nothing else open for 25 µs (the interpreter
    # between operators): the GPU waits on the host's dispatch (30 µs gap: launch)
    builder.launch("k2", at=40.0, start=45.0, dur=5.0)
    # k3 was launched long before; it still starts 20 µs after k2: queued (a dependency)
    builder.launch("k3", at=41.0, start=70.0, dur=5.0)
    # a stream sync that began while k3 ran blocks the host as the GPU goes idle; the GPU then
    # waits for it to return (5 µs) and for the relaunch of k4 (20 µs): sync
    builder.runtime("cudaStreamSynchronize", 60.0, 20.0, corr=999)
    builder.launch("k4", at=81.0, start=100.0, dur=5.0)
    gaps = builder.analyze(tmp_path / "t.json").to_dict()["gaps"]
    attribution = {k: v["time_us"] for k, v in gaps["attribution"].items()}
    assert attribution == {
        "launch": 30.0,
        "host_work": 0.0,
        "sync": 25.0,
        "copy_staging": 0.0,
        "startup": 0.0,
        "host_late": 0.0,
        "queued": 20.0,
        "unknown": 0.0,
    }
    assert {k: v["count"] for k, v in gaps["attribution"].items() if v["count"]} == {
        "launch": 1,
        "sync": 1,
        "queued": 1,
    }
    assert gaps["count"] == 3
    assert gaps["micro"]["count"] == 0


def test_gpu_annotations_never_count_as_busy(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.kernel("k", 10.0, 5.0)
    builder.kernel("region", 0.0, 100.0, cat="gpu_user_annotation")
    result = builder.analyze(tmp_path / "t.json").to_dict()
    assert result["gpu_busy_us"] == 5.0
    assert "annotations-excluded" in [f["id"] for f in result["integrity"]]


def test_graph_launch_is_one_launch_of_many_kernels(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.runtime("cudaGraphLaunch", 0.0, 5.0, corr=50)
    for i in range(4):
        builder.kernel(f"g{i}", 10.0 + 3 * i, 2.0, corr=50)
    builder.launch("plain", at=30.0, start=40.0, dur=1.0)
    result = builder.analyze(tmp_path / "t.json").to_dict()
    launch = result["launch"]
    assert (launch["graph_launches"], launch["graph_kernels"]) == (1, 4)
    assert launch["kernels_per_graph_launch"] == 4.0
    assert launch["queue_delay_us"]["max"] == 10.0  # only the plain kernel
    assert "graph-replay" in [f["id"] for f in result["integrity"]]


def test_unlinked_kernels_are_flagged(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.kernel("orphan", 10.0, 1.0)
    builder.launch("linked", at=0.0, start=20.0, dur=1.0)
    flags = [f["id"] for f in builder.analyze(tmp_path / "t.json").to_dict()["integrity"]]
    assert "unlinked-kernels" in flags


def test_kernels_without_correlation_link_through_flow_events(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    builder.runtime("cudaLaunchKernel", 0.0, 3.0, corr=-1)
    builder.kernel("k", 12.0, 2.0)  # no correlation id: only the flow pair links them
    flow = {"cat": "ac2g", "name": "ac2g", "id": 77}
    builder.events.append({**flow, "ph": "s", "pid": 100, "tid": 100, "ts": 0.0})
    builder.events.append({**flow, "ph": "f", "bp": "e", "pid": 0, "tid": 7, "ts": 12.0})
    launch = builder.analyze(tmp_path / "t.json").to_dict()["launch"]
    assert launch["linked"] == 1
    assert launch["queue_delay_us"]["max"] == 12.0
