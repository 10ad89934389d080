"""Rank traces of one job for the engine tests, needing nothing outside the repository.

- `synthetic_job`: Kineto traces written here (the analysis tests' TraceBuilder): per step a
  GEMM, then an all-reduce (with torch's record_param_comms sizes unless `sizes=False`) that
  every rank leaves together; `late` starts its all-reduces `late_us` after the others; each rank
  has its own clock.
- `a100_job`: ranks made from HTA's real A100 pair by benchmarks/make_rank_traces.py (skips when
  ../shared is absent).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from tests.unit.analysis.comm_builder import ALL_REDUCE, collective, compute, record, step
from tests.unit.analysis.conftest import TraceBuilder

REPO = Path(__file__).resolve().parents[3]


def synthetic_job(folder: Path, ranks: int = 4, steps: int = 6, late: int = 2,
                  late_us: float = 300.0, sizes: bool = True) -> list[Path]:  # fmt: skip
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for rank in range(ranks):
        b = TraceBuilder()
        clock = 1_000.0 * rank  # each rank's own clock offset, µs
        for n in range(steps):
            t = clock + n * 2_000.0
            step(b, n, t, 1_900.0)
            compute(b, t + 10.0, 900.0 + 20.0 * rank)
            arrive = t + 1_000.0 + (late_us if rank == late else 0.0)
            ext = record(b, "allreduce", arrive - 8.0, 1 << 20, ranks) if sizes else -1
            collective(b, ALL_REDUCE, arrive, t + 1_700.0 - arrive, ext=ext)
        path = folder / f"rank{rank}.json"
        b.write(path, span=(clock, steps * 2_000.0))
        text = path.read_text()
        info = f'"distributedInfo": {{"backend": "nccl", "rank": {rank}, "world_size": {ranks}}}'
        path.write_text(text.replace('"schemaVersion": 1', f'"schemaVersion": 1, {info}', 1))
        paths.append(path)
    return paths


def make_rank_traces() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_rank_traces", REPO / "benchmarks" / "make_rank_traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def a100_job(folder: Path, ranks: int = 4) -> list[Path]:
    """Two hosts of two ranks (make_rank_traces' clocks, delays and jitter), rank 3 late."""
    gen = make_rank_traces()
    for source in gen.PAIR:
        if not source.is_file():
            pytest.skip(f"reference trace not found: {source.resolve()}")
    return [Path(p) for p in gen.make(ranks, folder, ranks_per_host=2)]
