"""A harness's final synchronize (`gpuscope.profile` closes its window with one, recorded on an
H200) is no sync overhead and no sync to remove before graph capture; the last of a loop's
per-step `.item()` syncs, which no device work follows either, still counts (test_planted)."""

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
