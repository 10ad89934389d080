"""The notebook's HTA-style series (issue 27.5) against the raw events: the launch queue per
stream, copy bandwidth over time, the allocator's timeline, idle time per stream and the kernels
of one step — every number recomputed from the trace's JSON by tests/rawkineto.py (json,
Decimal, plain loops), never by the code under test. On the recorded traces in tests/data and,
where ../shared is present, the reference traces."""

from __future__ import annotations

import bisect
import random
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.frames import TraceFrame
from tests import rawkineto as raw

pd = pytest.importorskip("pandas")
REPO = Path(__file__).resolve().parents[3]
DATA = REPO / "tests" / "data"
SHARED = REPO.parent / "shared" / "reference" / "traces"
PATTERNS = DATA / "patterns_h200.json.gz"  # profile_memory: 64 allocator events
DDP = DATA / "recorded" / "ddp_late_host_h200"
DDP_RANK0 = next((DDP / "rank0").rglob("*.json.gz"))
DDP4 = next((DATA / "recorded" / "ddp4_rank2_computes_more_h200" / "rank2").rglob("*.json.gz"))
BENCH = SHARED / "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz"  # 28,010 allocator events
LOCAL = [PATTERNS, DDP_RANK0, DDP4, DATA / "llama_compiled_h200.json.gz"]
REFERENCE = [BENCH.name, "hta__a100_sampled_rank-0.json.gz",
             "tl__mi300x_bert-small_inference.json.gz", "llama_prefill_h200.json.gz"]  # fmt: skip
TRACES = [pytest.param(p, id=p.name) for p in LOCAL] + [
    pytest.param(SHARED / name, id=name, marks=pytest.mark.skipif(
        not SHARED.is_dir(), reason="../shared/reference/traces is absent (a lone clone)"))
    for name in REFERENCE
]  # fmt: skip


def frame(path: Path) -> TraceFrame:
    return _FRAMES.setdefault(path, _load(path))


_FRAMES: dict[Path, TraceFrame] = {}


def _load(path: Path) -> TraceFrame:
    found = gpuscope.load(path)
    assert isinstance(found, TraceFrame)
    return found


def value_at(times: list[int], values: list[Any], t: int, empty: Any = 0) -> Any:
    """A step function given as its change points, at t."""
    i = bisect.bisect_right(times, t) - 1
    return values[i] if i >= 0 else empty


def lanes(df: Any, *keys: str) -> dict[tuple[Any, ...], Any]:
    return {key: part for key, part in df.groupby(list(keys), sort=False)}


@pytest.mark.parametrize("path", TRACES)
def test_queue_length_is_the_ops_launched_and_not_finished(path: Path) -> None:
    q = frame(path).queue_length()
    ops = raw.device_ops(path)
    assert list(q.columns) == ["device", "stream", "time_ns", "queued"]
    by_lane: dict[tuple[int, int], tuple[list[int], list[int]]] = {}
    for o in ops:  # the count at t: launched at or before t minus finished at or before t
        starts, ends = by_lane.setdefault((o["device"], o["stream"]), ([], []))
        starts.append(o["launch"])
        ends.append(o["end"])
    for lane in by_lane.values():
        lane[0].sort()
        lane[1].sort()
    assert set(lanes(q, "device", "stream")) == set(by_lane)
    for (device, stream), part in lanes(q, "device", "stream").items():
        times, counts = part["time_ns"].tolist(), part["queued"].tolist()
        starts, ends = by_lane[(device, stream)]
        assert times == sorted(set(starts + ends))  # a row wherever the count can change
        for t, n in zip(times, counts, strict=True):
            assert n == bisect.bisect_right(starts, t) - bisect.bisect_right(ends, t), (path, t)
        assert counts[-1] == 0 and min(counts) >= 0
    # and by brute force at random moments, between the change points too
    rng = random.Random(27)
    lo, hi = min(o["launch"] for o in ops), max(o["end"] for o in ops)
    for t in [rng.randrange(lo, hi) for _ in range(40)]:
        for (device, stream), part in lanes(q, "device", "stream").items():
            shown = value_at(part["time_ns"].tolist(), part["queued"].tolist(), t)
            assert shown == raw.queued(ops, device, stream, t)


