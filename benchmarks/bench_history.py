"""`gpuscope check` on synthetic series with a known truth, and its latency on a big store
(issue 22; the numbers in docs/performance.md).

**Noise model simulated.** A result is one run of a workload whose true throughput is 100
(higher is better). Run-to-run: each run's level is 100 × exp(N(0, σ_run)) — clocks, placement,
thermal state, the machine's other load, all that changes between runs. Within a run: the run's
metric is the median of S = 30 samples, each the level × exp(N(0, 1 %)) (1 % CV per sample);
with `samples` the samples are stored (as `bench` does), without them only the median is (a
`performance:` line). A series is 10 results, checked once: the newest against the 9 before it
(`--against window:9`). A/A series: all 10 from one level. Regression series: the newest run's
level × 0.97 (3 % slower). Repeats rows: the newest commit was run k times (all k slower), the
window holds the 9 results before them.

**Latency.** A SQLite store with 1,000,000 results (200 workloads × 5,000, 2 metrics each, 1 in
10 results with 30 samples), built here; `check()` of one workload timed in the process (the
library call: its queries and statistics) and as the command (`gpuscope check`, interpreter
start-up included).

    python benchmarks/bench_history.py                 # everything (~10 min on 2 cores)
    python benchmarks/bench_history.py --quick         # fewer series, 100 k results
    python benchmarks/bench_history.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))

from gpuscope.history import check  # noqa: E402
from gpuscope.history.model import Context, Metric, Result, from_samples  # noqa: E402
from gpuscope.history.store import Store  # noqa: E402

SAMPLES_PER_RUN = 30
SAMPLE_CV = 0.01
SERIES_LENGTH = 10
REGRESSION = 0.03
START = datetime(2026, 1, 1)


def run_result(rng: random.Random, level: float, samples: bool, i: int, commit: str) -> Result:
    values = [level * math.exp(rng.gauss(0, SAMPLE_CV)) for _ in range(SAMPLES_PER_RUN)]
    if samples:
        metric = from_samples("throughput", values, "items/s", "higher")
    else:
        metric = Metric("throughput", statistics.median(values), "items/s", "higher")
    ctx = Context(f"2026-11-27T10:{i // 60:02d}:{i % 60:02d}.000Z", commit=commit, dirty=False)
    return Result("w", "run", ctx, (metric,), id=i + 1)


def one_series(
    rng: random.Random, sigma: float, samples: bool, shift: float, repeats: int
) -> check.Outcome:
    """9 history results, then `repeats` results of the newest commit at level × (1 − shift)."""
    history = [
        run_result(rng, 100 * math.exp(rng.gauss(0, sigma)), samples, i, f"c{i}")
        for i in range(SERIES_LENGTH - 1)
    ]
    latest = [
        run_result(rng, 100 * (1 - shift) * math.exp(rng.gauss(0, sigma)), samples, 9 + j, "new")
        for j in range(repeats)
    ]
    return check.compare("w", latest[::-1], history[::-1], check.Options())


def rates(
    sigma: float, samples: bool, series: int, repeats: int = 1, seed: int = 1
) -> dict[str, object]:
    rng = random.Random(seed)
    alarms = [one_series(rng, sigma, samples, 0.0, repeats).exit_code for _ in range(series)]
    caught = [one_series(rng, sigma, samples, REGRESSION, repeats).exit_code for _ in range(series)]
    batches = [sum(alarms[i : i + 100]) for i in range(0, series - series % 100 or series, 100)]
    return {
        "sigma_run": sigma, "samples": samples, "repeats": repeats, "series": series,
        "false_alarms": sum(alarms), "false_alarm_rate": sum(alarms) / series,
        "worst_batch_of_100": max(batches) if batches else None,
        "batches_of_100_with_at_most_1": sum(1 for b in batches if b <= 1),
        "batches": len(batches), "detected": sum(caught), "detection_rate": sum(caught) / series,
    }  # fmt: skip


def build_store(path: Path, workloads: int, per_workload: int, seed: int = 3) -> float:
    """A store of workloads × per_workload results, inserted in bulk (same tables, same
    indexes as Store.add writes)."""
    rng = random.Random(seed)
    started = time.perf_counter()
    store = Store.open(f"sqlite:///{path}")
    db = store.db
    with db.transaction():
        db.executemany(
            "INSERT INTO workloads (id, name, created_at) VALUES (?, ?, ?)",
            [(w + 1, f"w{w:03d}", "2026-01-01T00:00:00Z") for w in range(workloads)],
        )
    rid = 0
    for w in range(workloads):
        results, metrics = [], []
        for i in range(per_workload):
            rid += 1
            t = (START + timedelta(minutes=i)).strftime("%Y-%m-%dT%H:%M:%S") + f".{w:03d}Z"
            results.append((rid, w + 1, "run", t, f"{rid:040x}", 0, "main", "node1",
                            "NVIDIA H100", 8, "580.1", None, "13.0", "2.11", "0.1.0", "[]",
                            None, None, "{}"))  # fmt: skip
            level = 100 * math.exp(rng.gauss(0, 0.005))
            samples = None
            if i % 10 == 0:
                samples = json.dumps([round(level * math.exp(rng.gauss(0, 0.01)), 4)
                                      for _ in range(SAMPLES_PER_RUN)])  # fmt: skip
            metrics.append((rid, "throughput", level, "items/s", "higher", samples))
            metrics.append((rid, "wall_s", 60 / level * 100, "s", "lower", None))
        with db.transaction():
            db.executemany(
                "INSERT INTO results (id, workload_id, kind, recorded_at, commit_sha, dirty, "
                "branch, host, gpu_model, gpu_count, driver, rocm, cuda, torch, "
                "gpuscope_version, tags, artefacts, source, extra) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                results,
            )
            db.executemany(
                "INSERT INTO metrics (result_id, name, value, unit, direction, samples) "
                "VALUES (?, ?, ?, ?, ?, ?)",
                metrics,
            )
    db.execute("ANALYZE")
    store.close()
    return time.perf_counter() - started


def latency(path: Path, workload: str, repeat: int) -> dict[str, object]:
    url = f"sqlite:///{path}"
    calls = []
    for _ in range(repeat):
        started = time.perf_counter()
        with Store.open(url) as store:
            outcome = check.check(store, workload)
        calls.append(time.perf_counter() - started)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    argv = [sys.executable, "-m", "gpuscope", "check", workload, "--db", url, "-q"]
    commands, floor = [], []
    for _ in range(max(5, repeat // 2)):  # interleaved: the command, then its start-up floor
        started = time.perf_counter()
        subprocess.run(argv, env=env, capture_output=True, check=False)
        commands.append(time.perf_counter() - started)
        started = time.perf_counter()
        subprocess.run([*argv[:4], "--help"], env=env, capture_output=True, check=False)
        floor.append(time.perf_counter() - started)
    with Store.open(url) as store:
        count = store.count()
    return {
        "results": count,
        "bytes": path.stat().st_size,
        "check_call_ms_median": round(statistics.median(calls[1:] or calls) * 1000, 1),
        "check_call_ms_max": round(max(calls[1:] or calls) * 1000, 1),
        "check_command_ms_median": round(statistics.median(commands) * 1000, 1),
        "startup_floor_ms_median": round(statistics.median(floor) * 1000, 1),
        "load_average": os.getloadavg()[0],
        "methods": sorted({c.method for c in outcome.checks}),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--db", type=Path, help="keep the big store here (reused if it exists)")
    parser.add_argument("--latency-only", action="store_true", help="skip the series")
    args = parser.parse_args()
    n = 300 if args.quick else 1000
    grid: list[dict[str, object]] = []
    for sigma in () if args.latency_only else (0.0025, 0.004, 0.005, 0.0075, 0.01, 0.02):
        grid.append(rates(sigma, False, n))
        print(json.dumps(grid[-1]), flush=True)
    for sigma in () if args.latency_only else (0.004,) if args.quick else (0.004, 0.005):
        grid.append(rates(sigma, True, n // 2 if args.quick else n))
        print(json.dumps(grid[-1]), flush=True)
    repeated = ((0.01, 3), (0.01, 5), (0.02, 5), (0.02, 10))
    for sigma, repeats in () if args.latency_only else repeated:
        grid.append(rates(sigma, False, n, repeats))
        print(json.dumps(grid[-1]), flush=True)
    workloads, per = (20, 5000) if args.quick else (200, 5000)
    folder = Path(tempfile.mkdtemp(prefix="gpuscope-bench-history-"))
    path = args.db or folder / "history.db"
    built = 0.0 if path.exists() else build_store(path, workloads, per)
    found = latency(path, "w042" if workloads > 42 else "w007", 20)
    found["build_s"] = round(built, 1)
    print(json.dumps(found), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"series": grid, "latency": found}, indent=1) + "\n")
    if args.db is None:
        for leftover in folder.iterdir():
            leftover.unlink()
        folder.rmdir()


if __name__ == "__main__":
    main()
