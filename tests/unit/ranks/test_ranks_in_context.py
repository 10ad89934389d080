"""Ranks in context (issue 20.6) on real jobs, every number checked against the raw events.

- The 2-rank DDP job recorded on 2×H200 (`tests/data/recorded/ddp_late_host_h200`: rank 1
  synchronises with its GPU, then sleeps 25 ms on the host before every step): rank 0 is
  "waiting for rank 1" (its busy NCCL kernels are waits), rank 1 is host-bound by ~25 ms of host
  time after each step's sync; one straggler finding, and no "slower" (the step walls differ by a
  few %).
- HTA's A100 pair (ranks 0 and 1 of a 128-rank job): rank 1 computes 29 % more per step, its
  walls are within ~1 % of rank 0's: no "29 % slower".
- The same rank given twice: a `duplicate-rank` finding and integrity flags naming both paths.

The expected numbers are recomputed here from the JSON events with plain loops (json, Decimal),
never by the code under test; gpuscope's unit formatter only writes them the way messages do.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest

from gpuscope.document.model import Table
from gpuscope.document.units import time_ns
from gpuscope.ranks.api import analyze_job, analyze_outcomes
from gpuscope.ranks.engine import run_all
from gpuscope.ranks.section import section
from gpuscope.ranks.work import run_task
from tests.rawkineto import (
    clip,
    compute_kernels,
    drained_per_step,
    gpu_ops,
    host_late_per_step,
    length,
    nccl,
    overlapping_waits,
    paired_waits,
    steps,
    union,
)

REPO = Path(__file__).resolve().parents[3]
JOB = REPO / "tests" / "data" / "recorded" / "ddp_late_host_h200"
TRACES = REPO / ".." / "shared" / "reference" / "traces"
PAIR = [TRACES / f"hta__a100_sampled_rank-{r}.json.gz" for r in (0, 1)]


def need(*paths: Path) -> None:
    for path in paths:
        if not path.exists():
            pytest.skip(f"trace not found: {path.resolve()}")


def trace_of(rank: int) -> Path:
    (path,) = sorted((JOB / f"rank{rank}" / "torch_profiler_output").glob("*.pt.trace.json.gz"))
    return path


@cache
def job_part() -> dict[str, Any]:
    part = analyze_job([str(JOB)], workers=1).ranks
    assert part is not None
    return part


def by_rank(part: dict[str, Any]) -> dict[int, dict[str, Any]]:
    return {r["rank"]: r for r in part["per_rank"]}


def test_the_recorded_job_rank_0_waits_for_rank_1() -> None:
    need(JOB)
    part = job_part()
    mine = by_rank(part)[0]
    verdict = mine["verdict"]
    assert (verdict["bound"], verdict["waiting_for"], verdict["trace_bound"]) == (
        "waiting", 1, "gpu-bound")  # fmt: skip
    # the numbers of its reason, from the raw kernels
    path = trace_of(0)
    ops = gpu_ops(path)
    span = max(e for _, e in ops) - min(s for s, _ in ops)
    busy = length(union(ops))
    waited = sum(paired_waits(nccl(path), nccl(trace_of(1))))
    assert mine["waited_us"] * 1000 == pytest.approx(waited, rel=1e-3)
    assert waited / span > 0.9  # 25 ms of every ~28 ms step
    assert verdict["utilization"] == pytest.approx(busy / span, abs=1e-4)
    assert verdict["own_work_utilization"] == pytest.approx((busy - waited) / span, abs=1e-3)
    reason = verdict["reason"]
    assert f"it waits {time_ns(waited)} ({waited / span:.1%} of its GPU span)" in reason
    assert f"busy {(busy - waited) / span:.1%} of its span ({busy / span:.1%} counting" in reason


def test_the_recorded_job_rank_1_is_late_by_its_hosts_time() -> None:
    """Rank 1 syncs, then sleeps 25 ms before every step: its GPU has finished before the sync
    begins, so the sync drains nothing and the idle time is its host's (host wait)."""
    need(JOB)
    part = job_part()
    verdict = by_rank(part)[1]["verdict"]
    # alone, its trace reads cpu-bound: the idle time is the host's own work
    assert (verdict["bound"], verdict["cause"], verdict["trace_bound"]) == (
        "host-bound", "host-wait", "cpu-bound")  # fmt: skip
    names = part["steps"]["names"]
    late = {r: host_late_per_step(trace_of(r)) for r in (0, 1)}
    drained = {r: drained_per_step(trace_of(r)) for r in (0, 1)}
    table = {r["rank"]: r for r in part["steps"]["per_rank"]}
    for r in (0, 1):
        assert [round(v * 1000) for v in table[r]["host_wait_us"]] == [
            late[r][n] for n in names]  # fmt: skip
        assert [round(v * 1000) for v in table[r]["after_sync_us"]] == [
            drained[r][n] for n in names]  # fmt: skip
    mine = [late[1][n] for n in names]
    assert all(25_000_000 < v < 30_000_000 for v in mine)  # the 25 ms sleep, each step
    mean_late = sum(mine) / len(mine)
    mean_other = sum(late[0][n] for n in names) / len(names)
    assert verdict["reason"].startswith(
        f"the host launches late in each step: its GPU waits {time_ns(mean_late)} per step for "
        f"work launched after it went idle (mean over {len(names)} steps; rank 0: "
        f"{time_ns(mean_other)})"
    )


