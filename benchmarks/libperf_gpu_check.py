"""Real-GPU check of `gpuscope libperf` (NVIDIA): record a small transformer's training steps
with `gpuscope run --tools cublaslt_trace,nccl_trace -- python benchmarks/libperf_workload.py`,
replay its library_trace.csv with `gpuscope libperf --triton` (a one-rank process group from
RANK/WORLD_SIZE, so the all-reduce replays too), then time every GEMM again directly in this
process — the matmul the training program ran, rebuilt here from the CSV's columns (written
apart from libperf's replay code) and timed with `gpuscope.bench` on 7 fresh operand
allocations (the median of their medians: one GEMM's time moves with where its operands lie,
benchmarks/libperf_alloc_probe.py) — and compare TFLOP/s.

    PYTHONPATH=src python benchmarks/libperf_gpu_check.py --out bench-data/libperf

Writes OUT/check.json (every number below), OUT/libperf.json / .md (libperf's report) and
prints a table last: per GEMM config, libperf's TFLOP/s, the direct bench's, their ratio, and
the Triton A/B verdict.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WORKLOAD = Path(__file__).with_name("libperf_workload.py")
TOLERANCE = 0.05
DIRECT_ALLOCATIONS = 7


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="")
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--no-triton", action="store_true")
    args = parser.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="libperf-check-"))
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH", "")) if p
    )}  # fmt: skip
    record = _record(out, env, args.steps)
    run_dir = record["run_dir"]
    replay = _libperf(out, env, Path(run_dir), triton=not args.no_triton)
    rows = _rows(Path(run_dir) / "library_perf.csv")
    checks = _direct(rows)
    summary = _summary(record, replay, rows, checks, Path(run_dir))
    (out / "check.json").write_text(json.dumps(summary, indent=2) + "\n")
    _table(summary)
    return 0 if summary["ok"] else 1


def _gpuscope(args: list[str], env: dict[str, str], log: Path) -> tuple[int, float]:
    start = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "gpuscope", *args], env=env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    log.write_text(f"$ gpuscope {' '.join(args)}\n{done.stdout}\n--- stderr ---\n{done.stderr}")
    if done.returncode != 0:
        print(done.stdout[-3000:], done.stderr[-3000:], sep="\n")
    return done.returncode, time.monotonic() - start


def _record(out: Path, env: dict[str, str], steps: int) -> dict[str, Any]:
    runs = out / "runs"
    command = ["run", "--tools", "cublaslt_trace,nccl_trace", "--output-dir", str(runs),
               "--model", "tiny_transformer", "--", sys.executable, str(WORKLOAD),
               "--steps", str(steps)]  # fmt: skip
    code, seconds = _gpuscope(command, env, out / "run.log")
    run_dirs = sorted(p for p in runs.iterdir() if p.is_dir()) if runs.is_dir() else []
    if code != 0 or not run_dirs or not (run_dirs[-1] / "library_trace.csv").is_file():
        raise SystemExit(f"gpuscope run failed (exit {code}); see {out / 'run.log'}")
    return {"command": " ".join(command), "exit": code, "seconds": round(seconds, 2),
            "run_dir": str(run_dirs[-1])}  # fmt: skip


def _libperf(out: Path, env: dict[str, str], run_dir: Path, triton: bool) -> dict[str, Any]:
    group = {"RANK": "0", "LOCAL_RANK": "0", "WORLD_SIZE": "1", "MASTER_ADDR": "127.0.0.1",
             "MASTER_PORT": "29537"}  # fmt: skip
    command = ["libperf", str(run_dir), "--json", str(out / "libperf.json"),
               "--md", str(out / "libperf.md"), *(["--triton"] if triton else [])]  # fmt: skip
    code, seconds = _gpuscope(command, {**env, **group}, out / "libperf.log")
    if code != 0:
        raise SystemExit(f"gpuscope libperf failed (exit {code}); see {out / 'libperf.log'}")
    report = json.loads((out / "libperf.json").read_text())
    return {"command": " ".join(command), "seconds": round(seconds, 2), "report": report}


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


# ---------------------------------------------------------------------------------------------
# the direct bench: the training program's own matmul, rebuilt from the row's columns


def _operand(
    torch: Any, rows: int, cols: int, ld: int, batch: int, stride: int | None, dtype: Any
) -> Any:
    """A row-major rows×cols tensor (row pitch ld; batch of them `stride` apart)."""
    stride = rows * ld if stride is None else stride
    size = (batch - 1) * stride + (rows - 1) * ld + cols
    data = torch.randn(size, device="cuda", dtype=dtype)
    if batch == 1:
        return data.as_strided((rows, cols), (ld, 1))
    return data.as_strided((batch, rows, cols), (stride, ld, 1))


def _matmul(torch: Any, r: dict[str, str]) -> tuple[Any, float]:
    """The torch program computed out(n×m) = X(n×k) @ Y(k×m) — cuBLAS's B is X, A is Y."""
    m, n, k, batch = (int(r[c]) for c in ("m", "n", "k", "batch"))
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}[r["dtype"]]

    def num(column: str) -> int | None:
        return int(r[column]) if r[column] else None

    lda = num("lda") or (m if r["transA"] == "N" else k)
    ldb = num("ldb") or (k if r["transB"] == "N" else n)
    sa, sb = num("stride_a"), num("stride_b")
    if r["transA"] == "N":  # A is m×k column-major: Y (k×m) row-major, pitch lda
        y = _operand(torch, k, m, lda, batch, sa, dtype)
    else:  # A is k×m column-major: a (m×k) row-major tensor, used transposed
        y = _operand(torch, m, k, lda, batch, sa, dtype).transpose(-1, -2)
    if r["transB"] == "N":  # B is k×n column-major: X (n×k) row-major
        x = _operand(torch, n, k, ldb, batch, sb, dtype)
    else:
        x = _operand(torch, k, n, ldb, batch, sb, dtype).transpose(-1, -2)
    flops = 2.0 * m * n * k * batch
    if r["epilogue"] in ("bias", "relu_bias", "gelu_bias") and batch == 1:
        bias = torch.randn(m, device="cuda", dtype=dtype)
        if r["epilogue"] == "bias":
            return (lambda: torch.addmm(bias, x, y)), flops
        gelu = r["epilogue"] == "gelu_bias"
        return (lambda: torch._addmm_activation(bias, x, y, use_gelu=gelu)), flops
    if batch > 1:
        return (lambda: torch.bmm(x, y)), flops
    return (lambda: torch.mm(x, y)), flops


