"""The history store fed by real GPU work (skipped without one): `bench --record` of a matmul
four times, `check` of the last against the three before (an A/A series on one GPU: the gate
must stay quiet), and `run --baseline --record` of a PyTorch program under torch.profiler with
its own `performance:` line — the profiling overhead measured and the result kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

pytestmark = pytest.mark.gpu
REPO = Path(__file__).resolve().parents[2]

MATMUL = """
import torch

def matmul():
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    return torch.mm, (a, b)
"""

TRAIN = """
import time, torch
x = torch.randn(4096, 4096, device="cuda")
for _ in range(5):
    x @ x
torch.cuda.synchronize()
start, steps = time.perf_counter(), 200
for _ in range(steps):
    y = torch.relu(x @ x)
torch.cuda.synchronize()
print(f"performance: {steps / (time.perf_counter() - start):.2f} steps_per_second")
"""


def gpuscope(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "GPUSCOPE_DB": f"sqlite:///{cwd}/history.db"}
    return subprocess.run([sys.executable, "-m", "gpuscope", *map(str, args)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)  # fmt: skip


def test_bench_records_and_check_stays_quiet_on_an_unchanged_matmul(
    torch_gpu: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "mm.py").write_text(MATMUL)
    for _ in range(4):  # 3 earlier results: the run-to-run spread is measured, with the samples
        done = gpuscope(tmp_path, "bench", "mm.py:matmul", "--record", "--workload", "mm4096",
                        "--commit", "abc123")  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
    shown = json.loads(gpuscope(tmp_path, "history", "show", "mm4096", "--json", "-").stdout)
    (metric,) = [m for m in shown["metrics"] if m["name"] == "time_us"]
    assert metric["direction"] == "lower" and len(metric["samples"]) > 10
    assert 50 < metric["value"] < 5000, metric  # a 4096² fp16 matmul on an H100 / H200: ~0.1-1 ms
    done = gpuscope(tmp_path, "check", "mm4096", "--json", "-")
    report = json.loads(done.stdout)
    print("check mm4096:", json.dumps(report["checks"], indent=1)[:1500])
    assert done.returncode == 0, done.stdout + done.stderr  # the same work three times
    (timed,) = [c for c in report["checks"] if c["metric"] == "time_us"]
    assert timed["method"] == "run-to-run + samples" and timed["n_reference"] == 3, timed
    assert report["latest"][0]["gpu_model"] and report["latest"][0]["driver"], report["latest"]


def test_run_baseline_measures_the_profilers_overhead_and_records_both_metrics(
    torch_gpu: ModuleType, tmp_path: Path
) -> None:
    (tmp_path / "train.py").write_text(TRAIN)
    done = gpuscope(tmp_path, "run", "--baseline", "--record", "--workload", "train",
                    "--tools", "torch_profiler", "--output-dir", "runs", "--",
                    sys.executable, "train.py")  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    print(done.stderr[-1500:])
    runs = [json.loads((d / "manifest.json").read_text()) for d in (tmp_path / "runs").iterdir()]
    (profiled,) = [m for m in runs if m["tools"]]
    (base,) = [m for m in runs if not m["tools"]]
    assert base["performance"][0]["metric"] == "steps_per_second"
    overhead = profiled["baseline"]["overhead"]
    assert "steps_per_second" in overhead["metrics"] and "wall_pct" in overhead
    # the profiled run is slower or within noise of the baseline, never much faster
    assert overhead["metrics"]["steps_per_second"] < 10.0, overhead
    listed = json.loads(gpuscope(tmp_path, "history", "list", "train", "--json", "-").stdout)
    (result,) = listed["results"]  # the baseline's: the undisturbed number, with the overhead
    context = result["context"]
    assert context["gpu_model"] and context["cuda"] and context["torch"], context
    assert context["extra"]["tools"] == [] and context["extra"]["overhead"] == overhead
    assert {m["name"] for m in result["metrics"]} >= {"steps_per_second", "wall_s"}