def test_the_recorded_job_has_one_straggler_finding_and_no_slower() -> None:
    need(JOB)
    part = job_part()
    ids = [f["id"] for f in part["findings"]]
    assert ids.count("rank-straggler") == 1 and "rank-slow-steps" not in ids
    (straggler,) = (f for f in part["findings"] if f["id"] == "rank-straggler")
    message = straggler["message"]
    assert "slower" not in message
    walls = {r: steps(trace_of(r)) for r in (0, 1)}
    names = part["steps"]["names"]
    ratios = [(walls[1][n][1] - walls[1][n][0]) / (walls[0][n][1] - walls[0][n][0]) - 1
              for n in names]  # fmt: skip
    assert max(abs(x) for x in ratios) < 0.05
    assert f"within {min(ratios):+.1%} … {max(ratios):+.1%} of rank 0's over 3 steps" in message
    waits = paired_waits(nccl(trace_of(0)), nccl(trace_of(1)))
    rank0_steps = sum(walls[0][n][1] - walls[0][n][0] for n in names)
    assert f"it arrives last at {len(waits)} of the {len(waits)} collectives" in message
    # with two ranks the next latest is rank 0: rank 1 is late by rank 0's wait
    assert f"{time_ns(sum(waits) / len(waits))} after the next latest rank on average" in message
    assert f"rank 0 waits {time_ns(sum(waits))} for it in total" in message
    assert f"({sum(waits) / rank0_steps:.1%} of its step time" in message
    late = [host_late_per_step(trace_of(r)) for r in (0, 1)]
    mine, other = (sum(late[r][n] for n in names) / len(names) for r in (1, 0))
    assert (
        f"Cause: its host launches late in each step: its GPU waits {time_ns(mine)} per step "
        f"for work launched after it went idle (mean over 3 steps; rank 0: {time_ns(other)}); "
        "of it: host work outside operators"
    ) in message
    assert straggler["evidence"]["cause"] == "host-wait"
    reason = by_rank(part)[1]["verdict"]["reason"]
    assert (f"; rank 0 waits {time_ns(sum(waits))} for it at the collectives "
            f"({sum(waits) / rank0_steps:.1%} of its step time)") in reason  # fmt: skip


def test_the_recorded_job_section_shows_the_verdicts_in_the_per_rank_table() -> None:
    need(JOB)
    part = job_part()
    tables = [b for b in section(part).blocks if isinstance(b, Table)]
    per_rank = next(t for t in tables if t.headers[:3] == ("rank", "host", "verdict"))
    assert [row[2].text for row in per_rank.rows] == ["waiting for rank 1", "host-bound"]