def _state() -> dict[str, str]:
    """libperf's default power state (burst), where gpuscope.bench has the option."""
    from gpuscope.timing.options import BenchOptions

    return {"state": "burst"} if "state" in BenchOptions.__dataclass_fields__ else {}


def _direct(rows: list[dict[str, str]]) -> list[dict[str, Any]]:
    import torch

    import gpuscope

    checks = []
    for r in rows:
        if r["kind"] != "gemm" or r["backend"] != "torch" or r["status"] != "ok":
            continue
        # a µs-scale GEMM's kernel time depends on where its operands lie (up to ~8 %: see
        # benchmarks/libperf_alloc_probe.py), so the direct time is the median over fresh
        # operand sets, all alive at once (a freed set's addresses would be handed out again)
        held, runs = [], []
        for i in range(DIRECT_ALLOCATIONS):
            fn, flops = _matmul(torch, r)
            held.append(fn)
            runs.append(gpuscope.bench(
                fn, flops=flops, budget_s=0.15, warmup_budget_s=0.5 if i == 0 else 0.1,
                peaks=False, **_state(),
            ))  # fmt: skip
        del held
        times = [m.median_us for m in runs]
        direct = flops / (statistics.median(times) * 1e-6) / 1e12
        replayed = float(r["tflops"])
        triton = next((x for x in rows if x["config"] == r["config"] and x["backend"] == "triton"),
                      None)  # fmt: skip
        checks.append({
            "shape": _shape(r), "config": r["config"], "calls": int(r["calls"]),
            "libperf_tflops": replayed,
            "libperf_us": float(r["time_us"]), "libperf_mode": r["mode"],
            "direct_tflops": direct, "direct_us": times, "direct_mode": runs[0].mode,
            "direct_spread": max(times) / min(times) - 1,
            "libperf_kernels": r.get("kernels", ""), "libperf_note": r["note"],
            "direct_kernels": " + ".join(runs[0].kernel_names),
            "ratio": replayed / direct,
            "triton_tflops": float(triton["tflops"]) if triton and triton["tflops"] else None,
            "triton_status": triton["status"] if triton else None,
        })  # fmt: skip
    return checks


def _shape(r: dict[str, str]) -> str:
    batch = f" x{r['batch']}" if r["batch"] not in ("", "1") else ""
    epi = f" {r['epilogue']}" if r["epilogue"] else ""
    return f"{r['dtype']} {r['transA']}{r['transB']} {r['m']}x{r['n']}x{r['k']}{batch}{epi}"


