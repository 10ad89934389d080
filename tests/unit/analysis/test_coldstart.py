"""Cold start and profiler overhead: first-call outliers (and what they are not: how every step
starts, or the profiler's own start-up), module loading, warm-up steps, the tracing-cost estimate
and whether a CPU-bound verdict survives it — on traces built here and on the reference traces,
recounted from the raw JSON."""

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
ACCUMULATE = "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.steps, extras_mod.coldstart])


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["cold_start"]
    assert found is not None
    return dict(found)


def events_of(a: Analysis) -> list[dict[str, Any]]:
    """The cold-start events; none when the analysis found nothing to report at all."""
    found = a.to_dict()["cold_start"]
    return [] if found is None else list(found["events"])


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


def overhead(b: TraceBuilder, name: str, ts: float, dur: float) -> None:
    """A CUPTI overhead record as Kineto writes it (category `overhead`, pid -1, tid 0)."""
    b.events.append(
        {"ph": "X", "cat": "overhead", "name": name, "pid": -1, "tid": 0, "ts": ts, "dur": dur}
    )


def repeated(b: TraceBuilder, first: float, later: float, count: int = 10) -> None:
    """An aten::conv2d every 1000 µs, each launching a short kernel; the first takes `first`."""
    for i in range(count):
        t = 1000.0 * i
        ext = b.op("aten::conv2d", t, first if i == 0 else later)
        b.launch("conv_kernel", at=t + 5, start=t + 10, dur=5.0, ext=ext)


# ---------------------------------------------------------------- first calls


def test_a_slow_first_call_is_cold_start(builder: TraceBuilder, tmp_path: Path) -> None:
    repeated(builder, first=900.0, later=100.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 10_000.0))
    got = part(a)
    assert got["by_kind"] == {"first_call": {"count": 1, "time_us": 900.0}}
    assert got["events"] == [
        {"kind": "first_call", "name": "aten::conv2d", "time_us": 900.0, "excess_us": 800.0}
    ]
    assert got["cold_us"] == 900.0 and got["share"] == 900.0 / 10_000.0
    cold = by_id(a)["cold-start"]
    assert cold["severity"] == "info"  # 9 % of the window: a warning from 10 %
    assert "first-call outliers" in cold["message"] and "aten::conv2d" in cold["message"]


def test_a_first_call_under_five_times_the_later_ones_is_not(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    repeated(builder, first=480.0, later=100.0)  # 4.8 × the later ones
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 10_000.0))
    assert events_of(a) == []
    assert "cold-start" not in by_id(a)


def test_a_kernels_slow_first_launch_is_module_loading(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    for i in range(10):
        t = 1000.0 * i
        corr = builder._id()
        builder.runtime("cudaLaunchKernel", t, 1500.0 if i == 0 else 5.0, corr)
        builder.kernel("void elementwise_kernel<float>(float*)", t + 1600, 5.0, corr)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 12_000.0))
    got = part(a)
    assert got["by_kind"]["loading"] == {"count": 1, "time_us": 1500.0}
    assert got["events"][0]["name"].startswith("first launch of elementwise_kernel")
    cold = by_id(a)["cold-start"]
    assert cold["severity"] == "warning"  # 1.5 ms of 12 ms
    assert "CUDA_MODULE_LOADING" in cold["action"]


def test_a_lazy_loading_record_is_module_loading(builder: TraceBuilder, tmp_path: Path) -> None:
    repeated(builder, first=100.0, later=100.0)
    overhead(builder, "Lazy Function Loading", 20.0, 300.0)
    path = builder.write(tmp_path / "t.json", span=(0.0, 10_000.0))
    trace = read_trace(path)
    assert trace.meta.extra["overhead"] == [["Lazy Function Loading", 20_000, 300_000]]
    got = part(analyze(trace))
    assert got["by_kind"] == {"loading": {"count": 1, "time_us": 300.0}}
    assert got["profiler_overhead"]["measured_us"] == 0.0  # loading is cold start, not profiler


