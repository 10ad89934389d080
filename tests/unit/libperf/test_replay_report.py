"""The replay loop (order, --limit, --budget-s, progress, a failing backend), the rates of
library_perf.csv against the ceilings, its ranking and columns, and the report's sections.
Expected numbers are computed here from the definitions (TFLOP/s = 2·m·n·k / time, …)."""

from __future__ import annotations

import csv
import datetime as dt
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from gpuscope.errors import ConfigError
from gpuscope.libperf import output, report
from gpuscope.libperf.configs import Comm, Config, Gemm, Opaque
from gpuscope.libperf.replay import Options, replay
from gpuscope.libperf.result import Result
from gpuscope.libtrace.table import MADENGINE_COLUMNS
from gpuscope.peaks import Measured, PeakTable, peaks_for
from gpuscope.trace.model import Device

H100 = peaks_for(Device(id=0, name="NVIDIA H100 80GB HBM3", compute_units=132))
MEASURED = Measured(device="H100", tflops=800.0, gbps=3000.0, method="test ceilings")


def gemm(m: int, n: int, k: int, dtype: str = "bf16", calls: int = 1) -> Config:
    g = Gemm(dtype, "f32", "N", "N", m, n, k)
    return Config(g, calls, "rocblas", f"./rocblas-bench -m {m}", ("rocblas",))


class FakeTorch:
    """TorchReplay's stand-in for the loop: a fixed time per config, or an error."""

    def __init__(self, clock: list[float], step_s: float = 10.0) -> None:
        self.clock, self.step_s = clock, step_s
        self.seen: list[Config] = []

    def run(self, config: Config) -> list[Result]:
        self.seen.append(config)
        self.clock[0] += self.step_s
        if isinstance(config.problem, Gemm) and config.problem.m == 13:
            return [Result("torch", "failed: RuntimeError: boom")]
        return [Result("torch", "ok", time_us=100.0, samples_us=(100.0,))]

    def agree(self, go: bool) -> bool:
        return go


def run_loop(found: list[Config], **options: Any) -> tuple[list[tuple[Config, Result]], FakeTorch]:
    clock = [0.0]
    torch = FakeTorch(clock)
    pairs = replay(
        found, Options(backends=("torch",), **options), torch_replay=torch,  # type: ignore[arg-type]
        clock=lambda: clock[0],
    )  # fmt: skip
    return pairs, torch


def test_most_costly_first_limit_budget_and_a_failure_in_between() -> None:
    found = [gemm(64, 64, 64), gemm(4096, 4096, 4096), gemm(13, 13, 13, calls=10**5),
             gemm(512, 512, 512)]  # fmt: skip
    pairs, _ = run_loop(found, limit=3)
    sizes = [c.problem.m for c, _ in pairs]  # type: ignore[union-attr]
    statuses = [r.status for _, r in pairs]
    # nominal device (1 PFLOP/s, 2 TB/s): 4096³ 137 µs; 13³ × 10⁵ calls, 3·13²·2 B each: 51 µs;
    # 512³: 0.8 µs (bytes); 64³: 0.05 µs
    assert sizes == [4096, 13, 512, 64]
    assert statuses == ["ok", "failed: RuntimeError: boom", "ok", "not replayed: limit"]
    pairs, _ = run_loop(found, budget_s=15.0)  # each config takes 10 s on the fake clock
    assert [r.status for _, r in pairs] == ["ok", "failed: RuntimeError: boom"] + [
        "not replayed: budget"
    ] * 2


def test_progress_is_reported_for_every_config() -> None:
    seen: list[tuple[int, int, str]] = []
    clock = [0.0]
    replay([gemm(8, 8, 8), gemm(16, 16, 16)], Options(backends=("torch",)),
           torch_replay=FakeTorch(clock), progress=lambda *a: seen.append(a),  # type: ignore[arg-type]
           clock=lambda: clock[0])  # fmt: skip
    assert [(d, t) for d, t, _ in seen] == [(0, 2), (1, 2), (2, 2)]
    assert seen[0][2] == "bf16 GEMM NN 16×16×16"


def test_without_torch_every_config_says_why_and_options_are_checked() -> None:
    pairs = replay([gemm(8, 8, 8)], Options(backends=("torch",)))
    assert pairs[0][1].status == "skipped: no PyTorch with a usable GPU here"
    with pytest.raises(ConfigError, match="--backends torch,cuda"):
        Options(backends=("torch", "cuda")).validate()
    with pytest.raises(ConfigError, match="--budget-s 0"):
        Options(budget_s=0).validate()


def test_rates_against_measured_and_datasheet_ceilings() -> None:
    peaks = PeakTable(measured=MEASURED, datasheet=H100)
    c = gemm(4096, 4096, 4096, calls=3)
    m = output.metrics(c, Result("torch", "ok", time_us=250.0), peaks)
    tflops = 2 * 4096**3 / 250e-6 / 1e12
    assert m.tflops == pytest.approx(tflops) and m.total_us == 750.0
    assert m.peak == 800.0 and m.peak_source == "measured: test ceilings"
    assert m.peak_fraction == pytest.approx(tflops / 800.0)
    assert m.roofline_fraction == pytest.approx(tflops / 800.0)  # compute-bound at this size
    f32 = output.metrics(gemm(4096, 4096, 4096, "f32"), Result("t", "ok", time_us=5000.0), peaks)
    assert f32.peak == 67.0 and f32.peak_source == "datasheet: NVIDIA H100 SXM5 fp32"
    # a skinny GEMM is bandwidth-bound: roofline = FLOP/byte × 3000 GB/s
    skinny = output.metrics(gemm(8192, 1, 8192), Result("t", "ok", time_us=100.0), peaks)
    flops, size = 2 * 8192 * 8192, 2 * (8192 * 8192 + 8192 + 8192)
    roof = flops / size * 3000.0 / 1e3
    assert skinny.roofline_fraction == pytest.approx(flops / 100e-6 / 1e12 / roof)
    # an all-reduce: nccl-tests' bus bandwidth, 2(n-1)/n × bytes / time
    comm = Config(Comm("AllReduce", 1 << 20, "f32", "sum", 8, 0), 8, "nccl", "", ("nccl",))
    rate = output.metrics(comm, Result("t", "ok", time_us=100.0), peaks)
    assert rate.gbps == pytest.approx(4 * 2**20 / 100e-6 / 1e9 * 2 * 7 / 8)
    assert rate.peak_fraction is None


