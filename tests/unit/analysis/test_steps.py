"""Per-step and per-phase time: the step table, variance over the steady steps (warm-up left out,
no verdict on a trace that never settles), phases from user ranges and from autograd, steps timed
on the device when the host runs ahead — on traces built here with hand-computed numbers, and on
the reference traces recounted with plain JSON loading."""

from __future__ import annotations

import gzip
import json
import statistics
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.pipeline import analyze
from gpuscope.trace.registry import read_trace
from tests.unit.analysis.conftest import TraceBuilder

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.steps])


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["steps"]
    assert found is not None
    return dict(found)


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


def steps_of(b: TraceBuilder, walls: list[float], sync_in: int = -1) -> float:
    """Steps of the given wall times, back to back; each runs one aten::mm launching a 300 µs
    kernel 100 µs into the step. Step `sync_in` also blocks in a 600 µs synchronize inside an
    aten::item. Returns the end of the last step."""
    t = 0.0
    for i, wall in enumerate(walls):
        b.annotation(f"ProfilerStep#{i}", t, wall)
        ext = b.op("aten::mm", t + 10, 50)
        b.launch("gemm_kernel", at=t + 20, start=t + 100, dur=300, ext=ext)
        if i == sync_in:
            b.op("aten::item", t + 410, 610)
            b.runtime("cudaDeviceSynchronize", t + 420, 600, corr=90_000 + i)
        t += wall
    return t


# ---------------------------------------------------------------- the step table and variance


def test_step_table_and_a_sync_that_runs_in_one_step_only(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    walls = [1000.0, 1000.0, 1600.0, 1000.0, 1000.0]
    end = steps_of(builder, walls, sync_in=2)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    got = part(a)
    assert got["count"] == 5 and got["warmup_steps"] == 0 and got["timed_by"] == "host"
    for i, row in enumerate(got["steps"]):
        assert row["name"] == f"ProfilerStep#{i}"
        assert row["wall_us"] == walls[i]
        assert row["gpu_busy_us"] == 300.0  # the one kernel, inside its step
        assert row["idle_us"] == walls[i] - 300.0
        assert row["kernels"] == 1
        assert row["sync_us"] == (600.0 if i == 2 else 0.0)
        assert row["device_span_us"] == 300.0
        assert row["host_ops_us"] == 50.0 + (610.0 if i == 2 else 0.0)
    mean = statistics.fmean(walls)
    cv = statistics.pstdev(walls) / mean
    assert got["time"]["cv"] == pytest.approx(cv, abs=1e-6)
    assert got["time"]["median_us"] == statistics.median(walls)
    variance = by_id(a)["step-variance"]
    excess = sum(max(w - statistics.median(walls), 0) for w in walls) / sum(walls)
    assert variance["severity"] == ("warning" if excess >= 0.05 else "info") == "warning"
    evidence = variance["evidence"]
    assert evidence["cv"] == pytest.approx(cv, abs=1e-4)
    assert evidence["time_above_median_share"] == pytest.approx(excess, abs=1e-4)
    assert evidence["slowest"] == {"name": "ProfilerStep#2", "time_us": 1600.0}
    assert evidence["slowest_vs_median_us"]["sync"] == 600.0
    assert evidence["slowest_vs_median_us"]["compute"] == 0.0
    assert evidence["slowest_vs_median_ops"] == 1.0  # its aten::item
    assert f"CV {cv:.0%}" in variance["message"]
    assert ".item()" in variance["action"]  # the extra time is a host sync


def test_steady_steps_below_the_threshold_are_not_a_finding(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    walls = [1000.0, 1050.0, 1000.0, 1080.0, 1000.0]
    assert statistics.pstdev(walls) / statistics.fmean(walls) < 0.10
    end = steps_of(builder, walls)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    assert part(a)["count"] == 5
    assert "step-variance" not in by_id(a)


def test_a_warm_up_step_is_left_out_of_the_statistics(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    walls = [3000.0, 1000.0, 1100.0, 1000.0, 1050.0]
    end = steps_of(builder, walls)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, end)))
    assert got["warmup_steps"] == 1 and got["steady_count"] == 4
    steady = walls[1:]
    assert got["time"]["max_us"] == max(steady)
    assert got["time"]["cv"] == pytest.approx(
        statistics.pstdev(steady) / statistics.fmean(steady), abs=1e-6
    )