@pytest.mark.parametrize("path", TRACES)
def test_memory_bandwidth_is_the_copies_running(path: Path) -> None:
    bw = frame(path).memory_bandwidth()
    assert list(bw.columns) == ["device", "kind", "time_ns", "bytes_per_s", "copies"]
    ops = [o for o in raw.device_ops(path) if o["cat"] != "kernel"
           and isinstance(o["bytes"], int) and o["end"] > o["start"]]  # fmt: skip
    assert len(bw) <= 2 * len(ops) and (len(bw) > 0) == (len(ops) > 0)
    kinds = {(o["device"], raw.copy_kind(o)) for o in ops}
    assert set(lanes(bw, "device", "kind")) == kinds
    rng = random.Random(5)
    for (device, kind), part in lanes(bw, "device", "kind").items():
        rows = list(part.itertuples())
        for row in rng.sample(rows, min(len(rows), 300)):  # at the change points
            expected = raw.copy_rate(ops, device, kind, row.time_ns)
            assert row.bytes_per_s == pytest.approx(expected, rel=1e-9, abs=1e-3)
            running = sum(1 for o in ops if o["device"] == device and raw.copy_kind(o) == kind
                          and o["start"] <= row.time_ns < o["end"])  # fmt: skip
            assert row.copies == running
        assert rows[-1].bytes_per_s == 0 and rows[-1].copies == 0


@pytest.mark.parametrize("path", TRACES)
def test_memory_is_the_allocator_events(path: Path) -> None:
    m = frame(path).memory()
    expected = raw.memory_events(path)
    assert len(m) == len(expected)
    if not expected:
        assert "profile_memory=True" in m.attrs["note"]
        return
    assert "note" not in m.attrs
    assert m["time_ns"].tolist() == [e["time"] for e in expected]
    assert m["bytes"].tolist() == [e["bytes"] for e in expected]
    assert m["allocated_bytes"].tolist() == [e["allocated"] for e in expected]
    assert m["reserved_bytes"].tolist() == [e["reserved"] for e in expected]
    assert m["addr"].tolist() == [e["addr"] for e in expected]
    assert m["device"].fillna(-1).tolist() == [e["device"] for e in expected]
    assert (m["action"] == "free").tolist() == [e["bytes"] < 0 for e in expected]


def test_the_allocator_totals_follow_its_events() -> None:
    """The allocator's running total on a device moves by each event's bytes (what makes the
    timeline a timeline), and the reference trace's GPU peaks at 7.3 GB allocated."""
    paths = [PATTERNS] + ([BENCH] if BENCH.exists() else [])
    for path in paths:
        m = frame(path).memory()
        for _, part in m.groupby(m["device"].fillna(-1)):
            moved = part["allocated_bytes"].diff().iloc[1:]
            assert (moved == part["bytes"].iloc[1:]).all(), path
    if BENCH.exists():
        m = frame(BENCH).memory()
        gpu = m[m["device"] == 1]
        assert int(gpu["allocated_bytes"].max()) == max(
            e["allocated"] for e in raw.memory_events(BENCH) if e["device"] == 1
        )


def test_no_memory_events_is_an_empty_table_with_a_note() -> None:
    t = frame(DDP_RANK0)
    assert "memory" not in t.meta.provides and "memory" in frame(PATTERNS).meta.provides
    for backend in ("pandas", "arrow"):
        empty = t.memory(backend=backend)
        note = empty.attrs["note"] if backend == "pandas" else empty.schema.metadata[b"note"]
        assert len(empty) == 0 and b"profile_memory" in str(note).encode()


