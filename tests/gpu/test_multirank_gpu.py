"""`gpuscope run` around a 2-rank torchrun DDP job on two real GPUs (skipped without them):
torch_profiler + nccl_trace + both samplers around tests/gpu/ddp_step.py, whose rank 1 does extra
GPU work before every step — and, run a second time, whose rank 1's host sleeps 25 ms after
syncing with its GPU before every step (a late host, no extra GPU work).

Checked against the raw events of the two Kineto traces, read here with json and plain loops:
each rank's communication and exposed communication (NCCL kernel time with no other kernel on
the GPU), which NCCL kernels of the two ranks are one collective (the i-th of each rank, as NCCL
orders them, when they overlap), who starts last and how long the other waits; and the run
directory's layout; each rank's verdict read with the job (rank 0 waiting for rank 1; rank 1
late by more work, or by its host's time after each sync) and the one straggler finding.

    python -m pytest -q tests/gpu/test_multirank_gpu.py        # on a machine with 2 GPUs
"""

from __future__ import annotations

import gzip
import json
import os
import statistics
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests import rawkineto as raw

pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
TOOLS = "torch_profiler,nccl_trace,gpu_info_power_profiler,gpu_info_vram_profiler"


def gpuscope_run(
    torch_gpu: ModuleType, tmp_path_factory: pytest.TempPathFactory, *step_args: str
) -> Path:
    if torch_gpu.cuda.device_count() < 2:
        pytest.skip("needs 2 GPUs")
    if not torch_gpu.distributed.is_nccl_available():
        pytest.skip("this PyTorch has no NCCL")
    out = tmp_path_factory.mktemp("runs")
    path = f"{REPO / 'src'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"
    env = {**os.environ, "PYTHONPATH": path}
    argv = [sys.executable, "-m", "gpuscope", "run", "--output-dir", str(out), "--tools", TOOLS,
            "--", sys.executable, "-m", "torch.distributed.run", "--nproc-per-node", "2",
            str(REPO / "tests" / "gpu" / "ddp_step.py"), "--steps", "12", *step_args]  # fmt: skip
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    (run,) = sorted(out.iterdir())
    return run


@pytest.fixture(scope="module")
def run_dir(torch_gpu: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gpuscope_run(torch_gpu, tmp_path_factory)


@pytest.fixture(scope="module")
def late_host_run_dir(torch_gpu: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return gpuscope_run(torch_gpu, tmp_path_factory, "--extra-matmuls", "0",
                        "--host-delay-ms", "25")  # fmt: skip


def trace_of(run_dir: Path, rank: int) -> Path:
    (trace,) = sorted((run_dir / f"rank{rank}" / "torch_profiler_output").glob("*.pt.trace.json*"))
    return trace


def kernels(path: Path) -> list[tuple[int, int, bool]]:
    """(start ns, end ns, is NCCL) of every kernel in the trace, from its raw JSON."""
    data = json.loads(gzip.decompress(path.read_bytes()))
    found = []
    for e in data["traceEvents"]:
        if e.get("cat") == "kernel" and e.get("ph") == "X":
            start = int(Decimal(str(e["ts"])) * 1000)
            end = start + int(Decimal(str(e["dur"])) * 1000)
            found.append((start, end, e["name"].startswith(("ncclKernel", "ncclDevKernel"))))
    return found


def union(intervals: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for s, e in sorted(intervals):
        if merged and s <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], e))
        else:
            merged.append((s, e))
    return merged


def uncovered(a: list[tuple[int, int]], b: list[tuple[int, int]]) -> int:
    cover = union(b)
    return sum(e - s - sum(max(0, min(e, q) - max(s, p)) for p, q in cover) for s, e in union(a))


def report(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "ranks_analysis.json").read_text())
    return data