def test_steps_that_never_settle_get_no_variance_verdict(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """Two warm-up steps, and the three left still get faster one after another."""
    walls = [3000.0, 2000.0, 1500.0, 1200.0, 1000.0]
    steady = walls[2:]
    assert statistics.pstdev(steady) / statistics.fmean(steady) >= 0.10
    end = steps_of(builder, walls)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, end))
    assert part(a)["warmup_steps"] == 2
    assert "step-variance" not in by_id(a)


def test_an_empty_closing_step_is_left_out_and_named(builder: TraceBuilder, tmp_path: Path) -> None:
    end = steps_of(builder, [1000.0, 1000.0, 1000.0])
    builder.annotation("ProfilerStep#3", end, 5.0)  # opened by the last prof.step(): nothing in it
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, end + 5)))
    assert got["count"] == 3 and got["left_out"] == ["ProfilerStep#3"]


# ---------------------------------------------------------------- device-timed steps


def test_gpu_bound_steps_are_timed_by_the_device_span_of_their_work(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """The host enqueues each step in 100 µs; the GPU runs 4 × 250 µs per step back to back, so
    the host ranges measure how fast the queue fills, not the step."""
    gpu_t = 50.0
    spans = []
    for step in range(4):
        host_t = 200.0 * step
        builder.annotation(f"ProfilerStep#{step}", host_t, 100.0)
        first = gpu_t
        for k in range(4):
            ext = builder.op("aten::mm", host_t + 8 + 20 * k, 10)
            builder.launch("gemm_kernel", host_t + 10 + 20 * k, gpu_t, 250.0, ext)
            gpu_t += 250.0
        spans.append(gpu_t - first)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, gpu_t + 10))
    assert a.verdict.bound == "gpu-bound"
    got = part(a)
    assert got["timed_by"] == "device"
    assert [r["device_span_us"] for r in got["steps"]] == spans
    assert [r["launched_us"] for r in got["steps"]] == [1000.0] * 4
    assert got["time"]["median_us"] == statistics.median(spans)
    # the GPU work of a step is what it launched, not what ran inside its short host range
    assert got["gpu_busy"]["median_us"] == 1000.0 and got["gpu_busy"]["cv"] == 0.0


# ---------------------------------------------------------------- phases


def test_phases_from_user_ranges(builder: TraceBuilder, tmp_path: Path) -> None:
    builder.annotation("ProfilerStep#0", 0.0, 1000.0)
    for name, (lo, hi) in {
        "## forward ##": (0.0, 300.0),
        "## backward ##": (300.0, 700.0),
        "Optimizer.step#AdamW.step": (700.0, 800.0),
    }.items():
        builder.annotation(name, lo, hi - lo)
        builder.launch(f"{name}_kernel", at=lo + 10, start=lo + 20, dur=50.0)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 1000.0)))
    phases = {p["name"]: p for p in got["phases"]}
    assert {p["source"] for p in got["phases"]} == {"ranges"}
    assert phases["forward"]["wall_us"] == 300.0 and phases["backward"]["wall_us"] == 400.0
    assert phases["optimizer"]["wall_us"] == 100.0
    for p in phases.values():
        assert p["gpu_busy_us"] == 50.0 and p["launched_us"] == 50.0
    assert phases["backward"]["share_of_steps"] == pytest.approx(0.4)


def seq_op(b: TraceBuilder, name: str, ts: float, dur: float, seq: int, tid: int = 100) -> None:
    b.events.append(
        {"ph": "X", "cat": "cpu_op", "name": name, "pid": 100, "tid": tid, "ts": ts, "dur": dur,
         "args": {"External id": b._id(), "Sequence number": seq}}
    )  # fmt: skip


