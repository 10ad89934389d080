"""The communication analysis: exposed time, per-collective statistics, identical calls that vary,
bandwidth per size — against hand-computed synthetic traces, a plain-Python recount, and the
reference traces with NCCL kernels."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gpuscope.analysis import communication
from gpuscope.analysis import extras as extras_mod
from gpuscope.analysis.analyze import Analysis
from gpuscope.analysis.categories import CATEGORIES
from gpuscope.analysis.communication.names import bus_factor, parse_kernel, record_kind
from gpuscope.analysis.pipeline import analyze
from gpuscope.trace.model import KERNEL
from gpuscope.trace.registry import read_trace
from tests.unit.analysis import comm_builder as cb
from tests.unit.analysis.conftest import TraceBuilder
from tests.views import render_html, render_markdown, render_terminal

TRACES = Path(__file__).resolve().parents[3] / ".." / "shared" / "reference" / "traces"
BENCH = "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz"
SAMPLED = "hta__a100_sampled_rank-0.json.gz"


@pytest.fixture(autouse=True)
def only_this_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Run this analysis alone, so that the other extras (written alongside) cannot interfere."""
    monkeypatch.setattr(extras_mod, "modules", lambda: [extras_mod.communication])


def reference(name: str) -> Analysis:
    path = TRACES / name
    if not path.exists():
        pytest.skip(f"reference trace {name} not found under {TRACES.resolve()}")
    return analyze(read_trace(str(path)))


def part(a: Analysis) -> dict[str, Any]:
    found = a.to_dict()["communication"]
    assert found is not None
    return dict(found)


def by_id(a: Analysis) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in a.findings}


# ---------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("name", "vendor", "expected"),
    [
        (
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            "nvidia",
            ("NCCL", "all_reduce", "RING", "LL", "bf16", "Sum", "ncclDevKernel"),
        ),
        (
            "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)",
            "nvidia",
            ("NCCL", "all_reduce", "RING", "LL", "f32", "Sum", "ncclKernel"),
        ),
        (
            "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)",
            "nvidia",
            ("NCCL", "send_recv", "RING", "SIMPLE", "i8", "Sum", "ncclKernel"),
        ),
        (
            "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)",
            "nvidia",
            ("NCCL", "send_recv", None, None, None, None, "ncclDevKernel"),
        ),
        (
            "ncclDevKernel_AllReduce_Sum_f32_NVLS_TREE_SIMPLE",
            "nvidia",
            ("NCCL", "all_reduce", "NVLS_TREE", "SIMPLE", "f32", "Sum", "ncclDevKernel"),
        ),
        (
            "ncclKernel_AllReduce_TREE_LL128_Prod___nv_bfloat16",
            "nvidia",
            ("NCCL", "all_reduce", "TREE", "LL128", "bf16", "Prod", "ncclKernel"),
        ),
        (
            "ncclKernel_AllGather_RING_LL_Sum_uint8_t(ncclWorkElem)",
            "nvidia",
            ("NCCL", "all_gather", "RING", "LL", "u8", "Sum", "ncclKernel"),
        ),
        (
            "ncclDevKernel_ReduceScatter_Sum_f32_RING_LL",
            "nvidia",
            ("NCCL", "reduce_scatter", "RING", "LL", "f32", "Sum", "ncclDevKernel"),
        ),
        (
            "ncclDevKernel_Generic_4(ncclDevKernelArgsStorage<4096ul>)",
            "amd",
            ("RCCL", "unknown", None, None, None, None, "ncclDevKernel"),
        ),
        (
            "void vllm::cross_device_reduce_1stage<__nv_bfloat16, 8>(vllm::RankData*, int)",
            "nvidia",
            ("custom all-reduce", "all_reduce", None, None, None, None, ""),
        ),
        (
            "multimem_all_reduce_kernel",
            "nvidia",
            ("symmetric memory", "all_reduce", None, None, None, None, ""),
        ),
        (
            "void deep_ep::intranode::dispatch<8, 768>(int4*, float*)",
            "nvidia",
            ("DeepEP", "all_to_all", None, None, None, None, ""),
        ),
    ],
)
def test_kernel_names(name: str, vendor: str, expected: tuple[Any, ...]) -> None:
    parsed = parse_kernel(name, vendor)
    fields = (parsed.library, parsed.kind, parsed.algorithm, parsed.protocol, parsed.dtype)
    assert (*fields, parsed.reduction, parsed.nccl_generation) == expected


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("allreduce", "all_reduce"),
        ("allreduce_coalesced", "all_reduce"),
        ("_allgather_base", "all_gather"),
        ("allgather_into_tensor_coalesced", "all_gather"),
        ("_reduce_scatter_base", "reduce_scatter"),
        ("reduce_scatter_tensor_coalesced", "reduce_scatter"),
        ("all_to_allv", "all_to_all"),
        ("broadcast", "broadcast"),
        ("reduce", "reduce"),
        ("send", "send"),
        ("recv", "recv"),
        ("barrier", "barrier"),
        ("wait", "unknown"),
    ],
)
def test_recorded_collective_names(name: str, kind: str) -> None:
    assert record_kind(name) == kind