def test_the_run_has_a_folder_per_rank_and_samplers_once(run_dir: Path) -> None:
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["launcher"] == "torchrun"
    assert [(r["rank"], r["local_rank"], r["world_size"]) for r in manifest["ranks"]] == [
        (0, 0, 2), (1, 1, 2)]  # fmt: skip
    assert len(manifest["hosts"]) == 1 and manifest["hosts"][0]["ranks"] == [0, 1]
    for rank in (0, 1):
        assert trace_of(run_dir, rank).name.startswith(f"rank{rank}_")
        assert list((run_dir / f"rank{rank}").glob("nccl_debug.*.log"))
        assert (run_dir / f"rank{rank}" / "library_trace.csv").is_file()
    header = (run_dir / "gpu_info_power_profiler_output.csv").read_text().splitlines()[0]
    assert "GPU0" in header and "GPU1" in header  # every GPU of the host, sampled once
    assert not list(run_dir.glob("rank*/gpu_info_*"))


@pytest.mark.parametrize("rank", [0, 1])
def test_exposed_communication_per_rank_matches_the_raw_kernels(run_dir: Path, rank: int) -> None:
    found = kernels(trace_of(run_dir, rank))
    comm = [(s, e) for s, e, nccl in found if nccl]
    compute = [(s, e) for s, e, nccl in found if not nccl]
    assert comm, "the DDP step must have run NCCL kernels inside the profiled window"
    mine = next(r for r in report(run_dir)["per_rank"] if r["rank"] == rank)
    expected_comm = sum(e - s for s, e in union(comm))
    assert mine["communication_us"] * 1000 == pytest.approx(expected_comm, abs=1)
    assert mine["exposed_communication_us"] * 1000 == pytest.approx(uncovered(comm, compute), abs=1)


def sequence_pairs(
    a: list[tuple[int, int]], b: list[tuple[int, int]]
) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The NCCL kernels of two ranks paired as NCCL runs them: the collectives of one
    communicator execute in the same order on every rank, so the i-th of one rank is the i-th
    of the other — up to the few each profiling window cut off at its edges (the shift whose
    pairs end closest together). An overlap test pairs a kernel with every neighbour that ends
    within its window (11 "pairs" for 7 collectives on an H200 pair)."""

    def pairs(shift: int) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        return list(zip(a[max(shift, 0) :], b[max(-shift, 0) :]))  # noqa: B905 (windows differ)

    def spread(shift: int) -> float:
        found = pairs(shift)
        return statistics.median(abs(x[1] - y[1]) for x, y in found) if found else float("inf")

    return pairs(min(range(-3, 4), key=spread))


def test_the_slow_rank_arrives_last_and_the_wait_matches_the_raw_kernels(run_dir: Path) -> None:
    comm = [[(s, e) for s, e, nccl in kernels(trace_of(run_dir, r)) if nccl] for r in (0, 1)]
    pairs = [(a, b) for a, b in sequence_pairs(comm[0], comm[1]) if a[0] < b[1] and b[0] < a[1]]
    assert pairs
    offset = statistics.median(a[1] - b[1] for a, b in pairs)  # one host: near 0
    late = [b[0] + offset - a[0] for a, b in pairs]  # > 0: rank 1 started after rank 0
    part = report(run_dir)
    per_rank = {r["rank"]: r for r in part["per_rank"]}
    assert part["collectives"]["matched"] == len(pairs)
    # near-ties may go either way with a µs of difference between the two offsets
    ties = sum(1 for w in late if abs(w) < 50_000)
    assert abs(per_rank[1]["last"] - sum(1 for w in late if w > 0)) <= ties
    assert per_rank[0]["waited_us"] * 1000 == pytest.approx(sum(w for w in late if w > 0), rel=1e-3)
    assert per_rank[1]["last"] >= 0.75 * len(pairs)  # the extra matmuls make rank 1 late
    ids = [f["id"] for f in part["findings"]]
    assert "rank-straggler" in ids


def test_all_reduce_sizes_give_bus_bandwidth(run_dir: Path) -> None:
    """Current Kineto records each collective's sizes (record_param_comms): with 2 ranks the
    all-reduce bus factor 2(n-1)/n is 1, so busbw equals algbw = bytes / the last arriver's time."""
    rows = [b for b in report(run_dir)["bandwidth"] if b["kind"] == "all_reduce"]
    assert rows, "no all-reduce with a recorded size: record_param_comms not linked"
    for row in rows:
        assert row["group_size"] == 2 and row["bytes"] > 0
        assert row["busbw_gbs"] == pytest.approx(row["algbw_gbs"], rel=1e-6)


