"""library_perf.csv: madengine's six leading columns, the config's columns, then one backend's
measurement per row, ranked by total time (time per call × calls) of each config's best backend.

Rates are gpuscope's own for every backend, from the config's work and the measured time:
TFLOP/s = FLOPs / time; GB/s = the fewest bytes a GEMM / convolution must move / time, and for
a collective nccl-tests' bus bandwidth (bytes / time × its bus factor), so a vendor binary's row
and the PyTorch row of one config are comparable.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from gpuscope.analysis.communication import bus_factor
from gpuscope.libperf.configs import Comm, Config, Conv, Gemm, Opaque
from gpuscope.libperf.result import Result
from gpuscope.libtrace.table import MADENGINE_COLUMNS, created_date, write_rows
from gpuscope.peaks import PeakTable
from gpuscope.schemas import LIBPERF as SCHEMA

GEMM_COLUMNS = (
    "op", "dtype", "compute_type", "transA", "transB", "m", "n", "k", "batch", "lda", "ldb",
    "ldc", "stride_a", "stride_b", "stride_c", "epilogue", "beta_nonzero",
)  # fmt: skip
CONV_COLUMNS = (
    "conv_n", "conv_c", "conv_d", "conv_h", "conv_w", "conv_k", "conv_z", "conv_y", "conv_x",
    "pad_d", "pad_h", "pad_w", "stride_d", "stride_h", "stride_w", "dilation_d", "dilation_h",
    "dilation_w", "groups", "conv_direction", "layout",
)  # fmt: skip
COMM_COLUMNS = ("collective", "count", "reduce_op", "nranks", "root", "bytes")
RESULT_COLUMNS = (
    "backend", "status", "time_us", "total_time_us", "tflops", "gbps", "peak_fraction", "peak",
    "peak_source", "roofline_fraction", "mode", "samples", "tool_rate", "command", "kernels",
    "note",
)  # fmt: skip
COLUMNS = (
    *MADENGINE_COLUMNS, "libraries", "kind", *GEMM_COLUMNS, *CONV_COLUMNS, *COMM_COLUMNS,
    *RESULT_COLUMNS, "schema",
)  # fmt: skip

Cell = str | int | float | None


@dataclass(frozen=True)
class Metrics:
    """Rates of one result against the ceilings; None where they do not apply."""

    total_us: float | None = None
    tflops: float | None = None
    gbps: float | None = None
    peak: float | None = None
    peak_source: str = ""
    peak_fraction: float | None = None
    roofline_fraction: float | None = None  # of min(compute peak, intensity × bandwidth)


@dataclass(frozen=True)
class PerfRow:
    config: Config
    result: Result
    metrics: Metrics


def kind(config: Config) -> str:
    p = config.problem
    if isinstance(p, Gemm):
        return "gemm"
    if isinstance(p, Conv):
        return "conv"
    return "collective" if isinstance(p, Comm) else "other"


def metrics(config: Config, result: Result, peaks: PeakTable) -> Metrics:
    """Rates at the result's time per call; fractions of the matching ceilings."""
    if not result.ok or result.time_us is None:
        return Metrics()
    seconds = result.time_us * 1e-6
    total = result.time_us * config.calls
    p = config.problem
    if isinstance(p, Comm):
        # algbw where the bus factor is undefined (one rank, an unknown collective)
        factor = bus_factor(_comm_kind(p.name), p.nranks or 1)
        return Metrics(total_us=total, gbps=p.bytes * (factor or 1.0) / seconds / 1e9)
    flops, size = config.flops, config.bytes
    if flops is None or size is None:
        return Metrics(total_us=total)
    tflops, gbps = flops / seconds / 1e12, size / seconds / 1e9
    ceiling = peaks.compute(p.dtype) if isinstance(p, Gemm | Conv) else None
    if ceiling is None:
        return Metrics(total_us=total, tflops=tflops, gbps=gbps)
    bandwidth = peaks.bandwidth()
    roof = ceiling.value
    if bandwidth is not None and size > 0:
        roof = min(roof, flops / size * bandwidth.value / 1e3)  # FLOP/B × GB/s → TFLOP/s
    return Metrics(
        total_us=total,
        tflops=tflops,
        gbps=gbps,
        peak=ceiling.value,
        peak_source=ceiling.source,
        peak_fraction=tflops / ceiling.value,
        roofline_fraction=tflops / roof if roof > 0 else None,
    )


