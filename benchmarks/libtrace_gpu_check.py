"""Real-GPU check of the NVIDIA library tracers: run `libtrace_workload.py` with the environment
`LibraryTraceCollector` gives (cuBLAS, cuBLASLt, cuDNN, NCCL), then parse the logs the libraries
wrote into the run directory and print what library_trace.csv holds. The power and VRAM samplers
(NVML, 100 Hz) run around the workload and `plot_run` draws them.

    PYTHONPATH=src python benchmarks/libtrace_gpu_check.py --out bench-data/libtrace

Checks on the way: the program's stdout holds only its own line (the logs went to files), and the
log-file names show whether each library expanded the process-id pattern in its destination.
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from gpuscope.libtrace.collect import LibraryTraceCollector
from gpuscope.samplers import Sampler, plot_run

TOOLS = ["cublas_trace", "cublaslt_trace", "cudnn_trace", "nccl_trace"]
WORKLOAD = Path(__file__).with_name("libtrace_workload.py")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="")
    out = Path(parser.parse_args().out or tempfile.mkdtemp(prefix="libtrace-check-"))
    run_dir = out / "run"
    run_dir.mkdir(parents=True, exist_ok=True)
    collector = LibraryTraceCollector(run_dir, TOOLS, jobid="0", model="libtrace_workload")
    env = {**os.environ, **collector.env()}
    power_csv = run_dir / "gpu_info_power_profiler_output.csv"
    vram_csv = run_dir / "gpu_info_vram_profiler_output.csv"
    with (
        Sampler("power", power_csv, rate_s=0.01) as power,
        Sampler("vram", vram_csv, rate_s=0.01) as vram,
    ):
        power.mark("workload_start")
        vram.mark("workload_start")
        argv = [sys.executable, str(WORKLOAD)]
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=False)
        power.mark("workload_end")
        vram.mark("workload_end")
    print(f"plot: {plot_run(run_dir)}; power warnings: {power.warnings}; vram: {vram.warnings}")
    (out / "workload.stdout").write_text(done.stdout)
    (out / "workload.stderr").write_text(done.stderr)
    table = collector.finish()
    _report(done, run_dir, table, collector.warnings)
    return 0 if done.returncode == 0 and table is not None else 1


def _report(
    done: subprocess.CompletedProcess[str], run_dir: Path, table: Path | None, warnings: list[str]
) -> None:
    print(f"workload exit {done.returncode}; stdout: {done.stdout.strip()!r}")
    if done.returncode != 0:
        print(done.stderr[-3000:])
    for path in sorted(run_dir.iterdir()):
        print(f"  {path.name:<40}{path.stat().st_size:>12,} B")
    for warning in warnings:
        print(f"warning: {warning}")
    if table is None:
        return
    with table.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    print(f"{'library':<10}{'calls':>6}  {'op':<22}{'dtype':<6}{'m':>6}{'n':>6}{'k':>6}"
          f"{'batch':>6}  conv/collective")  # fmt: skip
    for r in rows:
        extra = r["collective"] and f"{r['collective']} count={r['count']} bytes={r['bytes']}"
        extra = extra or (r["conv_direction"] and _conv(r))
        print(f"{r['library']:<10}{r['calls']:>6}  {r['op']:<22}{r['dtype']:<6}{r['m']:>6}"
              f"{r['n']:>6}{r['k']:>6}{r['batch']:>6}  {extra}")  # fmt: skip


def _conv(r: dict[str, str]) -> str:
    return (
        f"{r['conv_direction']} n={r['conv_n']} c={r['conv_c']} hw={r['conv_h']}x{r['conv_w']} "
        f"k={r['conv_k']} yx={r['conv_y']}x{r['conv_x']} pad={r['pad_h']} {r['layout']}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