def test_bus_factors_are_nccl_tests() -> None:
    assert bus_factor("all_reduce", 8) == pytest.approx(2 * 7 / 8)
    assert bus_factor("all_gather", 4) == pytest.approx(3 / 4)
    assert bus_factor("reduce_scatter", 4) == pytest.approx(3 / 4)
    assert bus_factor("all_to_all", 2) == pytest.approx(1 / 2)
    assert bus_factor("broadcast", 8) == 1.0
    assert bus_factor("send", 2) == 1.0
    assert bus_factor("all_reduce", 1) is None  # nothing crosses a link
    assert bus_factor("unknown", 8) is None


# ---------------------------------------------------------------- exposure


def overlap_trace(b: TraceBuilder) -> None:
    """Compute [0,100) [150,250) [400,500); comm [50,200) [300,350) [450,600); an HtoD copy
    [320,340); steps [0,300) [300,600). By hand: comm 350 µs, overlapped 150, exposed 200 (50 in
    step 0, 150 in step 1), 180 with no other GPU op at all; per kernel 50, 50, 100."""
    for start in (0.0, 150.0, 400.0):
        cb.compute(b, start, 100.0)
    cb.collective(b, cb.ALL_REDUCE, 50.0, 150.0)
    cb.collective(b, cb.ALL_GATHER, 300.0, 50.0)
    cb.collective(b, cb.ALL_REDUCE, 450.0, 150.0)
    b.kernel("Memcpy HtoD (Pinned -> Device)", 320.0, 20.0, cat="gpu_memcpy", stream=7)
    cb.step(b, 0, 0.0, 300.0)
    cb.step(b, 1, 300.0, 300.0)


def test_exposure_by_hand(builder: TraceBuilder, tmp_path: Path) -> None:
    overlap_trace(builder)
    a = builder.analyze(tmp_path / "t.json")
    shown = part(a)["exposure"]
    assert shown["communication_us"] == 350.0
    assert shown["exposed_us"] == 200.0
    assert shown["overlapped_us"] == 150.0
    assert shown["overlapped_share"] == pytest.approx(150 / 350, abs=1e-4)
    assert shown["exposed_vs_all_gpu_work_us"] == 180.0
    assert shown["span_us"] == 600.0
    assert shown["exposed_share_of_span"] == pytest.approx(1 / 3, abs=1e-4)
    assert [s["exposed_us"] for s in shown["by_step"]] == [50.0, 150.0]
    assert shown["steps"]["exposed_share_of_steps"] == pytest.approx(1 / 3, abs=1e-4)
    assert shown["by_stream"] == [
        {
            "device": 0,
            "stream": cb.COMM_STREAM,
            "kernels": 3,
            "communication_us": 350.0,
            "exposed_us": 200.0,
            "exposed_share_of_span": pytest.approx(1 / 3, abs=1e-4),
        }
    ]
    rows = {c["kind"]: c for c in part(a)["collectives"]}
    assert rows["all_reduce"]["exposed_us"] == 150.0  # 50 + 100, per kernel
    assert rows["all_gather"]["exposed_us"] == 50.0