def _comm_kind(name: str) -> str:
    """NCCL's op name → the collective kind bus_factor knows (AllReduce → all_reduce)."""
    snake = "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
    return {"all_to_all": "all_to_all", "send": "send", "recv": "recv"}.get(snake, snake)


def rank(rows: Iterable[PerfRow]) -> list[PerfRow]:
    """Configs by the total time of their best (fastest ok) backend, most first; configs
    without a time keep their order at the end. A config's rows stay together."""
    by_config: dict[int, list[PerfRow]] = {}
    for row in rows:
        by_config.setdefault(id(row.config), []).append(row)
    groups = list(by_config.values())

    def best_total(group: list[PerfRow]) -> float:
        totals = [r.metrics.total_us for r in group if r.metrics.total_us is not None]
        return min(totals) if totals else -1.0

    order = sorted(range(len(groups)), key=lambda i: (-best_total(groups[i]), i))
    return [row for i in order for row in groups[i]]


def write_csv(
    path: str | Path, rows: Sequence[PerfRow], *, jobid: str, model: str, now: dt.datetime
) -> Path:
    """Write the rows as given (rank them first); whole or not at all (`-`: stdout)."""
    created = created_date(now)
    return write_rows(
        path, COLUMNS, (cells(r, jobid=jobid, created=created, model=model) for r in rows)
    )


def cells(row: PerfRow, *, jobid: str, created: str, model: str) -> list[Cell]:
    c, r, m = row.config, row.result, row.metrics
    head: list[Cell] = [jobid, created, model, c.library, c.config, c.calls]
    head += ["+".join(c.libraries), kind(c)]
    tail: list[Cell] = [
        r.backend, r.status, _num(r.time_us), _num(m.total_us), _num(m.tflops), _num(m.gbps),
        _num(m.peak_fraction, 4), _num(m.peak), m.peak_source, _num(m.roofline_fraction, 4),
        r.mode, len(r.samples_us) or None, r.tool_rate, r.command, " + ".join(r.kernels), r.note,
        SCHEMA,
    ]  # fmt: skip
    return head + _gemm_cells(c) + _conv_cells(c) + _comm_cells(c) + tail


def _gemm_cells(c: Config) -> list[Cell]:
    g = c.problem
    if not isinstance(g, Gemm):
        blank: list[Cell] = [None] * (len(GEMM_COLUMNS) - 2)
        return [c.op, _dtype(c), *blank]
    return [
        c.op, g.dtype, g.compute_type, g.trans_a, g.trans_b, g.m, g.n, g.k, g.batch, g.lda,
        g.ldb, g.ldc, g.stride_a, g.stride_b, g.stride_c, g.epilogue, int(c.accumulate),
    ]  # fmt: skip


def _dtype(c: Config) -> str | None:
    p = c.problem
    return None if isinstance(p, Opaque) else p.dtype


def _conv_cells(c: Config) -> list[Cell]:
    v = c.problem
    if not isinstance(v, Conv):
        return [None] * len(CONV_COLUMNS)
    three = v.d is not None

    def split(values: tuple[int, ...]) -> list[Cell]:
        return list(values) if three else [None, *values]

    return [
        v.n, v.c, v.d, v.h, v.w, v.k, v.z, v.y, v.x, *split(v.pad), *split(v.stride),
        *split(v.dilation), v.groups, v.direction, v.layout,
    ]  # fmt: skip


def _comm_cells(c: Config) -> list[Cell]:
    p = c.problem
    if not isinstance(p, Comm):
        return [None] * len(COMM_COLUMNS)
    return [p.name, p.count, p.reduce_op, p.nranks, p.root, p.bytes]


def _num(value: float | None, digits: int = 6) -> float | None:
    """`digits` significant digits (a 0.08 µs fake and a 2 s GEMM both keep theirs)."""
    return None if value is None else float(f"{value:.{digits}g}")