def rows_for(pairs: list[tuple[Config, Result]]) -> list[output.PerfRow]:
    peaks = PeakTable(measured=MEASURED, datasheet=H100)
    return output.rank(output.PerfRow(c, r, output.metrics(c, r, peaks)) for c, r in pairs)


def test_csv_is_ranked_by_total_time_with_madengine_columns_first(tmp_path: Path) -> None:
    small, big, opaque = gemm(64, 64, 64, calls=1000), gemm(2048, 2048, 2048), Config(
        Opaque("tensile", "Cijk_x", "no sizes"), 5, "tensile", "Cijk_x", ("tensile",)
    )  # fmt: skip
    pairs = [
        (opaque, Result("torch", "skipped: no sizes")),
        (big, Result("torch", "ok", time_us=50.0)),
        (small, Result("torch", "ok", time_us=2.0, kernels=("nvjet_a", "splitk_reduce"))),
        (small, Result("rocblas-bench", "ok", time_us=1.5)),
    ]
    rows = rows_for(pairs)
    path = output.write_csv(tmp_path / "library_perf.csv", rows, jobid="9", model="bert",
                            now=dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc))  # fmt: skip
    with path.open(newline="") as handle:
        read = list(csv.DictReader(handle))
    assert tuple(read[0])[: len(MADENGINE_COLUMNS)] == MADENGINE_COLUMNS
    assert [(r["m"], r["backend"]) for r in read] == [
        ("64", "torch"), ("64", "rocblas-bench"), ("2048", "torch"), ("", "torch"),
    ]  # fmt: skip
    first = read[0]
    assert (first["jobid"], first["model"], first["calls"], first["created_date"]) == (
        "9", "bert", "1000", "2026-11-23 00:00:00",
    )  # fmt: skip
    assert float(first["total_time_us"]) == 2000.0  # 1000 calls × 2 µs: first
    assert first["kernels"] == "nvjet_a + splitk_reduce" and read[1]["kernels"] == ""
    assert float(first["tflops"]) == pytest.approx(2 * 64**3 / 2e-6 / 1e12, rel=1e-3)
    assert read[-1]["status"] == "skipped: no sizes" and read[-1]["schema"] == output.SCHEMA


def test_report_sections() -> None:
    slow = gemm(4096, 4096, 4096, calls=10)
    fast = gemm(1024, 1024, 1024, calls=1)
    t_slow = 2 * 4096**3 / 100e12 * 1e6  # 100 TFLOP/s: 1/8 of the 800 ceiling
    comparison = SimpleNamespace(
        ratio=0.8, ci_low=0.78, ci_high=0.82, verdict="FASTER", threshold=0.01,
        a=SimpleNamespace(median_us=t_slow), b=SimpleNamespace(median_us=0.8 * t_slow),
    )  # fmt: skip
    pairs = [
        (slow, Result("torch", "ok", time_us=t_slow)),
        (slow, Result("triton", "ok", time_us=0.8 * t_slow, comparison=comparison)),
        (slow, Result("hipblaslt-bench", "ok", time_us=1.2 * t_slow)),
        (slow, Result("rocblas-bench", "failed: killed by SIGSEGV")),
        (fast, Result("torch", "ok", time_us=2 * 1024**3 / 700e12 * 1e6)),
    ]
    built = report.build(rows_for(pairs), source="t.csv", device="H100",
                         peaks=PeakTable(measured=MEASURED))  # fmt: skip
    assert [e["backend"] for e in built["top"]] == ["triton", "torch"]
    share = 10 * 0.8 * t_slow / (10 * 0.8 * t_slow + 2 * 1024**3 / 700e12 * 1e6)
    assert built["top"][0]["share"] == pytest.approx(share)
    under = built["under_peak"]
    assert [e["label"] for e in under] == ["bf16 GEMM NN 4096×4096×4096"]
    assert under[0]["roofline_fraction"] == pytest.approx(125 / 800)
    pairs_seen = {(c["a"], c["b"]): c for c in built["comparisons"]}
    tri = pairs_seen[("torch", "triton")]
    assert (tri["verdict"], tri["ci"], tri["speedup"]) == ("FASTER", [0.78, 0.82], 1 / 0.8)
    hip = pairs_seen[("torch", "hipblaslt-bench")]
    assert (hip["verdict"], hip["ci"], hip["faster"]) == ("SLOWER", None, "torch")
    assert hip["ratio"] == pytest.approx(1.2)
    assert built["problems"][0]["status"] == "failed: killed by SIGSEGV"
    assert built["summary"]["statuses"]["failed"] == 1
    from gpuscope.report import markdown

    md = markdown.render(report.libperf_document(built))
    assert "## Backends compared" in md and "triton 1.25× faster" in md
    assert report.to_json(built).startswith('{\n  "schema": "gpuscope.libperf/1"')