def test_exposure_finding_threshold_and_severity(builder: TraceBuilder, tmp_path: Path) -> None:
    overlap_trace(builder)
    a = builder.analyze(tmp_path / "t.json")
    assert a.verdict.bound == "gpu-bound"  # busy 500 of 600 µs
    found = by_id(a)["exposed-communication"]
    assert found["severity"] == "warning"  # 33 % of step time ≥ 10 %
    assert "33.3% of step time" in found["message"]
    assert found["evidence"]["by_kind"]["all_reduce"]["exposed_us"] == 150.0
    assert "NCCL_ALGO" in found["action"]  # named, as the last resort


def test_concurrent_comm_streams_are_not_counted_twice(
    builder: TraceBuilder, tmp_path: Path
) -> None:
    cb.collective(builder, cb.ALL_GATHER, 0.0, 100.0, stream=20)
    cb.collective(builder, cb.ALL_REDUCE, 50.0, 100.0, stream=21)
    cb.compute(builder, 120.0, 80.0)
    shown = part(builder.analyze(tmp_path / "t.json"))["exposure"]
    assert shown["communication_us"] == 150.0  # union [0, 150)
    assert shown["exposed_us"] == 120.0
    streams = {s["stream"]: s["exposed_us"] for s in shown["by_stream"]}
    assert streams == {20: 100.0, 21: 70.0}  # each stream's own: they add up to more


def test_exposure_matches_a_plain_recount(builder: TraceBuilder, tmp_path: Path) -> None:
    rng = random.Random(13)
    comm: list[tuple[float, float]] = []
    work: list[tuple[float, float]] = []
    for i in range(60):
        start, dur = float(rng.randrange(0, 5000)), float(rng.randrange(1, 300))
        if i % 3 == 0:
            cb.collective(builder, cb.ALL_REDUCE, start, dur, stream=20 + i % 2)
            comm.append((start, start + dur))
        else:
            cb.compute(builder, start, dur, stream=7 + i % 2)
            work.append((start, start + dur))
    total, exposed = cb.exposed_recount(comm, work)
    shown = part(builder.analyze(tmp_path / "t.json"))["exposure"]
    assert shown["communication_us"] == pytest.approx(total)
    assert shown["exposed_us"] == pytest.approx(exposed)


def test_host_bound_trace_caps_the_severity(builder: TraceBuilder, tmp_path: Path) -> None:
    # the host launches every kernel only after the GPU went idle: cpu-bound
    builder.launch(cb.GEMM, at=1000.0, start=1002.0, dur=100.0)
    cb.collective(builder, cb.ALL_REDUCE, 1500.0, 200.0, at=1490.0)
    builder.launch(cb.GEMM, at=1995.0, start=2000.0, dur=100.0)
    a = builder.analyze(tmp_path / "t.json")
    assert a.verdict.bound == "cpu-bound"
    found = by_id(a)["exposed-communication"]
    assert found["severity"] == "info"  # 18 % of the span, but the host paces the GPU
    assert "cpu-bound" in found["message"]


def test_small_exposure_is_quiet(builder: TraceBuilder, tmp_path: Path) -> None:
    cb.compute(builder, 0.0, 1000.0)
    cb.collective(builder, cb.ALL_REDUCE, 990.0, 30.0)  # 20 µs exposed of 1020: 2 % < 3 %
    a = builder.analyze(tmp_path / "t.json")
    assert part(a)["exposure"]["exposed_us"] == 20.0
    assert "exposed-communication" not in by_id(a)


def test_info_band(builder: TraceBuilder, tmp_path: Path) -> None:
    cb.compute(builder, 0.0, 1000.0)
    cb.collective(builder, cb.ALL_REDUCE, 950.0, 100.0)  # 50 µs exposed of 1050: 4.8 %
    found = by_id(builder.analyze(tmp_path / "t.json"))["exposed-communication"]
    assert found["severity"] == "info"


def test_no_communication_no_part(builder: TraceBuilder, tmp_path: Path) -> None:
    cb.compute(builder, 0.0, 100.0)
    a = builder.analyze(tmp_path / "t.json")
    assert a.to_dict()["communication"] is None
    assert not any(f["id"].endswith("communication") for f in a.findings)


# ---------------------------------------------------------------- sizes and bandwidth