def test_autograd_phases_leave_zero_grad_to_the_optimizer(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """zero_grad's aten::zero_ records the current sequence number (that of the last forward
    op): it must not stretch forward back over zero_grad, or phases overlap."""
    builder.annotation("ProfilerStep#0", 0.0, 1000.0)
    builder.annotation("Optimizer.zero_grad#AdamW.zero_grad", 10.0, 80.0)
    seq_op(builder, "aten::zero_", 20.0, 30.0, seq=7)
    seq_op(builder, "aten::mm", 100.0, 50.0, seq=6)  # forward: 100 .. 350
    seq_op(builder, "aten::mul", 300.0, 50.0, seq=7)
    backward = "autograd::engine::evaluate_function: MmBackward0"
    seq_op(builder, backward, 400.0, 200.0, seq=6, tid=200)  # backward: 400 .. 800
    seq_op(builder, "autograd::engine::evaluate_function: MulBackward0", 650.0, 150.0, 7, 200)
    builder.annotation("Optimizer.step#AdamW.step", 850.0, 100.0)
    builder.launch("k", at=110.0, start=120.0, dur=10.0)
    got = part(builder.analyze(tmp_path / "t.json", span=(0.0, 1000.0)))
    phases = {p["name"]: p for p in got["phases"]}
    assert phases["forward"]["source"] == "autograd"
    assert phases["forward"]["wall_us"] == 250.0
    assert phases["backward"]["wall_us"] == 400.0
    assert phases["optimizer"]["source"] == "ranges"
    assert phases["optimizer"]["wall_us"] == 80.0 + 100.0
    assert sum(p["share_of_steps"] for p in got["phases"]) <= 1.0
    assert got["backward_threads"] == [200]


# ---------------------------------------------------------------- reference traces


def reference(name: str) -> tuple[Analysis, list[dict[str, Any]]]:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    opener = gzip.open if name.endswith(".gz") else open
    with opener(path, "rt") as handle:  # exact decimals: µs with ns fractions do not fit floats
        events = [e for e in json.load(handle, parse_float=Decimal)["traceEvents"]]
    return analyze(read_trace(str(path))), [e for e in events if e.get("ph") == "X"]


def union_inside(intervals: list[tuple[Any, Any]], lo: Any, hi: Any) -> float:
    """Length of the union of the intervals clipped to [lo, hi), by a plain sort-and-sweep."""
    total, reach = Decimal(0), lo
    for start, end in sorted(intervals):
        start, end = max(start, reach), min(end, hi)
        if end > start:
            total += end - start
            reach = end
    return float(total)


def profiler_steps(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    steps = [e for e in events if e["name"].startswith("ProfilerStep#")]
    return sorted(steps, key=lambda e: e["ts"])


def test_reference_ddp_steps_and_phases_that_do_not_overlap() -> None:
    a, events = reference("hta__v100_profile_memory_nccl_rank1_BENCH.json.gz")
    steps = profiler_steps(events)
    gpu = [(e["ts"], e["ts"] + e["dur"]) for e in events if e.get("cat") in GPU_CATS]
    got = part(a)
    assert got["timed_by"] == "host"
    assert [r["name"] for r in got["steps"]] == [s["name"] for s in steps]
    for row, step in zip(got["steps"], steps, strict=True):
        lo, hi = step["ts"], step["ts"] + step["dur"]
        assert row["wall_us"] == pytest.approx(step["dur"], abs=1e-3)
        assert row["gpu_busy_us"] == pytest.approx(union_inside(gpu, lo, hi), abs=1e-2)
    walls = [float(s["dur"]) for s in steps]
    cv = statistics.pstdev(walls) / statistics.fmean(walls)
    assert got["time"]["cv"] == pytest.approx(cv, abs=1e-6)
    # forward (from autograd) starts after zero_grad: the three phases share no time
    shares = [p["share_of_steps"] for p in got["phases"]]
    assert [p["name"] for p in got["phases"]] == ["forward", "backward", "optimizer"]
    assert sum(shares) <= 1.0


def test_reference_gpu_bound_steps_timed_on_the_device() -> None:
    """V100 training, GPU-bound with the host far ahead: each step's time is on the device's
    clock, from the end of the previous step's work to the end of the work its launches
    enqueued (linked by correlation id; recounted here), so the steps tile the device's time."""
    a, events = reference("hta__v100_ns_resolution_rank0.json.gz")
    launched_at = {
        e["args"]["correlation"]: e["ts"]
        for e in events
        if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})
    }
    device = [e for e in events if e.get("cat") in GPU_CATS]
    got = part(a)
    assert got["timed_by"] == "device"
    spans = []
    previous_end = None
    for row, step in zip(got["steps"], profiler_steps(events), strict=True):
        lo, hi = step["ts"], step["ts"] + step["dur"]
        mine = [
            e for e in device if lo <= launched_at.get(e["args"].get("correlation"), e["ts"]) < hi
        ]
        first = min(e["ts"] for e in mine)
        last = max(e["ts"] + e["dur"] for e in mine)
        spans.append(float(last - (first if previous_end is None else previous_end)))
        previous_end = last
        assert row["device_span_us"] == pytest.approx(float(last - first), abs=1e-3)
        assert row["launched_us"] == pytest.approx(float(sum(e["dur"] for e in mine)), abs=1e-2)
    assert got["time"]["median_us"] == pytest.approx(statistics.median(spans), abs=1e-2)
    assert "step-variance" not in by_id(a)  # CV under 1 %
