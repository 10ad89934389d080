"""Nine small programs recorded on an H200, each planting one cause of lost time
(tests/gpu/record/planted.py says how; tests/data/README.md where they come from): each step's
breakdown must equal the one recomputed from the raw events by independent code
(tests/rawstates.py) and sum to the step's time, and the verdict, the top cause and the actions
must be the ones an engineer would sign — and never contradict the trace."""

from __future__ import annotations

import itertools
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import gpuscope
from gpuscope.analysis.layout._summary import ranked
from tests.rawstates import PARTS, breakdown

PLANTED = Path(__file__).resolve().parents[2] / "data" / "recorded" / "planted"
NAMES = ("input_pipeline", "item_sync", "eager_launch", "compiled_launch", "pageable_copy",
         "pinned_copy", "startup", "gpu_bound", "sleep_then_sync")  # fmt: skip


def path_of(name: str) -> Path:
    return PLANTED / f"planted_{name}_h200.json.gz"


@cache
def report(name: str) -> dict[str, Any]:
    return dict(gpuscope.analyze(str(path_of(name))).to_dict())


def by_id(name: str) -> dict[str, dict[str, Any]]:
    return {f["id"]: f for f in report(name)["findings"]}


def top(name: str) -> dict[str, Any]:
    """The finding the summary shows first (largest time at stake)."""
    return dict(ranked(report(name)["findings"])[0])


def actions(name: str) -> str:
    return " ".join(f["action"] for f in report(name)["findings"])


@pytest.mark.parametrize("name", NAMES)
def test_each_step_breakdown_is_the_raw_events_own(name: str) -> None:
    raw = breakdown(path_of(name))
    rows = report(name)["step_breakdown"]
    assert [r["step"] for r in rows] == [n for n, _ in raw]
    first_calls = name == "startup"  # its first step's first calls are start-up (not by name)
    for (step, parts), row in zip(raw, rows, strict=True):
        wall = sum(parts.values())
        assert row["wall_us"] == pytest.approx(wall / 1000, abs=0.002)
        assert sum(row[f"{p}_us"] for p in PARTS) == pytest.approx(row["wall_us"], rel=0.01)
        if first_calls and row["warmup"]:
            continue
        for p in PARTS:
            assert row[f"{p}_us"] == pytest.approx(parts[p] / 1000, abs=max(1.0, 0.002 * wall)
                                                   / 1000), (step, p)  # fmt: skip


HOST_SIDE = ("launch", "host_work", "host_late")
LABELS = {"compute": "compute", "copies": "copies", "launch": "launch / dispatch",
          "host_work": "host work outside operators", "sync": "sync wait"}  # fmt: skip


@pytest.mark.parametrize("name", NAMES)
def test_the_verdicts_shares_are_the_raw_recounts(name: str) -> None:
    """Every share the verdict names (its cause, the host side in all, the other parts) is the
    raw recount's share of the steady steps' time."""
    r = report(name)
    steady = breakdown(path_of(name))[r["breakdown"]["warmup_steps"] :]
    wall = sum(sum(p.values()) for _, p in steady)
    share = {k: sum(p[k] for _, p in steady) / wall for k in PARTS}
    reason = r["verdict"]["reason"]
    for part, label in LABELS.items():
        if f"{label} " in reason and share[part] >= 0.05:
            assert f"{label} {share[part]:.1%}" in reason, (part, reason)
    if "waiting on the host in all" in reason:
        host = sum(share[k] for k in HOST_SIDE)
        assert f"{host:.1%} waiting on the host in all" in reason, reason


def test_a_slow_input_pipeline_is_host_work_in_the_dataloader() -> None:
    """20 ms of numpy per batch in a num_workers=0 DataLoader, a loss.item() per step."""
    r = report("input_pipeline")
    assert r["verdict"]["bound"] == "cpu-bound" and r["verdict"]["cause"] == "host_work"
    assert r["breakdown"]["share"]["host_work"] > 0.85
    assert r["breakdown"]["share"]["sync"] < 0.02  # the .item() is no cause of the 20 ms
    work = top("input_pipeline")
    assert work["id"] == "host-work"
    assert work["evidence"]["on_critical_path"][0]["what"] == "planted.py(64): make_batch"
    assert "enumerate(DataLoader)" in work["message"]
    assert "num_workers" in work["action"] and "graph" not in work["action"]
    per_step = work["evidence"]["time_us"] / work["evidence"]["judged_steps"]
    assert 20_000 < per_step < 22_000  # the planted 20 ms, and the batch's hand-off


def test_a_loop_that_syncs_after_every_op_is_told_to_sync_once_first() -> None:
    r = report("item_sync")
    assert r["verdict"]["bound"] == "cpu-bound"
    found = by_id("item_sync")
    sync = found["sync-overhead"]
    assert sync["evidence"]["syncs_per_step"] == 32
    assert sync["evidence"]["sync_sites"][0]["op"] == "aten::item"
    assert "sync at most once per step" in sync["action"]
    # graphs are advised only behind the syncs: they cannot capture a step that syncs
    launch = found["launch-overhead"]
    assert launch["action"].startswith("The step syncs 32 times, and a graph cannot capture")
    assert sync["severity"] == "warning"
    # removing the syncs alone cannot save more than the step less the host's own time
    assert 0 < sync["evidence"]["at_most_saved_us"] < sync["evidence"]["time_us"]