def test_sizes_and_bus_bandwidth(builder: TraceBuilder, tmp_path: Path) -> None:
    for i in range(5):  # 4 MiB all-reduce over 4 ranks in 100 µs
        ext = cb.record(builder, "allreduce", 1000.0 * i, 1 << 20, ranks=4)
        cb.collective(builder, cb.ALL_REDUCE, 1000.0 * i + 20, 100.0, ext=ext)
    row = part(builder.analyze(tmp_path / "t.json"))["collectives"][0]
    assert (row["kind"], row["sized_calls"], row["ranks"]) == ("all_reduce", 5, 4)
    assert row["bytes_min"] == row["bytes_max"] == 4 << 20
    assert row["algbw_gbps"] == pytest.approx(round((4 << 20) / 100_000, 2))  # 41.94 GB/s
    assert row["busbw_gbps"] == pytest.approx(round((4 << 20) * 1.5 / 100_000, 2))  # 62.91


def test_all_gather_size_is_the_output_buffer(builder: TraceBuilder, tmp_path: Path) -> None:
    ext = cb.record(builder, "_allgather_base", 0.0, 1 << 20, ranks=8, out_elems=8 << 20)
    cb.collective(builder, cb.ALL_GATHER, 20.0, 100.0, ext=ext)
    row = part(builder.analyze(tmp_path / "t.json"))["collectives"][0]
    assert row["bytes_max"] == 32 << 20
    assert row["busbw_gbps"] == pytest.approx(round((32 << 20) * 7 / 8 / 100_000, 2))


def test_unknown_sizes_are_said(builder: TraceBuilder, tmp_path: Path) -> None:
    cb.collective(builder, cb.ALL_REDUCE, 0.0, 100.0)
    got = part(builder.analyze(tmp_path / "t.json"))
    assert got["collectives"][0]["busbw_gbps"] is None
    assert got["sizes"]["known_calls"] == 0
    assert "no bandwidth" in got["sizes"]["note"]
    assert got["bandwidth"] is None


def bandwidth_trace(b: TraceBuilder) -> None:
    """all-reduce over 4 ranks: 1 MiB in 20 µs, 16 MiB in 200 µs (125.8 GB/s bus), 4 MiB in 200
    µs. Envelope: 20 µs latency + 4 MiB × 1.5 / 125.8 GB/s = 70 µs, so 4 MiB is slow (≥ 2×);
    its exposed time above the envelope is 5 × 130 = 650 µs."""
    t = 0.0
    for elems, dur in ((1 << 18, 20.0), (1 << 22, 200.0), (1 << 20, 200.0)):
        for _ in range(5):
            ext = cb.record(b, "allreduce", t, elems, ranks=4)
            cb.collective(b, cb.ALL_REDUCE, t + 20, dur, ext=ext)
            t += 1000.0


def test_bandwidth_envelope_by_hand(builder: TraceBuilder, tmp_path: Path) -> None:
    bandwidth_trace(builder)
    a = builder.analyze(tmp_path / "t.json")
    rows = {r["bytes"]: r for r in part(a)["bandwidth"]["by_size"]}
    assert rows[16 << 20]["busbw_gbps"] == pytest.approx(125.83)
    assert rows[4 << 20]["envelope_us"] == pytest.approx(70.0)
    assert rows[4 << 20]["slow"] and not rows[1 << 20]["slow"] and not rows[16 << 20]["slow"]
    assert rows[4 << 20]["excess_exposed_us"] == pytest.approx(650.0)
    found = by_id(a)["low-bus-bandwidth"]
    span = 14_020 + 200 - 20  # first kernel at 20 µs, last ends at 14 020 + 200
    assert f"{650 / span:.1%} of the GPU span" in found["message"]
    assert found["severity"] == "info"  # 4.6 %: between 1 % and 5 %
    assert "envelope" in found["message"] and "rated speed is not in the trace" in found["message"]


# ---------------------------------------------------------------- identical calls that vary


