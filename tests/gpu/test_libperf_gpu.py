"""On a real NVIDIA GPU: `gpuscope run --tools cublaslt_trace,nccl_trace` around a small bf16
transformer training run, `gpuscope libperf` of its library_trace.csv, and every GEMM timed
again directly (benchmarks/libperf_gpu_check.py): every config replays, and libperf's TFLOP/s
agrees with the direct gpuscope.bench of the same matmul within 5 %. Set LIBPERF_GPU_OUT to
keep the outputs (check.json holds every number)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_libperf_replays_a_training_run_and_agrees_with_direct_bench(
    torch_gpu: ModuleType, tmp_path: Path
) -> None:
    if torch_gpu.version.cuda is None:
        pytest.skip("the cuBLASLt tracer needs a CUDA build of PyTorch")
    out = Path(os.environ.get("LIBPERF_GPU_OUT") or tmp_path)
    script = ROOT / "benchmarks" / "libperf_gpu_check.py"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, str(script), "--out", str(out)],
        env=env, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip
    print(done.stdout[-6000:], done.stderr[-3000:], sep="\n")
    summary = json.loads((out / "check.json").read_text())
    assert summary["torch_rows_not_ok"] == []
    assert summary["checks"], "no GEMM was replayed"
    assert len(summary["checks"]) == summary["gemm_configs"] == summary["trace_gemm_problems"]
    off = [c for c in summary["checks"] if abs(c["ratio"] - 1) > summary["tolerance"]]
    assert off == [], off
    assert [c["status"] for c in summary["collective_rows"]] == ["ok"]
    assert done.returncode == 0