def test_an_eager_launch_bound_loop_is_told_to_capture_graphs() -> None:
    r = report("eager_launch")
    assert (r["verdict"]["bound"], r["verdict"]["cause"]) == ("cpu-bound", "launch")
    launch = top("eager_launch")
    assert launch["id"] == "launch-overhead" and launch["evidence"]["syncs_per_step"] == 0
    assert launch["action"].startswith("Capture the step as CUDA graphs")


def test_a_compiled_launch_bound_step_is_told_reduce_overhead() -> None:
    r = report("compiled_launch")
    assert (r["verdict"]["bound"], r["verdict"]["cause"]) == ("cpu-bound", "launch")
    launch = top("compiled_launch")
    assert launch["id"] == "launch-overhead"
    assert launch["evidence"]["share_inside_compiled_code"] >= 0.5
    assert 'torch.compile(mode="reduce-overhead")' in launch["action"]
    assert "optimizer" in launch["action"]  # AdamW's foreach step runs outside the graph
    assert "graphs would save little" not in actions("compiled_launch")
    assert "DataLoader" not in actions("compiled_launch")


def test_pageable_copies_are_copy_bound_at_a_fraction_of_the_link() -> None:
    r = report("pageable_copy")
    assert (r["verdict"]["bound"], r["verdict"]["cause"]) == ("copy-bound", "copies")
    copies = top("pageable_copy")
    assert copies["id"] == "host-device-copies"
    htod = copies["evidence"]["by_kind"]["HtoD"]
    assert htod["pageable"] == htod["count"] == 5
    assert htod["bytes"] == 5 * 256 * 2**20
    assert copies["evidence"]["host_link"] == "PCIe 5.0 x16"
    assert htod["gb_per_s"] < 0.25 * copies["evidence"]["host_link_gb_per_s"]
    assert "pin_memory=True" in copies["action"] and "non_blocking=True" in copies["action"]
    assert ".item()" not in copies["action"]


def test_pinned_copies_near_the_link_are_told_to_move_less() -> None:
    r = report("pinned_copy")
    assert r["verdict"]["bound"] == "copy-bound"
    copies = top("pinned_copy")
    htod = copies["evidence"]["by_kind"]["HtoD"]
    assert htod["pinned"] == 5
    assert htod["gb_per_s"] > 0.6 * copies["evidence"]["host_link_gb_per_s"]
    assert "already run near the host link's rate" in copies["action"]
    assert "pin_memory" not in copies["action"]


def test_start_up_is_left_out_and_said() -> None:
    r = report("startup")
    part = r["breakdown"]
    assert part["warmup_steps"] == 2 and part["judged_steps"] == 3
    first = r["step_breakdown"][0]
    assert first["warmup"] and first["startup_us"] > 0.9 * first["wall_us"]
    assert "cold-start" in by_id("startup")
    assert "2 warm-up step(s) left out" in r["verdict"]["reason"]


def test_a_gpu_bound_loop_has_no_host_advice() -> None:
    r = report("gpu_bound")
    assert (r["verdict"]["bound"], r["verdict"]["cause"]) == ("gpu-bound", "compute")
    assert r["breakdown"]["steps_from"] == "device"  # the host runs ahead
    found = by_id("gpu_bound")
    for host in ("launch-overhead", "host-work", "sync-overhead", "step-variance"):
        assert host not in found  # the end-of-profile sync is no overhead


def test_a_sync_on_an_idle_gpu_is_not_the_cause() -> None:
    """5 ms of host sleep, then torch.cuda.synchronize() on a GPU that is already idle."""
    r = report("sleep_then_sync")
    assert (r["verdict"]["bound"], r["verdict"]["cause"]) == ("cpu-bound", "host_work")
    assert r["breakdown"]["share"]["sync"] < 0.01
    assert "sync-overhead" not in by_id("sleep_then_sync")
    assert top("sleep_then_sync")["id"] == "host-work"


def test_steps_come_from_optimizer_steps_without_profiler_steps(tmp_path: Path) -> None:
    """The input-pipeline trace with its ProfilerStep ranges taken out: the steps are the
    stretches that end with each `Optimizer.step#SGD.step` range (recounted here)."""
    import gzip
    import json

    data = json.loads(gzip.decompress(path_of("input_pipeline").read_bytes()))
    data["traceEvents"] = [e for e in data["traceEvents"]
                           if not str(e.get("name", "")).startswith("ProfilerStep#")]  # fmt: skip
    path = tmp_path / "no_profiler_steps.json"
    path.write_text(json.dumps(data))
    ends = sorted(float(e["ts"]) + float(e["dur"]) for e in data["traceEvents"]
                  if e.get("cat") == "user_annotation"
                  and e["name"] == "Optimizer.step#SGD.step")  # fmt: skip
    result = gpuscope.analyze(str(path))
    rows = result.table("step_breakdown")
    assert len(rows) == len(ends) == 6
    assert result.to_dict()["breakdown"]["steps_from"] == "optimizer"
    walls = [b - a for a, b in itertools.pairwise(ends)]
    assert list(rows["wall_us"][1:]) == pytest.approx(walls, abs=0.01)
    assert result.to_dict()["verdict"]["cause"] == "host_work"
    steps = result.table("steps")  # the notebook's steps table, from the same markers
    assert len(steps) == 6 and steps["name"][0] == "step 0 (Optimizer.step#SGD.step)"
    assert list(steps["wall_us"][1:]) == pytest.approx(walls, abs=0.01)
    assert len(gpuscope.load(str(path)).steps()) == 6