def test_a_first_call_stalled_by_the_profiler_is_not_cold_start(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """CUPTI requests its activity buffer while the first traced call runs: the tracer's
    start-up, not the model's."""
    repeated(builder, first=900.0, later=100.0)
    overhead(builder, "Activity Buffer Request", 50.0, 600.0)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 10_000.0))
    got = part(a)
    assert got["by_kind"] == {} and got["events"] == []
    assert "cold-start" not in by_id(a)
    cost = got["profiler_overhead"]
    assert cost["records"] == {"Activity Buffer Request": {"count": 1, "time_us": 600.0}}
    assert cost["measured_us"] == 900.0  # [0, 900) ∪ [50, 650)
    assert cost["stalled_first_calls"] == [
        {"name": "aten::conv2d", "time_us": 900.0, "excess_us": 800.0,
         "during": "Activity Buffer Request"}
    ]  # fmt: skip
    found = by_id(a)["profiler-overhead"]
    assert "the tracer starting up" in found["message"]
    assert "one iteration before" in found["action"]


def test_a_call_that_is_slow_at_the_start_of_every_step_is_not_cold(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """The first AccumulateGrad of every backward is slow (a DDP hook runs there): the first
    step's is no slower than the other steps' first ones."""
    for step in range(3):
        t = 10_000.0 * step
        builder.annotation(f"ProfilerStep#{step}", t, 10_000.0)
        for i in range(10):
            ext = builder.op(
                ACCUMULATE, t + 500 * i, (1400.0 if step == 0 else 1300.0) if i == 0 else 40.0
            )
            builder.launch(
                "accumulate_kernel", at=t + 500 * i + 5, start=t + 500 * i + 10, dur=5.0, ext=ext
            )
    durs = [1400.0] + [40.0] * 9 + ([1300.0] + [40.0] * 9) * 2
    assert durs[0] >= 5 * statistics.median_low(durs[1:])  # the step-blind rule would fire
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 30_000.0))
    assert events_of(a) == []
    assert "cold-start" not in by_id(a)


def test_with_steps_a_first_call_is_compared_with_later_steps_first_calls(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    for step in range(3):
        t = 10_000.0 * step
        builder.annotation(f"ProfilerStep#{step}", t, 10_000.0)
        for i in range(10):
            first = 8000.0 if step == 0 else 1300.0
            ext = builder.op(ACCUMULATE, t + 800 * i, first if i == 0 else 40.0)
            builder.launch("k", at=t + 800 * i + 5, start=t + 800 * i + 10, dur=5.0, ext=ext)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 30_000.0))
    events = part(a)["events"]
    assert events == [
        {"kind": "first_call", "name": ACCUMULATE, "time_us": 8000.0, "excess_us": 6700.0}
    ]


# ---------------------------------------------------------------- warm-up steps


def steps_of(builder: TraceBuilder, tmp_path: Path, walls: list[float], first: int) -> Analysis:
    """Steps ProfilerStep#first … of these walls (µs), each one GEMM."""
    t = 0.0
    for i, wall in enumerate(walls):
        builder.annotation(f"ProfilerStep#{first + i}", t, wall)
        ext = builder.op("aten::mm", t + 10, 50.0)
        builder.launch("gemm", at=t + 20, start=t + 30, dur=100.0, ext=ext)
        t += wall
    return builder.analyze(tmp_path / "t.json", span=(0.0, t))


def test_a_slow_first_step_without_named_cause(builder: TraceBuilder, tmp_path: Path) -> None:
    walls = [5000.0, 1000.0, 1100.0, 1000.0]
    a = steps_of(builder, tmp_path, walls, first=0)
    warm = part(a)["warmup_steps"]
    median = statistics.median(walls[1:])
    assert warm == {
        "steps": [{"name": "ProfilerStep#0", "wall_us": 5000.0}],
        "median_steady_us": median,
        "excess_us": 5000.0 - median,
    }
    found = by_id(a)["first-step-outlier"]
    assert found["severity"] == "warning"  # 3,950 µs of an 8,100 µs window
    assert f"{5000.0 / median:.1f}× the median" in found["message"]
    assert "schedule(wait=1, warmup=1" in found["action"]  # ProfilerStep#0: no schedule ran


