"""`gpuscope profile` on a real GPU (skipped without one): the trace holds exactly the profiled
calls, and analyze's numbers agree with torch.profiler's own events."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from types import ModuleType

import pytest

import gpuscope

pytestmark = pytest.mark.gpu


def test_profile_a_matmul(torch_gpu: ModuleType, tmp_path: Path) -> None:
    torch = torch_gpu
    a = torch.randn(2048, 2048, device="cuda", dtype=torch.bfloat16)
    result = gpuscope.profile(torch.matmul, a, a, iterations=6, warmup=3, out_dir=tmp_path)
    events = json.loads(gzip.decompress(result.trace.read_bytes()))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel"]
    mm = [e for e in events if e.get("cat") == "cpu_op" and e.get("name") == "aten::matmul"]
    assert len(mm) == 6  # the profiler's warm-up step is not in the trace
    report = result.analysis.to_dict()
    assert report["kernels"]["count"] == len(kernels) >= 6
    assert report["kernels"]["time_us"] == pytest.approx(sum(e["dur"] for e in kernels), rel=1e-6)
    assert report["categories"]["gemm"]["count"] >= 6
    assert "aten::" in result.table.read_text()
    assert result.first_call_s > 0 and result.warm_call_s > 0
    # no sync of gpuscope's in the last step (torch.profiler's own, as it stops, lies after it),
    # and still every kernel of the last step is in the trace (len(kernels) >= 6 above)
    steps = sorted(
        (e["ts"], e["ts"] + e["dur"]) for e in events if e["name"].startswith("ProfilerStep#")
    )
    syncs = [
        e["ts"] for e in events if e.get("cat") == "cuda_runtime" and "Synchronize" in e["name"]
    ]
    assert not [t for t in syncs if any(lo <= t < hi for lo, hi in steps)]
    assert "sync-overhead" not in {f["id"] for f in report["findings"]}