def test_variance_by_size(builder: TraceBuilder, tmp_path: Path) -> None:
    durations = [100.0, 100.0, 100.0, 100.0, 100.0, 400.0]
    for i, dur in enumerate(durations):
        ext = cb.record(builder, "allreduce", 1000.0 * i, 1 << 20, ranks=2)
        cb.collective(builder, cb.ALL_REDUCE, 1000.0 * i + 20, dur, ext=ext)
    a = builder.analyze(tmp_path / "t.json")
    variance = part(a)["variance"]
    assert variance["grouping"] == "size"
    top = variance["top"][0]
    # numpy's linear percentile of six values: p90 sits half-way between 100 and 400
    assert (top["count"], top["p50_us"], top["p90_us"], top["max_us"]) == (6, 100.0, 250.0, 400.0)
    assert top["excess_us"] == 300.0 and top["excess_exposed_us"] == 300.0
    found = by_id(a)["collective-variance"]
    span = 5020 + 400 - 20
    assert found["severity"] == "warning"  # 300 / 5400 = 5.6 % ≥ 5 %
    assert f"{300 / span:.1%}" in found["message"]
    assert "slowest peer" in found["message"] and "cannot name" in found["message"]


def test_variance_needs_five_calls(builder: TraceBuilder, tmp_path: Path) -> None:
    for i, dur in enumerate([100.0, 100.0, 100.0, 400.0]):
        ext = cb.record(builder, "allreduce", 1000.0 * i, 1 << 20, ranks=2)
        cb.collective(builder, cb.ALL_REDUCE, 1000.0 * i + 20, dur, ext=ext)
    a = builder.analyze(tmp_path / "t.json")
    assert part(a)["variance"]["varying_groups"] == 0
    assert "collective-variance" not in by_id(a)


def positional_trace(b: TraceBuilder, skip_one: bool = False) -> None:
    """Five steps, each with two all-reduces of unknown size: the first takes 10 µs except in
    step 3 (50 µs), the second 100 µs."""
    for s in range(5):
        base = 1000.0 * s
        cb.step(b, s, base, 1000.0)
        cb.collective(b, cb.ALL_REDUCE, base + 100, 50.0 if s == 3 else 10.0)
        if not (skip_one and s == 2):
            cb.collective(b, cb.ALL_REDUCE, base + 500, 100.0)


def test_variance_by_position_in_step(builder: TraceBuilder, tmp_path: Path) -> None:
    positional_trace(builder)
    variance = part(builder.analyze(tmp_path / "t.json"))["variance"]
    assert variance["grouping"] == "step position"
    assert variance["groups"] == 2
    (top,) = variance["top"]
    assert (top["position_in_step"], top["p50_us"], top["max_us"]) == (0, 10.0, 50.0)
    assert top["excess_us"] == 40.0
    assert top["slowest_step"] == "ProfilerStep#3"


def test_irregular_steps_are_not_grouped(builder: TraceBuilder, tmp_path: Path) -> None:
    positional_trace(builder, skip_one=True)
    variance = part(builder.analyze(tmp_path / "t.json"))["variance"]
    assert variance["grouping"] is None and variance["groups"] == 0


# ---------------------------------------------------------------- linking


def test_old_kineto_links_by_time_on_the_thread(builder: TraceBuilder, tmp_path: Path) -> None:
    """Older Kineto writes the correlation id as the kernel's External id: the launch is found
    inside the recording op, and the nccl:all_to_all annotation names the SendRecv kernel."""
    ext = cb.record(builder, "all_to_allv", 0.0, 1 << 20, ranks=4, dur=50.0)
    builder.annotation("nccl:all_to_all", 5.0, 40.0)
    builder.runtime("cudaLaunchKernel", 10.0, 2.0, corr=777, ext=777)
    builder.kernel(cb.SEND_RECV, 60.0, 100.0, corr=777, ext=777, stream=cb.COMM_STREAM)
    assert ext != 777
    row = part(builder.analyze(tmp_path / "t.json"))["collectives"][0]
    assert row["kind"] == "all_to_all"
    assert row["sized_calls"] == 1 and row["bytes_max"] == 4 << 20
    assert row["launched_by"] == "nccl:all_to_all"


# ---------------------------------------------------------------- rendering


