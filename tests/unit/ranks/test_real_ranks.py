"""The cross-rank analysis on real multi-rank traces, checked against the raw events.

- HTA's A100 pair (ranks 0 and 1 of one 128-rank job, one host): which NCCL kernels are one
  collective, who arrives last, the waits, and each rank's exposed communication and per-step
  compute, all recomputed here from the JSON events with plain loops;
- HTA's V100 rank-1 trace (2,020 all-reduces over 5 steps) with a rank 0 made from it by
  benchmarks/make_rank_traces.py (another clock, rank 1's collectives started 300 µs late):
  the offset and the waits the analysis finds are the injected ones.

The reference traces are read in place; without them the tests skip.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import statistics
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from gpuscope.ranks.api import analyze_job

REPO = Path(__file__).resolve().parents[3]
TRACES = REPO / ".." / "shared" / "reference" / "traces"
PAIR = [TRACES / f"hta__a100_sampled_rank-{r}.json.gz" for r in (0, 1)]
V100 = TRACES / "hta__v100_profile_memory_nccl_rank1_BENCH.json.gz"


def need(*paths: Path) -> None:
    for path in paths:
        if not path.is_file():
            pytest.skip(f"reference trace not found: {path.resolve()}")


def events(path: Path) -> list[dict[str, Any]]:
    data: dict[str, Any] = json.loads(gzip.decompress(path.read_bytes()))
    return list(data["traceEvents"])


def ns(value: Any) -> int:
    return int(Decimal(str(value)) * 1000)


def kernels(evs: list[dict[str, Any]]) -> list[tuple[int, int, bool]]:
    """(start ns, end ns, is NCCL) of every kernel."""
    out = []
    for e in evs:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            start = ns(e["ts"])
            out.append((start, start + ns(e["dur"]), e["name"].startswith("ncclKernel")))
    return out


def union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def length(intervals: list[tuple[int, int]]) -> int:
    return sum(e - s for s, e in intervals)


def minus(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    """Length of union(a) not covered by union(b), by a sweep over both."""
    total = 0
    for s, e in union(a):
        covered = sum(max(0, min(e, be) - max(s, bs)) for bs, be in union(b))
        total += e - s - covered
    return total


def clip(intervals: list[tuple[int, int]], lo: int, hi: int) -> list[tuple[int, int]]:
    return [(max(s, lo), min(e, hi)) for s, e in intervals if min(e, hi) > max(s, lo)]


def steps(evs: list[dict[str, Any]]) -> dict[str, tuple[int, int]]:
    found = {}
    for e in evs:
        if str(e.get("name", "")).startswith("ProfilerStep#") and e.get("ph") == "X":
            found[e["name"]] = (ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]))
    return found


def test_a100_pair_stragglers_and_waits_match_the_raw_kernels() -> None:
    need(*PAIR)
    raw = [[(s, e) for s, e, nccl in kernels(events(p)) if nccl] for p in PAIR]
    # one collective = an NCCL kernel on each rank, overlapping, ending within 1 ms
    pairs = [(a, b) for a in raw[0] for b in raw[1]
             if a[0] < b[1] and b[0] < a[1] and abs(a[1] - b[1]) <= 1_000_000]  # fmt: skip
    assert len(pairs) == 5  # the other 5 calls of each rank are in groups the other is not in
    offset = statistics.median(a[1] - b[1] for a, b in pairs)
    waits = [(b[0] + offset) - a[0] for a, b in pairs]
    assert all(w > 0 for w in waits)  # rank 1 starts last every time

    part = analyze_job([str(p) for p in PAIR], workers=1).ranks
    assert part is not None
    assert part["collectives"]["matched"] == len(pairs)
    assert part["clock"]["offsets"][1]["offset_us"] == offset / 1000
    per_rank = {r["rank"]: r for r in part["per_rank"]}
    assert per_rank[1]["last"] == len(pairs) and per_rank[0]["last"] == 0
    assert per_rank[0]["waited_us"] == pytest.approx(sum(waits) / 1000, abs=1e-3)
    assert per_rank[1]["others_wait_us"] == pytest.approx(sum(waits) / 1000, abs=1e-3)
    worst = max(waits)
    assert part["collectives"]["worst"][0]["wait_us"] == pytest.approx(worst / 1000, abs=1e-3)
    straggler = next(f for f in part["findings"] if f["id"] == "rank-straggler")
    assert straggler["evidence"]["rank"] == 1


@pytest.mark.parametrize("rank", [0, 1])
def test_a100_exposed_communication_and_step_compute_match_the_raw_kernels(rank: int) -> None:
    need(*PAIR)
    evs = events(PAIR[rank])
    ks = kernels(evs)
    comm = [(s, e) for s, e, nccl in ks if nccl]
    compute = [(s, e) for s, e, nccl in ks if not nccl]
    part = analyze_job([str(p) for p in PAIR], workers=1).ranks
    assert part is not None
    mine = next(r for r in part["per_rank"] if r["rank"] == rank)
    assert mine["communication_us"] * 1000 == length(union(comm))
    assert mine["exposed_communication_us"] * 1000 == minus(comm, compute)
    assert mine["compute_us"] * 1000 == length(union(compute))
    table = next(r for r in part["steps"]["per_rank"] if r["rank"] == rank)
    for name, compute_us, exposed_us in zip(
        part["steps"]["names"], table["compute_us"], table["exposed_us"], strict=True
    ):
        lo, hi = steps(evs)[name]
        assert compute_us * 1000 == length(union(clip(compute, lo, hi)))
        assert exposed_us * 1000 == minus(clip(comm, lo, hi), clip(compute, lo, hi))


def make_rank_traces() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "make_rank_traces", REPO / "benchmarks" / "make_rank_traces.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
def test_v100_job_with_an_injected_late_rank_gives_back_the_injected_numbers(
    tmp_path: Path,
) -> None:
    need(V100)
    gen = make_rank_traces()
    doc = gen.load(V100)
    delay_us, skew_us = Decimal(300), Decimal(2500)
    early = gen.write(gen.perturb(doc, 0, 2, offset_us=skew_us), tmp_path / "rank0.json")
    late = gen.write(gen.perturb(doc, 1, 2, delay_us=delay_us), tmp_path / "rank1.json")
    # expected, from the raw kernels: each all-reduce of rank 1 starts min(300 µs, its
    # duration - 1 ns) later; both ranks leave together
    waits = [min(ns(delay_us), e - s - 1) for s, e, nccl in kernels(events(V100)) if nccl]
    part = analyze_job([str(early), str(late)], workers=2).ranks
    assert part is not None
    assert part["clock"]["offsets"][0]["offset_us"] == 0.0
    assert part["clock"]["offsets"][1]["offset_us"] == float(skew_us)
    assert part["clock"]["residual"]["max_us"] == 0.0
    per_rank = {r["rank"]: r for r in part["per_rank"]}
    assert part["collectives"]["matched"] == len(waits)
    assert per_rank[1]["last"] == sum(1 for w in waits if w > 0)
    assert per_rank[0]["waited_us"] * 1000 == pytest.approx(sum(waits), abs=1)
    straggler = next(f for f in part["findings"] if f["id"] == "rank-straggler")
    assert straggler["evidence"]["rank"] == 1