def test_a_slow_first_step_after_a_schedule_gets_no_schedule_advice(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    """The window starts at ProfilerStep#2: the schedule ran two steps before it (wait /
    warmup), so "use a schedule" is advice the trace already shows taken."""
    a = steps_of(builder, tmp_path, [5000.0, 1000.0, 1100.0, 1000.0], first=2)
    found = by_id(a)["first-step-outlier"]
    assert "schedule(wait" not in found["action"]
    assert "already ran 2 steps before its window" in found["action"]


# ---------------------------------------------------------------- profiler overhead


def tracing_heavy(b: TraceBuilder, python_events: int) -> None:
    """A loop whose GPU is 70 % busy, idle 30 % waiting for the host, with `python_events`
    with_stack records."""
    for i in range(10):
        t = 100.0 * i
        ext = b.op("aten::mm", t, 5)
        b.launch("gemm", at=t + 25, start=t + 30, dur=70.0, ext=ext)
    for k in range(python_events):
        b.events.append(
            {"ph": "X", "cat": "python_function", "name": f"model.py({k}): f", "pid": 100,
             "tid": 100, "ts": k * 0.9, "dur": 0.1, "args": {}}
        )  # fmt: skip


@pytest.mark.parametrize(("python_events", "stands"), [(1000, False), (100, True)])
def test_profiler_overhead_says_whether_the_cpu_bound_verdict_stands(
    builder: TraceBuilder, tmp_path: Path, python_events: int, stands: bool
) -> None:
    tracing_heavy(builder, python_events)
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 1000.0))
    assert a.verdict.bound == "cpu-bound"
    busy, span, waiting = 700.0, 970.0, 270.0  # first kernel at 30, last ends at 1000
    estimate = python_events * 0.5
    best = busy / (span - min(estimate, waiting))
    assert (best < 0.8) is stands
    found = by_id(a)["profiler-overhead"]
    assert found["evidence"]["estimate_us"] == estimate
    assert found["evidence"]["share_of_window"] == pytest.approx(estimate / 1000.0, abs=1e-4)
    assert found["severity"] == ("warning" if estimate / 1000.0 >= 0.15 else "info")
    assert f"{best:.0%} of its span" in found["message"]
    assert ("the CPU-bound verdict stands" in found["message"]) is stands


def test_little_tracing_is_not_a_finding(builder: TraceBuilder, tmp_path: Path) -> None:
    tracing_heavy(builder, 40)  # 20 µs of 1,000: 2 %
    a = builder.analyze(tmp_path / "t.json", span=(0.0, 1000.0))
    assert part(a)["profiler_overhead"]["estimate_us"] == 20.0
    assert "profiler-overhead" not in by_id(a)


# ---------------------------------------------------------------- reference traces


def reference(name: str) -> tuple[Analysis, list[dict[str, Any]]]:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    with gzip.open(path, "rt") as handle:
        events = json.load(handle, parse_float=Decimal)["traceEvents"]
    return analyze(read_trace(str(path))), [e for e in events if e.get("ph") == "X"]


def union(intervals: list[tuple[Any, Any]]) -> Any:
    total, reach = Decimal(0), None
    for s, e in sorted(intervals):
        s = s if reach is None else max(s, reach)
        if e > s:
            total += e - s
        reach = e if reach is None else max(reach, e)
    return total