def _summary(
    record: dict[str, Any], replay: dict[str, Any], rows: list[dict[str, str]],
    checks: list[dict[str, Any]], run_dir: Path,
) -> dict[str, Any]:  # fmt: skip
    import torch

    trace = _rows(run_dir / "library_trace.csv")
    gemm_configs = {r["config"] for r in rows if r["kind"] == "gemm"}
    # the distinct GEMMs of the trace, counted here from its own columns
    problems = {
        (r["dtype"], r["compute_type"], r["transA"], r["transB"], r["m"], r["n"], r["k"],
         r["batch"], r["lda"], r["ldb"], r["ldc"], "EPILOGUE_BIAS" in r["config"],
         tuple(re.findall(r"stridedBatchOffset=(\d+)", r["config"])[:3]))
        for r in trace if r["op"] == "matmul"
    }  # fmt: skip
    torch_rows = [r for r in rows if r["backend"] == "torch"]
    not_ok = [f"{r['library']} {r['op']}: {r['status']}" for r in torch_rows if r["status"] != "ok"]
    within = all(abs(c["ratio"] - 1) <= TOLERANCE for c in checks)
    report = replay["report"]
    return {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "cuda": torch.version.cuda, "record": record,
        "libperf": {k: v for k, v in replay.items() if k != "report"},
        "trace_rows": len(trace), "trace_calls": sum(int(r["calls"]) for r in trace),
        "gemm_configs": len(gemm_configs), "trace_gemm_problems": len(problems),
        "torch_rows_not_ok": not_ok,
        "collective_rows": [
            {k: r[k] for k in ("collective", "count", "nranks", "status", "time_us", "gbps")}
            for r in torch_rows if r["kind"] == "collective"
        ],
        "comparisons": report["comparisons"], "top": report["top"][:5],
        "checks": checks, "tolerance": TOLERANCE, "within_tolerance": within,
        "ok": not not_ok and within and len(checks) == len(gemm_configs) == len(problems),
    }  # fmt: skip


def _table(s: dict[str, Any]) -> None:
    print(f"device {s['device']} torch {s['torch']} cuda {s['cuda']}")
    print(f"record: {s['record']['seconds']} s; libperf: {s['libperf']['seconds']} s; "
          f"trace rows {s['trace_rows']} ({s['trace_calls']} calls) -> {s['gemm_configs']} "
          f"GEMM configs; torch rows not ok: {s['torch_rows_not_ok'] or 'none'}")  # fmt: skip
    for c in s["collective_rows"]:
        print(f"collective {c['collective']} count {c['count']} nranks {c['nranks']}: "
              f"{c['status']} {c['time_us']} us {c['gbps']} GB/s")  # fmt: skip
    verdicts = {c["config"]: c for c in s["comparisons"] if c["b"] == "triton"}
    print(f"{'GEMM (column-major)':<34}{'calls':>6}{'libperf':>10}{'direct':>10}{'ratio':>8}"
          f"{'spread':>7}{'mode':>8}{'kern':>5}{'triton':>9}  triton vs torch")  # fmt: skip
    for c in s["checks"]:
        tri = f"{c['triton_tflops']:.1f}" if c["triton_tflops"] else "-"
        pair = verdicts.get(c["config"])
        verdict = f"{pair['verdict']} x{pair['speedup']:.2f}" if pair else c["triton_status"] or ""
        print(f"{c['shape']:<34}{c['calls']:>6}{c['libperf_tflops']:>10.1f}"
              f"{c['direct_tflops']:>10.1f}{c['ratio']:>8.3f}{c['direct_spread']:>7.3f}"
              f"{c['libperf_mode']:>8}{_same(c):>5}{tri:>9}  "
              f"{verdict[:28]}")  # fmt: skip
    for c in s["checks"]:
        if _same(c) == "diff":
            print(f"  {c['shape']}: libperf ran {c['libperf_kernels']}")
            print(f"  {' ' * len(c['shape'])}  direct ran {c['direct_kernels']}")
    worst = max((abs(c["ratio"] - 1) for c in s["checks"]), default=0.0)
    print(f"worst |ratio-1| = {worst:.3f} (tolerance {s['tolerance']}); ok = {s['ok']}")


def _same(c: dict[str, Any]) -> str:
    """Did libperf's replay and the direct call run the same kernels? (? where unprofiled)"""
    if not c["libperf_kernels"] or not c["direct_kernels"]:
        return "?"
    return "same" if c["libperf_kernels"] == c["direct_kernels"] else "diff"


if __name__ == "__main__":
    raise SystemExit(main())
