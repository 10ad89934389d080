"""On a real NVIDIA GPU: the cuBLAS, cuBLASLt, cuDNN and NCCL tracers and both samplers around a
tiny PyTorch program (benchmarks/libtrace_gpu_check.py), checked row by row."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.gpu
def test_nvidia_library_tracers_and_samplers(torch_gpu: ModuleType, tmp_path: Path) -> None:
    if torch_gpu.version.cuda is None:
        pytest.skip("the NVIDIA library tracers need a CUDA build of PyTorch")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = ROOT / "benchmarks" / "libtrace_gpu_check.py"
    done = subprocess.run(
        [sys.executable, str(script), "--out", str(tmp_path)],
        env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "workload.stdout").read_text().startswith("libtrace workload done")
    run = tmp_path / "run"
    with (run / "library_trace.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    ops = {(r["library"], r["op"]) for r in rows}
    assert {("cublas", "gemm"), ("cublaslt", "matmul"), ("cudnn", "conv_fwd")} <= ops
    assert ("nccl", "AllReduce") in ops
    conv = next(r for r in rows if r["op"] == "conv_fwd")
    assert (conv["conv_n"], conv["conv_c"], conv["conv_k"], conv["conv_y"]) == ("2", "3", "8", "3")
    for name in ("gpu_info_power_profiler_output.csv", "gpu_info_vram_profiler_output.csv"):
        with (run / name).open(newline="") as handle:
            marks = [r["mark"] for r in csv.DictReader(handle) if r["mark"]]
        assert marks == ["workload_start", "workload_end"]
    assert (run / "gpu_info_profiler.png").read_bytes().startswith(b"\x89PNG")