@pytest.mark.parametrize(
    ("name", "op"),
    [("llama_prefill_h200.json.gz", "aten::embedding"),
     ("llama_compiled_h200.json.gz", "aten::_foreach_copy_")],
)  # fmt: skip
def test_reference_first_call_stalled_by_the_profiler(name: str, op: str) -> None:
    """Both H200 traces' slowest first call ran while CUPTI requested its activity buffer: the
    compiled one is the CUDA-graph input copy before a replay, not a cold start."""
    a, events = reference(name)
    calls = sorted((e for e in events if e["name"] == op), key=lambda e: e["ts"])
    records = [e for e in events if e.get("cat") == "overhead"]
    assert [r["name"] for r in records] == ["Activity Buffer Request"]
    record = records[0]
    first = calls[0]
    assert first["ts"] < record["ts"] + record["dur"] and record["ts"] < first["ts"] + first["dur"]
    later = statistics.median_low([e["dur"] for e in calls[1:]])
    got = part(a)
    assert op not in [e["name"] for e in got["events"]]
    assert "cold-start" not in by_id(a)
    cost = got["profiler_overhead"]
    stall = cost["stalled_first_calls"][0]
    assert stall["name"] == op and stall["during"] == "Activity Buffer Request"
    assert stall["time_us"] == pytest.approx(float(first["dur"]), abs=1e-3)
    assert stall["excess_us"] == pytest.approx(float(first["dur"] - later), abs=1e-3)
    spans = [(e["ts"], e["ts"] + e["dur"]) for e in (first, record)]
    assert cost["measured_us"] == pytest.approx(float(union(spans)), abs=1e-2)
    python = sum(1 for e in events if e.get("cat") == "python_function")
    shapes = sum(1 for e in events if e.get("cat") == "cpu_op" and "Input Dims" in e["args"])
    assert cost["python_events"] == python and cost["shape_ops"] == shapes
    assert cost["estimate_us"] == python * 0.5 + shapes * 1.0
    assert "the tracer starting up" in by_id(a)["profiler-overhead"]["message"]


def test_reference_accumulate_grad_slow_in_every_step_is_not_cold() -> None:
    a, events = reference("hta__a100_sampled_rank-0.json.gz")
    steps = sorted(
        (e for e in events if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"]
    )
    calls = sorted((e for e in events if e["name"] == ACCUMULATE), key=lambda e: e["ts"])
    firsts = [
        next(c for c in calls if s["ts"] <= c["ts"] < s["ts"] + s["dur"])["dur"] for s in steps
    ]
    rest = statistics.median_low([c["dur"] for c in calls[1:]])
    assert calls[0]["dur"] >= 5 * rest  # the step-blind rule fires on it
    assert firsts[0] < 5 * statistics.median(firsts[1:])  # but each step starts that way
    assert ACCUMULATE not in [e["name"] for e in part(a)["events"]]


def test_reference_first_training_step_on_mi250_is_cold() -> None:
    """ROCm 6.2, one step: the first hipLaunchKernel of the gradient accumulation's add kernel
    takes milliseconds (its code object loads), the later one microseconds."""
    a, events = reference("hta__mi250_minitoy_train_ROCm6_2_kineto.json.gz")
    kernel_of = {e["args"]["correlation"]: e["name"] for e in events if e.get("cat") == "kernel"}
    launches: dict[str, list[dict[str, Any]]] = {}
    for e in sorted(events, key=lambda e: e["ts"]):
        if e.get("cat") == "cuda_runtime" and e["name"] == "hipLaunchKernel":
            launches.setdefault(kernel_of.get(e["args"]["correlation"], ""), []).append(e)
    slow = [
        (k, calls[0])
        for k, calls in launches.items()
        if len(calls) > 1
        and calls[0]["dur"] >= 5 * statistics.median_low([c["dur"] for c in calls[1:]])
        and calls[0]["dur"] - statistics.median_low([c["dur"] for c in calls[1:]]) >= 100
    ]
    assert len(slow) == 1
    got = part(a)
    assert got["by_kind"]["loading"]["time_us"] == pytest.approx(float(slow[0][1]["dur"]), abs=1e-3)
    window = float(
        max(e["ts"] + e["dur"] for e in events if e.get("cat") == "Trace")
        - min(e["ts"] for e in events if e.get("cat") == "Trace")
    )
    cold = by_id(a)["cold-start"]
    assert cold["severity"] == "warning"
    assert cold["evidence"]["share_of_window"] == pytest.approx(got["cold_us"] / window, abs=1e-4)
    # the start-up holds most of the step, so the verdict itself says so (the model attributes
    # the idle time under the load and the first calls to start-up)
    assert a.verdict.bound == "startup-bound"
    assert "Its timings are not the steady state" in cold["message"]
