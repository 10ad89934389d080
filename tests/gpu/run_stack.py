"""`gpuscope run` with the whole NVIDIA stack around tests/gpu/small_model.py, and its checks.

Used by tests/gpu/test_run_gpu.py, and runnable alone where pytest is not installed:

    python3 tests/gpu/run_stack.py OUT_DIR [--without ncu]   # run, check, print a table

Stack (first innermost): torch_profiler, cublas_trace, cublaslt_trace, cudnn_trace, nccl_trace,
ncu (20 kernels, clocks not locked), gpu_info_power_profiler, gpu_info_vram_profiler.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
NCU = "ncu --clock-control none --launch-count 20 -f --export {run_dir}/ncu_output/report"
CONTEXT = {
    "gpu_vendor": "NVIDIA",
    "tools": [
        {"name": "torch_profiler", "env_vars": {"GPUSCOPE_TORCH_SCHEDULE": "all"}},
        {"name": "cublas_trace"},
        {"name": "cublaslt_trace"},
        {"name": "cudnn_trace"},
        {"name": "nccl_trace"},
        {"name": "ncu", "cmd": NCU},
        {"name": "gpu_info_power_profiler", "env_vars": {"POWER_SAMPLING_RATE": "0.05"}},
        {"name": "gpu_info_vram_profiler", "env_vars": {"VRAM_SAMPLING_RATE": "0.05"}},
    ],
}
Check = tuple[str, bool, str]


def run_stack(
    out: Path, steps: int = 3, without: str = ""
) -> tuple[subprocess.CompletedProcess[str], Path | None]:
    context = {**CONTEXT, "tools": [t for t in CONTEXT["tools"] if t["name"] != without]}  # type: ignore[union-attr]
    argv = [sys.executable, "-m", "gpuscope", "run", "--output-dir", str(out),
            "--additional-context", json.dumps(context), "--",
            sys.executable, str(HERE / "small_model.py"), "--steps", str(steps)]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=480)
    runs = sorted(p for p in out.iterdir() if (p / "manifest.json").exists())
    return done, (runs[-1] if runs else None)


def rows(path: Path) -> list[dict[str, str]]:
    with path.open() as f:
        return list(csv.DictReader(f))


def check_manifest(run_dir: Path) -> Check:
    m = json.loads((run_dir / "manifest.json").read_text())
    ok = m["status"] == "exited" and m["exit_code"] == 0 and bool(m["gpus"])
    return "manifest", ok, f"{m['status']} exit {m['exit_code']}, argv[0] {m['argv'][0]}"


def check_libraries(run_dir: Path) -> Check:
    found = sorted({r["library"] for r in rows(run_dir / "library_trace.csv")})
    ok = {"cublas", "cublaslt", "cudnn", "nccl"} <= set(found)
    return "library_trace.csv", ok, f"libraries {found}"


def check_samplers(run_dir: Path) -> Check:
    details, ok = [], (run_dir / "gpu_info_profiler.png").exists()
    for kind in ("power", "vram"):
        table = rows(run_dir / f"gpu_info_{kind}_profiler_output.csv")
        marks = [r["mark"] for r in table if r.get("mark")]
        ok = ok and len(table) > 3 and marks == ["workload_start", "workload_end"]
        details.append(f"{kind}: {len(table)} rows, marks {marks}")
    return "samplers", ok, "; ".join(details)


def check_ncu(run_dir: Path) -> Check:
    raw = (run_dir / "ncu_output" / "ncu_raw.csv").read_text().splitlines()
    return "ncu", raw[:1] != [] and raw[0].startswith('"ID"') and len(raw) > 2, f"{len(raw)} lines"


def check_torch(run_dir: Path) -> Check:
    out = run_dir / "torch_profiler_output"
    traces, errors = list(out.glob("*.pt.trace.json.gz")), list(out.glob("*.error.txt"))
    analyses = list(out.glob("*.analysis.json"))
    detail = f"{len(traces)} traces, {len(analyses)} analyses"
    if errors:
        detail += f"; {errors[0].read_text().strip()}"
    return "torch_profiler", bool(traces), detail


CHECKS: tuple[Callable[[Path], Check], ...] = (
    check_manifest, check_libraries, check_samplers, check_ncu, check_torch,
)  # fmt: skip


def safe(check: Callable[[Path], Check], run_dir: Path) -> Check:
    try:
        return check(run_dir)
    except Exception as error:  # a missing file is a failed check, not a crash of the table
        return check.__name__.removeprefix("check_"), False, f"{type(error).__name__}: {error}"


def main(out: Path, without: str = "") -> int:
    out.mkdir(parents=True, exist_ok=True)
    done, run_dir = run_stack(out, without=without)
    (out / "gpuscope_stderr.txt").write_text(done.stderr)
    (out / "gpuscope_stdout.txt").write_text(done.stdout)
    checks = [c for c in CHECKS if not without or without not in c.__name__]
    results = [safe(c, run_dir) for c in checks] if run_dir else [("run", False, "no run dir")]
    summary = {"returncode": done.returncode, "run_dir": str(run_dir), "checks": results}
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    print(f"gpuscope run exit {done.returncode}; run dir {run_dir}")
    for name, ok, detail in results:
        print(f"{'ok ' if ok else 'FAIL'} {name:18} {detail[:160]}")
    return 0 if done.returncode == 0 and all(ok for _, ok, _ in results) else 1


if __name__ == "__main__":
    raise SystemExit(main(Path(sys.argv[1]), sys.argv[3] if sys.argv[2:3] == ["--without"] else ""))