def test_the_a100_pair_is_not_29_percent_slower() -> None:
    need(*PAIR)
    part = analyze_job([str(p) for p in PAIR], workers=1).ranks
    assert part is not None
    ids = [f["id"] for f in part["findings"]]
    assert "rank-slow-steps" not in ids
    (straggler,) = (f for f in part["findings"] if f["id"] == "rank-straggler")
    message = straggler["message"]
    assert "slower" not in message
    walls = [steps(p) for p in PAIR]
    names = part["steps"]["names"]
    ratios = [(walls[1][n][1] - walls[1][n][0]) / (walls[0][n][1] - walls[0][n][0]) - 1
              for n in names]  # fmt: skip
    assert all(0 < x < 0.015 for x in ratios)  # 0.1 … 1.2 %
    assert f"within {min(ratios):+.1%} … {max(ratios):+.1%} of rank 0's" in message
    # the own-work difference, called that: compute per step from the raw kernels
    compute = [[length(union(clip(compute_kernels(p), *w[n]))) for n in names]
               for p, w in zip(PAIR, walls, strict=True)]  # fmt: skip
    mine, other = (sum(c) / len(c) for c in (compute[1], compute[0]))
    assert (f"its GPU computes {mine / other - 1:.0%} more per step than rank 0 "
            f"({time_ns(mine)} against {time_ns(other)})") in message  # fmt: skip
    assert f"{mine / other - 1:.0%}" == "29%"
    waits = overlapping_waits(nccl(PAIR[0]), nccl(PAIR[1]))
    rank0_steps = sum(walls[0][n][1] - walls[0][n][0] for n in names)
    share = sum(waits) / rank0_steps
    assert (f"it arrives last at {len(waits)} of the {len(waits)} collectives matched across "
            f"ranks (named at ≥ 75%), {time_ns(sum(waits) / len(waits))} after the next latest "
            f"rank on average; rank 0 waits {time_ns(sum(waits))} for it in total "
            f"({share:.1%} of its step time, warning at ≥ 5%)") in message  # fmt: skip
    assert straggler["severity"] == "info" and share < 0.05
    verdicts = {r["rank"]: r["verdict"] for r in part["per_rank"]}
    # rank 0's wait (2.6 % of its span) and rank 1's lateness are too small to pace them
    assert verdicts[0]["bound"] == verdicts[0]["trace_bound"] == "cpu-bound"
    assert verdicts[1]["bound"] == verdicts[1]["trace_bound"] == "cpu-bound"
    ops = gpu_ops(PAIR[0])
    span = max(e for _, e in ops) - min(s for s, _ in ops)
    assert verdicts[0]["reason"].endswith(
        f"; it also waits {time_ns(sum(waits))} ({sum(waits) / span:.1%} of its GPU span) in "
        "collectives for rank 1")  # fmt: skip
    assert verdicts[1]["reason"].endswith(
        f"; rank 0 waits {time_ns(sum(waits))} for it at the collectives ({share:.1%} of its "
        f"step time): its GPU computes 29% more per step than rank 0 ({time_ns(mine)} against "
        f"{time_ns(other)}): it has more work, or less efficient kernels")  # fmt: skip


def test_a_rank_given_twice_is_said_in_the_job_and_in_both_reports(tmp_path: Path) -> None:
    need(JOB)
    from gpuscope.ranks.api import tasks_for

    paths = [str(trace_of(0)), str(trace_of(0)), str(JOB / "rank1")]
    result = analyze_outcomes(run_all(run_task, tasks_for(paths), workers=1))
    assert result.ranks is not None and result.ranks["ranks_analysed"] == 2
    (finding,) = (f for f in result.ranks["findings"] if f["id"] == "duplicate-rank")
    (dup,) = finding["evidence"]["duplicates"]
    assert dup["rank"] == 0 and dup["same_file"] and dup["paths"] == paths[:2]
    flagged = [r for r in result.reports
               if any(f["id"] == "duplicate-rank" for f in r["integrity"])]  # fmt: skip
    assert len(flagged) == 2
    assert f"rank 0: {paths[0]} is given 2 times; it is analysed across ranks once" in (
        result.warnings)  # fmt: skip
    assert f"rank 0 by {paths[0]} given 2 times" in finding["message"]
    # two traces of one rank alone: no job, said all the same
    alone = analyze_outcomes(run_all(run_task, tasks_for(paths[:2]), workers=1))
    assert alone.ranks is None
    assert all(any(f["id"] == "duplicate-rank" for f in r["integrity"]) for r in alone.reports)
