"""Advice that reads its context: each test builds the pattern an audit found misread on a real
trace and checks the verdict and findings a performance engineer would sign."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import gpuscope
from tests.unit.analysis.conftest import TraceBuilder


def by_id(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in report["findings"]}


def _analyze(builder: TraceBuilder, tmp_path: Path, **kwargs: Any) -> dict[str, Any]:
    result: dict[str, Any] = builder.analyze(tmp_path / "t.json", **kwargs).to_dict()
    return result


def test_a_sync_closing_the_window_while_the_gpu_works_is_not_overhead(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """The decode-loop case: one cudaDeviceSynchronize waits for queued work at the end."""
    for i in range(50):
        builder.launch(f"k{i % 5}", at=10.0 + i, start=100.0 + 20 * i, dur=20.0)
    builder.runtime("cudaDeviceSynchronize", 70.0, 1035.0, corr=10_000)
    report = _analyze(builder, tmp_path, span=(0.0, 1200.0))
    assert report["verdict"]["bound"] == "gpu-bound"
    assert "sync-overhead" not in by_id(report)
    assert report["sync"]["share"] > 0.8  # the host did wait: that is reported, not blamed
    assert report["sync"]["closing"] == {"count": 1, "time_us": 1035.0}
    assert report["sync"]["in_loop_us"] == 0.0
    # the GPU works 100..1100 µs; the sync spans 70..1105 µs, but the closing one is not in-loop
    assert report["sync"]["gpu_busy_during_us"] == 0.0


def test_stream_wait_event_does_not_block_the_host(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.launch("k", at=0.0, start=10.0, dur=10.0)
    for i in range(20):
        builder.runtime("cudaStreamWaitEvent", 30.0 + 10 * i, 8.0, corr=500 + i)
    builder.kernel("Stream Wait Event", 40.0, 100.0, cat="cuda_sync")
    report = _analyze(builder, tmp_path)
    assert report["sync"]["count"] == 0
    assert report["sync"]["time_us"] == 0


def test_blocking_copies_count_as_syncs(builder: TraceBuilder, tmp_path: Path) -> None:
    """hipMemcpyWithStream (PyTorch's synchronous copy on ROCm) and a MemcpyAsync from pageable
    memory both hold the host until the copy is done."""
    builder.runtime("hipMemcpyWithStream", 0.0, 463_000.0, corr=1)
    builder.kernel("Memcpy HtoD (Host -> Device)", 100.0, 462_000.0, corr=1, cat="gpu_memcpy")
    builder.runtime("cudaMemcpyAsync", 470_000.0, 300.0, corr=2)
    builder.kernel("Memcpy DtoH (Device -> Pageable)", 470_010.0, 280.0, corr=2, cat="gpu_memcpy")
    builder.launch("k", at=471_000.0, start=471_010.0, dur=10.0)
    report = _analyze(builder, tmp_path, span=(0.0, 500_000.0))
    by_name = report["sync"]["by_name"]
    assert by_name["hipMemcpyWithStream"]["time_us"] == 463_000.0
    assert by_name["cudaMemcpyAsync"] == {"count": 1, "time_us": 300.0}
    assert report["sync"]["time_us"] == 463_300.0


def test_per_step_item_syncs_are_a_finding(builder: TraceBuilder, tmp_path: Path) -> None:
    """A decode loop that reads a value back every step: the queue drains at every sync, and the
    host's 160 µs of work after it cannot overlap the GPU's 120 µs."""
    t = 0.0
    for step in range(20):
        builder.annotation(f"ProfilerStep#{step}", t, 300.0)
        for i in range(4):
            builder.launch("decode_kernel", at=t + i, start=t + 20 + 30 * i, dur=30.0)
        builder.runtime("cudaStreamSynchronize", t + 10, 130.0, corr=900 + step)
        t += 300.0  # the host works 160 µs after each sync before launching again
    report = _analyze(builder, tmp_path, span=(0.0, t))
    found = by_id(report)
    sync = found["sync-overhead"]
    assert sync["severity"] == "warning"
    assert sync["evidence"]["syncs_per_step"] == 1.0
    # without the sync, each 300 µs step takes at least the host's own 170 µs (300 − 130
    # blocked) and the GPU's 120 µs: at most 130 µs per step saved, over 20 steps
    assert sync["evidence"]["at_most_saved_us"] == 20 * 130.0
    work = found["host-work"]
    # 160 µs a step; in the last one the host's final 20 µs count as its relaunch (the trace
    # ends: nothing says the host went off to its own work)
    assert work["evidence"]["time_us"] == 19 * 160.0 + 140.0
    assert "before the .item() / .cpu() / torch.cuda.synchronize()" in work["action"]


def test_an_event_wait_gap_in_a_graph_replayed_decode_is_not_cpu_bound(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """The audit's decode trace: the step is ≥ 94 % busy, almost every kernel is replayed by a
    graph, and one 463 ms gap is a stream waiting on an event: not CPU-bound, no graph advice."""
    t = 0.0
    for replay in range(5):
        corr = 100 + replay
        builder.runtime("hipGraphLaunch", t, 10.0, corr=corr)
        for i in range(100):
            builder.kernel(f"graph_kernel_{i % 7}", t + 20 + 10 * i, 9.5, corr=corr)
        t += 20 + 1000
    builder.runtime("hipStreamWaitEvent", t - 5, 2.0, corr=998)
    builder.launch("after_the_wait", at=t - 2, start=t + 463_000, dur=50.0)
    report = _analyze(builder, tmp_path, span=(0.0, t + 463_100))
    verdict = report["verdict"]
    assert verdict["bound"] == "gpu-bound", verdict["reason"]
    assert "outside one" in verdict["reason"] and verdict["cause"] == "queued"
    assert verdict["utilization_outside_largest_gap"] > 0.9
    found = by_id(report)
    assert "launch-overhead" not in found and "host-work" not in found
    gap = found["idle-gap"]
    assert gap["evidence"]["cause"] == "queued"
    assert gap["evidence"]["kernel_after"] == "after_the_wait"
    actions = " ".join(f["action"] for f in report["findings"])
    assert "reduce-overhead" not in actions and "torch.cuda.graphs" not in actions
    assert report["gaps"]["largest"]["time_us"] > 462_000


def test_host_late_between_graph_replays_is_not_told_to_use_graphs(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    t = 0.0
    for replay in range(20):
        corr = 100 + replay
        builder.runtime("cudaGraphLaunch", t, 10.0, corr=corr)
        for i in range(50):
            builder.kernel(f"graph_kernel_{i % 7}", t + 20 + 2 * i, 1.5, corr=corr)
        t += 500.0  # the host launches the next replay 380 µs after the last one ends
    report = _analyze(builder, tmp_path, span=(0.0, t))
    assert report["verdict"]["bound"] == "cpu-bound"
    found = by_id(report)
    assert "launch-overhead" not in found  # 380 µs with nothing open: host work, not dispatch
    action = found["host-work"]["action"]
    assert "already replay as CUDA graphs" in action and "torch.cuda.graphs" not in action


def test_a_backed_up_launch_queue_is_not_launch_overhead(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """Short kernels that wait 300 µs in the queue: the GPU sets the pace, not launches."""
    for i in range(200):
        builder.launch("tiny", at=1.0 * i, start=300.0 + 4.0 * i, dur=3.0)
    report = _analyze(builder, tmp_path)
    assert report["verdict"]["bound"] == "gpu-bound"
    assert "many-small-kernels" not in by_id(report)
    assert "host runs ahead" in report["verdict"]["reason"]


def test_small_copies_are_not_advice(builder: TraceBuilder, tmp_path: Path) -> None:
    for i in range(100):
        builder.launch("big_kernel", at=10.0 * i, start=100.0 + 100 * i, dur=100.0)
    for i in range(15):
        builder.kernel(
            "Memcpy HtoD (Pinned -> Device)", 150.0 + 500 * i, 1.3, cat="gpu_memcpy", bytes=64
        )
    report = _analyze(builder, tmp_path)
    assert report["memcpy"]["by_kind"]["HtoD"]["count"] == 15
    assert "host-device-copies" not in by_id(report)  # 0.2 % of busy time: noise, not advice


def test_header_metadata_after_an_object_valued_key(tmp_path: Path) -> None:
    """`distributedInfo` (an object) just before traceEvents used to wipe the whole header."""
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 3, "tid": 7, "ts": 1.0, "dur": 2.0,
              "args": {"device": 3, "stream": 7}}  # fmt: skip
    devices = [{"id": i, "name": f"NVIDIA H100 #{i}", "computeMajor": 9, "computeMinor": 0,
                "numSms": 132} for i in range(8)]  # fmt: skip
    text = (
        '{"schemaVersion": 1, "deviceProperties": ' + json.dumps(devices) + ", "
        '"distributedInfo": {"backend": "nccl", "rank": 3, "world_size": 8}, '
        '"traceEvents": [' + json.dumps(kernel) + "]}"
    )
    path = tmp_path / "rank3.json.gz"
    path.write_bytes(gzip.compress(text.encode()))
    report = gpuscope.analyze(str(path)).to_dict()
    source = report["source"]
    assert (source["rank"], source["world_size"]) == (3, 8)
    assert source["devices"] == [
        {"id": 3, "name": "NVIDIA H100 #3", "arch": "sm_90", "compute_units": 132}
    ]
    assert "no-metadata" not in {f["id"] for f in report["integrity"]}


def test_gemm_heavy_in_a_graph_replay_asks_for_an_eager_step(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """Shapes were recorded, but graph-replayed kernels carry no operator: 'record shapes' would
    be wrong advice."""
    builder.op("aten::mm", 0.0, 5.0, ext=1)  # an eager op elsewhere, with its shapes recorded
    builder.events[-1]["args"]["Input Dims"] = [[64, 64], [64, 64]]
    for replay in range(5):
        corr = 100 + replay
        builder.runtime("cudaGraphLaunch", replay * 200.0, 5.0, corr=corr)
        for i in range(10):
            builder.kernel("sm90_xmma_gemm_bf16", replay * 200.0 + 10 + 15 * i, 14.0, corr=corr)
    found = by_id(_analyze(builder, tmp_path, span=(0.0, 1000.0)))
    heavy = found["gemm-heavy"]
    assert "replayed from CUDA/HIP graphs" in heavy["message"]
    assert heavy["action"].startswith("Profile one eager step")


def test_cpu_bound_advice_on_a_cold_trace_is_provisional() -> None:
    """MI250 training trace: 68 % of the window is first-iteration work (module loading)."""
    traces = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
    path = traces / "hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz"
    if not path.exists():
        import pytest

        pytest.skip(f"reference trace {path.name} not found")
    report = gpuscope.analyze(str(path)).to_dict()
    assert report["cold_start"]["share"] >= 0.25
    assert report["verdict"]["bound"] == "startup-bound"
    startup = report["breakdown"]["share"]["startup"]
    launch = by_id(report)["launch-overhead"]
    assert launch["severity"] == "info" and "start-up holds" in launch["message"]
    assert launch["evidence"]["startup_share"] == round(startup, 4)
    assert launch["action"].startswith("Profile after warm-up first")