@pytest.mark.parametrize("path", TRACES)
def test_idle_time_per_stream(path: Path) -> None:
    idle = frame(path).idle_time()
    expected = raw.stream_idle(path)
    assert {(r.device, r.stream) for r in idle.itertuples()} == set(expected)
    for r in idle.itertuples():
        e = expected[(r.device, r.stream)]
        gaps = e["span"] - e["busy"]
        assert (r.span_ns, r.busy_ns, r.idle_ns, r.gaps) == (e["span"], e["busy"], gaps, e["gaps"])
        assert (r.host_wait_ns, r.kernel_wait_ns, r.unknown_ns) == (
            e["host_wait"], e["kernel_wait"], e["unknown"])  # fmt: skip
    if len(idle) > 1:  # a stream's idle time is not its device's
        report = gpuscope.analyze(path).to_dict()
        assert sorted(idle["idle_ns"]) != [round(report["idle_us"] * 1000)] * len(idle)


ABSENT = "../shared/reference/traces is absent (a lone clone)"


@pytest.mark.parametrize("path", [DDP_RANK0, DDP4, pytest.param(
    BENCH, marks=pytest.mark.skipif(not BENCH.exists(), reason=ABSENT))])  # fmt: skip
def test_step_kernels_are_every_kernel_the_step_launched(path: Path) -> None:
    t = frame(path)
    a = gpuscope.analyze(path)
    steps = t.steps()
    raw_steps = raw.steps(path)
    assert steps["name"].tolist() == a.table("steps.steps")["name"].tolist()
    assert set(steps["name"]) <= set(raw_steps) and len(steps)
    communication = 0
    for row in steps.itertuples():
        lo, hi = raw_steps[row.name]
        assert (row.start_ns, row.end_ns) == (lo, hi)
        mine = t.step_kernels(row.step)
        expected = raw.kernels_called_in(path, lo, hi)
        assert sorted(zip(mine["name"], mine["start_ns"], strict=True)) == expected
        assert a.step_kernels(row.name).equals(mine)
        assert len(mine) == a.table("steps.steps")["kernels"].iloc[row.step]
        nccl = [n for n, _ in expected if n.startswith(raw.NCCL)]
        assert (mine["category"] == "communication").sum() == len(nccl)
        communication += len(nccl)
    assert communication > 0  # the NCCL kernels a join on the step's operators loses
    assert t.step_kernels(-1).equals(t.step_kernels(len(steps) - 1))
    with pytest.raises(IndexError, match=f"this trace has {len(steps)} steps"):
        t.step_kernels(len(steps))
    with pytest.raises(KeyError, match="no step 'ProfilerStep#999'"):
        a.step_kernels("ProfilerStep#999")


def test_a_trace_without_steps_says_so() -> None:
    with pytest.raises(IndexError, match="no steps"):
        frame(PATTERNS).step_kernels(0)


@pytest.mark.parametrize("method", ["queue_length", "memory_bandwidth", "memory", "idle_time",
                                    "steps"])  # fmt: skip
def test_series_in_every_backend(method: str) -> None:
    t = frame(PATTERNS)
    df = getattr(t, method)()
    table = getattr(t, method)(backend="arrow")
    assert table.num_rows == len(df) and table.column_names == list(df.columns)
    polars = pytest.importorskip("polars")
    assert isinstance(getattr(t, method)(backend="polars"), polars.DataFrame)


def test_a_set_of_ranks_has_every_rank_s_series() -> None:
    """`gpuscope.load(job)`: each series of every rank, with `trace` and `rank` first — HTA's
    per-rank queue length and idle breakdown in one table."""
    job = gpuscope.load(DDP)
    assert not isinstance(job, TraceFrame)
    for method in ("queue_length", "memory_bandwidth", "memory", "idle_time", "steps"):
        joined = getattr(job, method)()
        assert list(joined.columns[:2]) == ["trace", "rank"], method
        for i, rank in enumerate(job):
            mine = joined[joined["trace"] == i].drop(columns=["trace", "rank"])
            assert mine.reset_index(drop=True).equals(getattr(rank, method)()), method
            assert set(joined[joined["trace"] == i]["rank"]) <= {rank.meta.rank}
    idle = job.idle_time()
    for rank, path in enumerate(sorted(DDP.rglob("*.json.gz"))):
        expected = raw.stream_idle(path)
        mine = idle[idle["rank"] == rank]
        assert dict(zip(mine["stream"], mine["idle_ns"], strict=True)) == {
            stream: e["span"] - e["busy"] for (_, stream), e in expected.items()
        }
