"""A harness's final synchronize (`gpuscope.profile` closed its window with one in the last step
when this was recorded on an H200) is no sync overhead, no sync to remove before graph capture,
and no step-time variance; the last of a loop's per-step `.item()` syncs, which no device work
follows either, still counts (test_planted)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import gpuscope

TRACE = Path(__file__).resolve().parents[2] / "data" / "recorded" / "profile_matmul_h200.json.gz"


def test_the_window_closing_sync_is_no_cause() -> None:
    events = json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]
    syncs = [e for e in events if e.get("cat") == "cuda_runtime" and "Synchronize" in e["name"]]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    # the harness's synchronize and the profiler's own as it stops: no device work after them
    assert len(syncs) == 2
    assert all(k["ts"] < s["ts"] + s["dur"] for k in kernels for s in syncs)
    report = gpuscope.analyze(str(TRACE)).to_dict()
    found = {f["id"]: f for f in report["findings"]}
    assert "sync-overhead" not in found
    assert report["verdict"]["cause"] == "launch"
    assert "syncs" not in found["launch-overhead"]["action"]  # no "the step syncs 0.2 times"


def test_the_step_that_holds_it_is_left_out_of_the_variance() -> None:
    """The last step holds the harness's synchronize and the host time before it (122 µs against
    54–62 µs): not "something else held the host"; the other four steps vary by 6 %."""
    events = json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]
    steps = sorted((e["ts"], e["dur"]) for e in events if e["name"].startswith("ProfilerStep#"))
    walls = [dur for _, dur in steps[1:]]  # the first is the warm-up step
    assert max(walls) == walls[-1] > 1.9 * sorted(walls)[len(walls) // 2]
    rest = walls[:-1]
    mean = sum(rest) / len(rest)
    cv = (sum((w - mean) ** 2 for w in rest) / (len(rest) - 1)) ** 0.5 / mean
    assert cv < 0.1
    report = gpuscope.analyze(str(TRACE)).to_dict()
    assert "step-variance" not in {f["id"] for f in report["findings"]}


def test_a_slow_first_step_after_the_schedules_warm_up_is_the_profilers() -> None:
    """profile ran 4 warm calls and the schedule a warm-up step (ProfilerStep#0, not recorded)
    before its window: the first recorded step's slow first calls are no program start-up, and
    no advice to add the schedule the trace already shows."""
    events = json.loads(gzip.decompress(TRACE.read_bytes()))["traceEvents"]
    steps = sorted((e["ts"], e["name"]) for e in events if e["name"].startswith("ProfilerStep#"))
    assert steps[0][1] == "ProfilerStep#1"  # the schedule's warm-up step ran before the window
    assert not [e for e in events if "Module Load" in e.get("name", "")]
    report = gpuscope.analyze(str(TRACE)).to_dict()
    cold = {f["id"]: f for f in report["findings"]}["cold-start"]
    assert cold["severity"] == "info"
    assert "verdict leaves ProfilerStep#1 out" in cold["message"]
    assert "unreliable" not in cold["message"]
    assert "schedule(wait" not in cold["action"] and "Nothing to change" in cold["action"]
    assert report["verdict"]["cause"] == "launch"
