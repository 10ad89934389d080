"""Bus bandwidth across ranks from built Kineto traces whose collectives carry their sizes
(torch's record_param_comms): four ranks of one all-reduce group, one of them late, every rank
leaving each all-reduce together 400 µs after the last arrival. The expected sizes, times and
bandwidths are worked out here from the numbers the traces were built with."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuscope.ranks.api import analyze_job
from tests.unit.analysis.comm_builder import ALL_REDUCE, collective, compute, record, step
from tests.unit.analysis.conftest import TraceBuilder

RANKS = 4
SIZES = (1 << 20, 1 << 18)  # float elements per all-reduce
TRANSFER_US = 400.0
LATE_US = {0: 0.0, 1: 30.0, 2: 250.0, 3: 10.0}  # rank 2 arrives last


def build(tmp_path: Path) -> list[str]:
    paths = []
    for rank in range(RANKS):
        b = TraceBuilder()
        t = 100.0
        for number in range(3):
            step(b, number, t, 2000.0)
            b.op("aten::mm", t + 1, 5.0)
            compute(b, t + 10, 200.0)
            for i, elems in enumerate(SIZES):
                start = t + 300 + i * 800 + LATE_US[rank]
                end = t + 300 + i * 800 + max(LATE_US.values()) + TRANSFER_US
                ext = record(b, "allreduce", start - 20, elems, RANKS)
                collective(b, ALL_REDUCE, start, end - start, ext=ext)
            t += 2000.0
        folder = tmp_path / f"rank{rank}"
        folder.mkdir()
        paths.append(b.write(folder / "trace.json", span=(0.0, 7000.0)))
    return paths


def test_bandwidth_is_bytes_over_the_last_arrivers_time_with_the_bus_factor(
    tmp_path: Path,
) -> None:
    part = analyze_job(build(tmp_path), workers=1).ranks
    assert part is not None
    rows = {row["bytes"]: row for row in part["bandwidth"]}
    assert sorted(rows) == sorted(4 * e for e in SIZES)  # float32
    for elems in SIZES:
        row = rows[4 * elems]
        algbw = 4 * elems / (TRANSFER_US * 1000)  # bytes per ns = GB/s
        assert (row["kind"], row["group_size"], row["count"]) == ("all_reduce", RANKS, 3)
        assert row["time_p50_us"] == TRANSFER_US
        assert row["algbw_gbs"] == pytest.approx(algbw, abs=1e-3)
        assert row["busbw_gbs"] == pytest.approx(algbw * 2 * (RANKS - 1) / RANKS, abs=1e-3)
    per_rank = {r["rank"]: r for r in part["per_rank"]}
    assert per_rank[2]["last"] == 6
    latest = max(LATE_US.values())
    for rank, late in LATE_US.items():
        assert per_rank[rank]["waited_us"] == pytest.approx(6 * (latest - late), abs=1e-3)


def test_bandwidth_rows_are_plain_floats_that_encode(tmp_path: Path) -> None:
    """They were numpy floats (int / numpy sum): `analyze --json` of a job whose collectives
    carry sizes crashed with 'Encoding objects of type numpy.float64 is unsupported'."""
    import msgspec

    part = analyze_job(build(tmp_path), workers=1).ranks
    assert part is not None and part["bandwidth"]
    for row in part["bandwidth"]:
        for key in ("algbw_gbs", "busbw_gbs", "busbw_best_gbs", "time_p50_us"):
            assert type(row[key]) is float, key
    msgspec.json.encode(part)
