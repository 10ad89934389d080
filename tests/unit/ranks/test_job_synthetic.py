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
from gpuscope.ranks.job import analyse
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


def test_a_rank_held_back_by_its_host_is_slower_per_step_and_idles() -> None:
    """3 ranks, 3 steps of 10 ms: each computes 4 ms, then an all-reduce that ends for everyone
    at 9.5 ms; ranks 0 and 1 reach it at 5 ms, rank 2 (its host late) at 8 ms."""
    steps = 3
    ranks = []
    for r in range(3):
        arrive = 8 * MS if r == 2 else 5 * MS
        calls = [(AR, s * 10 * MS + arrive, s * 10 * MS + 9_500_000) for s in range(steps)]
        base = summary(r, calls)
        lo = np.arange(steps, dtype=np.int64) * 10 * MS
        comm = np.full(steps, 9_500_000 - arrive, np.int64)
        compute = np.full(steps, 4 * MS, np.int64)
        table = Steps(tuple(f"ProfilerStep#{s}" for s in range(steps)), lo, lo + 10 * MS,
                      compute + comm, compute, comm, comm)  # fmt: skip
        calls_in = replace(base.calls, step=np.arange(steps, dtype=np.int64))
        ranks.append(replace(base, steps=table, calls=calls_in))
    job = analyse(ranks)
    found = {f["id"]: f for f in job.findings}
    slow = found["rank-slow-steps"]["evidence"]
    # rank 2 waits for no one: 10 ms of its own per step; the others wait 3 ms: 7 ms
    assert (slow["rank"], slow["measured_by"]) == (2, "working")
    assert slow["slower_share_per_step"] == [round(10 / 7 - 1, 4)] * steps
    assert slow["idle_per_step_us"] - slow["others_idle_per_step_us"] == 3000.0
    assert "idles" in found["rank-straggler"]["message"]
    assert job.steps.waited.tolist() == [[3 * MS] * steps, [3 * MS] * steps, [0] * steps]