def waiting_share(run_dir: Path) -> tuple[float, float]:
    """Rank 0's waits for rank 1 and its idle time, over its GPU span, from the raw kernels."""
    path = trace_of(run_dir, 0)
    ops = raw.gpu_ops(path)
    span = max(e for _, e in ops) - min(s for s, _ in ops)
    waits = raw.paired_waits(raw.nccl(path), raw.nccl(trace_of(run_dir, 1)))
    return sum(waits) / span, 1 - raw.length(raw.union(ops)) / span


def test_rank_1_with_more_gpu_work_is_more_work_and_rank_0_waits(run_dir: Path) -> None:
    part = report(run_dir)
    verdicts = {r["rank"]: r["verdict"] for r in part["per_rank"]}
    (straggler,) = (f for f in part["findings"] if f["id"] == "rank-straggler")
    assert straggler["evidence"]["cause"] == "more-compute"
    assert "slower" not in straggler["message"] and "rank-slow-steps" not in [
        f["id"] for f in part["findings"]]  # fmt: skip
    # its compute per step, from the raw kernels, against rank 0's
    names = part["steps"]["names"]
    compute = []
    for rank in (0, 1):
        path = trace_of(run_dir, rank)
        ranges = raw.steps(path)
        per_step = [raw.length(raw.union(raw.clip(raw.compute_kernels(path), *ranges[n])))
                    for n in names]  # fmt: skip
        compute.append(sum(per_step) / len(per_step))
    assert straggler["evidence"]["cause_per_step_us"] * 1000 == pytest.approx(compute[1], abs=1)
    assert straggler["evidence"]["others_cause_us"] * 1000 == pytest.approx(compute[0], abs=1)
    if straggler["evidence"]["others_wait_share"] >= 0.05:
        assert verdicts[1]["bound"] == "more-work"
    waited, idle = waiting_share(run_dir)
    if waited >= 0.1 and waited >= idle:
        assert (verdicts[0]["bound"], verdicts[0]["waiting_for"]) == ("waiting", 1)


def test_a_late_host_makes_rank_1_host_bound_and_rank_0_wait_for_it(
    late_host_run_dir: Path,
) -> None:
    run_dir = late_host_run_dir
    part = report(run_dir)
    verdicts = {r["rank"]: r["verdict"] for r in part["per_rank"]}
    waited, idle = waiting_share(run_dir)
    assert waited >= 0.5 and waited >= idle  # 25 ms of every ~28 ms step
    assert (verdicts[0]["bound"], verdicts[0]["waiting_for"]) == ("waiting", 1)
    # rank 1 syncs, then sleeps: whether its sync drained the queue (the GPU still working when
    # it began) or not, the 25 ms are its host's, as after-sync or host-wait time
    assert verdicts[1]["bound"] == "host-bound"
    assert verdicts[1]["cause"] in ("after-sync", "host-wait")
    names = part["steps"]["names"]
    table = {r["rank"]: r for r in part["steps"]["per_rank"]}
    for rank in (0, 1):
        path = trace_of(run_dir, rank)
        drained, late = raw.drained_per_step(path), raw.host_late_per_step(path)
        assert [round(v * 1000) for v in table[rank]["after_sync_us"]] == [
            drained[n] for n in names]  # fmt: skip
        assert [round(v * 1000) for v in table[rank]["host_wait_us"]] == [
            late[n] for n in names]  # fmt: skip
    mine = [a + b for a, b in zip(table[1]["after_sync_us"], table[1]["host_wait_us"],
                                  strict=True)]  # fmt: skip
    assert all(v >= 24_000 for v in mine)  # the 25 ms sleep, each step
    ids = [f["id"] for f in part["findings"]]
    assert ids.count("rank-straggler") == 1 and "rank-slow-steps" not in ids
    (straggler,) = (f for f in part["findings"] if f["id"] == "rank-straggler")
    assert straggler["evidence"]["cause"] == verdicts[1]["cause"]
    assert "slower" not in straggler["message"]