def test_every_view_renders_the_part(builder: TraceBuilder, tmp_path: Path) -> None:
    overlap_trace(builder)
    positional = TraceBuilder()
    positional_trace(positional)
    sized = TraceBuilder()
    bandwidth_trace(sized)
    for b, name in ((builder, "a"), (positional, "b"), (sized, "c")):
        report = b.analyze(tmp_path / f"{name}.json").to_dict()
        section = communication.section(report["communication"])
        assert section.title == "Communication"
        markdown = render_markdown([report])
        html = render_html([report])
        terminal = render_terminal([report], 100)
        for text in (markdown, html, terminal):
            assert "Communication" in text
            assert "None" not in text and "nan" not in text.lower().replace("nanos", "")


# ---------------------------------------------------------------- reference traces


def test_bench_trace_all_reduce_never_overlaps() -> None:
    """2,020 NCCL all-reduces of a 2-rank V100 job: on their own stream, never beside compute."""
    a = reference(BENCH)
    got = part(a)
    trace, comm = a.trace, a.classes.category == CATEGORIES.index("communication")
    work = (trace.gpu.kind == KERNEL) & ~comm
    spans = [(int(s), int(e)) for s, e in zip(trace.gpu.start, trace.gpu.end, strict=True)]
    total, exposed = cb.exposed_recount(
        [spans[i] for i in np.flatnonzero(comm)], [spans[i] for i in np.flatnonzero(work)]
    )
    assert got["kernels"] == 2020
    assert got["exposure"]["communication_us"] == pytest.approx(total / 1000, abs=1e-3)
    assert got["exposure"]["exposed_us"] == pytest.approx(exposed / 1000, abs=1e-3)
    assert got["exposure"]["exposed_us"] == got["exposure"]["communication_us"] == 357343.0
    assert got["variance"]["grouping"] == "step position" and got["variance"]["groups"] == 404
    found = by_id(a)
    assert a.verdict.bound == "cpu-bound"
    assert found["exposed-communication"]["severity"] == "info"  # host-bound: capped
    assert found["exposed-communication"]["evidence"]["calls_per_step"] == 404
    assert "ProfilerStep#6" in found["collective-variance"]["message"]


def test_sampled_trace_names_all_to_all_through_its_op() -> None:
    """HTA's sampled TorchRec rank: SendRecv kernels issued by nccl:all_to_all and others."""
    a = reference(SAMPLED)
    got = part(a)
    kinds = {c["kind"]: c["count"] for c in got["collectives"]}
    assert kinds == {"all_to_all": 4, "all_reduce": 4, "all_gather": 2}
    assert got["exposure"]["exposed_us"] == 336983.0
    assert got["sizes"]["known_calls"] == 0


@pytest.mark.parametrize(
    "name", ["hta__v100_ns_resolution_rank0.json.gz", "llama_decode_h200.json.gz"]
)
def test_single_gpu_traces_have_nothing(name: str) -> None:
    """ns_resolution records 25 all-reduces of a 1-rank group, which launch no kernel."""
    a = reference(name)
    assert a.to_dict()["communication"] is None


@pytest.mark.parametrize(
    ("ranges", "said", "not_said"),
    [
        ("FSDP::pre_forward", "set_modules_to_forward_prefetch", "backward_prefetch="),
        ("FullyShardedDataParallel._pre_forward", "backward_prefetch=BackwardPrefetch",
         "set_modules_to_forward_prefetch"),
    ],
)  # fmt: skip
def test_fsdp_advice_names_the_wrapper_the_ranges_show(
    builder: TraceBuilder, tmp_path: Path, ranges: str, said: str, not_said: str
) -> None:
    """All-gathers exposed between compute: FSDP2 (`fully_shard`, "FSDP::" ranges) is told its
    own prefetch calls, FSDP1 ("FullyShardedDataParallel." ranges) its constructor arguments."""
    t = 0.0
    for _ in range(4):
        builder.annotation(ranges, t, 10.0)
        builder.launch("ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                       at=t, start=t + 20, dur=200.0)  # fmt: skip
        builder.launch("sm90_xmma_gemm_bf16bf16", at=t + 1, start=t + 220, dur=300.0)
        t += 600.0
    report = builder.analyze(tmp_path / "t.json", span=(0.0, t)).to_dict()
    exposed = next(f for f in report["findings"] if f["id"] == "exposed-communication")
    assert said in exposed["action"] and not_said not in exposed["action"]
