"""The cross-rank analysis on hand-made ranks whose truth is known: clock offsets, late arrivals,
subgroups, unalignable ranks. Every expected number is computed here by a plain loop over the
same made-up calls (true times), never by the code under test."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from gpuscope.analysis.communication.names import KINDS
from gpuscope.ranks._serialize import to_dict
from gpuscope.ranks.identity import is_job
from gpuscope.ranks.pipeline import analyse
from gpuscope.ranks.summary import Calls, RankSummary, Steps

AR = KINDS.index("all_reduce")
AG = KINDS.index("all_gather")
MS = 1_000_000


def summary(rank: int, calls: list[tuple[int, int, int]], offset: int = 0) -> RankSummary:
    """A rank whose calls are (kind, true start, true end), recorded on a clock `offset` ahead."""
    n = len(calls)
    kind = np.array([c[0] for c in calls], np.int64)
    start = np.array([c[1] for c in calls], np.int64) + offset
    end = np.array([c[2] for c in calls], np.int64) + offset
    minus = np.full(n, -1, np.int64)
    z = np.zeros(0, np.int64)
    return RankSummary(
        path=f"rank{rank}.json", format="kineto", vendor="nvidia", rank=rank, world_size=None,
        host=None, devices=(), clock="kineto", span_ns=100 * MS, busy_ns=50 * MS,
        idle_ns=50 * MS, compute_ns=30 * MS, comm_ns=20 * MS, exposed_ns=10 * MS,
        steps=Steps((), z, z, z, z, z, z),
        calls=Calls(kind, start, end, minus, minus, minus, np.zeros(n, np.int64), minus,
                    np.zeros(n, np.int64)),
    )  # fmt: skip


def job_of(late: dict[int, int], offsets: list[int], count: int = 6) -> list[RankSummary]:
    """`count` all-reduces every 10 ms, 2 ms long on the last arriver; rank r arrives
    `late.get(r, 0)` after the others; everyone leaves together."""
    ranks = []
    for r, offset in enumerate(offsets):
        calls = []
        for i in range(count):
            t = i * 10 * MS
            last = t + max(late.values(), default=0)
            calls.append((AR, t + late.get(r, 0), last + 2 * MS))
        ranks.append(summary(r, calls, offset))
    return ranks


def expected_waits(late: dict[int, int], ranks: int, count: int) -> list[int]:
    latest = max(late.values(), default=0)
    return [count * (latest - late.get(r, 0)) for r in range(ranks)]


def test_offsets_straggler_and_waits_from_known_truth() -> None:
    late = {2: 700_000}  # rank 2 arrives 0.7 ms after the others
    offsets = [0, 5 * MS, -3 * MS, 123_456]
    job = analyse(job_of(late, offsets))
    assert [o.offset_ns for o in job.offsets] == [0 - off for off in offsets]
    assert job.waits.last.tolist() == [0, 0, 6, 0]
    assert job.waits.waited_ns.tolist() == expected_waits(late, 4, 6)
    assert int(job.waits.caused_ns[2]) == sum(expected_waits(late, 4, 6))
    assert job.arrivals.transfer_ns.tolist() == [2 * MS] * 6
    assert job.end_spread_ns.tolist() == [0] * 6
    part = to_dict(job)
    assert part["findings"][0]["id"] == "rank-straggler"
    assert part["findings"][0]["evidence"]["rank"] == 2


def test_with_two_ranks_one_is_always_last_so_the_bar_is_higher() -> None:
    late_once = [
        summary(0, [(AR, 0, 2 * MS), (AR, 10 * MS, 12 * MS), (AR, 20 * MS + 5, 22 * MS)]),
        summary(1, [(AR, 3, 2 * MS), (AR, 10 * MS + 3, 12 * MS), (AR, 20 * MS, 22 * MS)]),
    ]
    job = analyse(late_once)  # rank 1 last at 2 of 3: below 75 %
    assert job.waits.last.tolist() == [1, 2]
    assert "rank-straggler" not in [f["id"] for f in job.findings]


def test_a_missing_call_and_a_subgroup_do_not_shift_the_matching() -> None:
    # rank 0 also runs an all-gather with rank 1 only; rank 2's profiler missed the first call.
    # (Offsets stay below half the 10 ms period: strictly periodic calls cannot tell a clock
    # offset from a whole period, and the vote prefers the offset nearest 0.)
    base = [(AR, i * 10 * MS, i * 10 * MS + 2 * MS) for i in range(5)]
    sub = [(AG, 3 * MS, 5 * MS)]
    ranks = [
        summary(0, sorted(base + sub, key=lambda c: c[1])),
        summary(1, sorted(base + sub, key=lambda c: c[1]), offset=2 * MS),
        summary(2, base[1:], offset=-3 * MS),
    ]
    job = analyse(ranks)
    assert [o.offset_ns for o in job.offsets] == [0, -2 * MS, 3 * MS]
    members = sorted(job.matching.members().tolist())
    assert members == [2, 2, 3, 3, 3, 3]  # the first all-reduce and the all-gather: 2 ranks
    assert job.waits.waited_ns.tolist() == [0, 0, 0]


def test_a_rank_sharing_no_collective_cannot_be_aligned_and_says_so() -> None:
    ranks = [
        summary(0, [(AR, i * 10 * MS, i * 10 * MS + MS) for i in range(4)]),
        summary(1, [(AR, i * 10 * MS, i * 10 * MS + MS) for i in range(4)], offset=MS),
        summary(2, [(AG, i * 7 * MS, i * 7 * MS + MS) for i in range(4)]),
    ]
    job = analyse(ranks)
    assert job.offsets[2].offset_ns is None
    found = {f["id"]: f for f in job.findings}
    assert found["ranks-unaligned"]["evidence"]["unaligned"] == [2]
    assert to_dict(job)["clock"]["unaligned_ranks"] == [2]


@pytest.mark.parametrize(
    ("ranks", "worlds", "job"),
    [
        ([0, 1], [2, 2], True),
        ([0, 1], [None, None], True),
        ([0, 0], [2, 2], False),  # two rank-0 traces: a before/after pair
        ([0, None], [2, None], False),
        ([0, 1], [2, 4], False),
        ([0, 5], [4, 4], False),
        ([3], [4], False),
    ],
)
def test_traces_are_ranks_of_one_job_only_when_ranks_are_distinct(
    ranks: list[int | None], worlds: list[int | None], job: bool
) -> None:
    assert is_job(ranks, worlds) is job


def stepped(
    late: int,
    *,
    after_sync: int = 0,
    compute: int = 4 * MS,
    wall: int = 10 * MS,
    ranks: int = 3,
    steps: int = 3,
) -> list[RankSummary]:
    """`ranks` ranks, `steps` steps of `wall` ns: each computes 4 ms, then an all-reduce that
    ends for everyone at 9.5 ms into the step; the others reach it at 5 ms, rank `late` at 8 ms,
    with `compute` of GPU work and `after_sync` of host time after a sync in each step."""
    result = []
    for r in range(ranks):
        arrive = 8 * MS if r == late else 5 * MS
        calls = [(AR, s * wall + arrive, s * wall + 9_500_000) for s in range(steps)]
        lo = np.arange(steps, dtype=np.int64) * wall
        comm = np.full(steps, 9_500_000 - arrive, np.int64)
        work = np.full(steps, compute if r == late else 4 * MS, np.int64)
        host = np.full(steps, after_sync if r == late else 0, np.int64)
        table = Steps(tuple(f"ProfilerStep#{s}" for s in range(steps)), lo, lo + wall,
                      work + comm, work, comm, comm, host, np.zeros(steps, np.int64))  # fmt: skip
        busy = int((work + comm).sum())
        base = replace(summary(r, calls), span_ns=steps * wall, busy_ns=busy,
                       idle_ns=steps * wall - busy, after_sync_ns=int(host.sum()),
                       host_wait_ns=0)  # fmt: skip
        calls_in = replace(base.calls, step=np.arange(steps, dtype=np.int64))
        result.append(replace(base, steps=table, calls=calls_in))
    return result


def test_a_rank_whose_host_is_late_after_a_sync_is_host_bound_and_the_others_wait() -> None:
    """Rank 2 reaches each all-reduce 3 ms late because its host spends 3 ms after a sync: one
    rank-straggler finding naming that cause, no "slower" (the walls are equal), ranks 0 and 1
    waiting for rank 2."""
    job = analyse(stepped(2, after_sync=3 * MS))
    found = {f["id"]: f for f in job.findings}
    assert "rank-slow-steps" not in found
    straggler = found["rank-straggler"]
    evidence = straggler["evidence"]
    assert (evidence["rank"], evidence["cause"]) == (2, "after-sync")
    assert evidence["cause_per_step_us"] == 3000.0 and evidence["others_cause_us"] == 0.0
    assert evidence["wall_vs_others"] == [0.0, 0.0, 0.0]
    assert "slower" not in straggler["message"]
    assert "after each step's sync: 3.00 ms of Python/host time per step" in straggler["message"]
    assert job.steps.waited.tolist() == [[3 * MS] * 3, [3 * MS] * 3, [0] * 3]
    part = to_dict(job)
    verdicts = [r["verdict"] for r in part["per_rank"]]
    assert [(v["bound"], v["waiting_for"]) for v in verdicts] == [
        ("waiting", 2), ("waiting", 2), ("host-bound", None)]  # fmt: skip
    # rank 0: busy 8.5 ms per 10 ms step, 3 ms of it waiting for rank 2
    assert verdicts[0]["utilization"] == 0.85 and verdicts[0]["own_work_utilization"] == 0.55
    assert verdicts[2]["reason"].startswith("the host is late to launch after each step's sync")


def test_a_rank_that_computes_more_is_more_work_and_not_slower() -> None:
    job = analyse(stepped(1, compute=7 * MS, ranks=2))
    found = {f["id"]: f for f in job.findings}
    evidence = found["rank-straggler"]["evidence"]
    assert (evidence["cause"], evidence["cause_per_step_us"]) == ("more-compute", 7000.0)
    assert "computes 75% more per step than rank 0 (7.00 ms against 4.00 ms)" in (
        found["rank-straggler"]["message"])  # fmt: skip
    assert "rank-slow-steps" not in found
    assert to_dict(job)["per_rank"][1]["verdict"]["bound"] == "more-work"


def test_slower_is_said_of_step_wall_times_only() -> None:
    """Rank 1's steps are 12 ms, the others' 10 ms, and nobody is late at the collectives: it
    is 20 % slower by wall time, which rank-slow-steps says; compute alone is not "slower"."""
    ranks = stepped(-1, ranks=3)
    slow = ranks[1]
    wall = 12 * MS
    lo = slow.steps.start
    ranks[1] = replace(slow, steps=replace(slow.steps, end=lo + wall))
    job = analyse(ranks)
    found = {f["id"]: f for f in job.findings}
    assert "rank-straggler" not in found
    evidence = found["rank-slow-steps"]["evidence"]
    assert (evidence["rank"], evidence["measured_by"]) == (1, "wall")
    assert evidence["wall_vs_others"] == [0.2, 0.2, 0.2]
    assert "20.0% slower" in found["rank-slow-steps"]["message"]


def test_traces_claiming_one_rank_are_said_and_the_first_is_used() -> None:
    ranks = job_of({1: 500_000}, [0, 0])
    again = replace(ranks[0], path="other/rank0.json")
    job = analyse([ranks[0], ranks[1], again])
    assert len(job.ranks) == 2 and job.ranks[0].path == "rank0.json"
    found = {f["id"]: f for f in job.findings}
    (dup,) = found["duplicate-rank"]["evidence"]["duplicates"]
    assert dup == {"rank": 0, "paths": ["rank0.json", "other/rank0.json"],
                   "used": "rank0.json", "same_file": False}  # fmt: skip
    assert "rank0.json and other/rank0.json" in found["duplicate-rank"]["message"]
