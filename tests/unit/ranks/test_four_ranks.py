"""Four ranks of one DDP job, recorded on 4×H200 (`tests/gpu/record/record_ddp4.sh`): rank 2
computes more before every step, or rank 0's host is late after every step's sync. The late
rank is named with its cause and an action for that cause (rank 0's sync starts after its GPU
went idle, so the sync drains nothing: its host is late, the sync is no cause); the three
others are "waiting for" it and read alike in one line; the per-step table fits 80 columns.
Numbers recomputed from the raw events (tests/rawkineto.py), never by the code under test."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from gpuscope.document.units import time_ns
from gpuscope.ranks.api import analyze_job
from gpuscope.ranks.section import section
from gpuscope.report import terminal
from tests.rawkineto import clip, compute_kernels, host_late_per_step, length, steps, union
from tests.rawstates import breakdown

RECORDED = Path(__file__).resolve().parents[2] / "data" / "recorded"
MORE = RECORDED / "ddp4_rank2_computes_more_h200"
HOST = RECORDED / "ddp4_rank0_host_late_h200"


def trace_of(job: Path, rank: int) -> Path:
    (path,) = (job / f"rank{rank}" / "torch_profiler_output").glob("*.pt.trace.json.gz")
    return path


@cache
def part_of(job: Path) -> dict[str, Any]:
    part = analyze_job([str(job)], workers=1).ranks
    assert part is not None
    return part


def straggler(part: dict[str, Any]) -> dict[str, Any]:
    (found,) = (f for f in part["findings"] if f["id"] == "rank-straggler")
    return found


def test_the_rank_that_computes_more_is_named_and_the_others_wait_for_it() -> None:
    part = part_of(MORE)
    verdicts = {r["rank"]: r["verdict"] for r in part["per_rank"]}
    assert (verdicts[2]["bound"], verdicts[2]["cause"]) == ("more-work", "more-compute")
    assert all(verdicts[r]["waiting_for"] == 2 for r in (0, 1, 3))
    names = part["steps"]["names"]
    walls = {r: steps(trace_of(MORE, r)) for r in range(4)}
    compute = {
        r: sum(length(union(clip(compute_kernels(trace_of(MORE, r)), *walls[r][n])))
               for n in names) / len(names)
        for r in range(4)
    }  # fmt: skip
    others = sum(compute[r] for r in (0, 1, 3)) / 3
    found = straggler(part)
    assert found["evidence"]["rank"] == 2 and found["evidence"]["cause"] == "more-compute"
    ratio = compute[2] / others
    assert ratio > 10  # 8 extra 4096² matmuls against a 1.2 ms step of its own
    assert (f"its GPU computes {ratio:.3g} times as much per step as the other ranks' mean "
            f"({time_ns(compute[2])} against {time_ns(others)})") in found["message"]  # fmt: skip
    assert "gpuscope diff" in found["action"] and "Balance the work" in found["action"]
    assert "slower" not in found["message"]


def test_the_rank_whose_host_is_late_is_named_with_its_host_time() -> None:
    part = part_of(HOST)
    verdicts = {r["rank"]: r["verdict"] for r in part["per_rank"]}
    assert (verdicts[0]["bound"], verdicts[0]["cause"]) == ("host-bound", "host-wait")
    assert all(verdicts[r]["waiting_for"] == 0 for r in (1, 2, 3))
    names = part["steps"]["names"]
    late = host_late_per_step(trace_of(HOST, 0))
    mine = sum(late[n] for n in names) / len(names)
    assert 25_000_000 < mine < 30_000_000  # the 25 ms sleep and the step's own dispatch
    found = straggler(part)
    assert (
        f"its host launches late in each step: its GPU waits {time_ns(mine)} per step"
        in found["message"]
    )
    assert "sync" not in found["action"].split(":")[0]
    assert "-0.0%" not in found["message"]


def test_the_late_hosts_own_states_say_what_it_did() -> None:
    """The straggler's host-wait split by its own host states (the planted sleep is host work
    with no operator open, right after the optimizer's last op), against tests/rawstates.py's
    recount of rank 0's steps; the action is the host-work one, not a dispatch or sync one."""
    found = straggler(part_of(HOST))
    states = found["evidence"]["cause_states"]
    raw = [parts for _, parts in breakdown(trace_of(HOST, 0))]
    late = {k: sum(p[k] for p in raw) for k in ("host_work", "launch", "host_late", "copy_staging")}
    raw_share = late["host_work"] / sum(late.values())
    assert raw_share > 0.85 and states["host_work"] / sum(states.values()) == pytest.approx(
        raw_share, abs=0.03
    )
    assert found["evidence"]["cause_where"][0] == "after aten::_foreach_add_"
    assert "host work outside operators" in found["message"]
    assert "no operator open" in found["action"] and "(after aten::_foreach_add_" in found["action"]
    assert "CPU affinity" not in found["action"]  # that is the dispatch (launch) action


def test_the_job_reads_at_80_columns() -> None:
    console = Console(width=80, record=True, color_system=None)
    console.print(terminal.section(section(part_of(HOST)), 80))
    text = console.export_text()
    lines = text.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= 80
    assert "ranks 1, 2, 3" in text  # the waiting ranks share one verdict line
    assert sum("waiting for rank 0:" in line for line in lines) == 1
    for name in part_of(HOST)["steps"]["names"]:
        assert any(line.startswith(name + " ") for line in lines), name  # one line per step
